//! The static site: the page's wasm (with trunk, or cargo + wasm-bindgen directly), its
//! workers, the served models and their index; `dist` and `demo`.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use super::serve::serve;
use super::tools::{
    cargo_bin, tool_version, tools, wasm_bindgen_tools, wasm_opt_dir, TRUNK_VERSION,
};
use crate::process::{root, run, step};
use crate::setup::WasmToolchain;

/// The Cargo profile a site's wasm is built with (Cargo.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebProfile {
    /// `[profile.web]`, the wasm the browser downloads (`dist`, `demo`, the web benchmark;
    /// index.html names it for trunk): link-time optimisation into one codegen unit.
    Shipped,
    /// `[profile.web-test]`, the browser test's: the shipped optimisation levels without LTO's
    /// single codegen unit, and no wasm-opt (the test checks what the page does, not its size;
    /// on a slow 2-core machine the two builds went from 15.5 minutes, wasm-opt aside, to
    /// 10.1, and wasm-opt had taken 9.2 more). Its workspace
    /// crates are compiled by clippy's driver with warnings denied where rustup provides the
    /// wasm32 std, which lints the page and its workers as they are built.
    Test,
}

impl WebProfile {
    fn name(self) -> &'static str {
        match self {
            WebProfile::Shipped => "web",
            WebProfile::Test => "web-test",
        }
    }

    /// Whether wasm-opt shrinks the bound wasm (the shipped profile only, see
    /// [`WebProfile::Test`]).
    fn shrinks(self) -> bool {
        self == WebProfile::Shipped
    }

    /// Whether the build lints the workspace's crates (see [`WebProfile::Test`]).
    pub fn lints(self, wasm: WasmToolchain) -> bool {
        self == WebProfile::Test && wasm == WasmToolchain::Rustup
    }
}

/// A model to serve: where it is and its key in the page.
pub struct SiteModel {
    /// Short key (URL `?model=`, folder under `models/`).
    pub key: String,
    /// Name shown in the model picker.
    pub name: String,
    /// Hugging Face style folder.
    pub dir: PathBuf,
}

/// How the app is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builder {
    /// trunk (the development tool, `trunk serve`), for `cargo xtask demo` and `dist` when the
    /// pinned trunk is installed.
    Trunk,
    /// cargo and wasm-bindgen directly, the steps trunk takes, with this profile: the browser
    /// tests, the web benchmark, and the demo when trunk is absent (installing it is about 17
    /// minutes of compiling on 2 cores).
    Direct(WebProfile),
}

impl Builder {
    /// trunk when the pinned version is installed, else the direct build.
    fn for_demo() -> Builder {
        if tool_version(&cargo_bin().join("trunk")).as_deref() == Some(TRUNK_VERSION) {
            Builder::Trunk
        } else {
            println!("tools: trunk {TRUNK_VERSION} absent: building with cargo and wasm-bindgen (trunk stays optional, for `trunk serve`)");
            Builder::Direct(WebProfile::Shipped)
        }
    }

    /// The profile of the wasm this builder writes (trunk's: index.html's, the shipped one).
    fn profile(self) -> WebProfile {
        match self {
            Builder::Trunk => WebProfile::Shipped,
            Builder::Direct(profile) => profile,
        }
    }
}

/// Builds the static site into `out`: the app (release), then each model exported with int8
/// weights under `models/<key>/` and `models/index.json` listing sizes and sha256.
pub fn build_site(out: &Path, models: &[SiteModel], builder: Builder) -> anyhow::Result<()> {
    let wasm = build_page(out, models, builder)?;
    build_learn_worker(wasm, builder.profile(), out)?;
    report_sizes(out)
}

/// The site without the learn-live worker: the page (with trunk or directly) and the models.
fn build_page(out: &Path, models: &[SiteModel], builder: Builder) -> anyhow::Result<WasmToolchain> {
    let wasm = match builder {
        Builder::Trunk => build_with_trunk(out)?,
        Builder::Direct(profile) => build_direct(profile, out)?,
    };
    export_models(out, models)?;
    Ok(wasm)
}

