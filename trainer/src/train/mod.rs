//! `trainer train`: contrastive fine-tuning of an encoder so that it follows instructions
//! (seeds-spec §2 InF-Embed, §3 dual view). The objectives, record formats and batching are
//! the engine's (`engine::training`); this module is the loop around them: AdamW with warm-up
//! and decay, global gradient clipping, gradient accumulation, GradCache, checkpoints and
//! resume, NaN guard, progress, metrics log, plots and periodic evaluation.

pub mod checkpoint;
pub mod config;
pub mod model;
pub mod plot;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::{AdamWConfig, GradientsAccumulator, GradientsParams};
use burn::tensor::{Bytes, Tensor};

use engine::model_files::{ModelFiles, TOKENIZER_JSON};
use engine::rng::SplitMix64;
use engine::tokenize::TextTokenizer;
use engine::training::{epoch_order, BatchLayout, Loss, Objective, RecordFile, TrainingTuple};
use engine::{BackendKind, Device, ModelConfig};

use crate::cli::TrainArgs;
use checkpoint::CheckpointState;
use config::TrainConfig;
use model::TrainModel;

pub use model::Texts;

/// Stream id of the I-block sampling generator (the data order uses the epoch number).
const SAMPLING_STREAM: u64 = 0x5EED_1B10_C40D;

