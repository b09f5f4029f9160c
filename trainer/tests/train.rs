//! `trainer train` end to end on a tiny randomly initialised BERT (the default model's
//! tokenizer, 2 layers of width 32) and generated records: a short run that trains, evaluates,
//! plots and writes a loadable model; kill -9 and resume giving the uninterrupted weights;
//! GradCache giving the direct gradients; the NaN guard; a full disk while checkpointing; bad
//! records; the CPU vs wgpu loss curve.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use engine::bert::random_safetensors;
use engine::{BertConfig, Device};

use crate::common::{model_dir as base_model_dir, refused, s, succeeded as ok};

fn tmp(name: &str) -> PathBuf {
    crate::common::tmp("train", name)
}

/// A tiny BERT with the default model's tokenizer and sentence-transformers files.
fn tiny_model(dir: &Path) -> PathBuf {
    let base = base_model_dir();
    let model = dir.join("tiny-model");
    std::fs::create_dir_all(model.join("1_Pooling")).unwrap();
    for f in [
        "tokenizer.json",
        "modules.json",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
    ] {
        std::fs::copy(base.join(f), model.join(f)).unwrap();
    }
    let config = BertConfig {
        vocab_size: 30522,
        hidden_size: 32,
        num_hidden_layers: 2,
        num_attention_heads: 2,
        intermediate_size: 64,
        max_position_embeddings: 512,
        type_vocab_size: 2,
        layer_norm_eps: 1e-12,
        hidden_act: engine::config::Activation::Gelu,
        pad_token_id: 0,
    };
    std::fs::write(model.join("config.json"), config.to_json()).unwrap();
    std::fs::write(
        model.join("model.safetensors"),
        random_safetensors(&config, 1).unwrap(),
    )
    .unwrap();
    model
}

/// Generated records: InF-IR records and dual-view instruction-negative records over a few
/// topics, attributes checkable on the text.
fn records(dir: &Path, n: usize) -> PathBuf {
    let topics = [
        "sourdough bread",
        "solar panels",
        "python lists",
        "marathon training",
        "tax returns",
        "coral reefs",
    ];
    let mut lines = Vec::new();
    for i in 0..n {
        let t = topics[i % topics.len()];
        let u = topics[(i + 1) % topics.len()];
        if i % 2 == 0 {
            lines.push(serde_json::json!({
                "query_positive": format!("how does {t} work"),
                "instruction_positive": "Only passages written for beginners.",
                "document_positive": format!("A beginner's guide to {t}: start simple, step {i}."),
                "instruction_negative": "Only passages written for experts.",
                "hard_negative_document_1": format!("Advanced analysis of {t} for specialists, part {i}."),
                "query_negative": format!("how does {u} work"),
                "hard_negative_document_2": format!("A beginner's guide to {u}: first steps, note {i}."),
            }));
        } else {
            lines.push(serde_json::json!({
                "query": format!("{t} tips"),
                "instruction": "Answers must include numbers.",
                "positive": format!("Five {t} tips: 1) begin, 2) measure 300 g, case {i}."),
                "negatives": [format!("Unrelated note about {u}.")],
                "instruction_negatives": [format!("Some {t} tips without any figures at all, case {i}.")],
                "instruction_reversed": "Answers must not include numbers.",
            }));
        }
    }
    let path = dir.join("train.jsonl");
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

fn train(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("train")
        .args(args)
        .output()
        .expect("run trainer")
}

fn weights(dir: &Path) -> Vec<(String, Vec<f32>)> {
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut names: Vec<String> = st.names().iter().map(|s| s.to_string()).collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let v = st.tensor(&n).unwrap();
            let f: Vec<f32> = v
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            (n, f)
        })
        .collect()
}

fn max_diff(a: &[(String, Vec<f32>)], b: &[(String, Vec<f32>)]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|((na, va), (nb, vb))| {
            assert_eq!(na, nb);
            va.iter()
                .zip(vb)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}

/// The largest weight difference between the models that the runs `a` and `b` wrote.
fn run_diff(a: &Path, b: &Path) -> f32 {
    max_diff(&weights(&a.join("model")), &weights(&b.join("model")))
}

fn losses(run: &Path) -> Vec<f64> {
    std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()?["loss"].as_f64())
        .collect()
}

/// Flags every run shares (learning rate 1e-3: a tiny random model moves visibly).
fn common<'a>(model: &'a Path, data: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "--model",
        s(model),
        "--data",
        s(data),
        "--output",
        s(out),
        "--batch-size",
        "2",
        "--lr",
        "1e-3",
        "--warmup-ratio",
        "0",
    ]
}

/// `common` for `model`, `data` and `out`, then `extra`.
fn common_and<'a>(
    model: &'a Path,
    data: &'a Path,
    out: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    [common(model, data, out), extra.to_vec()].concat()
}

/// `extra`, then the flags that evaluate on the set `set` every `every` steps.
fn evaluating<'a>(extra: &[&'a str], set: &'a Path, every: &'a str) -> Vec<&'a str> {
    [extra, &["--eval-set", s(set), "--eval-every", every]].concat()
}

/// Flags of a run of `max_steps` steps with a checkpoint every 2, the last 3 kept.
fn checkpointed(max_steps: &str) -> [&str; 6] {
    [
        "--max-steps",
        max_steps,
        "--checkpoint-every",
        "2",
        "--keep-checkpoints",
        "3",
    ]
}

/// A fresh folder `name` with the tiny model and `n` records: `(folder, model, data, run)`.
fn fresh(name: &str, n: usize) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let dir = tmp(name);
    let model = tiny_model(&dir);
    let data = records(&dir, n);
    let out = dir.join("run");
    (dir, model, data, out)
}

