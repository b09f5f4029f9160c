//! `cargo xtask recipe [--gpu]`: synthesize relevance-preserving instruction data from the MS
//! MARCO subset, fine-tune the default model with `recipes/if-minilm.json`, compare base and
//! fine-tuned models on every set at hand with paired tests, and write the table into
//! RESULTS.md (recipes/README.md). `cargo xtask ablation`: the variants the recipe was chosen
//! from (`recipes/ablations.json`), trained and compared the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;

use crate::compare::{comparison_table, decision_sets, TABLE_NOTE};
use crate::model;
use crate::tasks::{cargo, root, run, step, target_dir, write_marked};

/// One training stage of the recipe: its data (a folder of the run, made by `trainer synth
/// renderings` with these arguments), its `trainer train` config and the run folder that config
/// writes.
struct Stage {
    data: &'static str,
    synth: &'static [&'static str],
    config: &'static str,
    output: &'static str,
}

/// Stage 1 learns what the values look like from requests only ("only forum posts"); stage 2
/// starts from its model and adds exclusions and contrasts ("anything but a forum thread",
/// "news articles, not forum posts"). Trained in one stage, the mix learns nothing: an
/// instruction and its negated reversal embed alike at first, so the two views' gradients
/// cancel (RESULTS.md, ablation).
const CPU_STAGES: [Stage; 2] = [
    Stage {
        data: "data-requests",
        synth: &[
            "--per-query",
            "1",
            "--exclusion-share",
            "0",
            "--contrast-share",
            "0",
        ],
        config: "recipes/if-minilm-stage1.json",
        output: "runs/if-minilm/stage1",
    },
    Stage {
        data: "data",
        synth: &["--per-query", "1"],
        config: "recipes/if-minilm.json",
        output: "runs/if-minilm",
    },
];

