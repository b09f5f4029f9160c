//! `cargo xtask bench-web`: the web demo against transformers.js, same model, corpus and
//! queries, in one headless Chromium run.
//!
//! The project's side is the site as shipped (`build_site`, CPU wasm, int8 weights). The
//! other side is transformers.js from npm with ONNX Runtime Web's files, served from the same
//! host, running all-MiniLM-L6-v2 exported here to ONNX (fp32 and dynamic int8, by
//! `engine/benches/export_onnx.py`; nothing comes from a hub). The queries are the demo set's
//! 24 queries alone, with their instruction, and two with the reversed one (50 texts, the
//! instruction joined before the query as the engine's default template does); the native
//! engine's top 10 for each (`trainer embed`, CPU) is the reference for agreement.

use std::path::Path;
use std::process::Command;

use anyhow::Context;

use crate::process::{root, run, step, venv_python};
use crate::web::{
    build_site, build_test_trainer, npm_ci, run_in_browser, site_models, trainer, Builder,
    WebProfile,
};
use crate::{model, setup};

/// `cargo xtask bench-web`.
pub fn run_bench() -> anyhow::Result<()> {
    let model = model::fetch_default()?;
    let dir = root().join("tests/bench-web");
    let artifacts = dir.join("artifacts");
    let site = artifacts.join("site");
    build_site(
        &site,
        &site_models(model.clone(), &[])?,
        Builder::Direct(WebProfile::Shipped),
    )?;
    build_test_trainer()?;
    setup::apt_install(&["chromium"])?;
    npm_ci(
        &dir,
        "@huggingface/transformers",
        "transformers.js and playwright-core",
    )?;
    step("all-MiniLM-L6-v2 to ONNX, fp32 and int8 (engine/benches/export_onnx.py)");
    let python = venv_python(&crate::bench::ONNX_PACKAGES)?;
    let export = Command::new(&python)
        .arg(root().join("engine/benches/export_onnx.py"))
        .arg(&model)
        .arg(site.join("tjs-models"))
        .output()?;
    anyhow::ensure!(
        export.status.success(),
        "ONNX export: {}",
        String::from_utf8_lossy(&export.stderr)
    );
    let exported = String::from_utf8(export.stdout)?;
    println!("exported: {}", exported.trim());
    copy_transformers_js(&dir.join("node_modules"), &site)?;
    std::fs::copy(dir.join("tjs.html"), site.join("tjs.html"))?;
    step("the 50 query texts and the native engine's top 10 (trainer embed, CPU)");
    cases(&model, &site.join("bench"))?;
    run_in_browser(&site, &dir.join("bench.mjs"), &[site.as_path(), &artifacts])?;
    std::fs::write(artifacts.join("export.json"), exported)?;
    println!("\nsummary: {}", artifacts.join("summary.json").display());
    Ok(())
}

/// transformers.js's browser bundle and ONNX Runtime Web's wasm builds (with their loaders)
/// into `site/tjs/`; the page fetches what it needs of them.
fn copy_transformers_js(node_modules: &Path, site: &Path) -> anyhow::Result<()> {
    let out = site.join("tjs");
    std::fs::create_dir_all(&out)?;
    std::fs::copy(
        node_modules.join("@huggingface/transformers/dist/transformers.min.js"),
        out.join("transformers.min.js"),
    )
    .context("transformers.js's dist/transformers.min.js")?;
    let ort = node_modules.join("onnxruntime-web/dist");
    for entry in std::fs::read_dir(&ort).with_context(|| ort.display().to_string())? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("ort-wasm-simd-threaded") && !name.ends_with(".map") {
            std::fs::copy(&path, out.join(&*name))?;
        }
    }
    Ok(())
}

/// The lines of a JSONL file as JSON values.
fn read_jsonl(path: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    Ok(std::fs::read_to_string(path)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?)
}