/// `trainer train`.
pub fn run(args: TrainArgs) -> anyhow::Result<()> {
    let mut config = match &args.config {
        Some(path) => TrainConfig::read(path)?,
        None => TrainConfig::default(),
    };
    config.apply(&args.overrides);
    let plan = Plan::new(&config)?;
    let output = config.output.clone();

    // A run folder with checkpoints is only continued on request: never overwrite work.
    let resume_from = if args.resume {
        let latest = checkpoint::latest(&output)?;
        if latest.is_none() {
            eprintln!(
                "note: --resume given but {} holds no checkpoint; starting from step 0",
                output.display()
            );
        }
        latest
    } else {
        if checkpoint::latest(&output)?.is_some() {
            bail!(
                "{}: this run folder already has checkpoints; pass --resume to continue it, or choose another --output",
                output.display()
            );
        }
        None
    };
    if resume_from.is_none() {
        refuse_earlier_run(&output)?;
    }

    let kind: BackendKind = config.device.parse()?;
    let device = kind.device()?;
    let train_device = device.clone().autodiff();
    let base = ModelFiles::read_dir(&config.model)?;
    let model_config = ModelConfig::from_files(&base)?;
    let max_positions = model_config.bert.max_position_embeddings;
    let tokenizer = |limit: usize| -> anyhow::Result<TextTokenizer> {
        Ok(TextTokenizer::from_bytes(
            base.required(TOKENIZER_JSON, "tokenizer")?,
            &base.path_of(TOKENIZER_JSON),
            limit.min(max_positions).max(2),
        )?)
    };
    let texts = Texts {
        query_tokenizer: tokenizer(config.query_max_length)?,
        passage_tokenizer: tokenizer(config.passage_max_length)?,
        config: model_config.clone(),
        template: config.template.parse()?,
        chunk: config.encode_chunk.max(1),
    };

    let bar = crate::progress::bar(0, "checking training records");
    let records = RecordFile::open(&config.data, args.skip_bad_records, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    if !records.skipped.is_empty() {
        eprintln!(
            "warning: {} bad records skipped (--skip-bad-records), first: {}:{}: {}",
            records.skipped.len(),
            config.data.display(),
            records.skipped[0].line,
            records.skipped[0].problem
        );
    }
    let micro_per_epoch = records.len().div_ceil(config.batch_size);
    let accumulation = config.grad_accumulation.max(1);
    let total_steps = if config.max_steps > 0 {
        config.max_steps
    } else {
        (micro_per_epoch * config.epochs).div_ceil(accumulation)
    };
    let adamw = AdamWConfig::new()
        .with_beta_1(config.beta1 as f32)
        .with_beta_2(config.beta2 as f32)
        .with_epsilon(config.adam_epsilon as f32)
        .with_weight_decay(config.weight_decay as f32);

    let (mut model, mut optimizer, start_step) = match &resume_from {
        Some(path) => {
            let (state, files, optimizer_bytes) = checkpoint::read(path, &base)?;
            check_resumable(&state, &config, records.len())?;
            let model = TrainModel::load(&files, &model_config, plan.cross, &train_device)?;
            let optimizer = adamw
                .init()
                .from_bytes(Bytes::from_bytes_vec(optimizer_bytes))
                .map_err(|e| {
                    anyhow::anyhow!("{}: optimiser state unreadable: {e:?}", path.display())
                })?;
            eprintln!("resuming from {} (step {})", path.display(), state.step);
            (model, optimizer, state.step)
        }
        None => (
            TrainModel::load(&base, &model_config, plan.cross, &train_device)?,
            adamw.init(),
            0,
        ),
    };

    std::fs::create_dir_all(&output)
        .with_context(|| format!("{}: cannot create", output.display()))?;
    std::fs::write(
        output.join("config.json"),
        serde_json::to_string_pretty(&config)?,
    )
    .with_context(|| format!("{}: cannot write config.json", output.display()))?;
    let mut log = MetricsLog::open(&output.join("metrics.jsonl"), start_step)?;
    let eval_set = if config.eval_set.as_os_str().is_empty() {
        None
    } else {
        Some(engine::EvalSet::load(&config.eval_set)?)
    };
    eprintln!(
        "training {} on {} records ({} micro-batches of {} per epoch), {} steps, loss {} (τ = {}), device {}",
        config.model.display(),
        records.len(),
        micro_per_epoch,
        config.batch_size,
        total_steps,
        plan.loss.objective,
        plan.loss.temperature,
        kind.name()
    );
    if let (Some(set), 0) = (&eval_set, start_step) {
        let scores = evaluate(&model, &base, set, &texts.template, &device)?;
        log.eval(0, &scores)?;
    }

    let mut batches = Batches {
        records,
        per_epoch: micro_per_epoch,
        batch: config.batch_size,
        seed: config.seed,
        max_negatives: config.max_hard_negatives,
        order: None,
    };
    let record_count = batches.records.len();
    let state_at = |step: usize, loss: f64| CheckpointState {
        step,
        config: config.clone(),
        loss,
        records: record_count,
    };
    let bar = crate::progress::train_bar(total_steps);
    bar.set_position(start_step as u64);
    let started = Instant::now();
    let mut pairs_done = 0usize;
    let mut last_loss = f64::NAN;
    let mut step = start_step;
    while step < total_steps {
        let lr = config.lr * schedule(&config.schedule, step, total_steps, config.warmup_ratio);
        let mut accumulator = GradientsAccumulator::<TrainModel>::new();
        let mut loss_value = 0.0;
        let mut pairs = 0;
        for a in 0..accumulation {
            let micro = step * accumulation + a;
            let tuples = batches.micro_batch(micro)?;
            let mut rng = SplitMix64::for_stream(config.seed ^ SAMPLING_STREAM, micro as u64);
            let mut layout = BatchLayout::new(
                &tuples,
                plan.loss.objective.needs_instruction_block(),
                config.instruction_fraction,
                &mut rng,
            );
            if config.query_alone_in_block && plan.loss.objective.needs_instruction_block() {
                layout = layout.with_query_alone();
            }
            let (value, grads) = if config.grad_cache_chunk > 0 {
                grad_cache_step(
                    &model,
                    &texts,
                    &layout,
                    &plan.loss,
                    accumulation,
                    config.grad_cache_chunk,
                )?
            } else {
                direct_step(&model, &texts, &layout, &plan.loss, accumulation)?
            };
            if !value.is_finite() {
                return Err(diverged(
                    &output,
                    format!("loss is {value} at step {} (micro-batch {micro})", step + 1),
                ));
            }
            loss_value += value;
            pairs += layout.tuples.len();
            accumulator.accumulate(&model, grads);
        }
        let mut grads = accumulator.grads();
        let grad_norm = clip_global_norm(&mut grads, &model, config.max_grad_norm);
        // The mean loss over the accumulated micro-batches.
        let loss_value = loss_value / accumulation as f64;
        if !grad_norm.is_finite() {
            return Err(diverged(
                &output,
                format!(
                    "the gradient norm is {grad_norm} at step {} (loss {loss_value})",
                    step + 1
                ),
            ));
        }
        model = optimizer.step(lr, model, grads);
        step += 1;
        last_loss = loss_value;
        pairs_done += pairs;
        let rate = pairs_done as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("loss {loss_value:.4}  {rate:.1} pairs/s"));
        bar.set_position(step as u64);
        log.step(
            step,
            pairs,
            loss_value,
            lr,
            grad_norm,
            rate,
            started.elapsed().as_secs_f64(),
        )?;
        if config.checkpoint_every > 0
            && step.is_multiple_of(config.checkpoint_every)
            && step < total_steps
        {
            checkpoint::save(
                &output,
                &model,
                &optimizer,
                &state_at(step, loss_value),
                config.keep_checkpoints,
            )?;
            log.plot(&output)?;
        }
        if let Some(set) = &eval_set {
            if config.eval_every > 0 && step.is_multiple_of(config.eval_every) && step < total_steps
            {
                let scores = evaluate(&model, &base, set, &texts.template, &device)?;
                log.eval(step, &scores)?;
            }
        }
    }
    bar.finish_and_clear();
    if step > start_step || resume_from.is_none() {
        checkpoint::save(
            &output,
            &model,
            &optimizer,
            &state_at(step, last_loss),
            config.keep_checkpoints,
        )?;
    }
    let model_dir = output.join("model");
    model.valid().to_files(&base)?.write_dir(&model_dir)?;
    if let Some(set) = &eval_set {
        let scores = evaluate(&model, &base, set, &texts.template, &device)?;
        log.eval(step, &scores)?;
    }
    log.plot(&output)?;
    eprintln!(
        "done: {step} steps, last loss {last_loss:.4}, {:.1} pairs/s; model in {}, log in {}",
        pairs_done as f64 / started.elapsed().as_secs_f64().max(1e-9),
        model_dir.display(),
        output.join("metrics.jsonl").display()
    );
    Ok(())
}

