//! The composite tasks: demo, test, golden.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context};

use crate::{model, setup};

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Runs a command in the workspace root, failing on a non-zero exit.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    cmd.current_dir(root());
    let shown = format!("{cmd:?}");
    let status = cmd.status().with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// Runs a command and returns its stdout when it succeeds.
pub fn output_ok(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn step(name: &str) {
    println!("\n==> {name}");
}

/// `cargo xtask demo`.
pub fn demo(args: &[String]) -> anyhow::Result<()> {
    let dir = model::fetch_default()?;
    step("trainer demo");
    run(cargo()
        .args(["run", "--quiet", "--release", "-p", "trainer", "--", "demo", "--model"])
        .arg(&dir)
        .args(args))
}

/// `cargo xtask test`.
pub fn test(gpu: bool) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    step("set-up");
    let wasm = setup::wasm()?;
    let gpu = gpu && setup::vulkan();
    let model_dir = model::fetch_default()?;

    // One feature set per build mode keeps burn compiled once per mode: clippy sees every
    // backend (CUDA included, which proves the `cuda` feature compiles), the tests run the CPU
    // path everywhere plus wgpu-on-Vulkan in engine/tests/backends.rs.
    step("cargo fmt --check");
    run(cargo().args(["fmt", "--all", "--check"]))?;
    step("cargo clippy, every backend feature incl. cuda (warnings denied)");
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--features",
        "engine/vulkan,engine/cuda",
        "--",
        "-D",
        "warnings",
    ]))?;
    step("cargo test (CPU everywhere; wgpu on Vulkan vs CPU in engine/tests/backends.rs)");
    let mut tests = cargo();
    tests
        .args(["test", "--workspace", "--features", "engine/vulkan"])
        .env("IFIR_MODEL", &model_dir);
    if gpu {
        // lavapipe is installed: a missing adapter is now a failure, not a skip.
        tests.env("IFIR_REQUIRE_GPU", "1");
    } else {
        println!("note: no Vulkan driver; the GPU backend test will print SKIPPED");
    }
    run(&mut tests)?;
    step("engine for wasm32-unknown-unknown (CPU + WebGPU backends)");
    run(wasm.cargo().args([
        "build",
        "-p",
        "engine",
        "--target",
        "wasm32-unknown-unknown",
        "--features",
        "wgpu",
        "--profile",
        "wasm-check",
    ]))?;
    println!("\nall checks passed in {:.1} min", started.elapsed().as_secs_f64() / 60.0);
    Ok(())
}

/// Python interpreter of the tools venv (created on first use, outside the repository).
pub fn venv_python(packages: &[&str]) -> anyhow::Result<PathBuf> {
    let base = std::env::var_os("IFIR_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cache/ifir/venv"));
    let python = base.join("bin/python");
    if !python.is_file() {
        println!("venv: creating {}", base.display());
        run(Command::new("python3").args(["-m", "venv"]).arg(&base))?;
    }
    let missing: Vec<&&str> = packages
        .iter()
        .filter(|p| {
            let module = p.split(['=', '<', '>']).next().unwrap().replace('-', "_");
            !Command::new(&python)
                .args(["-c", &format!("import {module}")])
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        })
        .collect();
    if !missing.is_empty() {
        println!("venv: installing {:?} from PyPI", missing);
        run(Command::new(&python).args(["-m", "pip", "install", "-q"]).args(missing.iter().map(|s| **s)))?;
    }
    Ok(python)
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// `cargo xtask golden`.
pub fn golden() -> anyhow::Result<()> {
    let dir = model::fetch_default()?;
    let python = venv_python(&["sentence-transformers"])?;
    let out = root().join("engine/tests/golden");
    run(Command::new(python).arg(out.join("make_golden.py")).arg(&dir).arg(&out))
}
