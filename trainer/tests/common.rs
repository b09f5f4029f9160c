//! Helpers every module of the trainer's tests uses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// The engine tests' helpers (temp folders), one copy for both crates.
#[path = "../../engine/tests/common.rs"]
mod engine_common;

/// The default model folder: `$IFIR_MODEL`, else `<workspace>/models/all-MiniLM-L6-v2`.
pub fn model_dir() -> PathBuf {
    std::env::var("IFIR_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2")
        })
}

/// The workspace root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The built-in demo set's folder.
pub fn demo_set() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../engine/demo")
}

/// Runs the `trainer` binary with the default model in `$IFIR_MODEL`.
pub fn trainer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .env("IFIR_MODEL", model_dir())
        .output()
        .expect("run trainer")
}

/// A fresh empty folder for one test (the engine tests' `tmp_folder`: under
/// `<tmp>/ifir-tests/<pid>/`, the folders of ended runs swept).
pub fn tmp(area: &str, name: &str) -> PathBuf {
    engine_common::tmp_folder(&format!("{area}-{name}"))
}

/// Says on the terminal that a test is skipped and why: straight to stderr, because the test
/// harness captures `eprintln!` of passing tests.
pub fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Asserts that a run succeeded (failing with its stderr otherwise); returns its stderr.
pub fn succeeded(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    err
}

/// Asserts that a run succeeded (failing with its stderr otherwise); returns its stdout.
pub fn stdout_ok(out: &Output) -> String {
    succeeded(out);
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Asserts that a run failed and that its stderr says every one of `says`.
pub fn refused(out: &Output, says: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && says.iter().all(|w| err.contains(w)),
        "{says:?}: {err}"
    );
}

/// Rewrites the index file `index` into `to` as if another model had made it (its model id
/// all zeros).
pub fn as_another_models_index(index: &Path, to: &Path) {
    let (header, embeddings) = engine::retrieval::IndexReader::open(index)
        .unwrap()
        .read_all()
        .unwrap();
    engine::retrieval::write_index(to, "0000000000000000", &header.ids, &embeddings).unwrap();
}

/// The JSON values of a text with one value a line (JSON Lines).
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The JSON values of a JSON Lines file.
pub fn read_lines(path: &Path) -> Vec<serde_json::Value> {
    json_lines(&std::fs::read_to_string(path).unwrap())
}

/// Writes `text` to the file `name` in `dir`; returns its path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}