/// The same stages with the GPU configurations.
const GPU_STAGES: [Stage; 2] = [
    Stage {
        data: "data-requests",
        synth: &[
            "--per-query",
            "2",
            "--exclusion-share",
            "0",
            "--contrast-share",
            "0",
        ],
        config: "recipes/if-minilm-gpu-stage1.json",
        output: "runs/if-minilm-gpu/stage1",
    },
    Stage {
        data: "data",
        synth: &["--per-query", "2"],
        config: "recipes/if-minilm-gpu.json",
        output: "runs/if-minilm-gpu",
    },
];

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
    let (stages, name) = if gpu {
        (&GPU_STAGES, "if-minilm-gpu")
    } else {
        (&CPU_STAGES, "if-minilm")
    };
    let run_dir = root().join("runs").join(name);
    let data = run_dir.join("data");
    let trainer = build_trainer(gpu)?;
    for stage in stages.iter() {
        synthesize(
            &trainer,
            &base,
            &msmarco,
            &run_dir.join(stage.data),
            stage.synth,
        )?;
        train(&trainer, stage.config, &root().join(stage.output))?;
    }
    let config = stages[stages.len() - 1].config;
    let tuned = run_dir.join("model");
    let sets = decision_sets(&data, true);
    let table = comparison_table(
        &trainer,
        &base,
        &[("fine-tuned".into(), tuned.clone())],
        &sets,
    )?;
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let doc = format!(
        "Base all-MiniLM-L6-v2 against the recipe's fine-tuned model (`cargo xtask recipe{}`, config\n\
         `{config}`). {TABLE_NOTE} The held-out sets come from queries the model never trained on.\n\
         Whole recipe: {minutes:.1} min on this machine ({} cores).\n\n{table}",
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

/// Builds the release trainer (with CUDA for `gpu`) and returns its path.
fn build_trainer(gpu: bool) -> anyhow::Result<PathBuf> {
    step("building trainer (release)");
    let mut build = cargo();
    build.args(["build", "--release", "-p", "trainer"]);
    if gpu {
        build.args(["--features", "engine/cuda"]);
    }
    run(&mut build)?;
    Ok(target_dir().join("release/trainer"))
}

/// `trainer synth renderings` into `data` (train.jsonl, heldout/), unless already there;
/// with `anchors` as the first argument, `trainer synth anchors` instead (distillation anchors
/// from the InstructIR instructions in ../shared/data, the rest of the arguments passed on).
fn synthesize(
    trainer: &Path,
    base: &Path,
    msmarco: &Path,
    data: &Path,
    extra: &[&str],
) -> anyhow::Result<()> {
    if data.join("train.jsonl").is_file() {
        println!("synthesized data found in {}: kept", data.display());
        return Ok(());
    }
    if let Some(("anchors", rest)) = extra.split_first().map(|(k, r)| (*k, r)) {
        step(&format!(
            "trainer synth anchors {} (MS MARCO subset) into {}",
            rest.join(" "),
            data.display()
        ));
        let instructions =
            root().join("../shared/data/instructir-instructions/only_instruction_queries.jsonl");
        anyhow::ensure!(
            instructions.is_file(),
            "distillation anchors need {}, which is absent",
            instructions.display()
        );
        return run(Command::new(trainer)
            .args(["synth", "anchors", "--model"])
            .arg(base)
            .arg("--set")
            .arg(msmarco)
            .arg("--instructions")
            .arg(&instructions)
            .arg("--output")
            .arg(data.join("train.jsonl"))
            .args(rest)
            .current_dir(root()));
    }
    step(&format!(
        "trainer synth renderings {} (MS MARCO subset, 10% of the queries held out) into {}",
        extra.join(" "),
        data.display()
    ));
    run(Command::new(trainer)
        .args(["synth", "renderings", "--model"])
        .arg(base)
        .arg("--set")
        .arg(msmarco)
        .arg("--output")
        .arg(data.join("train.jsonl"))
        .arg("--heldout")
        .arg(data.join("heldout"))
        .args(extra))
}

/// `trainer train --config CONFIG` (resuming from the run's checkpoints when present; a run
/// whose model exists is kept).
fn train(trainer: &Path, config: &str, run_dir: &Path) -> anyhow::Result<()> {
    if run_dir.join("model/model.safetensors").is_file() {
        println!(
            "trained model found in {}: kept",
            run_dir.join("model").display()
        );
        return Ok(());
    }
    step(&format!("trainer train --config {config}"));
    let mut cmd = Command::new(trainer);
    cmd.args(["train", "--config", config]);
    if run_dir.join("checkpoints").is_dir() {
        cmd.arg("--resume");
    }
    run(&mut cmd)
}

/// A variant of the ablation manifest: its row label and its `trainer train` config.
struct Variant {
    name: String,
    config: String,
}

/// `recipes/ablations.json`.
struct Manifest {
    /// Data folders and their extra `trainer synth renderings` arguments.
    datasets: Vec<(String, Vec<String>)>,
    /// The folder whose held-out sets every variant is evaluated on.
    evaluation_data: String,
    /// The variants, trained in order (a variant may start from an earlier one's model).
    variants: Vec<Variant>,
}

/// Reads `recipes/ablations.json`: `datasets` (folder -> argument list), `evaluation_data`
/// and `variants` (`[{"name", "config"}]`).
fn read_manifest(path: &Path) -> anyhow::Result<Manifest> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let bad = |what: &str| anyhow::anyhow!("{}: {what}", path.display());
    let strings = |x: &serde_json::Value| -> Option<Vec<String>> {
        x.as_array()?
            .iter()
            .map(|s| s.as_str().map(String::from))
            .collect()
    };
    let datasets = v["datasets"]
        .as_object()
        .ok_or_else(|| bad("'datasets' must map folders to argument lists"))?
        .iter()
        .map(|(k, a)| {
            Ok((
                k.clone(),
                strings(a).ok_or_else(|| bad("dataset arguments must be strings"))?,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let evaluation = v["evaluation_data"]
        .as_str()
        .ok_or_else(|| bad("'evaluation_data' must be a folder"))?
        .to_string();
    let variants = v["variants"]
        .as_array()
        .ok_or_else(|| bad("'variants' must be a list"))?
        .iter()
        .map(|x| match (x["name"].as_str(), x["config"].as_str()) {
            (Some(n), Some(c)) => Ok(Variant {
                name: n.into(),
                config: c.into(),
            }),
            _ => Err(bad("each variant needs 'name' and 'config'")),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Manifest {
        datasets,
        evaluation_data: evaluation,
        variants,
    })
}

/// `cargo xtask ablation [--birco]`: synthesizes every data set of `recipes/ablations.json`,
/// trains every variant that has no model yet (resuming interrupted ones), compares each with
/// the base model on the decision sets, and writes the table into RESULTS.md.
pub fn run_ablation(birco: bool) -> anyhow::Result<()> {
    let base = model::fetch_default()?;
    let msmarco = root().join("../shared/data/msmarco-subset");
    anyhow::ensure!(
        msmarco.is_dir(),
        "the ablation synthesizes from {}, which is absent",
        msmarco.display()
    );
    let path = root().join("recipes/ablations.json");
    let Manifest {
        datasets,
        evaluation_data,
        variants,
    } = read_manifest(&path)?;
    let trainer = build_trainer(false)?;
    for (dir, extra) in &datasets {
        let extra: Vec<&str> = extra.iter().map(|s| s.as_str()).collect();
        synthesize(&trainer, &base, &msmarco, &root().join(dir), &extra)?;
    }
    let mut models = Vec::new();
    for v in &variants {
        let config: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join(&v.config)).with_context(|| v.config.clone())?,
        )
        .with_context(|| format!("{}: not JSON", v.config))?;
        let output = root().join(config["output"].as_str().context("config without output")?);
        train(&trainer, &v.config, &output)?;
        models.push((v.name.clone(), output.join("model")));
    }
    let sets = decision_sets(&root().join(&evaluation_data), birco);
    let table = comparison_table(&trainer, &base, &models, &sets)?;
    write_marked(
        "ablation",
        &format!(
            "Ablation (`cargo xtask ablation{}`, variants in `recipes/ablations.json`): each variant \
             against the base model. {TABLE_NOTE}\n\n{table}",
            if birco { " --birco" } else { "" }
        ),
    )?;
    println!("\nRESULTS.md written (ablation table)");
    Ok(())
}
