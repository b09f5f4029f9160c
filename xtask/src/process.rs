//! Running things: the workspace root, commands that must succeed, cargo without xtask's own
//! variables, step headings, the tools' Python venv. Every task module builds on these; this
//! module builds on nothing of xtask's.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context};

/// The workspace root. `cargo run` sets CARGO_MANIFEST_DIR at run time too; preferring it keeps
/// two clones that share one CARGO_TARGET_DIR (and so one xtask binary) apart.
pub fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.parent().unwrap().to_path_buf()
}

/// Runs a command in the workspace root, failing on a non-zero exit.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    cmd.current_dir(root());
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// Runs a command and returns its stdout when it succeeds.
pub fn output_ok(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs a command; when it fails, an error saying `what` and its stderr; else its stdout.
pub fn stdout_of(cmd: &mut Command, what: &str) -> anyhow::Result<Vec<u8>> {
    let out = cmd.output()?;
    anyhow::ensure!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.stdout)
}

/// The cargo that runs xtask (`$CARGO`), else `cargo` from PATH, without xtask's own
/// variables ([`cargo_at`]).
pub fn cargo() -> Command {
    cargo_at(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The cargo at `program`, without the variables cargo set for xtask itself
/// (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, ...). Build scripts such as ring's declare
/// `rerun-if-env-changed` on some of them, so a cargo started from xtask and one started from
/// a shell would each rebuild ring, rustls and the LanceDB stack behind them (about 10 minutes
/// here) whenever they alternate.
pub fn cargo_at(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    for (key, _) in std::env::vars_os() {
        let inherited = key.to_str().is_some_and(|k| {
            [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_CRATE_",
                "CARGO_BIN_",
            ]
            .iter()
            .any(|prefix| k.starts_with(prefix))
                || k == "CARGO_PRIMARY_PACKAGE"
        });
        if inherited {
            command.env_remove(&key);
        }
    }
    command
}

/// Makes `cargo` compile the workspace's own crates with clippy's driver, warnings denied
/// (`RUSTC_WORKSPACE_WRAPPER`, and the arguments `cargo clippy -- -D warnings` hands the
/// driver): the crates are linted as they are built, dependencies compiled by rustc as usual.
/// The wrapper is part of cargo's fingerprint, so every build that must share artefacts with
/// such a build sets it too.
pub fn lint_as_built(cargo: &mut Command) -> anyhow::Result<()> {
    cargo.env("RUSTC_WORKSPACE_WRAPPER", clippy_driver()?).env(
        "CLIPPY_ARGS",
        "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
    );
    Ok(())
}

/// The toolchain's `clippy-driver` (beside its `rustc`).
fn clippy_driver() -> anyhow::Result<PathBuf> {
    let sysroot = output_ok(Command::new("rustc").args(["--print", "sysroot"]))
        .context("cannot run `rustc --print sysroot`")?;
    let driver = PathBuf::from(sysroot.trim()).join("bin/clippy-driver");
    anyhow::ensure!(
        driver.is_file(),
        "{} is missing: install clippy (`rustup component add clippy`)",
        driver.display()
    );
    Ok(driver)
}

/// Prints a step heading with the time since xtask started (so CI logs show where time goes).
pub fn step(name: &str) {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(std::time::Instant::now);
    println!(
        "\n==> [{:.1} min] {name}",
        start.elapsed().as_secs_f64() / 60.0
    );
}

/// Python interpreter of the tools venv (created on first use, outside the repository), with
/// `packages` installed: (PyPI name, module to import).
pub fn venv_python(packages: &[(&str, &str)]) -> anyhow::Result<PathBuf> {
    let base = std::env::var_os("IFIR_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cache/ifir/venv"));
    let python = base.join("bin/python");
    if !python.is_file() {
        println!("venv: creating {}", base.display());
        run(Command::new("python3").args(["-m", "venv"]).arg(&base))?;
    }
    let missing: Vec<&str> = packages
        .iter()
        .filter(|(_, module)| {
            !Command::new(&python)
                .args(["-c", &format!("import {module}")])
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        })
        .map(|(package, _)| *package)
        .collect();
    if !missing.is_empty() {
        println!("venv: installing {:?} from PyPI", missing);
        run(Command::new(&python)
            .args(["-m", "pip", "install", "-q"])
            .args(&missing))?;
    }
    Ok(python)
}

/// `$HOME` (or /tmp).
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// `$CARGO_TARGET_DIR` (or `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// The system Python (`python3`, else `python`).
pub fn python() -> &'static str {
    if which("python3") {
        "python3"
    } else {
        "python"
    }
}

/// True when `program` is on PATH.
pub fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
        .unwrap_or(false)
}
