//! The web build's tools: trunk and wasm-bindgen-cli at the versions the lock file needs,
//! npm packages, wasm-opt.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

use crate::process::which;
use crate::process::{cargo, output_ok, root, run, step};
use crate::setup::{self, WasmToolchain};

/// trunk release that builds with rustc 1.95 (0.22 needs 1.96.1).
pub(super) const TRUNK_VERSION: &str = "0.21.14";

/// The wasm-bindgen version in Cargo.lock: the CLI must match it exactly.
fn wasm_bindgen_version() -> anyhow::Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = ")) {
                return Ok(v.trim_matches('"').to_string());
            }
        }
    }
    bail!("Cargo.lock has no wasm-bindgen entry")
}

pub(super) fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into())).join(".cargo")
        })
        .join("bin")
}

pub(super) fn tool_version(program: &Path) -> Option<String> {
    output_ok(Command::new(program).arg("--version"))
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
}

/// Installs `crate_name` at `version` with `cargo install` unless `program` at that version
/// is in cargo's bin folder (crates.io is the only place it comes from).
fn ensure_tool(program: &str, crate_name: &str, version: &str, locked: bool) -> anyhow::Result<()> {
    if tool_version(&cargo_bin().join(program)).as_deref() == Some(version) {
        println!("tools: {program} {version} present");
        return Ok(());
    }
    println!("tools: installing {crate_name} {version} with cargo install (a few minutes, once)");
    let mut c = cargo();
    c.args(["install", crate_name, "--version", &format!("={version}")]);
    if locked {
        c.arg("--locked");
    }
    // Its own target folder: the tools do not share features with the workspace.
    c.env_remove("CARGO_TARGET_DIR");
    run(&mut c)
}

/// The wasm32 std and the wasm-bindgen CLI matching Cargo.lock (what a build without trunk needs).
pub(super) fn wasm_bindgen_tools() -> anyhow::Result<WasmToolchain> {
    let wasm = setup::wasm()?;
    ensure_tool(
        "wasm-bindgen",
        "wasm-bindgen-cli",
        &wasm_bindgen_version()?,
        false,
    )?;
    Ok(wasm)
}

/// Everything a web build needs: the wasm32 std, trunk and the matching wasm-bindgen.
pub fn tools() -> anyhow::Result<WasmToolchain> {
    let wasm = wasm_bindgen_tools()?;
    ensure_tool("trunk", "trunk", TRUNK_VERSION, true)?;
    Ok(wasm)
}

/// `npm ci` in `dir` unless `probe` (a path under its node_modules) is there already; npm
/// itself comes from Debian when missing. Install scripts do not run: they download binaries
/// from outside the registry (onnxruntime-node's, under transformers.js), which nothing here
/// uses.
pub fn npm_ci(dir: &Path, probe: &str, what: &str) -> anyhow::Result<()> {
    if dir.join("node_modules").join(probe).exists() {
        return Ok(());
    }
    step(&format!("npm ci ({what})"));
    if !which("npm") {
        setup::apt_install(&["npm"])?;
    }
    run(Command::new("npm")
        .args([
            "ci",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(dir)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"))
}

/// The folder holding `wasm-opt` from npm's binaryen (the version Trunk.toml pins; Debian's
/// binaryen 108 writes a wasm that fails at run time), installed under `xtask/web-tools`.
pub(super) fn wasm_opt_dir() -> anyhow::Result<PathBuf> {
    let tools = root().join("xtask/web-tools");
    npm_ci(&tools, ".bin/wasm-opt", "wasm-opt from binaryen")?;
    Ok(tools.join("node_modules/.bin"))
}