/// A string field of a JSON record, trimmed ("" when absent).
fn field(record: &serde_json::Value, key: &str) -> String {
    record[key].as_str().unwrap_or("").trim().to_string()
}

/// The benchmark's query texts: every demo query alone, each under its changed instruction,
/// and the first two under their reversed one (`instruction query`, the page's template).
fn query_texts(queries: &[serde_json::Value]) -> Vec<String> {
    let joined = |q: &serde_json::Value, k: &str| format!("{} {}", field(q, k), field(q, "text"));
    let mut texts: Vec<String> = queries.iter().map(|q| field(q, "text")).collect();
    texts.extend(queries.iter().map(|q| joined(q, "instruction_changed")));
    texts.extend(
        queries
            .iter()
            .take(2)
            .map(|q| joined(q, "instruction_reversed")),
    );
    texts
}

/// Writes `bench/corpus.jsonl` (the demo corpus) and `bench/cases.json` (each query text
/// with the native engine's top 10) under `out`.
fn cases(model: &Path, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out)?;
    let demo = root().join("engine/demo");
    std::fs::copy(demo.join("corpus.jsonl"), out.join("corpus.jsonl"))?;
    let texts = query_texts(&read_jsonl(&demo.join("queries.jsonl"))?);
    let passage_texts: Vec<(String, String)> = read_jsonl(&out.join("corpus.jsonl"))?
        .iter()
        .map(|p| {
            let (title, text) = (
                field(p, "title"),
                p["text"].as_str().unwrap_or("").to_string(),
            );
            let joined = if title.is_empty() {
                text
            } else {
                format!("{title} {text}")
            };
            (field(p, "_id"), joined)
        })
        .collect();
    let corpus = embed(out, "passages", &passage_texts, model)?;
    let query_texts: Vec<(String, String)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("q{i}"), t.clone()))
        .collect();
    let queries = embed(out, "queries", &query_texts, model)?;
    let ids: Vec<&str> = passage_texts.iter().map(|(id, _)| id.as_str()).collect();
    let cases: Vec<serde_json::Value> = texts
        .iter()
        .zip(&queries)
        .map(|(text, q)| serde_json::json!({"text": text, "native_top10": top10(&corpus, q, &ids)}))
        .collect();
    std::fs::write(
        out.join("cases.json"),
        serde_json::to_string_pretty(&cases)?,
    )?;
    Ok(())
}

/// The ids of the ten passages of `corpus` with the highest dot product with `q`, best first
/// (ties by corpus order).
fn top10<'a>(corpus: &[Vec<f32>], q: &[f32], ids: &[&'a str]) -> Vec<&'a str> {
    let mut scored: Vec<(f32, usize)> = corpus
        .iter()
        .enumerate()
        .map(|(i, p)| (p.iter().zip(q).map(|(a, b)| a * b).sum(), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.iter().take(10).map(|(_, i)| ids[*i]).collect()
}

/// `trainer embed` of (id, text) records; the embeddings in order, L2-normalised.
fn embed(
    dir: &Path,
    name: &str,
    records: &[(String, String)],
    model: &Path,
) -> anyhow::Result<Vec<Vec<f32>>> {
    let input = dir.join(format!("{name}.jsonl"));
    let output = dir.join(format!("{name}.embeddings.jsonl"));
    let lines: Vec<String> = records
        .iter()
        .map(|(id, text)| serde_json::json!({"_id": id, "text": text}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n") + "\n")?;
    run(trainer()
        .arg("embed")
        .arg("--model")
        .arg(model)
        .arg("--input")
        .arg(&input)
        .arg("--output")
        .arg(&output))?;
    std::fs::read_to_string(&output)?
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)?;
            let row: Vec<f32> = v["embedding"]
                .as_array()
                .context("an embedding")?
                .iter()
                .map(|x| x.as_f64().unwrap_or(0.0) as f32)
                .collect();
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            Ok(row.into_iter().map(|x| x / norm).collect())
        })
        .collect()
}
