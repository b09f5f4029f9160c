//! Encoder behaviour beyond the default model: any BERT size from config.json, masks honoured
//! in attention and pooling, every pooling mode, and clear errors for broken model folders.
//! Random models are checked against a naive f64 re-implementation of BERT written here.

use crate::common;

use std::path::{Path, PathBuf};

use engine::safetensors_io::write_f32;
use engine::{Device, Encoder, EngineError, Pooling};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.next() * scale).collect()
    }
}

#[derive(Clone, Copy)]
struct Shape {
    vocab: usize,
    hidden: usize,
    layers: usize,
    heads: usize,
    inter: usize,
    positions: usize,
}

type Tensors = Vec<(String, Vec<usize>, Vec<f32>)>;

fn random_weights(s: Shape, seed: u64) -> Tensors {
    let mut r = Rng(seed);
    let mut t: Tensors = Vec::new();
    let mut add = |name: &str, shape: Vec<usize>, scale: f32, offset: f32, r: &mut Rng| {
        let n = shape.iter().product();
        let v = r.vec(n, scale).into_iter().map(|x| x + offset).collect();
        t.push((name.to_string(), shape, v));
    };
    let h = s.hidden;
    add(
        "embeddings.word_embeddings.weight",
        vec![s.vocab, h],
        0.5,
        0.0,
        &mut r,
    );
    add(
        "embeddings.position_embeddings.weight",
        vec![s.positions, h],
        0.5,
        0.0,
        &mut r,
    );
    add(
        "embeddings.token_type_embeddings.weight",
        vec![2, h],
        0.5,
        0.0,
        &mut r,
    );
    add("embeddings.LayerNorm.weight", vec![h], 0.1, 1.0, &mut r);
    add("embeddings.LayerNorm.bias", vec![h], 0.1, 0.0, &mut r);
    let w = (1.0 / h as f32).sqrt() * 1.7;
    for l in 0..s.layers {
        let p = format!("encoder.layer.{l}");
        for name in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ] {
            add(&format!("{p}.{name}.weight"), vec![h, h], w, 0.0, &mut r);
            add(&format!("{p}.{name}.bias"), vec![h], 0.1, 0.0, &mut r);
        }
        add(
            &format!("{p}.attention.output.LayerNorm.weight"),
            vec![h],
            0.1,
            1.0,
            &mut r,
        );
        add(
            &format!("{p}.attention.output.LayerNorm.bias"),
            vec![h],
            0.1,
            0.0,
            &mut r,
        );
        add(
            &format!("{p}.intermediate.dense.weight"),
            vec![s.inter, h],
            w,
            0.0,
            &mut r,
        );
        add(
            &format!("{p}.intermediate.dense.bias"),
            vec![s.inter],
            0.1,
            0.0,
            &mut r,
        );
        add(
            &format!("{p}.output.dense.weight"),
            vec![h, s.inter],
            (1.0 / s.inter as f32).sqrt() * 1.7,
            0.0,
            &mut r,
        );
        add(&format!("{p}.output.dense.bias"), vec![h], 0.1, 0.0, &mut r);
        add(
            &format!("{p}.output.LayerNorm.weight"),
            vec![h],
            0.1,
            1.0,
            &mut r,
        );
        add(
            &format!("{p}.output.LayerNorm.bias"),
            vec![h],
            0.1,
            0.0,
            &mut r,
        );
    }
    t
}

fn tmpdir(name: &str) -> PathBuf {
    common::tmp_folder(&format!("encoder-{name}"))
}