#[test]
fn short_run_trains_evaluates_plots_and_writes_a_loadable_model() {
    let (_, model, data, out) = fresh("short", 6);
    let steps = ["--max-steps", "12", "--checkpoint-every", "4"];
    let demo = crate::common::demo_set();
    let args = common_and(&model, &data, &out, &evaluating(&steps, &demo, "6"));
    let err = ok(&train(&args));
    assert!(err.contains("eval: ndcg@10 og"), "{err}");
    for f in [
        "config.json",
        "metrics.jsonl",
        "plots/loss.svg",
        "plots/eval.svg",
        "model/model.safetensors",
        "model/tokenizer.json",
        "model/modules.json",
        "model/1_Pooling/config.json",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let l = losses(&out);
    assert_eq!(l.len(), 12);
    let first = (l[0] + l[1] + l[2]) / 3.0;
    let last = (l[9] + l[10] + l[11]) / 3.0;
    assert!(last < first, "loss did not fall: {l:?}");
    let log = std::fs::read_to_string(out.join("metrics.jsonl")).unwrap();
    let evals = log.lines().filter(|l| l.contains("\"eval\"")).count();
    assert_eq!(evals, 3, "before, at step 6, at the end:\n{log}");
    assert!(log.contains("p-mrr") && log.contains("wise"));
    let svg = std::fs::read_to_string(out.join("plots/loss.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    // Checkpoints: only the newest two are kept.
    let kept: Vec<_> = std::fs::read_dir(out.join("checkpoints"))
        .unwrap()
        .collect();
    assert_eq!(kept.len(), 2);
    // The engine loads the result, and it changed.
    let trained = engine::Encoder::load(out.join("model"), &Device::flex()).unwrap();
    let before = engine::Encoder::load(&model, &Device::flex()).unwrap();
    let a = trained.encode(&["sourdough bread tips"]).unwrap();
    let b = before.encode(&["sourdough bread tips"]).unwrap();
    assert_ne!(a, b);
    assert!(max_diff(&weights(&out.join("model")), &weights(&model)) > 0.0);
    // A second run into the same folder is refused rather than overwriting it.
    refused(&train(&args), &["--resume"]);
    // Also once its checkpoints are gone: the trained model is not replaced.
    std::fs::remove_dir_all(out.join("checkpoints")).unwrap();
    let trained_bytes = std::fs::read(out.join("model/model.safetensors")).unwrap();
    refused(&train(&args), &["earlier run", "model.safetensors"]);
    assert_eq!(
        std::fs::read(out.join("model/model.safetensors")).unwrap(),
        trained_bytes
    );
}

#[test]
fn kill_and_resume_ends_with_the_uninterrupted_weights() {
    let (dir, model, data, _) = fresh("resume", 10);
    let steps = checkpointed("16");
    let straight = dir.join("straight");
    ok(&train(&common_and(&model, &data, &straight, &steps)));

    let killed = dir.join("killed");
    let mut args = common_and(&model, &data, &killed, &steps);
    kill_at(&args, &killed, 6);
    args.push("--resume");
    let err = ok(&train(&args));
    assert!(err.contains("resuming from"), "{err}");
    let diff = run_diff(&straight, &killed);
    eprintln!("max |weight difference| after kill -9 and resume: {diff:e}");
    assert!(diff <= 1e-6, "resumed weights differ by {diff}");
    assert_eq!(losses(&straight).len(), 16);
    assert_eq!(
        losses(&killed).len(),
        16,
        "the resumed log continues the interrupted one"
    );
}

/// Runs `trainer train ARGS` into `out` until its checkpoint of step `step` is complete, then
/// kills it, asserting that it had not finished.
fn kill_at(args: &[&str], out: &Path, step: usize) {
    kill_once(
        args,
        &out.join(format!("checkpoints/step-{step:08}/state.json")),
    );
    assert!(
        !out.join("model").exists(),
        "the run finished before the kill"
    );
}

/// Runs `trainer train ARGS` until `marker` exists, then kills it (SIGKILL).
fn kill_once(args: &[&str], marker: &Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("train")
        .args(args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !marker.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "run ended before it could be killed"
        );
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "no checkpoint appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A full disk while a checkpoint is written, simulated with a file-size limit (`ulimit -f`,
/// SIGXFSZ ignored: every write past 1-2 MB fails, as on a full disk, and needs no root).
#[cfg(unix)]
#[test]
fn a_full_disk_while_checkpointing_keeps_the_last_good_checkpoint() {
    let (_, model, data, run) = fresh("disk-full", 10);
    let flags = ["--max-steps", "40", "--checkpoint-every", "1"];
    let mut args = common_and(&model, &data, &run, &flags);
    kill_at(&args, &run, 2);
    let checkpoints = run.join("checkpoints");
    let good = std::fs::read_dir(&checkpoints)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("state.json").is_file())
        .max()
        .expect("a complete checkpoint");
    let before = std::fs::read(good.join("model.safetensors")).unwrap();

    args.push("--resume");
    let limited = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 2048 && trap '' XFSZ && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_trainer"))
        .arg("train")
        .args(&args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&limited.stderr);
    assert!(!limited.status.success(), "{err}");
    assert!(err.contains("not written"), "{err}");
    assert!(
        err.contains("the last good checkpoint is kept") && err.contains(good.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(
        std::fs::read(good.join("model.safetensors")).unwrap(),
        before,
        "the last good checkpoint changed"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&checkpoints)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "half-written checkpoint left: {leftovers:?}"
    );
    assert!(!run.join("model").exists());
    // With space again, the run resumes from the kept checkpoint and finishes.
    let err = ok(&train(&args));
    assert!(err.contains("resuming from"), "{err}");
    assert!(run.join("model/model.safetensors").is_file());
}

#[test]
fn grad_cache_and_accumulation_run_and_grad_cache_matches_direct() {
    let (dir, model, data, _) = fresh("gradcache", 4);
    let direct = dir.join("direct");
    let flags = ["--max-steps", "3"];
    ok(&train(&common_and(&model, &data, &direct, &flags)));
    let cached = dir.join("cached");
    let chunked = ["--max-steps", "3", "--grad-cache-chunk", "2"];
    ok(&train(&common_and(&model, &data, &cached, &chunked)));
    let diff = run_diff(&direct, &cached);
    eprintln!("GradCache vs direct, max |weight difference| after 3 steps: {diff:e}");
    assert!(diff < 1e-4, "{diff}");
    let (a, b) = (losses(&direct), losses(&cached));
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-4, "{a:?} vs {b:?}");
    }
    let acc = dir.join("accumulated");
    let args = [
        "--model",
        s(&model),
        "--data",
        s(&data),
        "--output",
        s(&acc),
        "--max-steps",
        "2",
        "--grad-accumulation",
        "2",
        "--batch-size",
        "1",
        "--interaction",
        "cross-attention",
        "--loss",
        "uni-p-i-iq",
    ];
    ok(&train(&args));
    assert!(acc.join("model/cross_attention.safetensors").is_file());
}

#[test]
fn nan_loss_stops_the_run_and_keeps_the_last_good_checkpoint() {
    let (_, model, data, out) = fresh("nan", 4);
    let mut args = common(&model, &data, &out);
    let at = args.iter().position(|a| *a == "--lr").unwrap();
    args.drain(at..at + 2); // replaced by a rate that blows the weights up
    args.extend([
        "--max-steps",
        "10",
        "--checkpoint-every",
        "1",
        "--lr",
        "1e30",
        "--max-grad-norm",
        "0",
    ]);
    let result = train(&args);
    refused(&result, &["last good checkpoint"]);
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(
        err.contains("loss is NaN") || err.contains("loss is inf"),
        "{err}"
    );
    assert!(out
        .join("checkpoints/step-00000001/model.safetensors")
        .is_file());
    assert!(!out.join("model").exists());
}

#[test]
fn bad_records_are_reported_by_line_or_skipped() {
    let (dir, model, data, out) = fresh("bad", 4);
    let mut text = std::fs::read_to_string(&data).unwrap();
    text = text.replacen('\n', "\n{\"query\": \"no positive\"}\n", 2);
    std::fs::write(&data, text).unwrap();
    let mut args = common_and(&model, &data, &out, &["--max-steps", "1"]);
    refused(&train(&args), &["train.jsonl:2:", "positive"]);
    args.push("--skip-bad-records");
    let err = ok(&train(&args));
    assert!(err.contains("2 bad records skipped"), "{err}");

    let missing = train(&["--model", s(&model), "--output", s(&dir.join("x"))]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--data"));
    let bad_loss = train(&["--data", s(&data), "--loss", "multi-q"]);
    assert!(String::from_utf8_lossy(&bad_loss.stderr).contains("unknown loss"));
}

#[test]
fn help_lists_every_setting_with_its_default_and_config_files_work() {
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["train", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--loss",
        "[default: multi-p-i]",
        "--grad-cache-chunk",
        "--temperature",
        "--resume",
        "--skip-bad-records",
        "[default: 42]",
        "--max-steps",
    ] {
        assert!(help.contains(needle), "missing {needle} in:\n{help}");
    }
    let (dir, model, data, _) = fresh("config", 2);
    let config = dir.join("train.json");
    std::fs::write(&config, serde_json::json!({"model": model, "data": data, "max_steps": 1, "batch_size": 1, "output": dir.join("from-file")}).to_string()).unwrap();
    ok(&train(&["--config", s(&config)]));
    assert!(dir.join("from-file/model/model.safetensors").is_file());
    std::fs::write(&config, r#"{"lr": 1e-3, "learning_rate": 1}"#).unwrap();
    let typo = train(&["--config", s(&config)]);
    assert!(String::from_utf8_lossy(&typo.stderr).contains("learning_rate"));
}

/// The same seed and data give the same loss curve on the CPU and on wgpu (Vulkan; lavapipe
/// in CI). Skipped, visibly, where no adapter exists, unless IFIR_REQUIRE_GPU is set.
#[test]
fn cpu_and_wgpu_give_the_same_loss_curve() {
    if !engine::BackendKind::available().contains(&engine::BackendKind::Wgpu) {
        crate::common::skipped("trainer built without the wgpu feature");
        return;
    }
    if engine::BackendKind::Wgpu.device().is_err() {
        assert!(
            std::env::var_os("IFIR_REQUIRE_GPU").is_none(),
            "IFIR_REQUIRE_GPU set but no wgpu adapter"
        );
        crate::common::skipped("no wgpu adapter on this machine");
        return;
    }
    let (dir, model, data, _) = fresh("backends", 4);
    let mut curves = Vec::new();
    for device in ["cpu", "wgpu"] {
        let out = dir.join(device);
        let flags = ["--max-steps", "3", "--device", device];
        let args = common_and(&model, &data, &out, &flags);
        ok(&train(&args));
        curves.push(losses(&out));
    }
    eprintln!("loss curves: cpu {:?} wgpu {:?}", curves[0], curves[1]);
    for (a, b) in curves[0].iter().zip(&curves[1]) {
        assert!((a - b).abs() < 1e-3 * (1.0 + a.abs()), "{curves:?}");
    }
}

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .output()
        .expect("run trainer");
    ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

/// A model folder without its cross-attention module: what a consumer that ignored the module
/// would measure.
fn without_cross_attention(model: &Path, dir: &Path) -> PathBuf {
    let copy = dir.join("concat-model");
    std::fs::create_dir_all(copy.join("1_Pooling")).unwrap();
    for entry in walk(model) {
        let rel = entry.strip_prefix(model).unwrap();
        if rel != Path::new("cross_attention.safetensors") {
            std::fs::copy(&entry, copy.join(rel)).unwrap();
        }
    }
    copy
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The scores of `trainer search --json` for one query under one instruction.
fn search_scores(model: &Path, corpus: &Path) -> Vec<f64> {
    stdout_of(&[
        "search",
        "--model",
        s(model),
        "--corpus",
        s(corpus),
        "--query",
        "sourdough bread starter",
        "--instruction",
        "Only forum posts written by home bakers.",
        "--json",
    ])
    .lines()
    .map(|l| {
        serde_json::from_str::<serde_json::Value>(l).unwrap()["score"]
            .as_f64()
            .unwrap()
    })
    .collect()
}

#[test]
fn a_cross_attention_model_is_used_by_every_consumer() {
    let (dir, model, data, out) = fresh("cross", 6);
    let demo = crate::common::demo_set();
    let cross = ["--max-steps", "2", "--interaction", "cross-attention"];
    let args = common_and(&model, &data, &out, &evaluating(&cross, &demo, "2"));
    ok(&train(&args));
    let trained = out.join("model");
    assert!(trained.join("cross_attention.safetensors").is_file());
    let concat = without_cross_attention(&trained, &dir);

    // eval: the module's runs differ from concatenation's, and the periodic evaluation during
    // training measured exactly what `trainer eval` measures on the saved model.
    let eval = |m: &Path, runs: &Path| -> serde_json::Value {
        let text = stdout_of(&[
            "eval",
            "--set",
            s(&demo),
            "--model",
            s(m),
            "--save-runs",
            s(runs),
            "--json",
        ]);
        serde_json::from_str(&text).unwrap()
    };
    let with = eval(&trained, &dir.join("runs-cross"));
    eval(&concat, &dir.join("runs-concat"));
    let changed = |d: &str| std::fs::read_to_string(dir.join(d).join("changed.trec")).unwrap();
    assert_ne!(changed("runs-cross"), changed("runs-concat"));
    let log = std::fs::read_to_string(out.join("metrics.jsonl")).unwrap();
    let periodic: serde_json::Value = log
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("eval").cloned())
        .expect("a periodic evaluation");
    for (key, report) in [
        ("ndcg@10 changed", &with["changed"]["ndcg@10"]),
        ("ndcg@10 reversed", &with["reversed"]["ndcg@10"]),
        ("p-mrr", &with["p-mrr"]),
    ] {
        let (a, b) = (periodic[key].as_f64().unwrap(), report.as_f64().unwrap());
        assert!((a - b).abs() < 1e-9, "{key}: during training {a}, eval {b}");
    }

    // search: the module changes the scores; export keeps the module.
    let corpus = demo.join("corpus.jsonl");
    let cross_scores = search_scores(&trained, &corpus);
    assert_ne!(cross_scores, search_scores(&concat, &corpus));
    let exported = dir.join("exported");
    stdout_of(&["export", "--model", s(&trained), "--output", s(&exported)]);
    assert!(exported.join("cross_attention.safetensors").is_file());
    assert_eq!(search_scores(&exported, &corpus), cross_scores);
}

#[test]
fn inf_ir_tuples_published_as_parquet_train_like_the_same_records_in_jsonl() {
    let dir = tmp("parquet");
    let model = tiny_model(&dir);
    let hub =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/published/inf-ir");
    let from_parquet = dir.join("run-parquet");
    let flags = ["--max-steps", "2", "--seed", "7"];
    let args = common_and(&model, &hub, &from_parquet, &flags);
    let err = ok(&train(&args));
    assert!(err.contains("2 rows of 1 Parquet file(s)"), "{err}");
    // The same records as JSON lines train to the same weights.
    let jsonl = from_parquet.join("published-data.jsonl");
    let copy = dir.join("same.jsonl");
    std::fs::copy(&jsonl, &copy).unwrap();
    let from_jsonl = dir.join("run-jsonl");
    let args = common_and(&model, &copy, &from_jsonl, &flags);
    ok(&train(&args));
    assert_eq!(losses(&from_parquet), losses(&from_jsonl));
    assert_eq!(run_diff(&from_parquet, &from_jsonl), 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_cpu_replicas_train_the_weights_of_one_device_and_resume_identically() {
    let (dir, model, data, _) = fresh("parallel", 6);
    let steps = [&checkpointed("6")[..], &["--devices", "cpu:2"]].concat();
    let one = dir.join("one");
    ok(&train(&common_and(&model, &data, &one, &steps[..6])));
    let two = dir.join("two");
    let err = ok(&train(&common_and(&model, &data, &two, &steps)));
    assert!(err.contains("cpu:2 (data-parallel)"), "{err}");
    // The same global batch: the same gradient, summed in another order (two partial sums
    // over each device's rows, then their sum), so float32 rounding, amplified a little by
    // AdamW's division by sqrt(v) over six steps: 4.8e-6 measured here, against weights of
    // order 1e-2 to 1; the bound leaves room for other CPUs' SIMD paths (GradCache's is 1e-4).
    let diff = run_diff(&one, &two);
    eprintln!("two CPU replicas vs one device, max |weight difference| after 6 steps: {diff:e}");
    assert!(diff > 0.0 && diff < 5e-5, "{diff}");
    let (a, b) = (losses(&one), losses(&two));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-5, "{a:?} vs {b:?}");
    }
    // Killed at step 4 and resumed on two replicas: the uninterrupted two-replica weights.
    let killed = dir.join("killed");
    let mut args = common_and(&model, &data, &killed, &steps);
    kill_at(&args, &killed, 4);
    args.push("--resume");
    ok(&train(&args));
    let diff = run_diff(&two, &killed);
    assert!(diff <= 1e-6, "resumed weights differ by {diff}");
    // Nonsense device lists are refused by name.
    for (bad, expected) in [
        ("cpu:0", "replica count"),
        ("wgpu:0,0", "named twice"),
        ("tpu:1", "unknown device"),
    ] {
        let out = train(&[
            "--model",
            s(&model),
            "--data",
            s(&data),
            "--output",
            s(&dir.join("x")),
            "--devices",
            bad,
        ]);
        refused(&out, &[expected]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes distillation anchors `(instruction, query, candidates)` to `path` as
/// instruction-negative records, the first candidate the positive.
fn write_anchors(
    path: PathBuf,
    anchors: impl Iterator<Item = (String, String, Vec<String>)>,
) -> PathBuf {
    let lines: Vec<String> = anchors
        .map(|(instruction, query, candidates)| {
            serde_json::json!({
                "query": query,
                "instruction": instruction,
                "positive": candidates[0],
                "negatives": candidates[1..],
                "instruction_negatives": [],
            })
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Distillation anchors over the records' topics: an instruction, a query and three passages.
fn anchors(dir: &Path) -> PathBuf {
    let topics = [
        "sourdough bread",
        "solar panels",
        "coral reefs",
        "tax returns",
    ];
    let anchors = topics.iter().map(|t| {
        (
            "I teach an evening class and want material my students can follow.".to_string(),
            format!("{t} basics"),
            vec![
                format!("An easy introduction to {t} with simple examples."),
                format!("A dense technical report on {t} with many formulas."),
                format!("Market figures for {t} in 2021."),
            ],
        )
    });
    write_anchors(dir.join("anchors.jsonl"), anchors)
}

#[test]
fn distillation_adds_nothing_while_the_model_is_its_teacher_then_acts() {
    let (dir, model, data, plain) = fresh("distill", 6);
    let anchors = anchors(&dir);
    let args = common_and(&model, &data, &plain, &["--max-steps", "4"]);
    ok(&train(&args));
    let distilled = dir.join("distilled");
    let flags = [
        "--max-steps",
        "4",
        "--distill-data",
        s(&anchors),
        "--distill-weight",
        "10",
        "--distill-batch",
        "3",
    ];
    let args = common_and(&model, &data, &distilled, &flags);
    let err = ok(&train(&args));
    assert!(err.contains("distillation: 4 anchors"), "{err}");
    assert!(err.contains("temperature 0.05"), "the objective's τ: {err}");
    let (a, b) = (losses(&plain), losses(&distilled));
    // At the first step the student is the teacher: the divergence is 0 and so is its gradient.
    assert!((a[0] - b[0]).abs() < 1e-5, "{a:?} vs {b:?}");
    // Once the weights move, the term adds to the loss and changes the path.
    assert!(
        a.iter().zip(&b).skip(1).any(|(x, y)| (x - y).abs() > 1e-4),
        "{a:?} vs {b:?}"
    );
    assert!(
        max_diff(
            &weights(&plain.join("model")),
            &weights(&distilled.join("model"))
        ) > 0.0
    );
    // A softer teacher distribution (--distill-temperature) is another term: another path.
    let soft = dir.join("soft");
    let args = common_and(&model, &data, &soft, &flags);
    let err = ok(&train(
        &[&args[..], &["--distill-temperature", "0.5"]].concat(),
    ));
    assert!(err.contains("temperature 0.5"), "{err}");
    let c = losses(&soft);
    assert!((a[0] - c[0]).abs() < 1e-5, "{a:?} vs {c:?}");
    assert!(
        b.iter().zip(&c).skip(1).any(|(x, y)| (x - y).abs() > 1e-4),
        "{b:?} vs {c:?}"
    );
    refused(
        &train(&[&args[..], &["--distill-temperature=-1"]].concat()),
        &["--distill-temperature"],
    );
    // The embedding term (--distill-embedding-weight) adds nothing while the student embeds
    // as the teacher does, then holds the anchors' texts: another path, and the teacher's
    // embeddings saved beside its scores.
    let held = dir.join("held");
    let args = common_and(&model, &data, &held, &flags);
    let err = ok(&train(
        &[&args[..], &["--distill-embedding-weight", "5"]].concat(),
    ));
    assert!(err.contains("embedding weight 5"), "{err}");
    let e = losses(&held);
    assert!((a[0] - e[0]).abs() < 1e-5, "{a:?} vs {e:?}");
    assert!(
        b.iter().zip(&e).skip(1).any(|(x, y)| (x - y).abs() > 1e-4),
        "{b:?} vs {e:?}"
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(held.join("teacher-scores.json")).unwrap()).unwrap();
    let dim = saved["embeddings"]["dim"]
        .as_u64()
        .expect("the embeddings' width") as usize;
    let passages = saved["embeddings"]["passages"]
        .as_array()
        .expect("passages");
    assert!(dim > 0 && !passages.is_empty() && passages.len().is_multiple_of(dim));
    let plain_saved = std::fs::read_to_string(distilled.join("teacher-scores.json")).unwrap();
    assert!(
        !plain_saved.contains("embeddings"),
        "kept only for the term"
    );
    refused(
        &train(&[&args[..], &["--distill-embedding-weight=-1"]].concat()),
        &["--distill-embedding-weight"],
    );
}

#[test]
fn a_resumed_distilled_run_reads_the_teacher_scores_it_saved_and_ends_with_the_uninterrupted_weights(
) {
    let (dir, model, data, _) = fresh("distill-resume", 10);
    let anchors = anchors(&dir);
    let distill = ["--distill-data", s(&anchors), "--distill-weight", "10"];
    let flags = [&checkpointed("8")[..], &distill].concat();
    let straight = dir.join("straight");
    let err = ok(&train(&common_and(&model, &data, &straight, &flags)));
    assert!(!err.contains("teacher scores read"), "{err}");
    let saved = |run: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(run.join("teacher-scores.json")).unwrap()).unwrap()
    };
    let scores = saved(&straight)["scores"].as_array().unwrap().clone();
    assert_eq!(scores.len(), 4, "one row per anchor");
    assert!(scores.iter().all(|row| row.as_array().unwrap().len() == 3));

    // Killed and resumed: the scores are read, not computed, and the weights are the
    // uninterrupted ones.
    let killed = dir.join("killed");
    let mut args = common_and(&model, &data, &killed, &flags);
    kill_at(&args, &killed, 4);
    assert_eq!(saved(&killed)["scores"], saved(&straight)["scores"]);
    args.push("--resume");
    let err = ok(&train(&args));
    assert!(err.contains("teacher scores read from"), "{err}");
    let diff = run_diff(&straight, &killed);
    assert!(diff <= 1e-6, "resumed weights differ by {diff}");

    // The saved scores are what a resumed run distils toward: scaled under their own key,
    // they change the resumed weights.
    let tampered = dir.join("tampered");
    let mut args = common_and(&model, &data, &tampered, &flags);
    kill_at(&args, &tampered, 4);
    let mut file = saved(&tampered);
    for row in file["scores"].as_array_mut().unwrap() {
        for v in row.as_array_mut().unwrap() {
            *v = (-3.0 * v.as_f64().unwrap()).into();
        }
    }
    std::fs::write(tampered.join("teacher-scores.json"), file.to_string()).unwrap();
    args.push("--resume");
    ok(&train(&args));
    let diff = run_diff(&straight, &tampered);
    assert!(diff > 1e-4, "weights moved by {diff} only");

    // Scores saved under another key (another teacher, say) are computed again.
    let other = dir.join("other");
    let mut args = common_and(&model, &data, &other, &flags);
    kill_at(&args, &other, 4);
    let mut file = saved(&other);
    file["key"] = "0".into();
    std::fs::write(other.join("teacher-scores.json"), file.to_string()).unwrap();
    args.push("--resume");
    let err = ok(&train(&args));
    assert!(
        err.contains("other settings") && !err.contains("teacher scores read"),
        "{err}"
    );
    assert_eq!(saved(&other)["key"], saved(&straight)["key"]);
    let diff = run_diff(&straight, &other);
    assert!(diff <= 1e-6, "resumed weights differ by {diff}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_cpu_replicas_distil_as_one_device_does() {
    let (dir, model, data, _) = fresh("distill-parallel", 6);
    let anchors = anchors(&dir);
    let distill = [
        "--max-steps",
        "6",
        "--distill-data",
        s(&anchors),
        "--distill-weight",
        "10",
    ];
    // Three anchors per micro-batch over two accumulated micro-batches: the replicas' shares
    // are one and two anchors, each divided by the accumulation. One anchor: the first
    // replica has none. The embedding term is split the same way.
    let cases: [&[&str]; 3] = [
        &["--distill-batch", "3", "--grad-accumulation", "2"],
        &["--distill-batch", "1"],
        &[
            "--distill-batch",
            "3",
            "--grad-accumulation",
            "2",
            "--distill-embedding-weight",
            "5",
        ],
    ];
    for (i, case) in cases.iter().enumerate() {
        let flags = [&distill[..], case].concat();
        let one = dir.join(format!("one-{i}"));
        ok(&train(&common_and(&model, &data, &one, &flags)));
        let two = dir.join(format!("two-{i}"));
        let args = common_and(&model, &data, &two, &flags);
        let err = ok(&train(&[&args[..], &["--devices", "cpu:2"]].concat()));
        assert!(err.contains("cpu:2 (data-parallel)"), "{err}");
        let diff = run_diff(&one, &two);
        eprintln!("distilled ({case:?}), two CPU replicas vs one device, max |weight difference|: {diff:e}");
        assert!(diff < 2e-5, "{case:?}: {diff}");
        let (a, b) = (losses(&one), losses(&two));
        assert_eq!(a.len(), 6);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-5, "{case:?}: {a:?} vs {b:?}");
        }
    }
    // The term acts on the replicas: without it their weights are others.
    let plain = dir.join("plain");
    let args = common_and(&model, &data, &plain, &distill[..2]);
    ok(&train(
        &[
            &args[..],
            &["--devices", "cpu:2", "--grad-accumulation", "2"],
        ]
        .concat(),
    ));
    let diff = run_diff(&dir.join("two-0"), &plain);
    assert!(diff > 1e-4, "{diff}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Distillation anchors with no instruction over a pool of `pool` passages, each anchor's
/// `per` candidates drawn from the pool so that anchors share passages.
fn shared_anchors(dir: &Path, anchors: usize, per: usize, pool: usize) -> PathBuf {
    let passage = |i: usize| {
        format!(
            "Passage {i} on topic {} with detail {}.",
            i % 17,
            i * 7 % 101
        )
    };
    let anchors = (0..anchors).map(|a| {
        let candidates = (0..per).map(|c| passage((a * 5 + c * 11) % pool)).collect();
        (
            String::new(),
            format!("question {a} about topic {}", a % 17),
            candidates,
        )
    });
    write_anchors(dir.join("shared-anchors.jsonl"), anchors)
}

#[test]
fn the_saved_teacher_scores_are_the_encoders_cosines() {
    let (dir, model, data, out) = fresh("teacher-scores", 4);
    // 700 distinct passages in 1,600 candidate slots and 200 queries: several encoder calls
    // of 512 texts, passages shared between anchors.
    let path = shared_anchors(&dir, 200, 8, 700);
    let flags = ["--max-steps", "1", "--distill-data", s(&path)];
    ok(&train(&common_and(&model, &data, &out, &flags)));
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("teacher-scores.json")).unwrap()).unwrap();
    let encoder = engine::Encoder::load(&model, &Device::flex()).unwrap();
    let mut worst = 0f32;
    for (line, scores) in std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .zip(saved["scores"].as_array().unwrap())
    {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let mut texts = vec![record["positive"].as_str().unwrap()];
        texts.extend(
            record["negatives"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap()),
        );
        let query = encoder
            .encode_queries(&[("", record["query"].as_str().unwrap())])
            .unwrap();
        let passages = encoder.encode(&texts).unwrap();
        let scores = scores.as_array().unwrap();
        assert_eq!(scores.len(), texts.len());
        for (i, score) in scores.iter().enumerate() {
            let want: f32 = query
                .row(0)
                .iter()
                .zip(passages.row(i))
                .map(|(a, b)| a * b)
                .sum();
            worst = worst.max((score.as_f64().unwrap() as f32 - want).abs());
        }
    }
    assert_eq!(saved["scores"].as_array().unwrap().len(), 200);
    eprintln!("saved teacher score vs the encoder's cosine, max |difference|: {worst:e}");
    assert!(worst < 1e-4, "{worst:e}");
    // Scores that differ from candidate to candidate: a mix-up of rows would show.
    let all: Vec<f64> = saved["scores"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()))
        .collect();
    let spread =
        all.iter().cloned().fold(f64::MIN, f64::max) - all.iter().cloned().fold(f64::MAX, f64::min);
    eprintln!("teacher scores spread: {spread}");
    assert!(spread > 0.05, "spread {spread}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_distillation_settings_and_anchors_are_refused_before_training() {
    let (dir, model, data, out) = fresh("distill-bad", 4);
    // An InF-IR record has no candidate list: refused, naming the file and the record.
    let inf_ir = dir.join("inf-ir.jsonl");
    let first = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&inf_ir, first.lines().next().unwrap().to_string() + "\n").unwrap();
    let flags = ["--max-steps", "1", "--distill-data", s(&inf_ir)];
    let args = common_and(&model, &data, &out, &flags);
    let run = train(&args);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(err.contains("inf-ir.jsonl: record 1"), "{err}");
    let anchors = anchors(&dir);
    let flags = [
        "--max-steps",
        "1",
        "--distill-data",
        s(&anchors),
        "--grad-cache-chunk",
        "2",
    ];
    let args = common_and(&model, &data, &out, &flags);
    let run = train(&args);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("not with --grad-cache-chunk"));
    assert!(!out.join("model").exists());
}

#[test]
fn mixed_precision_is_refused_where_it_cannot_run() {
    let (_, model, data, out) = fresh("mixed-refused", 4);
    let cases: [(&[&str], &str); 3] = [
        (&["--precision", "mixed-f16"], "needs one GPU device"),
        (
            &[
                "--precision",
                "mixed-f16",
                "--device",
                "wgpu",
                "--grad-cache-chunk",
                "2",
            ],
            "direct step only",
        ),
        (&["--precision", "f8"], "unknown training precision 'f8'"),
    ];
    for (flags, wanted) in cases {
        let mut flags = flags.to_vec();
        flags.extend(["--max-steps", "1"]);
        let run = train(&common_and(&model, &data, &out, &flags));
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{flags:?}");
        assert!(err.contains(wanted), "{flags:?}: {err}");
        assert!(!out.join("model").exists());
    }
}

#[test]
fn a_lesson_takes_the_steps_trainer_train_takes_with_the_config_it_writes() {
    let dir = tmp("lesson");
    let model = tiny_model(&dir);
    let lesson = dir.join("lesson");
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["lesson", "--model", s(&model), "--output", s(&lesson)])
        .args(["--steps", "3"])
        .output()
        .expect("run trainer");
    let err = ok(&out);
    assert!(err.contains("step 3 loss"), "{err}");
    let log: Vec<serde_json::Value> = std::fs::read_to_string(lesson.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        log.len(),
        4,
        "the base model's scores, then one line per step"
    );
    for line in &log {
        for score in ["ndcg10_changed", "p_mrr", "wise"] {
            let v = line["eval"][score].as_f64().unwrap();
            assert!((-1.0..=1.0).contains(&v), "{score} = {v} in {line}");
        }
    }
    // Each step lowers the loss of the batch it trained on (a descent step, applied).
    for line in &log[1..] {
        let (before, after) = (
            line["loss"].as_f64().unwrap(),
            line["loss_after"].as_f64().unwrap(),
        );
        assert!(after < before, "loss {before} -> {after} in {line}");
    }
    // The trainer, given the lesson's config and records, takes the same steps.
    let trained = dir.join("trained");
    ok(&train(&[
        "--config",
        s(&lesson.join("config.json")),
        "--output",
        s(&trained),
    ]));
    let (ours, theirs) = (losses(&lesson), losses(&trained));
    assert_eq!(ours.len(), 3);
    assert_eq!(theirs.len(), 3);
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(
            (a - b).abs() < 1e-6,
            "lesson {ours:?} vs trainer {theirs:?}"
        );
    }
    let diff = max_diff(
        &weights(&lesson.join("model")),
        &weights(&trained.join("model")),
    );
    assert!(diff < 1e-6, "weights differ by {diff}");
    let base = weights(&model);
    assert!(
        max_diff(&base, &weights(&lesson.join("model"))) > 1e-4,
        "the lesson moved the weights"
    );
}

/// A lesson on one judged topic (the constraint topics' layout: one query per instruction
/// pair): two pairs train on one and are judged on the other, three on two and one.
#[test]
fn a_lesson_on_one_judged_topic_trains_on_its_pairs_and_is_judged_on_a_held_out_one() {
    let dir = tmp("lesson-topic");
    let model = tiny_model(&dir);
    let set = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/constraint-topics");
    for (topic, training, held_out) in [("w1-001", 1, 1), ("w1-002", 2, 1)] {
        let lesson = dir.join(topic);
        let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
            .args(["lesson", "--model", s(&model), "--output", s(&lesson)])
            .args(["--set", s(&set), "--topic", topic, "--steps", "1"])
            .output()
            .expect("run trainer");
        let err = ok(&out);
        assert!(
            err.contains(&format!(
                "from {training} training queries, {held_out} held-out queries over 8 passages"
            )),
            "{topic}: {err}"
        );
        let records = std::fs::read_to_string(lesson.join("records.jsonl")).unwrap();
        assert!(records.lines().count() >= training, "{topic}: {records}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args([
            "lesson",
            "--model",
            s(&model),
            "--output",
            s(&dir.join("none")),
        ])
        .args(["--set", s(&set), "--topic", "w9-999"])
        .output()
        .expect("run trainer");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no query of topic w9-999"));
}

#[test]
fn start_share_saves_the_mix_of_start_and_trained_weights_as_trainer_interpolate_does() {
    let (dir, model, data, out) = fresh("start-share", 6);
    let flags = ["--max-steps", "3", "--start-share", "0.5"];
    let args = common_and(&model, &data, &out, &flags);
    ok(&train(&args));
    let (start, tuned, mixed) = (
        weights(&model),
        weights(&out.join("model-tuned")),
        weights(&out.join("model")),
    );
    assert!(
        max_diff(&start, &tuned) > 1e-4,
        "training moved the weights"
    );
    for (((name, s), (_, t)), (_, m)) in start.iter().zip(&tuned).zip(&mixed) {
        for ((s, t), m) in s.iter().zip(t).zip(m) {
            assert!(
                (m - (s + t) / 2.0).abs() < 1e-6,
                "{name}: {m} vs {s} and {t}"
            );
        }
    }
    // The command mixes the same way.
    let again = dir.join("again");
    let interpolate = |start: &Path, share: &str, output: &Path| {
        crate::common::trainer(&[
            "interpolate",
            "--start",
            s(start),
            "--tuned",
            s(&out.join("model-tuned")),
            "--start-share",
            share,
            "--output",
            s(output),
        ])
    };
    ok(&interpolate(&model, "0.5", &again));
    assert_eq!(weights(&again), mixed);
    // A negative share extrapolates past the trained weights, away from the start.
    let past = dir.join("past");
    ok(&interpolate(&model, "-0.25", &past));
    for (((name, s), (_, t)), (_, p)) in start.iter().zip(&tuned).zip(&weights(&past)) {
        for ((s, t), p) in s.iter().zip(t).zip(p) {
            assert!(
                (p - (1.25 * t - 0.25 * s)).abs() < 1e-5,
                "{name}: {p} vs {s} and {t}"
            );
        }
    }
    // Bad shares and a start of another shape are refused, and nothing is written.
    let (refused, base) = (dir.join("refused"), base_model_dir());
    for (start, share, says) in [
        (model.as_path(), "1.5", "within -1 and 1"),
        (model.as_path(), "-1.5", "within -1 and 1"),
        (base.as_path(), "0.5", "shape differs"),
    ] {
        crate::common::refused(&interpolate(start, share, &refused), &[says]);
        assert!(!refused.exists());
    }
}

#[test]
fn every_numeric_setting_out_of_range_is_refused_by_its_flag_before_training() {
    let (dir, model, data, out) = fresh("ranges", 4);
    for (flag, value) in [
        ("--lr", "0"),
        ("--beta1", "1"),
        ("--beta2", "-0.1"),
        ("--adam-epsilon", "0"),
        ("--weight-decay", "-1"),
        ("--warmup-ratio", "1"),
        ("--max-grad-norm", "NaN"),
        ("--temperature", "-0.05"),
        ("--instruction-fraction", "1.5"),
        ("--start-share", "-2"),
        ("--query-max-length", "1"),
        ("--grad-accumulation", "0"),
        ("--keep-checkpoints", "0"),
        ("--distill-batch", "0"),
        ("--exclusion-weight", "-1"),
        ("--inclusion-weight", "NaN"),
        ("--excluded-order-weight", "-0.5"),
        ("--demotion-weight", "-3"),
    ] {
        let mut args = common(&model, &data, &out);
        if let Some(i) = args.iter().position(|a| *a == flag) {
            args.drain(i..i + 2);
        }
        let setting = format!("{flag}={value}");
        args.extend([setting.as_str(), "--max-steps", "1"]);
        let run = train(&args);
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{flag} {value} accepted");
        assert!(err.contains(&format!("{flag} must be")), "{flag}: {err}");
        assert!(!out.exists(), "{flag}: nothing is written");
    }
    // The same check holds for a value from the config file.
    let config = dir.join("bad.json");
    std::fs::write(&config, r#"{"beta1": 1.5}"#).unwrap();
    let flags = ["--max-steps", "1", "--config", s(&config)];
    let args = common_and(&model, &data, &out, &flags);
    let run = train(&args);
    assert!(String::from_utf8_lossy(&run.stderr).contains("--beta1 must be in [0, 1)"));
}

/// The weights of `run`'s model split by whether `frozen` (a weight name) says they were frozen,
/// each part's largest difference to the starting `model`'s.
fn frozen_and_trained_diff(model: &Path, run: &Path, frozen: impl Fn(&str) -> bool) -> (f32, f32) {
    let (start, end) = (weights(model), weights(&run.join("model")));
    let (mut still, mut moved) = (0.0f32, 0.0f32);
    for ((name, a), (_, b)) in start.iter().zip(&end) {
        let d = max_diff(&[(name.clone(), a.clone())], &[(name.clone(), b.clone())]);
        if frozen(name) {
            still = still.max(d);
        } else {
            moved = moved.max(d);
        }
    }
    (still, moved)
}

#[test]
fn frozen_blocks_keep_their_weights_on_one_device_two_replicas_and_after_a_resume() {
    let (dir, model, data, _) = fresh("frozen", 8);
    // Two blocks of the tiny model's three: the embeddings and the first layer.
    let frozen = |name: &str| name.contains("embeddings.") || name.contains("layer.0.");
    let steps = [&checkpointed("6")[..], &["--frozen-blocks", "2"]].concat();
    let one = dir.join("one");
    ok(&train(&common_and(&model, &data, &one, &steps)));
    let (still, moved) = frozen_and_trained_diff(&model, &one, frozen);
    assert_eq!(still, 0.0, "a frozen weight moved");
    assert!(moved > 1e-4, "the other layer trained: {moved}");
    let two = dir.join("two");
    let parallel = [&steps[..], &["--devices", "cpu:2"]].concat();
    ok(&train(&common_and(&model, &data, &two, &parallel)));
    assert_eq!(frozen_and_trained_diff(&model, &two, frozen).0, 0.0);
    assert!(run_diff(&one, &two) < 5e-5);
    // Killed and resumed: the blocks are frozen again, and the weights are the uninterrupted ones.
    let killed = dir.join("killed");
    let mut args = common_and(&model, &data, &killed, &steps);
    kill_at(&args, &killed, 4);
    args.push("--resume");
    ok(&train(&args));
    assert!(run_diff(&one, &killed) <= 1e-6);
    // Resuming with another count is refused by name; so is freezing everything or more.
    let mut other = common_and(&model, &data, &killed, &checkpointed("8"));
    other.extend(["--frozen-blocks", "1", "--resume"]);
    refused(&train(&other), &["frozen_blocks"]);
    for (blocks, says) in [
        ("3", "nothing would train"),
        ("4", "cannot freeze 4 blocks"),
    ] {
        let out = dir.join(format!("all-{blocks}"));
        let args = [&checkpointed("2")[..], &["--frozen-blocks", blocks]].concat();
        refused(&train(&common_and(&model, &data, &out, &args)), &[says]);
        assert!(!out.join("model").exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The loss of a one-step run on `data` with `flag` set to `weight` (written under `dir`).
fn first_loss(model: &Path, data: &Path, dir: &Path, flag: &str, weight: &str) -> f64 {
    let out = dir.join(format!("run{flag}-{weight}"));
    let args = ["--max-steps", "1", flag, weight];
    ok(&train(&common_and(model, data, &out, &args)));
    losses(&out)[0]
}

/// `trainer synth judged` on the demo set with `extra` flags, written to `data`.
fn judged_demo_records(data: &Path, extra: &[&str]) -> PathBuf {
    let demo = crate::common::demo_set();
    let args = [
        &["synth", "judged", "--set", s(&demo), "--output", s(data)],
        extra,
    ]
    .concat();
    ok(&crate::common::trainer(&args));
    data.to_path_buf()
}

#[test]
fn the_excluded_order_term_trains_on_whole_group_records() {
    let dir = tmp("excluded-order");
    let model = tiny_model(&dir);
    let data = judged_demo_records(&dir.join("whole-groups.jsonl"), &["--whole-groups", "true"]);
    let groups = crate::common::read_lines(&data)
        .iter()
        .filter(|l| {
            l["instruction_negatives"]
                .as_array()
                .is_some_and(|a| a.len() >= 2)
        })
        .count();
    assert!(groups > 0, "the demo set's groups have several passages");
    let first_loss = |weight| first_loss(&model, &data, &dir, "--excluded-order-weight", weight);
    let (without, with) = (first_loss("0"), first_loss("1"));
    // KL divergence: never negative, and random weights score a group differently with and
    // without the instruction.
    assert!(with > without + 1e-6, "{with} vs {without}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_demotion_term_trains_on_judged_records_with_distractors() {
    let dir = tmp("demotion");
    let model = tiny_model(&dir);
    let data = judged_demo_records(&dir.join("judged.jsonl"), &[]);
    // Only the records with both kinds of negatives, so the first batch has demotions.
    let kept: Vec<String> = crate::common::read_lines(&data)
        .iter()
        .filter(|l| {
            l["instruction_negatives"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
                && l["negatives"].as_array().is_some_and(|a| !a.is_empty())
        })
        .map(|l| l.to_string())
        .collect();
    assert!(!kept.is_empty(), "the demo set has passages no mode wants");
    std::fs::write(&data, kept.join("\n") + "\n").unwrap();
    let first_loss = |weight| first_loss(&model, &data, &dir, "--demotion-weight", weight);
    let (without, with) = (first_loss("0"), first_loss("2"));
    // Softplus terms are positive: the weighted term adds to the loss.
    assert!(with > without + 1e-6, "{with} vs {without}");
    std::fs::remove_dir_all(&dir).unwrap();
}
