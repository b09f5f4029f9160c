//! The web forms of a model: F16 weights, half the size, embeddings within cosine 0.999 of the
//! f32 model (the bound) on the demo corpus and the parity texts; int8 matrices with
//! row scales, a quarter of the size, within 0.5 nDCG@10 points of f32 on the demo set.

use crate::common;

use engine::{Device, Embeddings, Encoder, ModelFiles, WeightFormat};

#[test]
fn f16_weights_halve_the_file_and_keep_embeddings() {
    let files = ModelFiles::read_dir(common::model_dir()).unwrap();
    let half = files.to_f16().unwrap();
    let (a, b) = (
        files.get("model.safetensors").unwrap().len(),
        half.get("model.safetensors").unwrap().len(),
    );
    assert!(b * 2 <= a + 64 * 1024, "f16 weights {b} bytes vs f32 {a}");
    // Written and read back as a folder, like `trainer export --f16` does.
    let dir = common::tmp_folder("export");
    half.write_dir(&dir).unwrap();
    let reread = ModelFiles::read_dir(&dir).unwrap();
    assert_eq!(
        reread.names().collect::<Vec<_>>(),
        half.names().collect::<Vec<_>>()
    );
    let small = Encoder::from_files(&reread, &Device::flex()).unwrap();
    assert_worst_cosine(&small, "f16", 0.999);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The demo corpus's first 60 passages and the parity texts: what the cosine bounds are
/// measured on.
fn cosine_texts() -> Vec<String> {
    let set = engine::demo::demo_set().unwrap();
    let mut texts: Vec<String> = set
        .corpus
        .iter()
        .take(60)
        .map(|p| p.encoder_text())
        .collect();
    texts.extend(
        common::golden("minilm_golden.json")
            .into_iter()
            .map(|g| g.text),
    );
    texts
}

/// The default f32 model's embeddings of `cosine_texts` and its `demo_scores`: the reference
/// every test here compares with, computed once per test binary (the three tests would each
/// encode it again, a third of their time).
fn f32_reference() -> &'static (Embeddings, Vec<f64>) {
    static REFERENCE: std::sync::OnceLock<(Embeddings, Vec<f64>)> = std::sync::OnceLock::new();
    REFERENCE.get_or_init(|| {
        let full = common::cpu_encoder();
        (encode_cosine_texts(&full), demo_scores(&full))
    })
}

fn encode_cosine_texts(encoder: &Encoder) -> Embeddings {
    let texts = cosine_texts();
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    encoder.encode(&refs).unwrap()
}

/// Asserts that the worst cosine between the f32 model's embeddings of `cosine_texts` and
/// `other`'s is at least `bound`, and prints it under `label`.
fn assert_worst_cosine(other: &Encoder, label: &str, bound: f64) {
    let (x, y) = (&f32_reference().0, encode_cosine_texts(other));
    let worst = (0..x.len())
        .map(|i| common::cosine(x.row(i), y.row(i)))
        .fold(f64::INFINITY, f64::min);
    println!("{label} vs f32: worst cosine {worst:.6}");
    assert!(worst >= bound, "worst cosine {worst}");
}

/// nDCG@10 of the og and changed modes and p-MRR on the demo set.
fn demo_scores(encoder: &Encoder) -> Vec<f64> {
    use engine::metrics::{ModeReport, WiseConfig};
    let set = engine::demo::demo_set().unwrap();
    let passages = engine::evaluation::encode_passages(encoder, &set, &mut |_, _| {}).unwrap();
    let runs = engine::evaluation::runs(encoder, &set, &passages, false, 1000).unwrap();
    let metrics = vec!["ndcg@10".parse().unwrap()];
    let report = ModeReport::compute(
        &set.qrels,
        &runs,
        &metrics,
        WiseConfig {
            k: 20,
            strict_n: false,
        },
    );
    let mut scores: Vec<f64> = [engine::Mode::Og, engine::Mode::Changed]
        .iter()
        .map(|m| report.modes[m].mean[0])
        .collect();
    scores.push(report.p_mrr.as_ref().map_or(0.0, |p| p.mean));
    scores
}

