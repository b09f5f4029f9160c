//! `cargo xtask bench`: CPU embedding throughput of the engine, in f32 and in 8-bit arithmetic,
//! against sentence-transformers (PyTorch CPU, from PyPI in a venv) and ONNX Runtime (the same
//! model exported to ONNX here, fp32 and dynamic int8) on the same passages and batch size, in
//! the same run.

use std::io::Write;
use std::process::Command;

use anyhow::Context;

use crate::model;
use crate::process::{root, venv_python};

/// Runs the benchmark and prints a table.
pub fn run(passages: usize, batch: usize) -> anyhow::Result<()> {
    let model_dir = model::fetch_default()?;
    let texts = bench_texts(passages)?;
    let python = venv_python(&[("sentence-transformers", "sentence_transformers")])?;
    let mut results = Vec::new();
    // The engine twice, f32 and 8-bit arithmetic (`engine::int8`), then the anchors.
    for precision in ["f32", "int8"] {
        results.push(capture(
            engine_example("embed_throughput")
                .arg(&model_dir)
                .arg(&texts)
                .arg(batch.to_string())
                .args(["1", "flex", precision]),
        )?);
    }
    let st = capture(
        Command::new(&python)
            .arg(root().join("engine/benches/st_throughput.py"))
            .arg(&model_dir)
            .arg(&texts)
            .arg(batch.to_string()),
    )?;
    results.push(st);
    results.extend(onnx_runtime(&model_dir, &texts, batch)?);
    print_table(&results, passages, batch);
    Ok(())
}

/// `passages` lines of MS MARCO passages (the demo corpus when `../shared/data` is absent),
/// cycled, in a temporary JSONL file.
fn bench_texts(passages: usize) -> anyhow::Result<std::path::PathBuf> {
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
    Ok(texts)
}

/// The results' table, then each engine's rate over each anchor's (the first two results are
/// the engine's).
fn print_table(results: &[serde_json::Value], passages: usize, batch: usize) {
    println!("\n| system | passages | seconds | passages/s |\n|---|---|---|---|");
    for r in results {
        println!(
            "| {} | {} | {:.2} | {:.1} |",
            r["system"].as_str().unwrap_or("?"),
            r["passages"],
            r["seconds"].as_f64().unwrap_or(0.0),
            r["passages_per_s"].as_f64().unwrap_or(0.0)
        );
    }
    let rate = |r: &serde_json::Value| r["passages_per_s"].as_f64().unwrap_or(f64::NAN);
    println!(
        "\n(batch {batch}, {passages} passages, {} cores)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    let (engines, anchors) = results.split_at(2);
    for engine in engines {
        for anchor in anchors {
            println!(
                "{} / {} = {:.2}x",
                engine["system"].as_str().unwrap_or("?"),
                anchor["system"].as_str().unwrap_or("?"),
                rate(engine) / rate(anchor)
            );
        }
    }
}

/// What `engine/benches/export_onnx.py` and `ort_throughput.py` import: (PyPI package, module).
pub const ONNX_PACKAGES: [(&str, &str); 4] = [
    ("sentence-transformers", "sentence_transformers"),
    ("onnx", "onnx"),
    ("onnxruntime", "onnxruntime"),
    ("onnxscript", "onnxscript"),
];

/// The model exported to ONNX here (fp32 and dynamic int8, `engine/benches/export_onnx.py`)
/// and run by ONNX Runtime on the same texts: the two rows of the ONNX Runtime anchor.
fn onnx_runtime(
    model_dir: &std::path::Path,
    texts: &std::path::Path,
    batch: usize,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let python = venv_python(&ONNX_PACKAGES)?;
    let out = crate::process::target_dir().join("bench-onnx");
    let name = model_dir.file_name().context("model folder name")?;
    let onnx = out.join(name).join("onnx");
    if !onnx.join("model_quantized.onnx").is_file() {
        println!("bench: exporting the model to ONNX in {}", out.display());
        let exported = capture(
            Command::new(&python)
                .arg(root().join("engine/benches/export_onnx.py"))
                .arg(model_dir)
                .arg(&out),
        )?;
        println!("bench: exported {exported}");
    }
    let mut rows = Vec::new();
    for (file, label) in [("model.onnx", "fp32"), ("model_quantized.onnx", "int8")] {
        rows.push(capture(
            Command::new(&python)
                .arg(root().join("engine/benches/ort_throughput.py"))
                .arg(onnx.join(file))
                .arg(model_dir)
                .arg(texts)
                .arg(batch.to_string())
                .arg(label),
        )?);
    }
    Ok(rows)
}

/// `cargo run --release -p engine --example NAME --`, arguments to follow.
fn engine_example(name: &str) -> Command {
    let mut cmd = crate::process::cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "engine",
        "--example",
        name,
        "--",
    ]);
    cmd
}

