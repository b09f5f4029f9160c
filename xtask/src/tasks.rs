//! The composite tasks: demo, test, golden.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::compare::write_marked;
use crate::process::{cargo, home, root, run, stdout_of, step, target_dir, venv_python};
use crate::{model, setup};

/// `cargo xtask demo`.
pub fn demo(args: &[String]) -> anyhow::Result<()> {
    let dir = model::fetch_default()?;
    step("trainer demo");
    run(cargo()
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "trainer",
            "--",
            "demo",
            "--model",
        ])
        .arg(&dir)
        .args(args))
}

/// fmt, then the lints the test build does not do (warnings denied): the engine's backend
/// code under the `vulkan` and `cuda` features (CUDA type-checked only), and, for wasm32, the
/// page and its workers. The rest of the workspace is linted as the test step builds it
/// ([`crate::web::cargo_test`]).
fn lint() -> anyhow::Result<()> {
    step("cargo fmt --check");
    run(cargo().args(["fmt", "--all", "--check"]))?;
    step("cargo clippy on the engine with the vulkan and cuda features (warnings denied)");
    // DOCS_RS: burn's CUDA runtime pulls cubecl-llvm, whose build script would download an
    // LLVM bundle from GitHub (outside the package registries); like docs.rs, a type check
    // does not need it. Linking a CUDA build does (see README). The code behind these two
    // features lives in the engine alone (`backend.rs`, `tests/backends.rs`); the test build
    // cannot carry them (lavapipe crashes on the `vulkan` build's SPIR-V kernels).
    run(cargo().env("DOCS_RS", "1").args([
        "clippy",
        "-p",
        "engine",
        "--all-targets",
        "--features",
        // `autodiff`: the engine's tests train (the trainer turns it on in a workspace build).
        "vulkan,cuda,autodiff",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The page's browser-only code (wasm32: the UI, its workers) is invisible to the native
    // passes. With rustup's wasm32 std the browser test's build lints it (`WebProfile::Test`);
    // Debian's compiler has no clippy driver of its own version to build with, so there it
    // takes a pass of its own.
    let wasm = setup::wasm()?;
    if crate::web::WebProfile::Test.lints(wasm) {
        println!("wasm32: the page and its workers are linted as the browser test builds them");
        return Ok(());
    }
    step("cargo clippy for wasm32: the web app and its workers (warnings denied)");
    run(wasm.cargo().args([
        "clippy",
        "--target",
        "wasm32-unknown-unknown",
        "-p",
        "app",
        "--bins",
        "--features",
        "webgpu,learn",
        "--",
        "-D",
        "warnings",
    ]))?;
    Ok(())
}

/// `cargo xtask test`.
pub fn test(gpu: bool) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    step("set-up");
    let gpu = gpu && setup::vulkan();
    setup::protoc()?;
    let model_dir = model::fetch_default()?;

    // One feature set per build mode keeps burn compiled once per mode: the engine's clippy
    // pass sees every backend (CUDA included, which proves the `cuda` feature compiles), the
    // tests run the CPU path everywhere plus wgpu on Vulkan (WGSL kernels) in
    // engine/tests/backends.rs. The `vulkan` feature's SPIR-V kernels crash Debian 12's
    // lavapipe (Mesa 22.3) inside vkCreateComputePipelines, so on lavapipe only the WGSL path
    // can be run.
    let venv = prepare_venv();
    lint()?;
    step("cargo test, linted by clippy as it builds (CPU everywhere; wgpu on Vulkan/lavapipe vs CPU in engine/tests/backends.rs; LanceDB)");
    let mut tests = crate::web::cargo_test()?;
    tests.arg("--no-fail-fast").env("IFIR_MODEL", &model_dir);
    if gpu {
        // lavapipe is installed: a missing adapter is now a failure, not a skip.
        tests.env("IFIR_REQUIRE_GPU", "1");
    } else {
        println!("note: no Vulkan driver; the GPU backend test will print SKIPPED");
    }
    run(&mut tests)?;
    crate::web::wasm_kernels(true)?;
    venv.join()
        .map_err(|_| anyhow::anyhow!("the venv's installing thread panicked"))?
        .context("the compatibility checks' venv")?;
    step("sentence-transformers loads a model written by trainer train (venv from PyPI)");
    st_compat()?;
    step("MTEB reads the result files trainer eval writes (venv from PyPI)");
    mteb_compat()?;
    step("LanceDB's Python library opens the table trainer store writes (venv from PyPI)");
    lancedb_compat()?;
    // The web demo builds the engine for wasm32 with both browser backends (CPU and WebGPU),
    // then headless Chromium runs it against the native engine.
    step("web demo: build (wasm32, CPU + WebGPU) and end-to-end test in headless Chromium");
    crate::web::e2e()?;
    println!(
        "\nall checks passed in {:.1} min",
        started.elapsed().as_secs_f64() / 60.0
    );
    Ok(())
}

/// The Python packages of each compatibility check: (PyPI name, module to import).
const ST_PACKAGES: &[(&str, &str)] = &[("sentence-transformers", "sentence_transformers")];
const MTEB_PACKAGES: &[(&str, &str)] = &[
    ("sentence-transformers", "sentence_transformers"),
    ("mteb==2.26.24", "mteb"),
];
const LANCEDB_PACKAGES: &[(&str, &str)] = &[("lancedb==0.40.0", "lancedb")];

/// Installs every compatibility check's packages into the tools venv on a thread of its own:
/// mostly downloads (PyTorch alone is gigabytes), which the test step's compiling hides.
fn prepare_venv() -> std::thread::JoinHandle<anyhow::Result<PathBuf>> {
    std::thread::spawn(|| {
        let mut packages = Vec::new();
        for package in [ST_PACKAGES, MTEB_PACKAGES, LANCEDB_PACKAGES].concat() {
            if !packages.contains(&package) {
                packages.push(package);
            }
        }
        venv_python(&packages)
    })
}

/// What a compatibility check starts from: `(model, python, trainer, work)`, the default
/// model's folder, the Python of a venv with `packages`, the test build's `trainer`, and the
/// work folder `<tmp>/ifir-NAME-PID`, removed if an earlier run left it.
fn compat_setup(
    name: &str,
    packages: &[(&str, &str)],
) -> anyhow::Result<(PathBuf, PathBuf, PathBuf, PathBuf)> {
    let model_dir = model::fetch_default()?;
    let python = venv_python(packages)?;
    crate::web::build_test_trainer()?;
    let trainer = target_dir().join("debug/trainer");
    let work = std::env::temp_dir().join(format!("ifir-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    Ok((model_dir, python, trainer, work))
}

/// `cargo xtask st-compat`: fine-tunes the default model for two steps with the test build's
/// `trainer train`, embeds texts with `trainer embed`, and has sentence-transformers load the
/// written folder and embed the same texts (every cosine >= 0.9999, in
/// `trainer/tests/st_load.py`).
pub fn st_compat() -> anyhow::Result<()> {
    let (model_dir, python, trainer, work) = compat_setup("st-compat", ST_PACKAGES)?;
    std::fs::create_dir_all(&work)?;
    let records = work.join("train.jsonl");
    crate::bench::training_records(&records, 8)?;
    run(Command::new(&trainer)
        .arg("train")
        .arg("--model")
        .arg(&model_dir)
        .arg("--data")
        .arg(&records)
        .arg("--output")
        .arg(work.join("run"))
        .args([
            "--max-steps",
            "2",
            "--batch-size",
            "2",
            "--lr",
            "1e-4",
            "--passage-max-length",
            "128",
        ]))?;
    let texts = work.join("texts.jsonl");
    let sample = [
        "how do solar panels work",
        "Only forum posts from home bakers. sourdough starter",
        "Ünïcödé, 数据, emoji 🎉 and a [SEP] token",
        "A long passage about marathon training plans that repeat themselves. ",
    ];
    let lines: Vec<String> = sample
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"_id": format!("t{i}"), "text": t.repeat(if i == 3 { 40 } else { 1 })}).to_string())
        .collect();
    std::fs::write(&texts, lines.join("\n") + "\n")?;
    let embeddings = work.join("embeddings.jsonl");
    let trained = work.join("run/model");
    run(Command::new(&trainer)
        .arg("embed")
        .arg("--model")
        .arg(&trained)
        .arg("--input")
        .arg(&texts)
        .arg("--output")
        .arg(&embeddings))?;
    run(Command::new(python)
        .arg(root().join("trainer/tests/st_load.py"))
        .arg(&trained)
        .arg(&texts)
        .arg(&embeddings))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// MTEB reads the result files `trainer eval --mteb-output` writes: a plain retrieval set
/// (MTEB's Parquet layout) and FollowIR's MTEB form, loaded with `mteb`'s own
/// `TaskResult.from_disk` (venv from PyPI), whose main scores must be the trainer's.
pub fn mteb_compat() -> anyhow::Result<()> {
    let (model_dir, python, trainer, work) = compat_setup("mteb-compat", MTEB_PACKAGES)?;
    let mut expected = Vec::new();
    for (set, task, key) in [
        ("mteb-parquet", "SciFact", "ndcg@10"),
        ("followir-mteb", "Core17InstructionRetrieval", "p-mrr"),
    ] {
        expected.push(mteb_result(&trainer, &model_dir, &work, (set, task, key))?);
    }
    let loaded = stdout_of(
        Command::new(python)
            .arg(root().join("trainer/tests/mteb_load.py"))
            .args(expected.iter().map(|(p, _, _)| p)),
        "MTEB refused a result file",
    )?;
    let loaded = String::from_utf8(loaded)?;
    for (expected, line) in expected.iter().zip(loaded.lines()) {
        check_mteb_reads(expected, line)?;
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// A result file the trainer writes for MTEB, the score it printed and its og run's top 10.
type MtebExpected = (PathBuf, f64, BTreeMap<String, Vec<String>>);

/// `trainer eval --mteb-output` on the fixture `set` as MTEB's `task`: the file, the score
/// `key` the trainer printed, and its og run's top 10.
fn mteb_result(
    trainer: &Path,
    model_dir: &Path,
    work: &Path,
    (set, task, key): (&str, &str, &str),
) -> anyhow::Result<MtebExpected> {
    let fixtures = root().join("engine/tests/fixtures/published");
    let out = stdout_of(
        Command::new(trainer)
            .args(["eval", "--json", "--set"])
            .arg(fixtures.join(set))
            .arg("--model")
            .arg(model_dir)
            .arg("--mteb-output")
            .arg(work)
            .args(["--mteb-task", task])
            .arg("--save-runs")
            .arg(work.join(set)),
        &format!("trainer eval on {set}"),
    )?;
    let report: serde_json::Value = serde_json::from_slice(&out)?;
    let score = report
        .get(key)
        .or_else(|| report["og"].get(key))
        .and_then(|v| v.as_f64());
    Ok((
        work.join(format!("{task}.json")),
        score.context("no score in the report")?,
        top10(&work.join(set).join("og.trec"))?,
    ))
}

/// What MTEB read (`line`, from mteb_load.py) is what the trainer wrote.
fn check_mteb_reads((path, score, ranking): &MtebExpected, line: &str) -> anyhow::Result<()> {
    let read: serde_json::Value = serde_json::from_str(line)?;
    let main = read["main_score"].as_f64().context("no main_score")?;
    anyhow::ensure!(
        (main - score).abs() < 1e-9,
        "{}: MTEB reads main_score {main}, the trainer printed {score}",
        path.display()
    );
    let read_ranking: BTreeMap<String, Vec<String>> =
        serde_json::from_value(read["top_ranked"].clone())?;
    anyhow::ensure!(
        &read_ranking == ranking,
        "{}: the top 10 MTEB reads from the predictions file differ from the trainer's og run",
        path.display()
    );
    println!(
        "MTEB reads {}: main_score {main} (the trainer's), and the predictions' top 10 of {} queries (the trainer's og run)",
        path.display(),
        ranking.len()
    );
    Ok(())
}

/// `cargo xtask lancedb-compat`: indexes the demo corpus with the test build's trainer, writes
/// it into a LanceDB table with `trainer store` (IVF-PQ), and has LanceDB's Python library
/// open it (`trainer/tests/lancedb_load.py`): the model fingerprint, every row, the index, and
/// each probed row's own id first in a dot-product search.
pub fn lancedb_compat() -> anyhow::Result<()> {
    let (model_dir, python, trainer, work) = compat_setup("lancedb-compat", LANCEDB_PACKAGES)?;
    std::fs::create_dir_all(&work)?;
    let index = work.join("demo.ifidx");
    let db = work.join("db");
    run(Command::new(&trainer)
        .args(["index", "--model"])
        .arg(&model_dir)
        .arg("--corpus")
        .arg(root().join("engine/demo/corpus.jsonl"))
        .arg("--output")
        .arg(&index))?;
    run(Command::new(&trainer)
        .args(["store", "--index"])
        .arg(&index)
        .arg("--store")
        .arg(&db)
        .args(["--ann", "ivf-pq", "--partitions", "4"]))?;
    let out = stdout_of(
        Command::new(python)
            .arg(root().join("trainer/tests/lancedb_load.py"))
            .arg(&db)
            .arg("corpus"),
        "LanceDB's Python library refused the table",
    )?;
    let read: serde_json::Value = serde_json::from_slice(&out)?;
    // The index file: magic (8 bytes), header length (u64 LE), JSON header.
    let bytes = std::fs::read(&index)?;
    let len = u64::from_le_bytes(bytes[8..16].try_into()?) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[16..16 + len])?;
    let model = header["model"]
        .as_str()
        .context("no model in the index header")?;
    anyhow::ensure!(read["model"] == model, "model {model}: {read}");
    anyhow::ensure!(read["rows"] == 243, "rows: {read}");
    anyhow::ensure!(
        read["columns"] == serde_json::json!(["id", "vector"]),
        "columns: {read}"
    );
    anyhow::ensure!(
        read["indices"].as_array().is_some_and(|i| i.len() == 1),
        "index: {read}"
    );
    for probe in read["self_search"].as_array().context("self_search")? {
        anyhow::ensure!(probe["row"] == probe["found"], "search: {read}");
    }
    println!("LanceDB (Python) reads the table: {read}");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The first 10 documents of each query of a TREC run file, in the file's order.
fn top10(run: &Path) -> anyhow::Result<BTreeMap<String, Vec<String>>> {
    let mut top: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let text = std::fs::read_to_string(run).with_context(|| run.display().to_string())?;
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [query, _, doc, ..] = fields[..] else {
            anyhow::bail!("{}: malformed line {line:?}", run.display());
        };
        let docs = top.entry(query.to_string()).or_default();
        if docs.len() < 10 {
            docs.push(doc.to_string());
        }
    }
    Ok(top)
}

/// `cargo xtask golden`.
pub fn golden() -> anyhow::Result<()> {
    let dir = model::fetch_default()?;
    let python = venv_python(&[("sentence-transformers", "sentence_transformers")])?;
    let out = root().join("engine/tests/golden");
    run(Command::new(python)
        .arg(out.join("make_golden.py"))
        .arg(&dir)
        .arg(&out))
}

/// `cargo xtask results`: the default model on every evaluation set at hand (the shared BIRCO
/// dev sets and MS MARCO subset when `../shared/data` exists, and the built-in demo set), with
/// and without instructions; writes RESULTS.md.
pub fn results() -> anyhow::Result<()> {
    let model_dir = model::fetch_default()?;
    let sets = result_sets()?;
    step("building trainer (release)");
    run(cargo().args(["build", "--release", "-p", "trainer"]))?;
    let trainer = target_dir().join("release/trainer");
    let metrics = "ndcg@10,map@1000,mrr@10,recall@100";
    let cache = home().join(".cache/ifir/passages");
    let mut table = String::new();
    table.push_str(
        "| set | instruction | nDCG@10 | MAP@1000 | MRR@10 | Recall@100 | p-MRR | WISE | SICR |\n",
    );
    table.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for (label, dir) in &sets {
        // A set without any instruction (the MS MARCO subset) has only the query-alone row.
        let variants: &[bool] = if has_instructions(dir) {
            &[true, false]
        } else {
            &[true]
        };
        for &no_instruction in variants {
            let what = if no_instruction {
                "query alone"
            } else {
                "with instruction"
            };
            step(&format!("{label}, {what}"));
            match eval_json(&trainer, dir, &model_dir, &cache, metrics, no_instruction) {
                Ok(v) => {
                    let row = result_row(label, no_instruction, &v);
                    print!("{row}");
                    table.push_str(&row);
                }
                Err(err) => {
                    // One unreadable set must not cost the others: say so in the table and go on.
                    let err = err.replace('|', "/");
                    println!("FAILED: {label}: {err}");
                    table.push_str(&format!(
                        "| {label} | not evaluated: {err} | | | | | | | |\n"
                    ));
                    break;
                }
            }
        }
    }
    let doc = format!(
        "The default model (all-MiniLM-L6-v2, no fine-tuning) on the evaluation sets, values x100.\n\
         Produced by `cargo xtask results` (CPU; template `instruction-first`; re-ranking each query's\n\
         candidates when the set has `candidates.tsv`, else full-corpus retrieval, depth 1000).\n\
         For sets with changed instructions the metrics are those of the changed (instructed) mode judged\n\
         with `qrels/changed.tsv`; \"query alone\" encodes the bare query in every mode. For BIRCO the\n\
         instruction is the task objective (`instruction_og`). p-MRR, WISE and SICR need changed and\n\
         reversed modes, which only the demo set has. BIRCO DORIS-MAE grades relevance with fractions\n\
         (averaged annotator votes); they are used as real-valued gains, and any level > 0 counts as\n\
         relevant for MAP, MRR and Recall.\n\n{table}"
    );
    write_marked("results", &doc)?;
    println!("\nRESULTS.md written");
    Ok(())
}

/// The sets `results` evaluates: those `recipes/results.json` names that are present (the
/// others are named as skipped).
fn result_sets() -> anyhow::Result<Vec<(String, PathBuf)>> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ResultSets {
        sets: Vec<crate::compare::EvalSetRef>,
    }
    let path = root().join("recipes/results.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let listed: ResultSets = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), e.line()))?;
    Ok(crate::compare::present_sets(&listed.sets, &[])
        .into_iter()
        .map(|s| (s.label, root().join(s.dir)))
        .collect())
}

/// Whether any query of the set in `dir` has an instruction (an unreadable set: assume so).
fn has_instructions(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("queries.jsonl"))
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .any(|q| {
                    ["instruction_og", "instruction_changed"]
                        .iter()
                        .any(|k| q[k].as_str().is_some_and(|s| !s.trim().is_empty()))
                })
        })
        .unwrap_or(true)
}

