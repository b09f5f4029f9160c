//! The end-to-end browser test: native references from the `trainer` binary, then headless
//! Chromium against the built site; and the int8 wasm kernels' check.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::serve::serve;
use super::site::{build_site, site_models, target_dir_of, Builder, WebProfile};
use super::tools::npm_ci;
use crate::process::which;
use crate::process::{cargo, output_ok, root, run, step};
use crate::setup::{self};

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
const TEST_FEATURES: &str = "engine/wgpu,trainer/lancedb,app/learn";

/// `cargo test --workspace --features TEST_FEATURES`, with clippy's driver as the compiler of
/// the workspace's own crates (`RUSTC_WORKSPACE_WRAPPER`, warnings denied): the native lint
/// happens inside the test build instead of in a `cargo clippy` of its own, which type-checked
/// every dependency a second time (20 of a cold CI run's 90 minutes on a slow 2-core machine).
/// Dependencies are compiled by rustc as before. Every command that builds the test binaries
/// starts here, so they share one set of artefacts (the wrapper is part of cargo's
/// fingerprint).
pub fn cargo_test() -> anyhow::Result<Command> {
    let mut cargo = cargo();
    cargo.args(["test", "--workspace", "--features", TEST_FEATURES]);
    crate::process::lint_as_built(&mut cargo)?;
    Ok(cargo)
}

/// Builds the debug trainer the tests use: `cargo test --no-run` with the test step's
/// arguments ([`cargo_test`]) writes `target/debug/trainer` with the test step's features
/// (dev-dependencies included), so after the test step it compiles nothing; a `cargo build`
/// would resolve features without dev-dependencies and compile burn once more.
pub fn build_test_trainer() -> anyhow::Result<()> {
    // The test features include the vector store, whose build needs protoc (`cargo xtask
    // e2e` and `bench-web` on a fresh machine come here without the test command's set-up).
    crate::setup::protoc()?;
    run(cargo_test()?.arg("--no-run"))
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
    build_site(&site, &models, Builder::Direct(WebProfile::Test))?;
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