/// Writes a model folder with the default model's tokenizer and random weights.
fn write_model(dir: &Path, s: Shape, weights: &Tensors, pooling: &str, normalize: bool) {
    let config = serde_json::json!({
        "architectures": ["BertModel"], "model_type": "bert", "vocab_size": s.vocab,
        "hidden_size": s.hidden, "num_hidden_layers": s.layers, "num_attention_heads": s.heads,
        "intermediate_size": s.inter, "max_position_embeddings": s.positions, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12, "hidden_act": "gelu", "pad_token_id": 0
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    std::fs::copy(
        common::model_dir().join("tokenizer.json"),
        dir.join("tokenizer.json"),
    )
    .unwrap();
    std::fs::write(dir.join("model.safetensors"), write_f32(weights).unwrap()).unwrap();
    let mut modules = vec![
        serde_json::json!({"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}),
        serde_json::json!({"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}),
    ];
    if normalize {
        modules.push(serde_json::json!({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}));
    }
    std::fs::write(
        dir.join("modules.json"),
        serde_json::Value::Array(modules).to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    let mut p = serde_json::json!({"word_embedding_dimension": s.hidden});
    p[format!("pooling_mode_{pooling}")] = serde_json::Value::Bool(true);
    std::fs::write(dir.join("1_Pooling/config.json"), p.to_string()).unwrap();
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        r#"{"max_seq_length": 64}"#,
    )
    .unwrap();
}

/// Naive f64 BERT forward for one token sequence: last hidden states [seq][hidden].
fn reference_forward(s: Shape, w: &Tensors, ids: &[u32]) -> Vec<Vec<f64>> {
    let get = |name: &str| -> &Vec<f32> { &w.iter().find(|t| t.0 == name).unwrap().2 };
    let h = s.hidden;
    let ln = |x: &mut Vec<f64>, g: &[f32], b: &[f32]| {
        let mean = x.iter().sum::<f64>() / h as f64;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / h as f64;
        for i in 0..h {
            x[i] = (x[i] - mean) / (var + 1e-12).sqrt() * g[i] as f64 + b[i] as f64;
        }
    };
    // y = x W^T + b with W stored [out, in]
    let linear = |x: &[f64], name: &str, d_in: usize, d_out: usize| -> Vec<f64> {
        let wt = get(&format!("{name}.weight"));
        let bias = get(&format!("{name}.bias"));
        (0..d_out)
            .map(|o| {
                (0..d_in)
                    .map(|i| x[i] * wt[o * d_in + i] as f64)
                    .sum::<f64>()
                    + bias[o] as f64
            })
            .collect()
    };
    let (we, pe, te) = (
        get("embeddings.word_embeddings.weight"),
        get("embeddings.position_embeddings.weight"),
        get("embeddings.token_type_embeddings.weight"),
    );
    let mut x: Vec<Vec<f64>> = ids
        .iter()
        .enumerate()
        .map(|(p, &t)| {
            let mut v: Vec<f64> = (0..h)
                .map(|i| we[t as usize * h + i] as f64 + pe[p * h + i] as f64 + te[i] as f64)
                .collect();
            ln(
                &mut v,
                get("embeddings.LayerNorm.weight"),
                get("embeddings.LayerNorm.bias"),
            );
            v
        })
        .collect();
    let n = ids.len();
    let dh = h / s.heads;
    for l in 0..s.layers {
        let p = format!("encoder.layer.{l}");
        let q: Vec<Vec<f64>> = x
            .iter()
            .map(|v| linear(v, &format!("{p}.attention.self.query"), h, h))
            .collect();
        let k: Vec<Vec<f64>> = x
            .iter()
            .map(|v| linear(v, &format!("{p}.attention.self.key"), h, h))
            .collect();
        let vv: Vec<Vec<f64>> = x
            .iter()
            .map(|v| linear(v, &format!("{p}.attention.self.value"), h, h))
            .collect();
        let mut ctx = vec![vec![0.0; h]; n];
        for head in 0..s.heads {
            let r = head * dh..(head + 1) * dh;
            for i in 0..n {
                let scores: Vec<f64> = (0..n)
                    .map(|j| r.clone().map(|c| q[i][c] * k[j][c]).sum::<f64>() / (dh as f64).sqrt())
                    .collect();
                let m = scores.iter().cloned().fold(f64::MIN, f64::max);
                let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for c in r.clone() {
                    ctx[i][c] = (0..n).map(|j| e[j] / z * vv[j][c]).sum();
                }
            }
        }
        for i in 0..n {
            let a = linear(&ctx[i], &format!("{p}.attention.output.dense"), h, h);
            let mut y: Vec<f64> = (0..h).map(|c| a[c] + x[i][c]).collect();
            ln(
                &mut y,
                get(&format!("{p}.attention.output.LayerNorm.weight")),
                get(&format!("{p}.attention.output.LayerNorm.bias")),
            );
            let inter: Vec<f64> = linear(&y, &format!("{p}.intermediate.dense"), h, s.inter)
                .into_iter()
                .map(|v| 0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2)))
                .collect();
            let o = linear(&inter, &format!("{p}.output.dense"), s.inter, h);
            let mut z: Vec<f64> = (0..h).map(|c| o[c] + y[c]).collect();
            ln(
                &mut z,
                get(&format!("{p}.output.LayerNorm.weight")),
                get(&format!("{p}.output.LayerNorm.bias")),
            );
            x[i] = z;
        }
    }
    x
}

/// erf with |error| < 1.2e-7 (Numerical Recipes erfc).
fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        1.0 - r
    } else {
        r - 1.0
    }
}

fn pooled_reference(states: &[Vec<f64>], pooling: Pooling) -> Vec<f64> {
    let n = states.len();
    let h = states[0].len();
    match pooling {
        Pooling::Mean => (0..h)
            .map(|c| states.iter().map(|s| s[c]).sum::<f64>() / n as f64)
            .collect(),
        Pooling::MeanSqrtLen => (0..h)
            .map(|c| states.iter().map(|s| s[c]).sum::<f64>() / (n as f64).sqrt())
            .collect(),
        Pooling::Cls => states[0].clone(),
        Pooling::LastToken => states[n - 1].clone(),
        Pooling::Max => (0..h)
            .map(|c| states.iter().map(|s| s[c]).fold(f64::MIN, f64::max))
            .collect(),
    }
}

const TINY: Shape = Shape {
    vocab: 30522,
    hidden: 32,
    layers: 2,
    heads: 4,
    inter: 64,
    positions: 64,
};

#[test]
fn tiny_random_model_matches_reference_for_every_pooling() {
    let weights = random_weights(TINY, 7);
    let texts = [
        "a short text",
        "a rather longer text with quite a few more words in it than the first",
    ];
    for (mode, pooling) in [
        ("mean_tokens", Pooling::Mean),
        ("cls_token", Pooling::Cls),
        ("lasttoken", Pooling::LastToken),
        ("mean_sqrt_len_tokens", Pooling::MeanSqrtLen),
        ("max_tokens", Pooling::Max),
    ] {
        let dir = tmpdir(&format!("tiny-{mode}"));
        write_model(&dir, TINY, &weights, mode, false);
        let enc = Encoder::load(&dir, &Device::flex()).unwrap();
        assert_eq!(enc.config().pooling, pooling);
        assert_eq!(enc.config().max_seq_length, 64);
        let got = enc.encode(&texts).unwrap();
        for (i, text) in texts.iter().enumerate() {
            let ids = enc.tokenizer().encode(&[text]).unwrap().remove(0);
            let want = pooled_reference(&reference_forward(TINY, &weights, &ids), pooling);
            for (c, (g, w)) in got.row(i).iter().zip(&want).enumerate() {
                assert!(
                    (*g as f64 - w).abs() < 2e-4,
                    "{mode} text {i} dim {c}: {g} vs {w}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn bert_base_shaped_random_model_loads_and_matches_reference() {
    let shape = Shape {
        vocab: 30522,
        hidden: 768,
        layers: 12,
        heads: 12,
        inter: 3072,
        positions: 512,
    };
    let weights = random_weights(shape, 11);
    let dir = tmpdir("bert-base");
    write_model(&dir, shape, &weights, "cls_token", true);
    let enc = Encoder::load(&dir, &Device::flex()).unwrap();
    assert_eq!(enc.dim(), 768);
    let got = enc.encode(&["hello world"]).unwrap();
    let ids = enc.tokenizer().encode(&["hello world"]).unwrap().remove(0);
    let want = pooled_reference(&reference_forward(shape, &weights, &ids), Pooling::Cls);
    let norm = want.iter().map(|x| x * x).sum::<f64>().sqrt();
    let cos: f64 = got
        .row(0)
        .iter()
        .zip(&want)
        .map(|(g, w)| *g as f64 * w / norm)
        .sum();
    assert!(cos > 0.99999, "cosine with the reference {cos}");
    let got_norm: f64 = got
        .row(0)
        .iter()
        .map(|x| (*x as f64).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!((got_norm - 1.0).abs() < 1e-5, "Normalize module honoured");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_alone_equals_text_in_a_batch_with_much_longer_texts() {
    let enc = common::cpu_encoder();
    let short = "instruction following retrieval";
    let long = "a much longer passage ".repeat(60);
    let alone = enc.encode(&[short]).unwrap();
    let batched = enc.encode(&[long.as_str(), short, long.as_str()]).unwrap();
    let max_diff = alone
        .row(0)
        .iter()
        .zip(batched.row(1))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(max_diff < 1e-5, "max abs difference {max_diff}");
}

/// The GPU levers change when work is done and how much padding it carries, never the
/// embeddings: on the CPU, where CI runs them, bucketed padding and pipelined readback give the
/// plain path's embeddings, in input order, with progress for every row.
#[test]
fn bucketed_padding_and_pipelined_readback_leave_embeddings_unchanged() {
    use engine::tokenize::Padding;
    use engine::Readback;
    let mut enc = common::cpu_encoder();
    assert_eq!(
        enc.padding,
        Padding::Longest,
        "the CPU pads to the longest text"
    );
    enc.batch_size = 3;
    let long = "a passage of some length about retrieval ".repeat(9);
    let texts = [
        "one",
        long.as_str(),
        "a somewhat longer second text",
        "three",
        "4",
        "fifth text here",
        "seven",
    ];
    enc.readback = Readback::EachBatch;
    let plain = enc.encode(&texts).unwrap();
    enc.padding = Padding::Buckets;
    enc.readback = Readback::Pipelined;
    let mut reported = Vec::new();
    let levers = enc
        .encode_with_progress(&texts, &mut |done, total| reported.push((done, total)))
        .unwrap();
    // Progress after every batch, each at most the batch size: on the CPU the long text goes
    // alone (balanced batching), then the six short ones fill two batches.
    assert_eq!(reported, vec![(1, 7), (4, 7), (7, 7)]);
    for i in 0..texts.len() {
        let c = common::cosine(plain.row(i), levers.row(i));
        assert!(c > 0.999999, "row {i}: cosine {c}");
    }
}

#[test]
fn padding_buckets_are_few_and_never_past_the_position_table() {
    use engine::tokenize::Padding;
    let lengths: std::collections::BTreeSet<usize> =
        (1..=512).map(|n| Padding::Buckets.length(n, 512)).collect();
    assert_eq!(lengths.len(), 16, "{lengths:?}");
    for n in 1..=512 {
        let padded = Padding::Buckets.length(n, 512);
        assert!(padded >= n && padded - n < 64, "{n} -> {padded}");
        assert_eq!(Padding::Longest.length(n, 512), n);
    }
    assert_eq!(Padding::Buckets.length(17, 512), 32);
    assert_eq!(Padding::Buckets.length(130, 512), 160);
    assert_eq!(
        Padding::Buckets.length(500, 510),
        510,
        "clamped to the table"
    );
    assert_eq!(Padding::Buckets.length(0, 512), 16);
    assert_eq!("buckets".parse::<Padding>().unwrap(), Padding::Buckets);
    assert_eq!(Padding::Longest.to_string(), "longest");
    let err = "bucket".parse::<Padding>().unwrap_err().to_string();
    assert!(
        err.contains("'bucket'") && err.contains("longest or buckets"),
        "{err}"
    );
}

#[test]
fn half_precision_is_refused_on_the_cpu() {
    let mut enc = common::cpu_encoder();
    let err = enc.set_precision(engine::Precision::F16).unwrap_err();
    assert!(err.to_string().contains("GPU"), "{err}");
    enc.set_precision(engine::Precision::Int8).unwrap();
    assert!(enc.set_precision(engine::Precision::F16).is_err());
}

#[test]
fn output_keeps_input_order_and_empty_input_is_empty() {
    let mut enc = common::cpu_encoder();
    enc.batch_size = 2;
    let texts = ["one", "a somewhat longer second text", "three", "4"];
    let all = enc.encode(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let single = enc.encode(&[t]).unwrap();
        assert!(
            common::cosine(all.row(i), single.row(0)) > 0.999999,
            "row {i}"
        );
    }
    assert!(enc.encode(&[]).unwrap().is_empty());
}

fn copy_default(name: &str) -> PathBuf {
    let dir = tmpdir(name);
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "modules.json",
        "sentence_bert_config.json",
    ] {
        std::fs::copy(common::model_dir().join(f), dir.join(f)).unwrap();
    }
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    std::fs::copy(
        common::model_dir().join("1_Pooling/config.json"),
        dir.join("1_Pooling/config.json"),
    )
    .unwrap();
    dir
}

/// Asserts that loading the model folder `dir` fails with an error saying every one of `says`.
fn assert_load_err(dir: &Path, says: &[&str]) {
    let result: Result<Encoder, EngineError> = Encoder::load(dir, &Device::flex());
    common::assert_err(result, "", says);
}

/// A copy of the default model named `name` whose `config.json` has `from` replaced by `to`.
fn with_config_edit(name: &str, from: &str, to: &str) -> PathBuf {
    let dir = copy_default(name);
    let cfg = std::fs::read_to_string(dir.join("config.json"))
        .unwrap()
        .replace(from, to);
    std::fs::write(dir.join("config.json"), cfg).unwrap();
    dir
}

#[test]
fn broken_model_folders_give_clear_errors() {
    // Missing file.
    let dir = copy_default("missing");
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    assert_load_err(&dir, &["tokenizer.json", "missing"]);

    // Truncated safetensors.
    let dir = copy_default("truncated");
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    std::fs::write(dir.join("model.safetensors"), &bytes[..bytes.len() / 2]).unwrap();
    assert_load_err(&dir, &["model.safetensors", "not a valid safetensors"]);

    // Not safetensors at all.
    std::fs::write(dir.join("model.safetensors"), b"hello").unwrap();
    assert_load_err(&dir, &["model.safetensors"]);

    // Wrong tensor shape: config says a wider model than the weights hold.
    let inter = ["\"intermediate_size\": 1536", "\"intermediate_size\": 1024"];
    let dir = with_config_edit("shape", inter[0], inter[1]);
    assert_load_err(&dir, &["model.safetensors", "has shape", "intermediate"]);

    // Unknown architecture.
    let arch = [
        "\"model_type\": \"bert\"",
        "\"model_type\": \"xlm-roberta\"",
    ];
    let dir = with_config_edit("arch", arch[0], arch[1]);
    assert_load_err(&dir, &["config.json", "unknown architecture 'xlm-roberta'"]);

    // model_type bert, but the architectures name another model (a GPT-2 config edited by hand).
    let cfg = std::fs::read_to_string(copy_default("gpt2").join("config.json"))
        .unwrap()
        .replace("\"BertModel\"", "\"GPT2LMHeadModel\"");
    assert!(cfg.contains("GPT2LMHeadModel"), "{cfg}");
    std::fs::write(dir.join("config.json"), cfg).unwrap();
    assert_load_err(&dir, &["config.json", "GPT2LMHeadModel", "no BERT model"]);

    // Corrupt JSON.
    std::fs::write(dir.join("config.json"), "{ not json").unwrap();
    assert_load_err(&dir, &["config.json", "invalid JSON"]);

    // Not a folder.
    let nowhere = Path::new("/nonexistent/model");
    assert_load_err(nowhere, &["/nonexistent/model", "not found"]);

    for name in ["missing", "truncated", "shape", "arch"] {
        let _ = std::fs::remove_dir_all(tmpdir(name));
    }
}

#[test]
fn fewer_layers_in_file_than_config_is_reported() {
    let layers = ["\"num_hidden_layers\": 6", "\"num_hidden_layers\": 7"];
    let dir = with_config_edit("layers", layers[0], layers[1]);
    assert_load_err(&dir, &["encoder.layer.6", "missing"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_batches_past_the_token_threshold_pause_between_layers() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let mut enc = common::cpu_encoder();
    let pauses = Arc::new(AtomicUsize::new(0));
    let counter = pauses.clone();
    let pause: engine::encoder::Pause = Arc::new(
        move || -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(std::future::ready(()))
        },
    );
    enc.pause_between_layers(pause);
    let plain = common::cpu_encoder();
    // A short query: one task, no pause, the same embedding.
    let short = enc.encode(&["how do solar panels work"]).unwrap();
    assert_eq!(pauses.load(Ordering::SeqCst), 0);
    let reference = plain.encode(&["how do solar panels work"]).unwrap();
    assert!(common::cosine(short.row(0), reference.row(0)) > 0.99999);
    // One text longer than the threshold: a pause after the embeddings and after each of the
    // 6 layers.
    let long = "solar panels turn light into electricity ".repeat(12);
    assert!(long.split_whitespace().count() > engine::encoder::PAUSE_MIN_TOKENS);
    let paused = enc.encode(&[long.as_str()]).unwrap();
    let after_long = pauses.load(Ordering::SeqCst);
    assert_eq!(after_long, 7);
    let reference = plain.encode(&[long.as_str()]).unwrap();
    assert!(common::cosine(paused.row(0), reference.row(0)) > 0.99999);
}
