//! `cargo xtask recipe [--gpu]`: synthesize attribute data from the MS MARCO subset, fine-tune
//! the default model with `recipes/if-minilm.json`, evaluate base and fine-tuned models on every
//! set at hand, and write the before/after table into RESULTS.md (recipes/README.md).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::Context;

use crate::model;
use crate::tasks::{cargo, eval_json, home, root, run, step, target_dir, write_marked};

/// Runs the recipe; interrupted runs resume (data is kept, training continues from its last
/// checkpoint, passage embeddings are cached).
pub fn run_recipe(gpu: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let base = model::fetch_default()?;
    let shared = root().join("../shared/data");
    let msmarco = shared.join("msmarco-subset");
    anyhow::ensure!(
        msmarco.is_dir(),
        "the recipe synthesizes its training data from {}, which is absent",
        msmarco.display()
    );
    let (config, name) = if gpu {
        ("recipes/if-minilm-gpu.json", "if-minilm-gpu")
    } else {
        ("recipes/if-minilm.json", "if-minilm")
    };
    let run_dir = root().join("runs").join(name);
    let data = run_dir.join("data");

    step("building trainer (release)");
    let mut build = cargo();
    build.args(["build", "--release", "-p", "trainer"]);
    if gpu {
        build.args(["--features", "engine/cuda"]);
    }
    run(&mut build)?;
    let trainer = target_dir().join("release/trainer");

    if data.join("train.jsonl").is_file() {
        println!("synthesized data found in {}: kept", data.display());
    } else {
        step("trainer synth attributes (MS MARCO subset, 10% of the queries held out)");
        run(Command::new(&trainer)
            .args(["synth", "attributes", "--model"])
            .arg(&base)
            .arg("--set")
            .arg(&msmarco)
            .arg("--output")
            .arg(data.join("train.jsonl"))
            .arg("--heldout")
            .arg(data.join("heldout"))
            .args(["--max-score-gap", "0.3", "--per-query", "3"]))?;
    }

    step(&format!("trainer train --config {config}"));
    let mut train = Command::new(&trainer);
    train
        .args(["train", "--config", config, "--model"])
        .arg(&base);
    if run_dir.join("checkpoints").is_dir() {
        train.arg("--resume");
    }
    run(&mut train)?;
    let tuned = run_dir.join("model");

    let mut sets: Vec<(String, PathBuf)> = vec![
        ("demo (built-in)".into(), root().join("engine/demo")),
        (
            "synthesized instructions (held out)".into(),
            data.join("heldout/instructions"),
        ),
        (
            "MS MARCO queries (held out)".into(),
            data.join("heldout/retrieval"),
        ),
    ];
    for set in ["clinical-trial", "doris-mae", "wtb"] {
        sets.push((
            format!("BIRCO dev {set} (objective)"),
            shared.join("birco-dev").join(set),
        ));
    }
    let cache = home().join(".cache/ifir/passages");
    let mut table = String::from(
        "| set | model | nDCG@10 | nDCG@10 instructed | p-MRR | WISE | SICR |\n|---|---|---|---|---|---|---|\n",
    );
    let f = |x: &serde_json::Value| {
        x.as_f64()
            .map(|x| format!("{:.2}", x * 100.0))
            .unwrap_or_else(|| "-".into())
    };
    for (label, dir) in &sets {
        for (who, model_dir) in [("base", &base), ("fine-tuned", &tuned)] {
            step(&format!("eval: {label}, {who}"));
            let v = eval_json(&trainer, dir, model_dir, &cache, "ndcg@10", false)
                .map_err(|e| anyhow::anyhow!(e))
                .with_context(|| format!("evaluating {label}"))?;
            let row = format!(
                "| {label} | {who} | {} | {} | {} | {} | {} |\n",
                f(&v["og"]["ndcg@10"]),
                f(&v["changed"]["ndcg@10"]),
                f(&v["p-mrr"]),
                f(&v["wise"]),
                f(&v["sicr"])
            );
            print!("{row}");
            table.push_str(&row);
        }
    }
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let doc = format!(
        "Base all-MiniLM-L6-v2 against the recipe's fine-tuned model (`cargo xtask recipe{}`, config\n\
         `{config}`), values x100. \"nDCG@10\" is the og mode: the query alone for the demo and\n\
         held-out sets, the task objective for BIRCO. \"nDCG@10 instructed\" is the changed mode\n\
         (the instruction, judged with qrels/changed.tsv). The held-out sets come from queries the\n\
         model never trained on. Whole recipe: {minutes:.1} min on this machine ({} cores).\n\n{table}",
        if gpu { " --gpu" } else { "" },
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    write_marked("recipe", &doc)?;
    println!(
        "\nRESULTS.md written; the recipe took {minutes:.1} min; model in {}",
        tuned.display()
    );
    Ok(())
}
