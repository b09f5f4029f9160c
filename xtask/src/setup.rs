//! Installing what builds and tests need, idempotently and with a message per step. Nothing is
//! downloaded from outside the package registries: the wasm32 standard library comes from
//! rustup when its server answers, else from Debian's `rustc-web` packages.

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context};

use crate::process::which;
use crate::process::{output_ok, run};

/// How to build for wasm32-unknown-unknown on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmToolchain {
    /// rustup's prebuilt wasm32 std for the current toolchain.
    Rustup,
    /// Debian's Rust (`/usr/bin/cargo`) building std from source (`-Zbuild-std`).
    Debian,
}

impl WasmToolchain {
    /// Sets the environment `cmd` needs to build for wasm32 with this toolchain (for tools such
    /// as trunk that call cargo themselves).
    pub fn configure(self, cmd: &mut Command) {
        let cargo = self.cargo();
        for (k, v) in cargo.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
    }

    /// A `cargo` command set up for this toolchain.
    pub fn cargo(self) -> Command {
        match self {
            WasmToolchain::Rustup => crate::process::cargo(),
            WasmToolchain::Debian => {
                let mut c = crate::process::cargo_at("/usr/bin/cargo");
                let path = std::env::var("PATH").unwrap_or_default();
                c.env("PATH", format!("/usr/bin:{path}"))
                    .env("RUSTC", "/usr/bin/rustc")
                    .env_remove("RUSTUP_TOOLCHAIN")
                    .env("RUSTC_BOOTSTRAP", "1")
                    .env("CARGO_UNSTABLE_BUILD_STD", "std,panic_abort")
                    .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", "wasm-ld");
                // Another compiler: keep its artefacts apart from rustup's.
                if let Ok(dir) = std::env::var("CARGO_TARGET_DIR") {
                    c.env("CARGO_TARGET_DIR", format!("{dir}/debian-rust"));
                } else {
                    c.env(
                        "CARGO_TARGET_DIR",
                        crate::process::root().join("target/debian-rust"),
                    );
                }
                c
            }
        }
    }
}

/// Makes the wasm32 std available and says which route it took.
pub fn wasm() -> anyhow::Result<WasmToolchain> {
    if rustup_has_wasm() {
        println!("wasm32: rustup target wasm32-unknown-unknown is installed");
        return Ok(WasmToolchain::Rustup);
    }
    if which("rustup") {
        println!("wasm32: trying `rustup target add wasm32-unknown-unknown` (3 minutes at most)");
        let mut c = Command::new("rustup");
        c.args(["target", "add", "wasm32-unknown-unknown"]);
        if run_with_timeout(c, Duration::from_secs(180)) && rustup_has_wasm() {
            println!("wasm32: installed through rustup");
            return Ok(WasmToolchain::Rustup);
        }
        println!("wasm32: rustup could not fetch the target; falling back to Debian's rustc-web");
    }
    apt_install(&["rustc-web", "cargo-web", "rust-web-src", "lld"])?;
    if !std::path::Path::new("/usr/bin/cargo").is_file() || !which("wasm-ld") {
        bail!("Debian's rustc-web route is incomplete: /usr/bin/cargo or wasm-ld is missing");
    }
    println!("wasm32: using Debian's Rust with -Zbuild-std (RUSTC_BOOTSTRAP=1, linker wasm-ld)");
    Ok(WasmToolchain::Debian)
}

fn rustup_has_wasm() -> bool {
    which("rustup")
        && output_ok(Command::new("rustup").args(["target", "list", "--installed"]))
            .map(|s| s.lines().any(|l| l.trim() == "wasm32-unknown-unknown"))
            .unwrap_or(false)
}

fn run_with_timeout(mut c: Command, limit: Duration) -> bool {
    let Ok(mut child) = c.spawn() else {
        return false;
    };
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(500)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Installs Mesa's Vulkan driver (lavapipe) so wgpu can run on the CPU. Returns false, with a
/// message, when it cannot be installed here.
pub fn vulkan() -> bool {
    match apt_install(&["mesa-vulkan-drivers", "libvulkan1"]) {
        Ok(()) => true,
        Err(e) => {
            println!("vulkan: cannot install Mesa's Vulkan driver ({e:#}); GPU-backend tests will be skipped");
            false
        }
    }
}

/// Makes sure `protoc` is on PATH with protobuf's well-known types: Lance's build scripts (the
/// `lancedb` feature the tests build) compile protobuf files that import them. Debian's
/// `protobuf-compiler` and `libprotobuf-dev` (the `.proto` files) when missing.
pub fn protoc() -> anyhow::Result<()> {
    if which("protoc") && std::path::Path::new("/usr/include/google/protobuf/empty.proto").is_file()
    {
        return Ok(());
    }
    apt_install(&["protobuf-compiler", "libprotobuf-dev"])
        .context("the vector store's build needs protoc and protobuf's .proto files")
}

/// Installs Debian packages that are missing (apt-get as root, else through sudo).
pub fn apt_install(packages: &[&str]) -> anyhow::Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| {
            !output_ok(Command::new("dpkg-query").args(["-W", "-f=${Status}", p]))
                .map(|s| s.contains("install ok installed"))
                .unwrap_or(false)
        })
        .collect();
    if missing.is_empty() {
        println!("apt: {} already installed", packages.join(", "));
        return Ok(());
    }
    if !which("apt-get") {
        bail!("apt-get not found: install {} by hand", missing.join(" "));
    }
    let root = output_ok(Command::new("id").arg("-u"))
        .map(|s| s.trim() == "0")
        .unwrap_or(false);
    let sudo = |args: &[&str]| {
        let mut c = if root {
            Command::new(args[0])
        } else {
            let mut c = Command::new("sudo");
            c.arg("-n").arg(args[0]);
            c
        };
        c.args(&args[1..]).env("DEBIAN_FRONTEND", "noninteractive");
        c
    };
    println!("apt: installing {}", missing.join(", "));
    run(&mut sudo(&["apt-get", "update", "-qq"])).context("apt-get update failed")?;
    let mut args = vec!["apt-get", "install", "-y", "-qq", "--no-install-recommends"];
    args.extend(&missing);
    run(&mut sudo(&args))
        .with_context(|| format!("apt-get install {} failed", missing.join(" ")))?;
    Ok(())
}