/// One table row from `trainer eval --json`: the instructed mode when the set has one, else
/// the og mode (BIRCO: og holds the objective).
fn result_row(label: &str, no_instruction: bool, v: &serde_json::Value) -> String {
    use engine::metrics::report::{P_MRR, SICR, WISE};
    let changed = engine::Mode::Changed.name();
    let mode = if v.get(changed).is_some() {
        changed
    } else {
        engine::Mode::Og.name()
    };
    let f = |x: &serde_json::Value| {
        x.as_f64()
            .map(|x| format!("{:.2}", x * 100.0))
            .unwrap_or_else(|| "-".into())
    };
    let what = match (no_instruction, mode == changed) {
        (true, _) => "query alone",
        (false, true) => "instruction (changed mode)",
        (false, false) => "task objective",
    };
    format!(
        "| {label} | {what} | {} | {} | {} | {} | {} | {} | {} |\n",
        f(&v[mode]["ndcg@10"]),
        f(&v[mode]["map@1000"]),
        f(&v[mode]["mrr@10"]),
        f(&v[mode]["recall@100"]),
        f(&v[P_MRR]),
        f(&v[WISE]),
        f(&v[SICR])
    )
}

/// `trainer eval --json` of `model` on the set `dir` (passages cached in `cache`), or the
/// trainer's error message.
pub fn eval_json(
    trainer: &std::path::Path,
    dir: &std::path::Path,
    model: &std::path::Path,
    cache: &std::path::Path,
    metrics: &str,
    no_instruction: bool,
) -> Result<serde_json::Value, String> {
    let mut cmd = Command::new(trainer);
    cmd.args(["eval", "--json", "--metrics", metrics, "--set"])
        .arg(dir)
        .arg("--model")
        .arg(model)
        .arg("--passage-cache")
        .arg(cache)
        .current_dir(root());
    if no_instruction {
        cmd.arg("--no-instruction");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {}: {e}", trainer.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("unreadable trainer output: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_results_sets_read_and_the_repository_ones_are_present() {
        let sets = super::result_sets().unwrap();
        for dir in [
            "engine/demo",
            "evalsets/instructions-heldout",
            "datasets/long-topics/dev",
            "evalsets/case-matching",
        ] {
            assert!(
                sets.iter().any(|(_, d)| d.ends_with(dir)),
                "{dir} missing from {sets:?}"
            );
        }
    }
}
