//! What a run resolves before its first step: the settings checked ([`Plan`]), where it
//! starts (a checkpoint, with the same settings, or nothing), the device and the base model's
//! files ([`Setup`]), the training records, and the model and optimiser it starts from.

use std::path::{Path, PathBuf};

use anyhow::bail;
use burn::tensor::Bytes;

use engine::model_files::ModelFiles;
use engine::training::step::{AdamW, LossScale, Optimizer};
use engine::training::{Loss, RecordFile, TrainingPrecision};
use engine::{BackendKind, Device, ModelConfig};

use super::checkpoint::{self, CheckpointState};
use super::config::{self, TrainConfig};
use super::{Texts, TrainModel};

/// What the configuration resolves to, checked before any work.
pub struct Plan {
    /// The objective with its temperature.
    pub loss: Loss,
    /// Interaction II (cross-attention) is trained.
    pub cross: bool,
}

impl Plan {
    /// The settings of `c`, checked.
    pub fn new(c: &TrainConfig) -> anyhow::Result<Self> {
        if c.data.as_os_str().is_empty() {
            bail!("no training data: pass --data FILE (or set \"data\" in --config)");
        }
        c.check_ranges()?;
        let mut loss = Loss::new(c.loss.clone());
        if c.temperature > 0.0 {
            loss.temperature = c.temperature;
        }
        loss.literal = c.literal_loss;
        loss.exclusion_weight = c.exclusion_weight;
        loss.inclusion_weight = c.inclusion_weight;
        loss.excluded_order_weight = c.excluded_order_weight;
        loss.demotion_weight = c.demotion_weight;
        loss.demotion_fixed_distractors = c.demotion_fixed_distractors;
        let cross = c.interaction == config::InteractionKind::CrossAttention;
        if c.start_share != 0.0 && cross {
            bail!("--start-share mixes the encoder alone: not with cross-attention");
        }
        if c.max_steps == 0 && c.epochs == 0 {
            bail!("nothing to do: --epochs 0 and --max-steps 0");
        }
        let mixed = c.precision == TrainingPrecision::MixedF16;
        let backend = c.devices.replicas.first().map_or(c.device, |r| r.0);
        if mixed && (backend == BackendKind::Cpu || c.devices.replicas.len() > 1) {
            bail!("--precision mixed-f16 needs one GPU device (--device wgpu, vulkan or cuda): the CPU backend has no f16 arithmetic, and data parallelism sums f32 gradients");
        }
        if mixed && (c.grad_cache_chunk > 0 || cross) {
            bail!("--precision mixed-f16 works with the direct step only: not with --grad-cache-chunk or cross-attention");
        }
        let distilling = !c.distill_data.as_os_str().is_empty();
        if distilling && (c.grad_cache_chunk > 0 || cross) {
            bail!("--distill-data works with the direct and data-parallel steps only: not with --grad-cache-chunk or cross-attention");
        }
        Ok(Plan { loss, cross })
    }
}

/// A fresh run (step 0) must not overwrite an earlier run's trained model in its folder (one
/// whose checkpoints were deleted, say): refused, not replaced. A metrics log alone (a run that
/// died before its first checkpoint) is no result and is started over.
fn refuse_earlier_run(output: &Path) -> anyhow::Result<()> {
    let model = output.join("model/model.safetensors");
    if model.exists() {
        bail!(
            "{}: holds the model of an earlier run and no checkpoint to resume from; choose another --output or remove {}",
            output.display(),
            model.display()
        );
    }
    Ok(())
}

