//! Helpers every module of the trainer's tests uses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The default model folder: `$IFIR_MODEL`, else `<workspace>/models/all-MiniLM-L6-v2`.
pub fn model_dir() -> PathBuf {
    std::env::var("IFIR_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2")
        })
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

/// A fresh empty folder for one test: `<tmp>/ifir-tests/<pid>/<area>-<name>`. The folders
/// of test processes that have ended are removed first (Linux: their `/proc` entry is gone),
/// so repeated runs do not fill the disk.
pub fn tmp(area: &str, name: &str) -> PathBuf {
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
    let dir = root
        .join(std::process::id().to_string())
        .join(format!("{area}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