/// A wasm binary of the app crate built with `profile`; returns the file.
fn cargo_build_wasm(
    wasm: WasmToolchain,
    profile: WebProfile,
    bin: &str,
    features: &str,
) -> anyhow::Result<PathBuf> {
    let mut cargo = wasm.cargo();
    cargo.args([
        "build",
        "--profile",
        profile.name(),
        "--target",
        "wasm32-unknown-unknown",
        "-p",
        "app",
        "--bin",
        bin,
        "--features",
        features,
    ]);
    if profile.lints(wasm) {
        crate::process::lint_as_built(&mut cargo)?;
    }
    let target = target_dir_of(&cargo);
    run(&mut cargo)?;
    Ok(target.join(format!(
        "wasm32-unknown-unknown/{}/{bin}.wasm",
        profile.name()
    )))
}

/// Binds `wasm` with wasm-bindgen as an ES module (`<bin>.js`, `<bin>_bg.wasm` in `out`) and,
/// for the shipped profile, shrinks it with wasm-opt as trunk does (`data-wasm-opt="z"` with
/// index.html's `data-wasm-opt-params`). The test profile skips wasm-opt: npm's binaryen runs
/// as WebAssembly in Node, and on a slow 2-core machine it spent over 5 minutes on the test
/// profile's page alone; the page runs the same without it.
fn bind_and_shrink(wasm: &Path, bin: &str, profile: WebProfile, out: &Path) -> anyhow::Result<()> {
    run(Command::new(cargo_bin().join("wasm-bindgen"))
        .args(["--target", "web", "--no-typescript", "--out-name", bin])
        .arg("--out-dir")
        .arg(out)
        .arg(wasm))?;
    if !profile.shrinks() {
        println!("wasm-opt: skipped for the `{}` profile", profile.name());
        return Ok(());
    }
    let bg = out.join(format!("{bin}_bg.wasm"));
    run(Command::new(wasm_opt_dir()?.join("wasm-opt"))
        .arg("-Oz")
        .args(wasm_opt_params()?)
        .arg("--output")
        .arg(&bg)
        .arg(&bg))
}

/// The features of the learn-live worker's wasm (see [`build_learn_worker`]).
const LEARN_FEATURES: &str = "learn,webgpu";

/// The learn-live worker (`learn` binary, see app/src/learn.rs) beside the page: its own wasm
/// with the engine's backward pass, loaded by `learn_loader.js` only when a visitor presses
/// "Train". Its features differ from the page's (the page's wasm stays free of autodiff), so
/// it is its own cargo build.
fn build_learn_worker(wasm: WasmToolchain, profile: WebProfile, out: &Path) -> anyhow::Result<()> {
    step("building the learn-live worker (wasm, training on WebGPU or the CPU; loaded on demand)");
    let learn = cargo_build_wasm(wasm, profile, "learn", LEARN_FEATURES)?;
    bind_and_shrink(&learn, "learn", profile, out)?;
    // The loader last: a page served meanwhile finds no worker until its files are whole.
    copy_worker_script("learn_loader.js", out)
}

/// A worker's loader script from `app/workers/` into the site (trunk copies the same files,
/// index.html's `copy-file` links).
fn copy_worker_script(name: &str, out: &Path) -> anyhow::Result<()> {
    std::fs::copy(root().join("app/workers").join(name), out.join(name))?;
    Ok(())
}