/// A resumed run must replay the same batches, objective and learning-rate curve: every
/// setting must match except where the run writes, its device and its bookkeeping intervals.
fn check_resumable(
    saved: &CheckpointState,
    now: &TrainConfig,
    records: usize,
) -> anyhow::Result<()> {
    let comparable = |c: &TrainConfig| {
        let mut v = serde_json::to_value(c).expect("serialisable");
        let map = v.as_object_mut().expect("a struct");
        for free in [
            "output",
            "device",
            "devices",
            "checkpoint_every",
            "keep_checkpoints",
            "eval_set",
            "eval_every",
            "encode_chunk",
            "grad_cache_chunk",
        ] {
            map.remove(free);
        }
        v
    };
    let (a, b) = (comparable(&saved.config), comparable(now));
    let differing: Vec<String> = a
        .as_object()
        .expect("a struct")
        .iter()
        .filter(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, v)| format!("{k} (checkpoint {v}, now {})", b[k.as_str()]))
        .collect();
    if !differing.is_empty() {
        bail!(
            "cannot resume: the checkpoint was written with other settings: {}; resume with the run's config.json",
            differing.join(", ")
        );
    }
    if saved.records != records {
        bail!(
            "cannot resume: the checkpoint saw {} valid training records, the data now has {records} (was --skip-bad-records given differently, or did the file change?)",
            saved.records
        );
    }
    Ok(())
}

/// Where a run starts: the newest checkpoint with `--resume`, else nothing. A run folder with
/// checkpoints is only continued on request, and a fresh run never overwrites an earlier
/// run's model: work is never lost.
pub fn resume_point(output: &Path, resume: bool) -> anyhow::Result<Option<PathBuf>> {
    let latest = checkpoint::latest(output)?;
    if resume {
        if latest.is_none() {
            eprintln!(
                "note: --resume given but {} holds no checkpoint; starting from step 0",
                output.display()
            );
            refuse_earlier_run(output)?;
        }
        return Ok(latest);
    }
    if latest.is_some() {
        bail!(
            "{}: this run folder already has checkpoints; pass --resume to continue it, or choose another --output",
            output.display()
        );
    }
    refuse_earlier_run(output)?;
    Ok(None)
}

/// What a run reads before it trains: the device, the base model's files, its settings and
/// the tokenizers at the run's limits.
pub struct Setup {
    /// The device the model and optimiser live on (the first of `replicas`).
    pub device: Device,
    /// The data-parallel devices (autodiff), or none for one device.
    pub replicas: Vec<Device>,
    /// The starting model's files.
    pub base: ModelFiles,
    /// Its settings.
    pub model_config: ModelConfig,
    /// The tokenizers at the run's limits.
    pub texts: Texts,
}

impl Setup {
    /// Reads the device, the base model's files and its tokenizers.
    pub fn new(config: &TrainConfig) -> anyhow::Result<Self> {
        let replicas = config.devices.devices()?;
        if replicas.len() > 1 && config.grad_cache_chunk > 0 {
            bail!("--devices and --grad-cache-chunk do not combine: data-parallel steps already back-propagate each device's share on its own");
        }
        let device = match replicas.first() {
            Some(first) => first.clone(),
            None => config.device.device()?,
        };
        if config.precision == TrainingPrecision::MixedF16
            && !device.supports_dtype(burn::tensor::FloatDType::F16)
        {
            bail!(
                "--precision mixed-f16: the device {device:?} has no f16 arithmetic; train in f32"
            );
        }
        let replicas = match replicas.len() {
            0 | 1 => Vec::new(),
            _ => replicas.into_iter().map(|d| d.autodiff()).collect(),
        };
        let base = ModelFiles::read_dir(&config.model)?;
        let model_config = ModelConfig::from_files(&base)?;
        let texts = Texts::new(
            &base,
            &model_config,
            config.query_max_length,
            config.passage_max_length,
            config.template.clone(),
            config.encode_chunk,
        )?;
        Ok(Setup {
            device,
            replicas,
            base,
            model_config,
            texts,
        })
    }
}