fn capture(cmd: &mut Command) -> anyhow::Result<serde_json::Value> {
    cmd.current_dir(root());
    let out = cmd
        .output()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    if !out.status.success() {
        anyhow::bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("");
    serde_json::from_str(last).with_context(|| format!("unexpected output: {text}"))
}

/// `cargo xtask bench-eval`: evaluation speed of the engine against ranx and pytrec_eval on the
/// same generated qrels and run files (`queries` x `docs`), in the same run.
pub fn eval(queries: usize, docs: usize) -> anyhow::Result<()> {
    let python = venv_python(&[
        ("numpy", "numpy"),
        ("pytrec-eval-terrier", "pytrec_eval"),
        ("ranx", "ranx"),
    ])?;
    let dir = std::env::temp_dir().join(format!("ifir-bench-eval-{queries}x{docs}"));
    if !dir.join("run.trec").is_file() {
        println!(
            "bench-eval: generating {queries} queries x {docs} documents in {}",
            dir.display()
        );
        crate::process::run(
            Command::new(&python)
                .arg(root().join("engine/benches/make_metrics_bench_data.py"))
                .arg(&dir)
                .args([
                    "--queries",
                    &queries.to_string(),
                    "--docs",
                    &docs.to_string(),
                    "--seed",
                    "7",
                ]),
        )?;
    }
    let (qrels, run_file) = (dir.join("qrels.tsv"), dir.join("run.trec"));
    println!("bench-eval: engine (release build)");
    let engine = capture(
        engine_example("eval_throughput")
            .arg(&qrels)
            .arg(&run_file)
            .arg("3"),
    )?;
    println!("bench-eval: ranx and pytrec_eval");
    let out = dir.join("python.json");
    crate::process::run(
        Command::new(&python)
            .arg(root().join("engine/benches/metrics_bench.py"))
            .args(["--qrels"])
            .arg(&qrels)
            .args(["--run"])
            .arg(&run_file)
            .args(["--out"])
            .arg(&out)
            .args(["--repeats", "3"]),
    )?;
    let py: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
    print_eval_table(&engine, &py);
    Ok(())
}

/// The bench-eval table and the engine's speed-ups over ranx and pytrec_eval.
fn print_eval_table(engine: &serde_json::Value, py: &serde_json::Value) {
    let t = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    println!("\n| system | load s | evaluate s | total s | ndcg@10 | map@1000 | recall@100 |\n|---|---|---|---|---|---|---|");
    let row = |name: &str, v: &serde_json::Value| {
        let m = &v["means"];
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} | {:.4} |",
            t(v, "load_s"),
            t(v, "evaluate_s"),
            t(v, "total_s"),
            m["ndcg@10"].as_f64().unwrap_or(f64::NAN),
            m["map@1000"].as_f64().unwrap_or(f64::NAN),
            m["recall@100"].as_f64().unwrap_or(f64::NAN)
        );
    };
    row(&format!("engine ({} threads)", engine["threads"]), engine);
    row(
        &format!("ranx {}", py["ranx"]["version"].as_str().unwrap_or("?")),
        &py["ranx"],
    );
    row(
        &format!(
            "pytrec_eval {}",
            py["pytrec_eval"]["version"].as_str().unwrap_or("?")
        ),
        &py["pytrec_eval"],
    );
    for (name, other) in [("ranx", &py["ranx"]), ("pytrec_eval", &py["pytrec_eval"])] {
        println!(
            "engine vs {name}: {:.1}x total, {:.1}x evaluation only, {:.1}x loading",
            t(other, "total_s") / t(engine, "total_s"),
            t(other, "evaluate_s") / t(engine, "evaluate_s"),
            t(other, "load_s") / t(engine, "load_s"),
        );
    }
}