/// The demo set's og and changed nDCG@10 of `other` within 0.5 points of the f32 model's.
fn assert_demo_rankings_kept(other: &Encoder, label: &str) {
    let (f, q) = (&f32_reference().1, demo_scores(other));
    println!("demo set og nDCG@10, changed nDCG@10, p-MRR: f32 {f:?}, {label} {q:?}");
    for (name, (x, y)) in ["og nDCG@10", "changed nDCG@10"]
        .iter()
        .zip(f.iter().zip(&q))
    {
        assert!((x - y).abs() <= 0.005, "{name}: f32 {x}, {label} {y}");
    }
}

#[test]
fn int8_weights_quarter_the_file_and_keep_the_demo_rankings() {
    let files = ModelFiles::read_dir(common::model_dir()).unwrap();
    let int8 = files.with_weights(WeightFormat::Int8).unwrap();
    let (a, b) = (
        files.get("model.safetensors").unwrap().len(),
        int8.get("model.safetensors").unwrap().len(),
    );
    assert!(
        b <= 25_000_000,
        "int8 weights {b} bytes (goal: at most 25 MB)"
    );
    assert!(
        b * 100 <= a * 26,
        "int8 weights {b} bytes vs f32 {a}: over 26%"
    );
    let dir = common::tmp_folder("export-int8");
    int8.write_dir(&dir).unwrap();
    let device = Device::flex();
    let small = Encoder::load(&dir, &device).unwrap();
    assert_worst_cosine(&small, "int8", 0.99);
    assert_demo_rankings_kept(&small, "int8 weights");

    // A scale tensor that is missing or of the wrong length is a clear error.
    let weights = int8.get("model.safetensors").unwrap();
    let tensors = safetensors::SafeTensors::deserialize(weights).unwrap();
    let mut kept: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .tensors()
        .into_iter()
        .filter(|(n, _)| n != "embeddings.word_embeddings.weight.scale")
        .collect();
    kept.sort_by(|x, y| x.0.cmp(&y.0));
    let broken = safetensors::serialize(kept, None).unwrap();
    std::fs::write(dir.join("model.safetensors"), broken).unwrap();
    let says = ["model.safetensors", "word_embeddings.weight.scale"];
    common::assert_err(Encoder::load(&dir, &device), "", &says);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn int8_arithmetic_keeps_the_embeddings_and_the_demo_rankings() {
    let device = Device::flex();
    let full = Encoder::load(common::model_dir(), &device).unwrap();
    let mut int8 = Encoder::load(common::model_dir(), &device).unwrap();
    int8.set_precision(engine::Precision::Int8).unwrap();
    assert_ne!(
        full.fingerprint(),
        int8.fingerprint(),
        "caches and indexes must tell int8 embeddings apart"
    );
    let kernel = engine::int8::Kernel::detect();
    // Measured 0.983 (the odd parity texts; ONNX Runtime's dynamic int8 export: 0.986 on its
    // four texts): per-row symmetric activations spend half their range on GELU's outputs,
    // which are rarely below -0.17. What the issue bounds is the ranking, checked next.
    assert_worst_cosine(&int8, &format!("int8 arithmetic ({kernel:?} kernel)"), 0.98);
    assert_demo_rankings_kept(&int8, "int8 arithmetic");
    // Back to f32 needs a reload; int8 twice is a no-op.
    assert!(int8.set_precision(engine::Precision::F32).is_err());
    int8.set_precision(engine::Precision::Int8).unwrap();
    // The training backend (autodiff) refuses 8 bits.
    let mut training = Encoder::load(common::model_dir(), &device.clone().autodiff()).unwrap();
    let refused = training.set_precision(engine::Precision::Int8);
    common::assert_err(refused, "", &["CPU backend"]);
}
