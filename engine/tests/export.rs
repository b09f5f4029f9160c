//! The web form of a model: F16 weights, half the size, embeddings within cosine 0.999 of the
//! f32 model (the bound) on the demo corpus and the parity texts.

use crate::common;

use engine::{Device, Encoder, ModelFiles};

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
    let device = Device::flex();
    let full = Encoder::from_files(&files, &device).unwrap();
    let small = Encoder::from_files(&reread, &device).unwrap();
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
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    let (x, y) = (full.encode(&refs).unwrap(), small.encode(&refs).unwrap());
    let worst = (0..refs.len())
        .map(|i| common::cosine(x.row(i), y.row(i)))
        .fold(f64::INFINITY, f64::min);
    println!(
        "f16 vs f32: worst cosine {worst:.6} over {} texts",
        refs.len()
    );
    assert!(worst >= 0.999, "worst cosine {worst}");
    let _ = std::fs::remove_dir_all(&dir);
}