/// The page with cargo, wasm-bindgen and (shipped) wasm-opt: trunk's steps, without trunk.
fn build_direct(profile: WebProfile, out: &Path) -> anyhow::Result<WasmToolchain> {
    let wasm = wasm_bindgen_tools()?;
    if profile.shrinks() {
        wasm_opt_dir()?;
    }
    let shrink = if profile.shrinks() { " + wasm-opt" } else { "" };
    step(&format!(
        "building the web app (cargo + wasm-bindgen{shrink}, profile `{}`)",
        profile.name()
    ));
    let app = cargo_build_wasm(wasm, profile, "app", "webgpu")?;
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out)?;
    bind_and_shrink(&app, "app", profile, out)?;
    copy_worker_script("encode_worker.js", out)?;
    std::fs::copy(root().join("app/style.css"), out.join("style.css"))?;
    let public = out.join("public");
    std::fs::create_dir_all(&public)?;
    for path in walk(&root().join("public"))? {
        std::fs::copy(&path, public.join(path.file_name().expect("a file")))?;
    }
    // index.html as trunk writes it: the same page, with the module loader trunk would add.
    let html = std::fs::read_to_string(root().join("index.html"))?;
    let html: String = html
        .lines()
        .filter(|l| !l.contains("data-trunk"))
        .collect::<Vec<_>>()
        .join("\n");
    let html = html.replace(
        "</head>",
        "    <link rel=\"stylesheet\" href=\"./style.css\" />\n    <script type=\"module\">import init from './app.js'; init();</script>\n  </head>",
    );
    std::fs::write(out.join("index.html"), html)?;
    Ok(wasm)
}

/// The wasm-opt arguments index.html gives trunk (`data-wasm-opt-params`).
fn wasm_opt_params() -> anyhow::Result<Vec<String>> {
    let html = std::fs::read_to_string(root().join("index.html"))?;
    let (_, rest) = html
        .split_once("data-wasm-opt-params=\"")
        .context("index.html: no data-wasm-opt-params on the rust link")?;
    let (params, _) = rest
        .split_once('"')
        .context("index.html: unclosed attribute")?;
    Ok(params.split_whitespace().map(str::to_string).collect())
}

fn build_with_trunk(out: &Path) -> anyhow::Result<WasmToolchain> {
    let wasm = tools()?;
    step("building the web app (trunk: profile `web`, wasm-opt)");

    let mut trunk = Command::new(cargo_bin().join("trunk"));
    trunk
        .args(["build", "--release", "--public-url", "./", "--dist"])
        .arg(out);
    wasm.configure(&mut trunk);
    // trunk finds wasm-bindgen and wasm-opt on PATH (and must not try to download them).
    let path = std::env::var("PATH").unwrap_or_default();
    let bin = format!("{}:{}", cargo_bin().display(), wasm_opt_dir()?.display());
    trunk.env("PATH", format!("{bin}:{path}"));
    if wasm == WasmToolchain::Debian {
        trunk.env("PATH", format!("/usr/bin:{bin}:{path}"));
    }
    run(&mut trunk)?;
    // trunk builds the page; the worker is built the direct way (`trunk serve` has no learn
    // live: `cargo xtask dist` builds it).
    Ok(wasm)
}

/// The models' files as the page downloads them: int8 matrices with row scales (the engine's
/// safetensors rewrite, no encoder involved), listed in `models/index.json`.
fn export_models(out: &Path, models: &[SiteModel]) -> anyhow::Result<()> {
    use engine::served::{ModelIndex, ServedModel};
    step("models for the browser (int8 weights with row scales)");
    let models_dir = out.join("models");
    let _ = std::fs::remove_dir_all(&models_dir);
    for m in models {
        let files =
            engine::ModelFiles::read_dir(&m.dir)?.with_weights(engine::WeightFormat::Int8)?;
        files.write_dir(models_dir.join(&m.key))?;
        ModelIndex::upsert_file(
            &models_dir.join("index.json"),
            ServedModel::of(&files, &m.key, &m.name),
        )?;
        println!(
            "model '{}' written to {}",
            m.key,
            models_dir.join(&m.key).display()
        );
    }
    Ok(())
}

