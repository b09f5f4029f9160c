//! The web demo: tools (trunk, wasm-bindgen), building the static site with its models, a
//! small static file server, and the end-to-end browser test.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use crate::process::which;
use crate::process::{cargo, output_ok, root, run, step};
use crate::setup::{self, WasmToolchain};

/// trunk release that builds with rustc 1.95 (0.22 needs 1.96.1).
const TRUNK_VERSION: &str = "0.21.14";

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

fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into())).join(".cargo")
        })
        .join("bin")
}

fn tool_version(program: &Path) -> Option<String> {
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
fn wasm_bindgen_tools() -> anyhow::Result<WasmToolchain> {
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

/// The Cargo profile of the wasm the browser downloads (see `[profile.web]` in Cargo.toml;
/// index.html names it for trunk).
const WEB_PROFILE: &str = "web";

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
fn wasm_opt_dir() -> anyhow::Result<PathBuf> {
    let tools = root().join("xtask/web-tools");
    npm_ci(&tools, ".bin/wasm-opt", "wasm-opt from binaryen")?;
    Ok(tools.join("node_modules/.bin"))
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
    /// cargo and wasm-bindgen directly, the steps trunk takes: the browser tests, and the demo
    /// when trunk is absent (installing it is about 17 minutes of compiling on 2 cores).
    Direct,
}

impl Builder {
    /// trunk when the pinned version is installed, else the direct build.
    fn for_demo() -> Builder {
        if tool_version(&cargo_bin().join("trunk")).as_deref() == Some(TRUNK_VERSION) {
            Builder::Trunk
        } else {
            println!("tools: trunk {TRUNK_VERSION} absent: building with cargo and wasm-bindgen (trunk stays optional, for `trunk serve`)");
            Builder::Direct
        }
    }
}

/// Builds the static site into `out`: the app (release), then each model exported with int8
/// weights under `models/<key>/` and `models/index.json` listing sizes and sha256.
pub fn build_site(out: &Path, models: &[SiteModel], builder: Builder) -> anyhow::Result<()> {
    let wasm = build_page(out, models, builder)?;
    build_learn_worker(wasm, out)?;
    report_sizes(out)
}

/// The site without the learn-live worker: the page (with trunk or directly) and the models.
fn build_page(out: &Path, models: &[SiteModel], builder: Builder) -> anyhow::Result<WasmToolchain> {
    let wasm = match builder {
        Builder::Trunk => build_with_trunk(out)?,
        Builder::Direct => build_direct(out)?,
    };
    export_models(out, models)?;
    Ok(wasm)
}

/// The debug trainer the tests build (see [`build_test_trainer`]), started in the workspace.
pub fn trainer() -> Command {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let mut c = Command::new(target.join("debug/trainer"));
    c.current_dir(root());
    c
}

/// The features of the test build: the wgpu backend (run on lavapipe), the vector store, and
/// the page's learn-live worker (its native tests).
pub const TEST_FEATURES: &str = "engine/wgpu,trainer/lancedb,app/learn";

/// Builds the debug trainer the tests use: `cargo test --no-run` with the test step's
/// arguments writes `target/debug/trainer` with the test step's features (dev-dependencies
/// included), so after the test step it compiles nothing; a `cargo build` would resolve
/// features without dev-dependencies and compile burn once more.
pub fn build_test_trainer() -> anyhow::Result<()> {
    // The test features include the vector store, whose build needs protoc (`cargo xtask
    // e2e` and `bench-web` on a fresh machine come here without the test command's set-up).
    crate::setup::protoc()?;
    run(cargo().args([
        "test",
        "--workspace",
        "--features",
        TEST_FEATURES,
        "--no-run",
    ]))
}

/// The target folder `cargo` builds into (its own `CARGO_TARGET_DIR`, else the environment's,
/// else the workspace's `target`).
fn target_dir_of(cargo: &Command) -> PathBuf {
    cargo
        .get_envs()
        .find(|(k, _)| *k == "CARGO_TARGET_DIR")
        .and_then(|(_, v)| v.map(PathBuf::from))
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| root().join("target"))
}

/// `cargo xtask wasm-kernels`: builds the engine's int8 kernels alone for wasm32
/// (`xtask/int8-wasm`, with `+simd128` as the page) and runs them in Node: the WebAssembly
/// SIMD kernel must give the portable kernel's outputs bit for bit on odd shapes; without
/// `check_only`, each BERT-shaped product is then timed against the f32 GEMM the page runs
/// without int8 (BENCHMARKS.md).
pub fn wasm_kernels(check_only: bool) -> anyhow::Result<()> {
    let wasm = setup::wasm()?;
    if !which("node") {
        setup::apt_install(&["nodejs"])?;
    }
    step("int8 kernels for wasm32 (xtask/int8-wasm), run in Node");
    let mut cargo = wasm.cargo();
    cargo
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .arg("--manifest-path")
        .arg(root().join("xtask/int8-wasm/Cargo.toml"));
    let target = target_dir_of(&cargo);
    run(&mut cargo)?;
    let mut node = Command::new("node");
    node.arg(root().join("xtask/int8-wasm/run.mjs"))
        .arg(target.join("wasm32-unknown-unknown/release/int8_wasm_check.wasm"));
    if check_only {
        node.arg("--check-only");
    }
    run(&mut node)
}

/// A wasm binary of the app crate built with the `web` profile; returns the file.
fn cargo_build_wasm(wasm: WasmToolchain, bin: &str, features: &str) -> anyhow::Result<PathBuf> {
    let mut cargo = wasm.cargo();
    cargo.args([
        "build",
        "--profile",
        WEB_PROFILE,
        "--target",
        "wasm32-unknown-unknown",
        "-p",
        "app",
        "--bin",
        bin,
        "--features",
        features,
    ]);
    let target = target_dir_of(&cargo);
    run(&mut cargo)?;
    Ok(target.join(format!("wasm32-unknown-unknown/{WEB_PROFILE}/{bin}.wasm")))
}

/// Binds `wasm` with wasm-bindgen as an ES module (`<bin>.js`, `<bin>_bg.wasm` in `out`) and
/// shrinks it with wasm-opt as trunk does (`data-wasm-opt="z"` with index.html's
/// `data-wasm-opt-params`).
fn bind_and_shrink(wasm: &Path, bin: &str, out: &Path) -> anyhow::Result<()> {
    run(Command::new(cargo_bin().join("wasm-bindgen"))
        .args(["--target", "web", "--no-typescript", "--out-name", bin])
        .arg("--out-dir")
        .arg(out)
        .arg(wasm))?;
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
fn build_learn_worker(wasm: WasmToolchain, out: &Path) -> anyhow::Result<()> {
    step("building the learn-live worker (wasm, training on WebGPU or the CPU; loaded on demand)");
    let learn = cargo_build_wasm(wasm, "learn", LEARN_FEATURES)?;
    bind_and_shrink(&learn, "learn", out)?;
    // The loader last: a page served meanwhile finds no worker until its files are whole.
    copy_worker_script("learn_loader.js", out)
}

/// A worker's loader script from `app/workers/` into the site (trunk copies the same files,
/// index.html's `copy-file` links).
fn copy_worker_script(name: &str, out: &Path) -> anyhow::Result<()> {
    std::fs::copy(root().join("app/workers").join(name), out.join(name))?;
    Ok(())
}

/// The page with cargo, wasm-bindgen and wasm-opt (trunk's steps, without trunk).
fn build_direct(out: &Path) -> anyhow::Result<WasmToolchain> {
    let wasm = wasm_bindgen_tools()?;
    wasm_opt_dir()?;
    step("building the web app (cargo + wasm-bindgen + wasm-opt, profile `web`)");
    let app = cargo_build_wasm(wasm, "app", "webgpu")?;
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out)?;
    bind_and_shrink(&app, "app", out)?;
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

/// Serves `dir` on `addr` until the process ends (static files, GET and HEAD).
pub fn serve(dir: &Path, listener: TcpListener) {
    for stream in listener.incoming().flatten() {
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            let _ = handle(&dir, stream);
        });
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "txt" | "md" => "text/plain; charset=utf-8",
        "jsonl" => "application/x-ndjson",
        _ => "application/octet-stream",
    }
}

