//! `cargo xtask recipe [--gpu]` and `cargo xtask ablation [--birco]`: both read a manifest
//! (`recipes/recipe.json`, `recipes/recipe-gpu.json`, `recipes/ablations.json`) that names the
//! training data to make (`trainer synth ...`), the `trainer train` configs to run in order,
//! and the evaluation sets to compare on; then they compare base and fine-tuned models with
//! paired tests and write the table into RESULTS.md (recipes/README.md). The recipe's model is
//! its manifest's last variant. `cargo xtask compare MODEL` measures one model trained on its
//! own on a manifest's sets, printing the table. Nothing here knows a set or a setting: the
//! manifests do.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use serde::Deserialize;

use crate::compare::{comparison_table, present_sets, write_marked, EvalSetRef, TABLE_NOTE};
use crate::model;
use crate::process::{cargo, root, run, step, target_dir};

/// A recipe or ablation manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// Training data made before any training, in order.
    datasets: Vec<Dataset>,
    /// `trainer train` configs, trained in order (a variant may start from an earlier one's
    /// model); the recipe's model is the last one's.
    variants: Vec<Variant>,
    /// The evaluation sets of the comparison table.
    sets: Vec<EvalSetRef>,
    /// The RESULTS.md section an ablation's table replaces (between `<!-- NAME:start -->` and
    /// `<!-- NAME:end -->`).
    #[serde(default = "ablation_section")]
    results_section: String,
}

fn ablation_section() -> String {
    "ablation".into()
}

/// One data folder: `trainer synth KIND ARGS...` writes its `train.jsonl`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Dataset {
    /// The folder, relative to the workspace root.
    folder: PathBuf,
    /// How it is made.
    synth: Synth,
    /// Further `trainer synth` arguments.
    #[serde(default)]
    args: Vec<String>,
}

/// Which `trainer synth` makes a dataset, and what the task adds to its arguments.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Synth {
    /// `synth renderings` from the MS MARCO subset, its held-out split in `FOLDER/heldout`.
    Renderings,
    /// `synth anchors`: distillation anchors from the sets its arguments name.
    Anchors,
    /// `synth judged`: the sets are in the arguments.
    Judged,
}

impl Synth {
    /// The `trainer synth` subcommand.
    fn name(self) -> &'static str {
        match self {
            Synth::Renderings => "renderings",
            Synth::Anchors => "anchors",
            Synth::Judged => "judged",
        }
    }
}

/// A variant: its row label and its `trainer train` config.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Variant {
    name: String,
    config: PathBuf,
}

impl Manifest {
    fn read(path: &Path) -> anyhow::Result<Manifest> {
        let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
        let manifest: Manifest = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a recipe manifest", path.display()))?;
        anyhow::ensure!(
            !manifest.variants.is_empty(),
            "{}: no variant to train",
            path.display()
        );
        Ok(manifest)
    }

    /// Makes every dataset, then trains every variant that has no model yet (resuming
    /// interrupted ones); returns each variant's label and model folder.
    fn train_all(&self, trainer: &Path, base: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
        for data in &self.datasets {
            synthesize(trainer, base, data)?;
        }
        self.variants
            .iter()
            .map(|v| {
                let output = config_output(&v.config)?;
                train(trainer, &v.config, &output)?;
                Ok((v.name.clone(), output.join("model")))
            })
            .collect()
    }
}

/// The run folder a `trainer train` config writes (its `output`).
fn config_output(config: &Path) -> anyhow::Result<PathBuf> {
    let path = root().join(config);
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&path).with_context(|| path.display().to_string())?,
    )
    .with_context(|| format!("{}: not JSON", path.display()))?;
    let output = v["output"]
        .as_str()
        .with_context(|| format!("{}: no output folder", path.display()))?;
    Ok(root().join(output))
}