fn walk(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Prints the wasm size (raw and gzip) and the weights size.
fn report_sizes(out: &Path) -> anyhow::Result<()> {
    for path in walk(out)? {
        let name = path.to_string_lossy();
        if name.ends_with(".wasm") || name.ends_with(".safetensors") {
            let bytes = std::fs::read(&path)?;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            gz.write_all(&bytes)?;
            let gz = gz.finish()?;
            println!(
                "size: {}: {:.2} MB raw, {:.2} MB gzip",
                path.strip_prefix(out)?.display(),
                bytes.len() as f64 / 1e6,
                gz.len() as f64 / 1e6
            );
        }
    }
    Ok(())
}

/// The models a site serves: the default one, plus extra folders (`--model DIR`, key from the
/// folder name).
pub fn site_models(default_dir: PathBuf, extra: &[PathBuf]) -> anyhow::Result<Vec<SiteModel>> {
    let mut models = vec![SiteModel {
        key: "minilm".into(),
        name: "all-MiniLM-L6-v2 (base)".into(),
        dir: default_dir,
    }];
    for dir in extra {
        if !dir.join("config.json").is_file() {
            bail!("{}: not a model folder (no config.json)", dir.display());
        }
        let base = dir
            .canonicalize()?
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "model".into());
        // `runs/if-minilm/model` is named after its run folder.
        let name = if base == "model" {
            dir.canonicalize()?
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or(base)
        } else {
            base
        };
        let key: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        models.push(SiteModel {
            key,
            name,
            dir: dir.clone(),
        });
    }
    Ok(models)
}

/// Where `cargo xtask recipe` writes its fine-tuned model.
const RECIPE_MODEL: &str = "runs/if-minilm/model";

fn same_dir(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The models `dist` and `demo` serve: the default one, the recipe's when it exists
/// (`cargo xtask recipe`), and `extra_models`.
fn served_models(extra_models: &[PathBuf]) -> anyhow::Result<Vec<SiteModel>> {
    let model = crate::model::fetch_default()?;
    let mut extra = extra_models.to_vec();
    let recipe_model = root().join(RECIPE_MODEL);
    if recipe_model.join("model.safetensors").is_file()
        && !extra.iter().any(|m| same_dir(m, &recipe_model))
    {
        println!("adding the recipe's model {RECIPE_MODEL} to the model picker");
        extra.push(recipe_model);
    }
    site_models(model, &extra)
}

/// `cargo xtask dist`: the static site in `dist/`.
pub fn dist(extra_models: &[PathBuf]) -> anyhow::Result<PathBuf> {
    let out = root().join("dist");
    build_site(&out, &served_models(extra_models)?, Builder::for_demo())?;
    println!(
        "\nstatic site written to {} (serve it from any static host; no special headers needed)",
        out.display()
    );
    Ok(out)
}

/// `cargo xtask demo`: builds the page and serves it on 127.0.0.1:`port` as soon as it is
/// whole, then builds the learn-live worker beside it (a few minutes on a first run; "Train"
/// says so until then).
pub fn demo(extra_models: &[PathBuf], port: u16) -> anyhow::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{port} (in use? pass --port)"))?;
    let out = root().join("dist");
    // A worker left from an earlier build would not match the new page.
    let _ = std::fs::remove_file(out.join("learn_loader.js"));
    let builder = Builder::for_demo();
    let wasm = build_page(&out, &served_models(extra_models)?, builder)?;
    let served = out.clone();
    let server = std::thread::spawn(move || serve(&served, listener));
    println!("\nthe demo is ready: open http://127.0.0.1:{port}/ (Ctrl-C stops the server)");
    build_learn_worker(wasm, builder.profile(), &out)?;
    println!("learn live is ready too (the page's \"Train\" button)");
    let _ = server.join();
    Ok(())
}

/// The target folder `cargo` builds into (its own `CARGO_TARGET_DIR`, else the environment's,
/// else the workspace's `target`).
pub(super) fn target_dir_of(cargo: &Command) -> PathBuf {
    cargo
        .get_envs()
        .find(|(k, _)| *k == "CARGO_TARGET_DIR")
        .and_then(|(_, v)| v.map(PathBuf::from))
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| root().join("target"))
}
