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