/// The error that stops a diverging run before its weights are updated or saved.
fn diverged(output: &Path, what: String) -> anyhow::Error {
    let last = checkpoint::latest(output)
        .ok()
        .flatten()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "none yet".into());
    anyhow::anyhow!(
        "{what}; stopping. The last good checkpoint is kept: {last}. Lower --lr, raise --temperature or check the data, then resume with --resume"
    )
}

/// What the configuration resolves to, checked before any work.
struct Plan {
    loss: Loss,
    cross: bool,
}

impl Plan {
    fn new(c: &TrainConfig) -> anyhow::Result<Self> {
        if c.data.as_os_str().is_empty() {
            bail!("no training data: pass --data FILE (or set \"data\" in --config)");
        }
        let objective: Objective = c.loss.parse()?;
        let mut loss = Loss::new(objective);
        if c.temperature < 0.0 || !c.temperature.is_finite() {
            bail!("--temperature must be positive (or 0 for the objective's default)");
        }
        if c.temperature > 0.0 {
            loss.temperature = c.temperature;
        }
        loss.literal = c.literal_loss;
        let cross = match c.interaction.as_str() {
            "concat" | "concatenation" => false,
            "cross-attention" | "cross" => true,
            other => bail!("unknown --interaction '{other}': use concat or cross-attention"),
        };
        if !["linear", "cosine", "constant"].contains(&c.schedule.as_str()) {
            bail!(
                "unknown --schedule '{}': use linear, cosine or constant",
                c.schedule
            );
        }
        if c.batch_size == 0 {
            bail!("--batch-size must be at least 1");
        }
        if !(c.lr > 0.0 && c.lr.is_finite()) {
            bail!("--lr must be a positive number");
        }
        if !(0.0..=1.0).contains(&c.instruction_fraction) || !(0.0..1.0).contains(&c.warmup_ratio) {
            bail!("--instruction-fraction must be in [0, 1] and --warmup-ratio in [0, 1)");
        }
        if c.max_steps == 0 && c.epochs == 0 {
            bail!("nothing to do: --epochs 0 and --max-steps 0");
        }
        c.template.parse::<engine::QueryTemplate>()?;
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

/// The data stream: the tuples of any micro-batch, records `order[k*B..(k+1)*B]` of its
/// epoch (the epoch's order is computed once and kept).
struct Batches {
    records: RecordFile,
    per_epoch: usize,
    batch: usize,
    seed: u64,
    max_negatives: usize,
    order: Option<(usize, Vec<usize>)>,
}

impl Batches {
    fn micro_batch(&mut self, micro: usize) -> anyhow::Result<Vec<TrainingTuple>> {
        let epoch = micro / self.per_epoch;
        let k = micro % self.per_epoch;
        if self.order.as_ref().is_none_or(|(e, _)| *e != epoch) {
            self.order = Some((
                epoch,
                epoch_order(self.records.len(), self.seed, epoch as u64),
            ));
        }
        let order = &self.order.as_ref().expect("set above").1;
        let chosen: Vec<usize> = order
            .iter()
            .skip(k * self.batch)
            .take(self.batch)
            .copied()
            .collect();
        let mut tuples = Vec::new();
        for i in chosen {
            tuples.extend(self.records.read(i)?.tuples(self.max_negatives));
        }
        Ok(tuples)
    }
}

/// Learning-rate factor at `step` (0-based) of `total`: linear warm-up, then decay.
pub fn schedule(kind: &str, step: usize, total: usize, warmup_ratio: f64) -> f64 {
    let warmup = (warmup_ratio * total as f64).round() as usize;
    let s = step as f64;
    if step < warmup {
        return (s + 1.0) / (warmup as f64 + 1.0);
    }
    let progress = (s - warmup as f64) / ((total - warmup).max(1) as f64);
    match kind {
        "cosine" => 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()),
        "constant" => 1.0,
        _ => (1.0 - progress).max(0.0),
    }
}

fn scalar(t: Tensor<1>) -> anyhow::Result<f64> {
    let v: Vec<f32> = t
        .into_data()
        .convert::<f32>()
        .try_into_vec()
        .map_err(|e| anyhow::anyhow!("reading the loss back: {e:?}"))?;
    Ok(v.first().copied().unwrap_or(f32::NAN) as f64)
}

/// One micro-batch with the whole graph in memory.
fn direct_step(
    model: &TrainModel,
    texts: &Texts,
    layout: &BatchLayout,
    loss: &Loss,
    accumulation: usize,
) -> anyhow::Result<(f64, GradientsParams)> {
    let pairs = model.embed_pairs(texts, layout, 0..layout.pairs.len())?;
    let passages = model.embed_passages(texts, layout, 0..layout.passages.len())?;
    let value = loss
        .forward(pairs.matmul(passages.transpose()), layout)
        .div_scalar(accumulation as f64);
    let v = scalar(value.clone())?;
    if !v.is_finite() {
        return Ok((v * accumulation as f64, GradientsParams::new()));
    }
    let grads = GradientsParams::from_grads(value.backward(), model);
    Ok((v * accumulation as f64, grads))
}

/// GradCache (Gao et al. 2021): embed everything without a graph, take the loss's gradient
/// with respect to the embeddings, then re-embed chunk by chunk with a graph and back-propagate
/// `sum(embedding * its gradient)`. The parameter gradient is the direct one (up to float
/// rounding) while only one chunk's activations are alive at a time.
fn grad_cache_step(
    model: &TrainModel,
    texts: &Texts,
    layout: &BatchLayout,
    loss: &Loss,
    accumulation: usize,
    chunk: usize,
) -> anyhow::Result<(f64, GradientsParams)> {
    let frozen = model.valid();
    let ranges = |n: usize| (0..n).step_by(chunk).map(move |s| s..(s + chunk).min(n));
    let pair_parts: Vec<Tensor<2>> = ranges(layout.pairs.len())
        .map(|r| frozen.embed_pairs(texts, layout, r))
        .collect::<anyhow::Result<_>>()?;
    let passage_parts: Vec<Tensor<2>> = ranges(layout.passages.len())
        .map(|r| frozen.embed_passages(texts, layout, r))
        .collect::<anyhow::Result<_>>()?;
    let pairs = Tensor::cat(pair_parts, 0).autodiff().require_grad();
    let passages = Tensor::cat(passage_parts, 0).autodiff().require_grad();
    let value = loss
        .forward(pairs.clone().matmul(passages.clone().transpose()), layout)
        .div_scalar(accumulation as f64);
    let v = scalar(value.clone())?;
    if !v.is_finite() {
        return Ok((v * accumulation as f64, GradientsParams::new()));
    }
    let g = value.backward();
    let d_pairs = pairs
        .grad(&g)
        .context("no gradient for the pair embeddings")?;
    let d_passages = passages
        .grad(&g)
        .context("no gradient for the passage embeddings")?;
    let mut accumulator = GradientsAccumulator::<TrainModel>::new();
    for r in ranges(layout.pairs.len()) {
        let e = model.embed_pairs(texts, layout, r.clone())?;
        let surrogate = (e * d_pairs.clone().narrow(0, r.start, r.len()).autodiff()).sum();
        accumulator.accumulate(
            model,
            GradientsParams::from_grads(surrogate.backward(), model),
        );
    }
    for r in ranges(layout.passages.len()) {
        let e = model.embed_passages(texts, layout, r.clone())?;
        let surrogate = (e * d_passages.clone().narrow(0, r.start, r.len()).autodiff()).sum();
        accumulator.accumulate(
            model,
            GradientsParams::from_grads(surrogate.backward(), model),
        );
    }
    Ok((v * accumulation as f64, accumulator.grads()))
}

/// Scales all gradients together so their global L2 norm is at most `max_norm` (PyTorch's
/// `clip_grad_norm_`; burn's own clipping works per tensor). Returns the norm before clipping.
fn clip_global_norm(grads: &mut GradientsParams, model: &TrainModel, max_norm: f64) -> f64 {
    struct Ids(Vec<(ParamId, usize)>);
    impl ModuleVisitor for Ids {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push((param.id, D));
        }
    }
    let mut ids = Ids(Vec::new());
    model.visit(&mut ids);
    fn sq<const D: usize>(grads: &GradientsParams, id: ParamId) -> Option<Tensor<1>> {
        grads.get::<D>(id).map(|g| g.powf_scalar(2.0).sum())
    }
    fn scale<const D: usize>(grads: &mut GradientsParams, id: ParamId, f: f64) {
        if let Some(g) = grads.remove::<D>(id) {
            grads.register::<D>(id, g.mul_scalar(f));
        }
    }
    let parts: Vec<Tensor<1>> = ids
        .0
        .iter()
        .filter_map(|&(id, rank)| match rank {
            1 => sq::<1>(grads, id),
            2 => sq::<2>(grads, id),
            3 => sq::<3>(grads, id),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        return 0.0;
    }
    let norm = scalar(Tensor::cat(parts, 0).sum())
        .unwrap_or(f64::NAN)
        .sqrt();
    if max_norm > 0.0 && norm > max_norm {
        let f = max_norm / (norm + 1e-6);
        for &(id, rank) in &ids.0 {
            match rank {
                1 => scale::<1>(grads, id, f),
                2 => scale::<2>(grads, id, f),
                3 => scale::<3>(grads, id, f),
                _ => {}
            }
        }
    }
    norm
}

/// The metrics a periodic evaluation reports (raw fractions).
type Scores = Vec<(String, f64)>;

/// Evaluates the current weights on an evaluation set through the engine's evaluation path
/// (the same code as `trainer eval`): nDCG@10 per mode, p-MRR, WISE, SICR.
fn evaluate(
    model: &TrainModel,
    base: &ModelFiles,
    set: &engine::EvalSet,
    template: &engine::QueryTemplate,
    device: &Device,
) -> anyhow::Result<Scores> {
    let files = model.valid().to_files(base)?;
    let mut encoder = engine::Encoder::from_files(&files, device)?;
    encoder.batch_size = 32;
    let bar = crate::progress::bar(set.corpus.len(), "evaluating: encoding corpus");
    let passages =
        engine::evaluation::encode_passages(&encoder, set, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let runs = engine::evaluation::runs(
        &encoder,
        set,
        &passages,
        template,
        false,
        engine::evaluation::DEFAULT_RUN_DEPTH,
    )?;
    let metric: engine::metrics::Metric = "ndcg@10".parse()?;
    let report =
        engine::metrics::ModeReport::compute(&set.qrels, &runs, &[metric], Default::default());
    let mut scores = Vec::new();
    for (mode, eval) in &report.modes {
        scores.push((format!("ndcg@10 {}", mode.name()), eval.mean[0]));
    }
    if let Some(p) = report.p_mrr.as_ref().filter(|p| !p.is_empty()) {
        scores.push(("p-mrr".into(), p.mean));
    }
    if let Some(s) = report.infosearch.as_ref().filter(|s| !s.wise.is_empty()) {
        scores.push(("wise".into(), s.wise.mean));
        scores.push(("sicr".into(), s.sicr.mean));
    }
    let shown: Vec<String> = scores
        .iter()
        .map(|(k, v)| format!("{k} {:.2}", v * 100.0))
        .collect();
    eprintln!("eval: {}", shown.join(", "));
    Ok(scores)
}

/// `metrics.jsonl`: one line per step (`{"step", "loss", "lr", "grad_norm", "pairs_per_s",
/// "elapsed_s"}`) and per evaluation (`{"step", "eval": {...}}`).
struct MetricsLog {
    path: PathBuf,
    lines: Vec<serde_json::Value>,
}

impl MetricsLog {
    /// Opens the log, keeping only lines up to `start_step` (a resumed run rewrites the rest).
    fn open(path: &Path, start_step: usize) -> anyhow::Result<Self> {
        let mut lines = Vec::new();
        if start_step > 0 {
            if let Ok(text) = std::fs::read_to_string(path) {
                for line in text.lines() {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                        if v["step"].as_u64().is_some_and(|s| s as usize <= start_step) {
                            lines.push(v);
                        }
                    }
                }
            }
        }
        let log = MetricsLog {
            path: path.to_path_buf(),
            lines,
        };
        log.rewrite()?;
        Ok(log)
    }

    fn rewrite(&self) -> anyhow::Result<()> {
        let mut text = String::new();
        for l in &self.lines {
            text.push_str(&l.to_string());
            text.push('\n');
        }
        std::fs::write(&self.path, text)
            .with_context(|| format!("{}: cannot write", self.path.display()))
    }

    fn append(&mut self, v: serde_json::Value) -> anyhow::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.path)
            .with_context(|| format!("{}: cannot open", self.path.display()))?;
        writeln!(f, "{v}").with_context(|| format!("{}: cannot write", self.path.display()))?;
        self.lines.push(v);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        step: usize,
        pairs: usize,
        loss: f64,
        lr: f64,
        grad_norm: f64,
        rate: f64,
        elapsed: f64,
    ) -> anyhow::Result<()> {
        use engine::metrics::json_number as n;
        self.append(serde_json::json!({
            "step": step, "pairs": pairs, "loss": n(loss), "lr": n(lr), "grad_norm": n(grad_norm),
            "pairs_per_s": n(rate), "elapsed_s": n(elapsed)
        }))
    }

    fn eval(&mut self, step: usize, scores: &Scores) -> anyhow::Result<()> {
        let map: serde_json::Map<String, serde_json::Value> = scores
            .iter()
            .map(|(k, v)| (k.clone(), engine::metrics::json_number(*v)))
            .collect();
        self.append(serde_json::json!({"step": step, "eval": map}))
    }

    /// Writes `plots/loss.svg` and, with evaluations, `plots/eval.svg`.
    fn plot(&self, output: &Path) -> anyhow::Result<()> {
        let dir = output.join("plots");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        let points = |key: &str| -> Vec<(f64, f64)> {
            self.lines
                .iter()
                .filter_map(|l| Some((l["step"].as_f64()?, l[key].as_f64()?)))
                .collect()
        };
        let loss = plot::line_chart(
            "training loss",
            "step",
            &[plot::Series {
                name: "loss",
                points: points("loss"),
            }],
        );
        std::fs::write(dir.join("loss.svg"), loss)?;
        let mut names: Vec<String> = Vec::new();
        for l in &self.lines {
            if let Some(obj) = l["eval"].as_object() {
                for k in obj.keys() {
                    if !names.contains(k) {
                        names.push(k.clone());
                    }
                }
            }
        }
        if !names.is_empty() {
            let series: Vec<plot::Series> = names
                .iter()
                .map(|name| plot::Series {
                    name,
                    points: self
                        .lines
                        .iter()
                        .filter_map(|l| {
                            Some((l["step"].as_f64()?, l["eval"][name].as_f64()? * 100.0))
                        })
                        .collect(),
                })
                .collect();
            std::fs::write(
                dir.join("eval.svg"),
                plot::line_chart("evaluation (x100)", "step", &series),
            )?;
        }
        Ok(())
    }
}