/// Writes `n` instruction-negative records (one hard negative each) from real passages: the
/// MS MARCO subset when `../shared/data` is present, else the demo corpus. Query = the
/// passage's first words, positive = the passage, negative = the next passage.
pub fn training_records(path: &std::path::Path, n: usize) -> anyhow::Result<()> {
    let mut corpus = root().join("../shared/data/msmarco-subset/corpus.jsonl");
    if !corpus.is_file() {
        println!("training records: ../shared/data is absent; using the demo corpus (SKIPPED: MS MARCO passages)");
        corpus = root().join("engine/demo/corpus.jsonl");
    }
    let source = std::fs::read_to_string(&corpus)
        .with_context(|| format!("reading {}", corpus.display()))?;
    let mut passages = Vec::new();
    for (number, line) in source.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let doc: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a JSON line", corpus.display(), number + 1))?;
        match doc["text"].as_str() {
            Some(text) if !text.trim().is_empty() => passages.push(text.to_string()),
            _ => {}
        }
    }
    anyhow::ensure!(
        passages.len() > 1,
        "{}: fewer than two passages with text to build training records from",
        corpus.display()
    );
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?,
    );
    for i in 0..n {
        let p = &passages[i % passages.len()];
        let q: String = p.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
        let record = serde_json::json!({
            "query": q,
            "instruction": "Find a passage that answers this, with concrete facts.",
            "positive": p,
            "negatives": [passages[(i + 1) % passages.len()]],
            "instruction_negatives": [],
        });
        writeln!(f, "{record}")?;
    }
    f.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// Runs `trainer train --loss infonce` (release) into `out` and returns its pairs/s over the
/// steps after the first (the same convention as the Python side). `shape`: batch, steps,
/// query and passage lengths.
fn trainer_pairs_per_s(
    model_dir: &std::path::Path,
    records: &std::path::Path,
    out: &std::path::Path,
    shape: [usize; 4],
    device: &str,
) -> anyhow::Result<f64> {
    let [batch, steps, query_len, passage_len] = shape.map(|x| x.to_string());
    let mut cargo = crate::process::cargo();
    cargo.args(["run", "--quiet", "--release", "-p", "trainer"]);
    if device != "cpu" {
        cargo.args(["--features", &format!("engine/{device}")]);
    }
    let status = cargo
        .args(["--", "train", "--loss", "infonce", "--warmup-ratio", "0"])
        .args(["--checkpoint-every", "0", "--device", device])
        .arg("--model")
        .arg(model_dir)
        .arg("--data")
        .arg(records)
        .arg("--output")
        .arg(out)
        .args(["--batch-size", &batch, "--max-steps", &steps])
        .args(["--query-max-length", &query_len])
        .args(["--passage-max-length", &passage_len])
        .current_dir(root())
        .status()?;
    anyhow::ensure!(status.success(), "trainer train failed");
    let log = std::fs::read_to_string(out.join("metrics.jsonl"))?;
    let lines: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| v["loss"].is_number())
        .collect();
    anyhow::ensure!(lines.len() >= 2, "too few steps logged");
    let secs = lines.last().unwrap()["elapsed_s"].as_f64().unwrap_or(0.0)
        - lines[0]["elapsed_s"].as_f64().unwrap_or(0.0);
    let pairs: f64 = lines[1..]
        .iter()
        .map(|l| l["pairs"].as_f64().unwrap_or(0.0))
        .sum();
    Ok(pairs / secs)
}

/// `cargo xtask bench-train`: training throughput (pairs/s) of `trainer train --loss infonce`
/// against sentence-transformers' MultipleNegativesRankingLoss on the same records, model,
/// batch and sequence lengths, in the same run.
pub fn train(
    batch: usize,
    steps: usize,
    query_len: usize,
    passage_len: usize,
    device: &str,
) -> anyhow::Result<()> {
    let model_dir = model::fetch_default()?;
    let records = std::env::temp_dir().join("ifir-bench-train.jsonl");
    training_records(&records, batch * steps)?;
    let python = venv_python(&[("sentence-transformers", "sentence_transformers")])?;
    let out = std::env::temp_dir().join(format!("ifir-bench-train-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let ours = trainer_pairs_per_s(
        &model_dir,
        &records,
        &out,
        [batch, steps, query_len, passage_len],
        device,
    )?;
    let st = capture(
        Command::new(&python)
            .arg(root().join("trainer/benches/st_train_throughput.py"))
            .arg(&model_dir)
            .arg(&records)
            .args([batch, steps, query_len, passage_len].map(|x| x.to_string())),
    )?;
    let theirs = st["pairs_per_s"].as_f64().unwrap_or(f64::NAN);
    println!("\n| system | device | pairs/s |\n|---|---|---|");
    println!("| trainer train --loss infonce | {device} | {ours:.2} |");
    println!(
        "| {} | cpu | {theirs:.2} |",
        st["system"].as_str().unwrap_or("?")
    );
    println!(
        "\ntrainer / sentence-transformers = {:.2}x (batch {batch} triplets, {steps} steps, max lengths {query_len}/{passage_len}, {} cores)",
        ours / theirs,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    let _ = std::fs::remove_dir_all(&out);
    Ok(())
}