/// Runs the recipe of `recipes/recipe.json` (or `recipe-gpu.json`); interrupted runs resume
/// (data is kept, training continues from its last checkpoint, passage embeddings are cached).
pub fn run_recipe(gpu: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let base = model::fetch_default()?;
    let name = if gpu {
        "recipe-gpu.json"
    } else {
        "recipe.json"
    };
    let manifest = Manifest::read(&root().join("recipes").join(name))?;
    let trainer = build_trainer(gpu)?;
    let models = manifest.train_all(&trainer, &base)?;
    let (_, tuned) = models.last().expect("checked on reading").clone();
    let sets = present_sets(&manifest.sets, &["birco"]);
    let table = comparison_table(
        &trainer,
        &base,
        &[("fine-tuned".into(), tuned.clone())],
        &sets,
    )?;
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let last = &manifest.variants[manifest.variants.len() - 1];
    let doc = format!(
        "Base all-MiniLM-L6-v2 against the recipe's fine-tuned model (`cargo xtask recipe{}`, \
         `recipes/{name}`: {}). {TABLE_NOTE} The held-out sets come from queries and topics the model never trained on.\n\
         Whole recipe: {minutes:.1} min on this machine ({} cores).\n\n{table}",
        if gpu { " --gpu" } else { "" },
        last.name,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    write_marked(if gpu { "recipe-gpu" } else { "recipe" }, &doc)?;
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

/// `trainer synth KIND` into `data.folder/train.jsonl`, unless already there. Renderings are
/// made from the MS MARCO subset in ../shared/data (holding 10% of its queries out in
/// `heldout/`, the split every comparison's MS MARCO row uses); anchors and judged records from
/// the sets their manifest arguments name. Every folder an argument names must exist.
fn synthesize(trainer: &Path, base: &Path, data: &Dataset) -> anyhow::Result<()> {
    let folder = root().join(&data.folder);
    let output = folder.join("train.jsonl");
    if output.is_file() {
        println!("synthesized data found in {}: kept", folder.display());
        return Ok(());
    }
    for arg in data.args.iter().filter(|a| a.starts_with("../shared/")) {
        anyhow::ensure!(
            root().join(arg).exists(),
            "{} is made from {arg}, which is absent",
            data.folder.display()
        );
    }
    let mut command = Command::new(trainer);
    command.args(["synth", data.synth.name()]);
    match data.synth {
        Synth::Renderings => {
            let msmarco = root().join("../shared/data/msmarco-subset");
            anyhow::ensure!(
                msmarco.is_dir(),
                "{} is made from {}, which is absent",
                data.folder.display(),
                msmarco.display()
            );
            command.arg("--heldout").arg(folder.join("heldout"));
            command.arg("--model").arg(base).arg("--set").arg(&msmarco);
        }
        Synth::Anchors => {
            command.arg("--model").arg(base);
        }
        Synth::Judged => {}
    }
    step(&format!(
        "trainer synth {} {} into {}",
        data.synth.name(),
        data.args.join(" "),
        folder.display()
    ));
    run(command.arg("--output").arg(&output).args(&data.args))
}

/// `trainer train --config CONFIG` (resuming from the run's checkpoints when present; a run
/// whose model exists is kept).
fn train(trainer: &Path, config: &Path, run_dir: &Path) -> anyhow::Result<()> {
    if run_dir.join("model/model.safetensors").is_file() {
        println!(
            "trained model found in {}: kept",
            run_dir.join("model").display()
        );
        return Ok(());
    }
    step(&format!("trainer train --config {}", config.display()));
    let mut cmd = Command::new(trainer);
    cmd.args(["train", "--config"]).arg(config);
    if run_dir.join("checkpoints").is_dir() {
        cmd.arg("--resume");
    }
    run(&mut cmd)
}

/// `cargo xtask ablation [--birco] [--manifest FILE]`: makes every dataset of the manifest, trains
/// every variant that has no model yet (resuming interrupted ones), compares each with the
/// base model on the manifest's sets, and writes the table into RESULTS.md.
pub fn run_ablation(birco: bool, manifest_path: &Path) -> anyhow::Result<()> {
    let base = model::fetch_default()?;
    let manifest = Manifest::read(&root().join(manifest_path))?;
    let trainer = build_trainer(false)?;
    let models = manifest.train_all(&trainer, &base)?;
    let with: &[&str] = if birco { &["birco"] } else { &[] };
    let sets = present_sets(&manifest.sets, with);
    let table = comparison_table(&trainer, &base, &models, &sets)?;
    write_marked(
        &manifest.results_section,
        &format!(
            "Ablation (`cargo xtask ablation{} --manifest {}`): each variant against the base \
             model. {TABLE_NOTE}\n\n{table}",
            if birco { " --birco" } else { "" },
            manifest_path.display()
        ),
    )?;
    println!("\nRESULTS.md written (ablation table)");
    Ok(())
}

/// `cargo xtask compare`: `model` (already trained) against the base on `manifest_path`'s
/// sets (the BIRCO ones with `birco`; only those whose label contains `only`), the table
/// printed and RESULTS.md left alone.
pub fn run_compare(
    model_dir: &Path,
    label: &str,
    birco: bool,
    manifest_path: &Path,
    only: Option<&str>,
) -> anyhow::Result<()> {
    let base = model::fetch_default()?;
    let manifest = Manifest::read(&root().join(manifest_path))?;
    let model_dir = root().join(model_dir);
    anyhow::ensure!(
        model_dir.join("config.json").is_file(),
        "{}: not a model folder (no config.json)",
        model_dir.display()
    );
    let with: &[&str] = if birco { &["birco"] } else { &[] };
    let sets: Vec<EvalSetRef> = present_sets(&manifest.sets, with)
        .into_iter()
        .filter(|s| only.is_none_or(|o| s.label.contains(o)))
        .collect();
    anyhow::ensure!(
        !sets.is_empty(),
        "no set of {} to compare on",
        manifest_path.display()
    );
    let trainer = build_trainer(false)?;
    let models = [(label.to_string(), model_dir)];
    let table = comparison_table(&trainer, &base, &models, &sets)?;
    println!(
        "
{TABLE_NOTE}

{table}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every manifest in recipes/ reads, and names configs that exist and sets with labels.
    #[test]
    fn every_manifest_reads_and_names_existing_configs() {
        let dir = root().join("recipes");
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let is_manifest = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("recipe") || n.starts_with("ablations"));
            if !is_manifest || path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let manifest = Manifest::read(&path).unwrap();
            for v in &manifest.variants {
                let output = config_output(&v.config)
                    .unwrap_or_else(|e| panic!("{}: {}: {e:#}", path.display(), v.name));
                assert!(output.starts_with(root().join("runs")), "{}", v.name);
            }
            assert!(!manifest.sets.is_empty(), "{}", path.display());
            read += 1;
        }
        assert!(read >= 4, "{read} manifests");
    }
}