fn handle(dir: &Path, stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // Drain the headers.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut out = stream;
    if method != "GET" && method != "HEAD" {
        return out.write_all(
            b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned();
    let mut file = dir.to_path_buf();
    for part in decoded.split('/') {
        if part.is_empty() || part == "." {
            continue;
        }
        if part == ".." || part.contains('\\') {
            return out.write_all(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
        file.push(part);
    }
    if file.is_dir() {
        file.push("index.html");
    }
    match std::fs::read(&file) {
        Ok(body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
                content_type(&file),
                body.len()
            );
            out.write_all(head.as_bytes())?;
            if method == "GET" {
                out.write_all(&body)?;
            }
            Ok(())
        }
        Err(_) => out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found",
        ),
    }
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
    let wasm = build_page(&out, &served_models(extra_models)?, Builder::for_demo())?;
    let served = out.clone();
    let server = std::thread::spawn(move || serve(&served, listener));
    println!("\nthe demo is ready: open http://127.0.0.1:{port}/ (Ctrl-C stops the server)");
    build_learn_worker(wasm, &out)?;
    println!("learn live is ready too (the page's \"Train\" button)");
    let _ = server.join();
    Ok(())
}

/// The arithmetic of a native reference: the page computes in int8 on the CPU backend and in
/// f32 on WebGPU, and each is compared with the native engine computing the same way.
#[derive(Debug, Clone, Copy)]
enum Arithmetic {
    /// The page's CPU backend (`engine::Precision::Int8`).
    CpuInt8,
    /// WebGPU (f32).
    F32,
}

impl Arithmetic {
    fn precision(self) -> &'static str {
        match self {
            Arithmetic::CpuInt8 => "int8",
            Arithmetic::F32 => "f32",
        }
    }
}

/// The top-10 `{_id, score}` records of `trainer search` (CPU) with `model` over `corpus` for
/// `query` under `instruction`, the index kept in `index`.
fn native_top10(
    model: &Path,
    corpus: &Path,
    index: &Path,
    query: &str,
    instruction: &str,
    arithmetic: Arithmetic,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let out = output_ok(
        trainer()
            .args(["search", "--json", "--top-k", "10"])
            .args(["--precision", arithmetic.precision()])
            .arg("--model")
            .arg(model)
            .arg("--corpus")
            .arg(corpus)
            .arg("--index")
            .arg(index)
            .arg("--query")
            .arg(query)
            .arg("--instruction")
            .arg(instruction),
    )
    .with_context(|| format!("trainer search with {} failed", model.display()))?;
    Ok(out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .collect())
}

/// The first five ids of [`native_top10`]'s records.
fn top5_ids(records: &[serde_json::Value]) -> serde_json::Value {
    records.iter().take(5).map(|v| v["_id"].clone()).collect()
}

/// Each id of [`native_top10`]'s records with its score.
fn scores(records: &[serde_json::Value]) -> serde_json::Value {
    serde_json::Value::Object(
        records
            .iter()
            .filter_map(|v| Some((v["_id"].as_str()?.to_string(), v["score"].clone())))
            .collect(),
    )
}

/// The native top-5 of the three columns (query alone, instructed, reversed) for a test case,
/// and the scores of each column's top 10 (`{"top5": {column: ids}, "scores": {column: {id:
/// score}}}`): where the page computes in int8, near-ties may swap (app.test.mjs).
fn native_columns(
    model: &Path,
    corpus: &Path,
    index: &Path,
    case: &serde_json::Value,
    arithmetic: Arithmetic,
) -> anyhow::Result<serde_json::Value> {
    let (mut columns, mut column_scores) = (serde_json::Map::new(), serde_json::Map::new());
    for (column, field) in [
        ("query", ""),
        ("instructed", "instruction"),
        ("reversed", "reversed"),
    ] {
        let instruction = if field.is_empty() {
            ""
        } else {
            case[field].as_str().unwrap_or("")
        };
        let query = case["query"].as_str().unwrap_or("");
        let records = native_top10(model, corpus, index, query, instruction, arithmetic)?;
        columns.insert(column.to_string(), top5_ids(&records));
        column_scores.insert(column.to_string(), scores(&records));
    }
    Ok(serde_json::json!({"top5": columns, "scores": column_scores}))
}

/// `cargo xtask e2e`: headless Chromium against the built site (see tests/e2e/README.md).
pub fn e2e() -> anyhow::Result<()> {
    let model = crate::model::fetch_default()?;
    let site = root().join("tests/e2e/artifacts/site");
    let artifacts = root().join("tests/e2e/artifacts");
    std::fs::create_dir_all(&artifacts)?;
    let tuned_model = finetuned_model(&model, &artifacts)?;
    // A tiny cut of the model for learn live on SwiftShader (see tiny.rs).
    let tiny_model = crate::tiny::cut(&model, &artifacts.join("tiny"))?;
    let models = site_models(model.clone(), &[tuned_model, tiny_model])?;
    build_site(&site, &models, Builder::Direct)?;
    // The native engine reads the very files the page downloads (int8 weights).
    let served: Vec<PathBuf> = models
        .iter()
        .map(|m| site.join("models").join(&m.key))
        .collect();
    setup::apt_install(&["chromium"])?;
    let e2e = root().join("tests/e2e");
    npm_ci(
        &e2e,
        "playwright-core",
        "playwright-core, without its browser download",
    )?;
    step("native reference rankings (trainer search, CPU)");
    let reference_path = native_references(&served[0], &served[1], &served[2], &artifacts)?;
    run_in_browser(
        &site,
        &e2e.join("app.test.mjs"),
        &[reference_path.as_path(), &artifacts],
    )
}

/// Serves `site` on a free local port and runs the node `script` with the site's URL and
/// `args` (headless Chromium through playwright-core). `run` starts commands in the workspace
/// root: the script is named by its full path, so node resolves playwright-core from its folder.
pub fn run_in_browser(site: &Path, script: &Path, args: &[&Path]) -> anyhow::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", 0))?;
    let port = listener.local_addr()?.port();
    let served = site.to_path_buf();
    std::thread::spawn(move || serve(&served, listener));
    step(&format!("headless Chromium on http://127.0.0.1:{port}/"));
    run(Command::new("node")
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}/"))
        .args(args))
}