/// The training records, checked once (bad ones skipped and counted with
/// `--skip-bad-records`).
pub fn read_records(config: &TrainConfig, skip_bad: bool) -> anyhow::Result<RecordFile> {
    let data = published_as_jsonl(config)?;
    let bar = crate::progress::bar(0, "checking training records");
    let records = RecordFile::open(&data, skip_bad, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    if let Some(first) = records.skipped.first() {
        eprintln!(
            "warning: {} bad records skipped (--skip-bad-records), first: {}:{}: {}",
            records.skipped.len(),
            data.display(),
            first.line,
            first.problem
        );
    }
    Ok(records)
}

/// The training file to read: `data` itself, or for training data published as Parquet (a
/// file, or a hub data set's folder) its rows as JSON lines in the run folder, where a line
/// number is the row's.
fn published_as_jsonl(config: &TrainConfig) -> anyhow::Result<std::path::PathBuf> {
    let files = engine::data::published::training_parquet_files(&config.data);
    if files.is_empty() {
        return Ok(config.data.clone());
    }
    let jsonl = config.output.join("published-data.jsonl");
    std::fs::create_dir_all(&config.output)?;
    let rows = engine::data::published::parquet_to_jsonl(&files, &jsonl)?;
    eprintln!(
        "{}: {rows} rows of {} Parquet file(s) as JSON lines in {}",
        config.data.display(),
        files.len(),
        jsonl.display()
    );
    Ok(jsonl)
}

/// The run's one-line summary on stderr.
pub fn announce(config: &TrainConfig, plan: &Plan, records: usize, per_epoch: usize, steps: usize) {
    eprintln!(
        "training {} on {} records ({} micro-batches of {} per epoch), {} steps, loss {} (τ = {}), device {}",
        config.model.display(),
        records,
        per_epoch,
        config.batch_size,
        steps,
        plan.loss.objective,
        plan.loss.temperature,
        match config.devices.replicas.len() {
            0 => config.device.name().to_string(),
            _ => format!("{} (data-parallel)", config.devices),
        }
    );
}

/// Where a run starts.
pub struct Start {
    /// The model (f32 master weights).
    pub model: TrainModel,
    /// AdamW and its state.
    pub optimizer: Optimizer,
    /// Steps already taken.
    pub step: usize,
    /// The dynamic loss scale of a mixed-precision run (none in f32).
    pub loss_scale: Option<LossScale>,
}

/// The model and optimiser a run starts from, its first step and its loss scale: the base
/// model, or the checkpoint being resumed (which must have been written with the same
/// settings).
pub fn load_model(
    config: &TrainConfig,
    plan: &Plan,
    setup: &Setup,
    records: usize,
    resume_from: Option<&Path>,
) -> anyhow::Result<Start> {
    let mixed = config.precision == TrainingPrecision::MixedF16;
    let adamw = AdamW {
        beta1: config.beta1,
        beta2: config.beta2,
        epsilon: config.adam_epsilon,
        weight_decay: config.weight_decay,
    }
    .config();
    let train_device = setup.device.clone().autodiff();
    let load = |files: &ModelFiles| -> anyhow::Result<TrainModel> {
        let model = TrainModel::load(files, &setup.model_config, plan.cross, &train_device)?;
        let blocks = config.frozen_blocks;
        let all = model.bert.block_count();
        if blocks == all && !plan.cross {
            bail!("--frozen-blocks {blocks} freezes the whole encoder ({all} blocks: the embeddings and {} layers): nothing would train", all - 1);
        }
        Ok(model.freeze_lowest(blocks)?)
    };
    let Some(path) = resume_from else {
        let model = load(&setup.base)?;
        return Ok(Start {
            model,
            optimizer: adamw.init(),
            step: 0,
            loss_scale: mixed.then(LossScale::dynamic),
        });
    };
    let (state, files, optimizer_bytes) = checkpoint::read(path, &setup.base)?;
    check_resumable(&state, config, records)?;
    let model = load(&files)?;
    let optimizer = adamw
        .init()
        .from_bytes(Bytes::from_bytes_vec(optimizer_bytes))
        .map_err(|e| anyhow::anyhow!("{}: optimiser state unreadable: {e:?}", path.display()))?;
    eprintln!("resuming from {} (step {})", path.display(), state.step);
    Ok(Start {
        model,
        optimizer,
        step: state.step,
        loss_scale: mixed.then(|| state.loss_scale.unwrap_or_else(LossScale::dynamic)),
    })
}
