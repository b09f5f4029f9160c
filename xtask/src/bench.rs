//! `cargo xtask bench`: CPU embedding throughput of the engine against sentence-transformers
//! (PyTorch CPU, from PyPI in a venv) on the same passages and batch size, in the same run.

use std::io::Write;
use std::process::Command;

use anyhow::Context;

use crate::model;
use crate::tasks::{root, venv_python};

/// Runs the benchmark and prints a table.
pub fn run(passages: usize, batch: usize) -> anyhow::Result<()> {
    let model_dir = model::fetch_default()?;
    let shared = root().join("../shared/data/msmarco-subset/corpus.jsonl");
    let source = if shared.is_file() {
        println!("bench: passages from {}", shared.display());
        std::fs::read_to_string(&shared)?
    } else {
        println!("bench: ../shared/data is absent; using the built-in demo corpus instead (SKIPPED: MS MARCO passages)");
        std::fs::read_to_string(root().join("engine/demo/corpus.jsonl"))?
    };
    let lines: Vec<&str> = source.lines().filter(|l| !l.trim().is_empty()).collect();
    let texts = std::env::temp_dir().join("ifir-bench-texts.jsonl");
    let mut f = std::fs::File::create(&texts)?;
    for line in lines.iter().cycle().take(passages) {
        writeln!(f, "{line}")?;
    }
    drop(f);
    let python = venv_python(&["sentence-transformers"])?;
    let mut results = Vec::new();
    let engine = capture(Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["run", "--quiet", "--release", "-p", "engine", "--example", "embed_throughput", "--"])
        .arg(&model_dir)
        .arg(&texts)
        .arg(batch.to_string()))?;
    results.push(engine);
    let st = capture(Command::new(&python)
        .arg(root().join("engine/benches/st_throughput.py"))
        .arg(&model_dir)
        .arg(&texts)
        .arg(batch.to_string()))?;
    results.push(st);
    println!("\n| system | passages | seconds | passages/s |\n|---|---|---|---|");
    for r in &results {
        println!(
            "| {} | {} | {:.2} | {:.1} |",
            r["system"].as_str().unwrap_or("?"),
            r["passages"],
            r["seconds"].as_f64().unwrap_or(0.0),
            r["passages_per_s"].as_f64().unwrap_or(0.0)
        );
    }
    let ratio = results[0]["passages_per_s"].as_f64().unwrap_or(0.0) / results[1]["passages_per_s"].as_f64().unwrap_or(1.0);
    println!("\nengine / sentence-transformers = {ratio:.2}x (batch {batch}, {passages} passages, {} cores)", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    Ok(())
}

fn capture(cmd: &mut Command) -> anyhow::Result<serde_json::Value> {
    cmd.current_dir(root());
    let out = cmd.output().with_context(|| format!("cannot start {cmd:?}"))?;
    if !out.status.success() {
        anyhow::bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("");
    serde_json::from_str(last).with_context(|| format!("unexpected output: {text}"))
}
