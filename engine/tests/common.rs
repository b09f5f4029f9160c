//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use engine::{Device, Encoder};

/// The default model folder: `$IFIR_MODEL`, else `<workspace>/models/all-MiniLM-L6-v2`.
pub fn model_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("IFIR_MODEL") {
        return PathBuf::from(dir);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").is_file(),
        "default model missing at {}: run `cargo xtask fetch-model` (the README test command does)",
        dir.display()
    );
    dir
}

/// A fresh empty folder for one test: `<tmp>/ifir-tests/<pid>/<name>`. The folders of test
/// processes that have ended are removed first (Linux: their `/proc` entry is gone), so
/// repeated runs do not fill the disk.
pub fn tmp_folder(name: &str) -> PathBuf {
    static SWEEP: std::sync::Once = std::sync::Once::new();
    let root = std::env::temp_dir().join("ifir-tests");
    SWEEP.call_once(|| {
        let ended = |pid: &str| cfg!(target_os = "linux") && !Path::new("/proc").join(pid).exists();
        for entry in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            if ended(&entry.file_name().to_string_lossy()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
    let dir = root.join(std::process::id().to_string()).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tiny BERT shape (vocabulary 50, width 8, 2 heads) with `layers` layers.
pub fn tiny_config(layers: usize) -> engine::BertConfig {
    engine::BertConfig {
        vocab_size: 50,
        hidden_size: 8,
        num_hidden_layers: layers,
        num_attention_heads: 2,
        intermediate_size: 16,
        max_position_embeddings: 16,
        type_vocab_size: 2,
        layer_norm_eps: 1e-12,
        hidden_act: engine::config::Activation::Gelu,
        pad_token_id: 0,
    }
}

/// The default model on the CPU backend.
pub fn cpu_encoder() -> Encoder {
    Encoder::load(model_dir(), &Device::flex()).expect("load default model")
}

/// Cosine similarity.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb).max(1e-30)
}

/// One golden record.
pub struct Golden {
    pub text: String,
    pub token_count: usize,
    pub embedding: Vec<f32>,
}

/// Reads a golden file written by `tests/golden/make_golden.py`.
pub fn golden(name: &str) -> Vec<Golden> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Golden {
            text: r["text"].as_str().unwrap().to_string(),
            token_count: r["token_count"].as_u64().unwrap() as usize,
            embedding: r["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

/// Asserts that `result` is an error whose message starts with `prefix` and contains every one
/// of `says`; returns the message.
pub fn assert_err<T: std::fmt::Debug, E: std::fmt::Display>(
    result: Result<T, E>,
    prefix: &str,
    says: &[&str],
) -> String {
    let msg = result.unwrap_err().to_string();
    assert!(
        msg.starts_with(prefix) && says.iter().all(|w| msg.contains(w)),
        "{msg}"
    );
    msg
}

/// The ids `doc-0`, `doc-1`, ... of `n` passages.
pub fn doc_ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("doc-{i}")).collect()
}