/// A second model for the model picker: the default one fine-tuned for three steps with the
/// test build's `trainer train` (a large learning rate, so its rankings differ).
fn finetuned_model(model: &Path, artifacts: &Path) -> anyhow::Result<PathBuf> {
    step("a fine-tuned model for the model switch (trainer train, 3 steps)");
    build_test_trainer()?;
    let tuned = artifacts.join("finetuned");
    let _ = std::fs::remove_dir_all(&tuned);
    let records = artifacts.join("train.jsonl");
    crate::bench::training_records(&records, 12)?;
    run(trainer()
        .args([
            "train",
            "--max-steps",
            "3",
            "--batch-size",
            "4",
            "--lr",
            "1e-3",
        ])
        .args(["--warmup-ratio", "0", "--checkpoint-every", "0"])
        .args(["--passage-max-length", "128"])
        .arg("--model")
        .arg(model)
        .arg("--data")
        .arg(&records)
        .arg("--output")
        .arg(&tuned))?;
    Ok(tuned.join("model"))
}

/// `native-topic.json`: the first case on one demo topic (the page's `corpus=TOPIC`), in f32
/// for the WebGPU check and in int8 for the CPU it falls back to.
fn topic_reference(
    model: &Path,
    demo_corpus: &Path,
    case: &serde_json::Value,
    artifacts: &Path,
    fresh_index: &dyn Fn(&str) -> PathBuf,
) -> anyhow::Result<()> {
    // The WebGPU check runs on one demo topic (the page's `corpus=TOPIC`), which SwiftShader
    // encodes in a minute where the whole corpus would take a quarter of an hour.
    let topic = "sourdough";
    let topic_corpus = artifacts.join(format!("topic-{topic}.jsonl"));
    let lines: Vec<String> = std::fs::read_to_string(demo_corpus)?
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| {
                v["_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(&format!("{topic}-")))
            })
        })
        .map(str::to_string)
        .collect();
    std::fs::write(&topic_corpus, lines.join("\n") + "\n")?;
    // WebGPU computes in f32; the page's CPU, where it falls back, in int8.
    let top5 = native_columns(
        model,
        &topic_corpus,
        &fresh_index("topic.index"),
        case,
        Arithmetic::F32,
    )?;
    let top5_cpu = native_columns(
        model,
        &topic_corpus,
        &fresh_index("topic-int8.index"),
        case,
        Arithmetic::CpuInt8,
    )?;
    std::fs::write(
        artifacts.join("native-topic.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "corpus": topic, "passages": lines.len(), "case": case,
            "top5": top5["top5"], "top5_cpu": top5_cpu["top5"], "scores_cpu": top5_cpu["scores"],
        }))?,
    )?;
    Ok(())
}

