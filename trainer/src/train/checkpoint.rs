//! Checkpoints: the weights, the optimiser state and the position in the data, written
//! atomically (a `.partial` folder renamed into place), so a run killed at any moment resumes
//! from the last complete one and ends exactly where an uninterrupted run would.
//!
//! The data position is the step number alone: the record order is a pure function of
//! (seed, epoch) and the I-block sampling of (seed, micro-batch), so no generator state needs
//! saving. Parameter ids are hashes of the weight names, which is what lets the optimiser
//! state, keyed by id, find its parameters again after the weights are reloaded.

use std::path::{Path, PathBuf};

use anyhow::Context;
use burn::optim::ModuleOptimizer;
use serde::{Deserialize, Serialize};

use engine::model_files::{ModelFiles, CROSS_ATTENTION_WEIGHTS, WEIGHTS};
use engine::training::step::LossScale;

use super::config::TrainConfig;
use super::TrainModel;

const OPTIMIZER: &str = "optimizer.bpk";
const STATE: &str = "state.json";

/// What a checkpoint records besides tensors.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckpointState {
    /// Optimiser steps completed.
    pub step: usize,
    /// The configuration of the run (a resumed run must train the same way).
    pub config: TrainConfig,
    /// Loss of the last step.
    pub loss: f64,
    /// Valid training records (a resumed run must see the same data).
    pub records: usize,
    /// The dynamic loss scale of a mixed-precision run, where it stood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<LossScale>,
}

/// The run's checkpoint folder.
pub fn dir(output: &Path) -> PathBuf {
    output.join("checkpoints")
}

/// The newest complete checkpoint, if any.
pub fn latest(output: &Path) -> anyhow::Result<Option<PathBuf>> {
    let dir = dir(output);
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut best: Option<(usize, PathBuf)> = None;
    for entry in
        std::fs::read_dir(&dir).with_context(|| format!("{}: cannot list", dir.display()))?
    {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(step) = name
            .strip_prefix("step-")
            .and_then(|s| s.parse::<usize>().ok())
        else {
            continue;
        };
        if path.join(STATE).is_file() && best.as_ref().is_none_or(|(s, _)| step > *s) {
            best = Some((step, path));
        }
    }
    Ok(best.map(|(_, p)| p))
}

/// Writes checkpoint `state.step`, then deletes all but the newest `keep`.
pub fn save(
    output: &Path,
    model: &TrainModel,
    optimizer: &ModuleOptimizer,
    state: &CheckpointState,
    keep: usize,
) -> anyhow::Result<PathBuf> {
    let root = dir(output);
    let name = format!("step-{:08}", state.step);
    let partial = root.join(format!(".{name}.partial"));
    let done = root.join(&name);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).ok();
    }
    if let Err(e) = write_files(&partial, model, optimizer, state) {
        // Free the space a half-written checkpoint holds (a full disk is the usual cause).
        std::fs::remove_dir_all(&partial).ok();
        let kept = match latest(output) {
            Ok(Some(p)) => format!("the last good checkpoint is kept: {}", p.display()),
            _ => "there is no earlier checkpoint".to_string(),
        };
        return Err(e.context(format!(
            "checkpoint of step {} not written; {kept}",
            state.step
        )));
    }
    if done.exists() {
        std::fs::remove_dir_all(&done).ok();
    }
    std::fs::rename(&partial, &done)
        .with_context(|| format!("{}: cannot finish", done.display()))?;
    prune(&root, keep.max(1))?;
    Ok(done)
}

/// The checkpoint's files in the `partial` folder.
fn write_files(
    partial: &Path,
    model: &TrainModel,
    optimizer: &ModuleOptimizer,
    state: &CheckpointState,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(partial)
        .with_context(|| format!("{}: cannot create", partial.display()))?;
    let write = |file: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let path = partial.join(file);
        std::fs::write(&path, bytes).with_context(|| format!("{}: cannot write", path.display()))
    };
    let tensors = model.bert.named_tensors()?;
    if let Some((name, _, _)) = tensors
        .iter()
        .find(|(_, _, v)| v.iter().any(|x| !x.is_finite()))
    {
        anyhow::bail!(
            "weight '{name}' is not finite at step {}: lower --lr and resume",
            state.step
        );
    }
    write(WEIGHTS, &engine::safetensors_io::write_f32(&tensors)?)?;
    if let Some(cross) = &model.cross {
        write(CROSS_ATTENTION_WEIGHTS, &cross.to_safetensors()?)?;
    }
    let opt = optimizer
        .into_bytes()
        .map_err(|e| anyhow::anyhow!("serialising the optimiser state: {e:?}"))?;
    write(OPTIMIZER, &opt)?;
    write(STATE, serde_json::to_string_pretty(state)?.as_bytes())
}

fn prune(root: &Path, keep: usize) -> anyhow::Result<()> {
    let mut steps: Vec<PathBuf> = std::fs::read_dir(root)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("step-"))
        })
        .collect();
    steps.sort();
    let excess = steps.len().saturating_sub(keep);
    for old in &steps[..excess] {
        std::fs::remove_dir_all(old).ok();
    }
    Ok(())
}

/// Reads a checkpoint: its state, and the base model's files with the checkpoint's weights.
pub fn read(
    path: &Path,
    base: &ModelFiles,
) -> anyhow::Result<(CheckpointState, ModelFiles, Vec<u8>)> {
    let state_path = path.join(STATE);
    let state: CheckpointState = serde_json::from_slice(
        &std::fs::read(&state_path)
            .with_context(|| format!("{}: cannot read", state_path.display()))?,
    )
    .with_context(|| format!("{}: not a checkpoint state", state_path.display()))?;
    let mut files = base.clone();
    for name in [WEIGHTS, CROSS_ATTENTION_WEIGHTS] {
        let p = path.join(name);
        if p.is_file() {
            files.insert(
                name,
                std::fs::read(&p).with_context(|| format!("{}: cannot read", p.display()))?,
            );
        }
    }
    let opt_path = path.join(OPTIMIZER);
    let optimizer =
        std::fs::read(&opt_path).with_context(|| format!("{}: cannot read", opt_path.display()))?;
    Ok((state, files, optimizer))
}