/// `name` (`native-lesson.json`, and `-tiny` for the tiny model's WebGPU check): learn live
/// natively, as the page runs it. `trainer lesson` takes three
/// steps from the served model (the page's own files) with the page's seed; its per-step log
/// and the trained model's f32 rankings of the first case on the demo topic, which the page's
/// trained columns (the whole topic, re-ranked) must equal.
fn lesson_reference(
    model: &Path,
    name: &str,
    case: &serde_json::Value,
    artifacts: &Path,
    fresh_index: &dyn Fn(&str) -> PathBuf,
) -> anyhow::Result<()> {
    let lesson = artifacts.join(name.trim_end_matches(".json"));
    let _ = std::fs::remove_dir_all(&lesson);
    run(trainer()
        .args(["lesson", "--steps", "3", "--seed", "42"])
        .arg("--model")
        .arg(model)
        .arg("--output")
        .arg(&lesson))?;
    let steps: Vec<serde_json::Value> = std::fs::read_to_string(lesson.join("metrics.jsonl"))?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let topic = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(
        artifacts.join("native-topic.json"),
    )?)?["corpus"]
        .as_str()
        .context("native-topic.json: no corpus")?
        .to_string();
    let columns = native_columns(
        &lesson.join("model"),
        &artifacts.join(format!("topic-{topic}.jsonl")),
        &fresh_index(&format!("{name}.index")),
        case,
        Arithmetic::F32,
    )?;
    std::fs::write(
        artifacts.join(name),
        serde_json::to_string_pretty(&serde_json::json!({
            "corpus": topic, "case": case, "steps": steps,
            "top5": columns["top5"], "scores": columns["scores"],
        }))?,
    )?;
    Ok(())
}

/// The native engine's rankings the page must reproduce: every case of `cases.json` on the
/// demo corpus (`native.json`, returned), the first case on one topic for the WebGPU check
/// (`native-topic.json`), under the fine-tuned model (`native-finetuned.json`), and learn live
/// with the model and with its tiny cut (`native-lesson.json`, `native-lesson-tiny.json`).
fn native_references(
    model: &Path,
    tuned_model: &Path,
    tiny_model: &Path,
    artifacts: &Path,
) -> anyhow::Result<PathBuf> {
    let e2e = root().join("tests/e2e");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(e2e.join("cases.json"))?)?;
    let demo_corpus = root().join("engine/demo/corpus.jsonl");
    let fresh_index = |name: &str| {
        let index = artifacts.join(name);
        let _ = std::fs::remove_file(&index);
        index
    };
    let index = fresh_index("demo.index");
    let cases = cases.as_array().context("tests/e2e/cases.json: a list")?;
    let mut reference = Vec::new();
    for case in cases {
        let columns = native_columns(model, &demo_corpus, &index, case, Arithmetic::CpuInt8)?;
        reference.push(serde_json::json!({
            "case": case, "top5": columns["top5"], "scores": columns["scores"],
        }));
    }
    let reference_path = artifacts.join("native.json");
    std::fs::write(&reference_path, serde_json::to_string_pretty(&reference)?)?;
    topic_reference(model, &demo_corpus, &cases[0], artifacts, &fresh_index)?;
    lesson_reference(
        model,
        "native-lesson.json",
        &cases[0],
        artifacts,
        &fresh_index,
    )?;
    lesson_reference(
        tiny_model,
        "native-lesson-tiny.json",
        &cases[0],
        artifacts,
        &fresh_index,
    )?;
    // The fine-tuned model's instructed top-5 for the first case (the model-switch check).
    let case = &cases[0];
    let records = native_top10(
        tuned_model,
        &demo_corpus,
        &fresh_index("finetuned.index"),
        case["query"].as_str().unwrap_or(""),
        case["instruction"].as_str().unwrap_or(""),
        Arithmetic::CpuInt8,
    )?;
    std::fs::write(
        artifacts.join("native-finetuned.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "case": case, "instructed": top5_ids(&records), "scores": scores(&records),
        }))?,
    )?;
    Ok(reference_path)
}
