//! `trainer train`: contrastive fine-tuning of an encoder so that it follows instructions
//! (seeds-spec §2 InF-Embed, §3 dual view). The objectives, record formats and batching are
//! the engine's (`engine::training`); this module is the loop around them: AdamW with warm-up
//! and decay, global gradient clipping, gradient accumulation, GradCache, checkpoints and
//! resume, NaN guard, progress, metrics log, plots and periodic evaluation, and the optional
//! distillation term that keeps a frozen teacher's rankings ([`distill`]).

pub mod checkpoint;
pub mod config;
pub mod distill;
pub mod parallel;
pub mod plot;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::{Bytes, Tensor};

use engine::model_files::ModelFiles;
use engine::training::step::{
    clip_global_norm, direct_gradients, micro_batch_layout, scalar, AdamW, BlockSampling,
    Optimizer, RecordStream,
};
use engine::training::{BatchLayout, Loss, RecordFile};
use engine::{Device, ModelConfig};

use crate::cli::TrainArgs;
use checkpoint::CheckpointState;
use config::TrainConfig;

pub use engine::training::model::{Texts, TrainModel};

/// `trainer train`: settings, then the stages of a run.
pub fn run(args: TrainArgs) -> anyhow::Result<()> {
    let mut config = match &args.config {
        Some(path) => TrainConfig::read(path)?,
        None => TrainConfig::default(),
    };
    config.apply(&args.overrides);
    let plan = Plan::new(&config)?;
    let resume_from = resume_point(&config.output, args.resume)?;
    let setup = Setup::new(&config)?;
    let records = read_records(&config, args.skip_bad_records)?;
    let mut run = Run::start(config, plan, setup, records, resume_from)?;
    run.evaluate_at_start()?;
    while run.step < run.total_steps {
        run = run.train_step()?;
        run.after_step()?;
    }
    run.finish()
}

/// Where a run starts: the newest checkpoint with `--resume`, else nothing. A run folder with
/// checkpoints is only continued on request, and a fresh run never overwrites an earlier
/// run's model: work is never lost.
fn resume_point(output: &Path, resume: bool) -> anyhow::Result<Option<PathBuf>> {
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
struct Setup {
    /// The device the model and optimiser live on (the first of `replicas`).
    device: Device,
    /// The data-parallel devices (autodiff), or none for one device.
    replicas: Vec<Device>,
    base: ModelFiles,
    model_config: ModelConfig,
    texts: Texts,
}

impl Setup {
    fn new(config: &TrainConfig) -> anyhow::Result<Self> {
        let replicas = config.devices.devices()?;
        if replicas.len() > 1 && config.grad_cache_chunk > 0 {
            bail!("--devices and --grad-cache-chunk do not combine: data-parallel steps already back-propagate each device's share on its own");
        }
        let device = match replicas.first() {
            Some(first) => first.clone(),
            None => config.device.device()?,
        };
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
fn read_records(config: &TrainConfig, skip_bad: bool) -> anyhow::Result<RecordFile> {
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

/// A run in progress: the model, its optimiser, the data stream, the log, and where it is.
struct Run {
    config: TrainConfig,
    plan: Plan,
    setup: Setup,
    model: TrainModel,
    optimizer: Optimizer,
    batches: RecordStream<RecordFile>,
    log: MetricsLog,
    eval_set: Option<engine::EvalSet>,
    distillation: Option<distill::Distillation>,
    resumed: bool,
    start_step: usize,
    step: usize,
    total_steps: usize,
    accumulation: usize,
    bar: crate::progress::Progress,
    started: Instant,
    pairs_done: usize,
    last_loss: f64,
}

impl Run {
    /// Loads the model (and optimiser state when resuming), writes the run's config and opens
    /// its log.
    fn start(
        config: TrainConfig,
        plan: Plan,
        setup: Setup,
        records: RecordFile,
        resume_from: Option<PathBuf>,
    ) -> anyhow::Result<Self> {
        let micro_per_epoch = records.len().div_ceil(config.batch_size);
        let accumulation = config.grad_accumulation.max(1);
        let total_steps = if config.max_steps > 0 {
            config.max_steps
        } else {
            (micro_per_epoch * config.epochs).div_ceil(accumulation)
        };
        let (model, optimizer, start_step) = load_model(
            &config,
            &plan,
            &setup,
            records.len(),
            resume_from.as_deref(),
        )?;
        let output = &config.output;
        std::fs::create_dir_all(output)
            .with_context(|| format!("{}: cannot create", output.display()))?;
        engine::atomic::write(
            output.join("config.json"),
            serde_json::to_string_pretty(&config)?.as_bytes(),
        )?;
        let log = MetricsLog::open(&output.join("metrics.jsonl"), start_step)?;
        let eval_set = if config.eval_set.as_os_str().is_empty() {
            None
        } else {
            Some(engine::EvalSet::load(&config.eval_set)?)
        };
        announce(&config, &plan, records.len(), micro_per_epoch, total_steps);
        let batches = RecordStream::new(
            records,
            config.batch_size,
            config.seed,
            config.max_hard_negatives,
        );
        let distillation = distill::Distillation::prepare(
            &config,
            &setup.texts,
            &setup.model_config,
            plan.loss.temperature,
            &setup.device,
        )?;
        let bar = crate::progress::train_bar(total_steps);
        bar.set_position(start_step as u64);
        Ok(Run {
            config,
            plan,
            setup,
            model,
            optimizer,
            batches,
            log,
            eval_set,
            distillation,
            resumed: resume_from.is_some(),
            start_step,
            step: start_step,
            total_steps,
            accumulation,
            bar,
            started: Instant::now(),
            pairs_done: 0,
            last_loss: f64::NAN,
        })
    }

    /// The evaluation before the first step of a fresh run (the base model's numbers).
    fn evaluate_at_start(&mut self) -> anyhow::Result<()> {
        if self.start_step == 0 {
            self.evaluate()?;
        }
        Ok(())
    }

    /// One optimiser step over `accumulation` micro-batches; stops a diverging run before the
    /// weights change.
    fn train_step(mut self) -> anyhow::Result<Self> {
        let (config, step) = (&self.config, self.step);
        let lr = config.lr
            * config
                .schedule
                .factor(step, self.total_steps, config.warmup_ratio);
        let mut accumulator = GradientsAccumulator::<TrainModel>::new();
        let (mut loss_sum, mut pairs) = (0.0, 0);
        for a in 0..self.accumulation {
            let micro = step * self.accumulation + a;
            let layout = self.layout(micro)?;
            let (value, grads) = self.gradients(&layout, micro)?;
            if !value.is_finite() {
                return Err(diverged(
                    &self.config.output,
                    format!("loss is {value} at step {} (micro-batch {micro})", step + 1),
                ));
            }
            loss_sum += value;
            pairs += layout.tuples.len();
            accumulator.accumulate(&self.model, grads);
        }
        let mut grads = accumulator.grads();
        let grad_norm = clip_global_norm(&mut grads, &self.model, self.config.max_grad_norm);
        // The mean loss over the accumulated micro-batches.
        let loss = loss_sum / self.accumulation as f64;
        if !grad_norm.is_finite() {
            return Err(diverged(
                &self.config.output,
                format!(
                    "the gradient norm is {grad_norm} at step {} (loss {loss})",
                    step + 1
                ),
            ));
        }
        // The model moves through the optimiser: no second reference keeps its old weights.
        self.model = self.optimizer.step(lr, self.model, grads);
        self.step += 1;
        self.last_loss = loss;
        self.pairs_done += pairs;
        let elapsed = self.started.elapsed().as_secs_f64();
        let rate = self.pairs_done as f64 / elapsed.max(1e-9);
        self.bar
            .set_message(format!("loss {loss:.4}  {rate:.1} pairs/s"));
        self.bar.set_position(self.step as u64);
        self.log
            .step(self.step, pairs, loss, lr, grad_norm, rate, elapsed)?;
        Ok(self)
    }

    /// The batch layout of micro-batch `micro` (its I-block sampled from its own stream).
    fn layout(&mut self, micro: usize) -> anyhow::Result<BatchLayout> {
        let tuples = self.batches.micro_batch(micro)?;
        let sampling = BlockSampling {
            instruction_fraction: self.config.instruction_fraction,
            query_alone: self.config.query_alone_in_block,
            seed: self.config.seed,
        };
        Ok(micro_batch_layout(
            &tuples,
            &self.plan.loss,
            sampling,
            micro,
        ))
    }

    /// The loss and gradients of micro-batch `micro` (GradCache when configured).
    fn gradients(
        &self,
        layout: &BatchLayout,
        micro: usize,
    ) -> anyhow::Result<(f64, GradientsParams)> {
        let texts = &self.setup.texts;
        if !self.setup.replicas.is_empty() {
            parallel::data_parallel_step(
                &self.model,
                &self.setup.replicas,
                texts,
                layout,
                &self.plan.loss,
                self.accumulation,
            )
        } else if self.config.grad_cache_chunk > 0 {
            grad_cache_step(
                &self.model,
                texts,
                layout,
                &self.plan.loss,
                self.accumulation,
                self.config.grad_cache_chunk,
            )
        } else {
            let term = |model: &TrainModel| -> engine::Result<Tensor<1>> {
                let d = self
                    .distillation
                    .as_ref()
                    .expect("only called with distillation");
                d.loss(model, texts, micro)
            };
            let extra = self
                .distillation
                .as_ref()
                .map(|_| &term as engine::training::step::ExtraTerm<'_>);
            Ok(direct_gradients(
                &self.model,
                texts,
                layout,
                &self.plan.loss,
                self.accumulation,
                extra,
            )?)
        }
    }

    /// Checkpoints and evaluations due after a step (the last step's come in `finish`).
    fn after_step(&mut self) -> anyhow::Result<()> {
        let due = |every: usize| every > 0 && self.step.is_multiple_of(every);
        if self.step >= self.total_steps {
            return Ok(());
        }
        if due(self.config.checkpoint_every) {
            self.checkpoint()?;
            self.log.plot(&self.config.output)?;
        }
        if due(self.config.eval_every) {
            self.evaluate()?;
        }
        Ok(())
    }

    fn checkpoint(&self) -> anyhow::Result<()> {
        let state = CheckpointState {
            step: self.step,
            config: self.config.clone(),
            loss: self.last_loss,
            records: self.batches.records.len(),
        };
        checkpoint::save(
            &self.config.output,
            &self.model,
            &self.optimizer,
            &state,
            self.config.keep_checkpoints,
        )?;
        Ok(())
    }

    /// Evaluates the current weights on the evaluation set, when there is one, and logs it.
    fn evaluate(&mut self) -> anyhow::Result<()> {
        if let Some(set) = &self.eval_set {
            let s = &self.setup;
            let scores = evaluate(&self.model, &s.base, set, &s.texts.template, &s.device)?;
            self.log.eval(self.step, &scores)?;
        }
        Ok(())
    }

    /// The last checkpoint, the trained model in `model/`, the final evaluation and plots.
    fn finish(mut self) -> anyhow::Result<()> {
        self.bar.finish_and_clear();
        if self.step > self.start_step || !self.resumed {
            self.checkpoint()?;
        }
        let model_dir = self.config.output.join("model");
        let trained = self.model.valid().to_files(&self.setup.base)?;
        if self.config.start_share > 0.0 {
            trained.write_dir(self.config.output.join("model-tuned"))?;
            engine::training::interpolate::interpolate_files(
                &self.setup.base,
                &trained,
                self.config.start_share,
                &self.setup.device,
            )?
            .write_dir(&model_dir)?;
        } else {
            trained.write_dir(&model_dir)?;
        }
        self.evaluate()?;
        self.log.plot(&self.config.output)?;
        eprintln!(
            "done: {} steps, last loss {:.4}, {:.1} pairs/s; model in {}, log in {}",
            self.step,
            self.last_loss,
            self.pairs_done as f64 / self.started.elapsed().as_secs_f64().max(1e-9),
            model_dir.display(),
            self.config.output.join("metrics.jsonl").display()
        );
        Ok(())
    }
}

/// The run's one-line summary on stderr.
fn announce(config: &TrainConfig, plan: &Plan, records: usize, per_epoch: usize, steps: usize) {
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

/// The model and optimiser a run starts from, and its first step: the base model, or the
/// checkpoint being resumed (which must have been written with the same settings).
fn load_model(
    config: &TrainConfig,
    plan: &Plan,
    setup: &Setup,
    records: usize,
    resume_from: Option<&Path>,
) -> anyhow::Result<(TrainModel, Optimizer, usize)> {
    let adamw = AdamW {
        beta1: config.beta1,
        beta2: config.beta2,
        epsilon: config.adam_epsilon,
        weight_decay: config.weight_decay,
    }
    .config();
    let train_device = setup.device.clone().autodiff();
    let Some(path) = resume_from else {
        let model = TrainModel::load(&setup.base, &setup.model_config, plan.cross, &train_device)?;
        return Ok((model, adamw.init(), 0));
    };
    let (state, files, optimizer_bytes) = checkpoint::read(path, &setup.base)?;
    check_resumable(&state, config, records)?;
    let model = TrainModel::load(&files, &setup.model_config, plan.cross, &train_device)?;
    let optimizer = adamw
        .init()
        .from_bytes(Bytes::from_bytes_vec(optimizer_bytes))
        .map_err(|e| anyhow::anyhow!("{}: optimiser state unreadable: {e:?}", path.display()))?;
    eprintln!("resuming from {} (step {})", path.display(), state.step);
    Ok((model, optimizer, state.step))
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
        c.check_ranges()?;
        let mut loss = Loss::new(c.loss.clone());
        if c.temperature > 0.0 {
            loss.temperature = c.temperature;
        }
        loss.literal = c.literal_loss;
        let cross = c.interaction == config::InteractionKind::CrossAttention;
        if c.start_share > 0.0 && cross {
            bail!("--start-share mixes the encoder alone: not with cross-attention");
        }
        if c.max_steps == 0 && c.epochs == 0 {
            bail!("nothing to do: --epochs 0 and --max-steps 0");
        }
        let distilling = !c.distill_data.as_os_str().is_empty();
        if distilling && (c.grad_cache_chunk > 0 || c.devices.replicas.len() > 1 || cross) {
            bail!("--distill-data works with the direct step only: not with --grad-cache-chunk, --devices or cross-attention");
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
        .collect::<engine::Result<_>>()?;
    let passage_parts: Vec<Tensor<2>> = ranges(layout.passages.len())
        .map(|r| frozen.embed_passages(texts, layout, r))
        .collect::<engine::Result<_>>()?;
    let (v, gradients) =
        embedding_gradients(pair_parts, passage_parts, layout, loss, accumulation)?;
    let Some((d_pairs, d_passages)) = gradients else {
        return Ok((v, GradientsParams::new()));
    };
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
    Ok((v, accumulator.grads()))
}

/// The loss of a micro-batch from all its embeddings (row blocks held without a graph, in
/// order) and the loss's
/// gradient with respect to them: GradCache's first half, and the data-parallel step's work on
/// the gathered embeddings. The loss is the micro-batch's own (not divided by the
/// accumulation); no gradient when it is not finite.
pub(crate) fn embedding_gradients(
    pairs: Vec<Tensor<2>>,
    passages: Vec<Tensor<2>>,
    layout: &BatchLayout,
    loss: &Loss,
    accumulation: usize,
) -> anyhow::Result<(f64, Option<(Tensor<2>, Tensor<2>)>)> {
    let pairs = Tensor::cat(pairs, 0).autodiff().require_grad();
    let passages = Tensor::cat(passages, 0).autodiff().require_grad();
    let value = loss
        .forward(pairs.clone().matmul(passages.clone().transpose()), layout)
        .div_scalar(accumulation as f64);
    let v = scalar(value.clone())? * accumulation as f64;
    if !v.is_finite() {
        return Ok((v, None));
    }
    let g = value.backward();
    let d_pairs = pairs
        .grad(&g)
        .context("no gradient for the pair embeddings")?;
    let d_passages = passages
        .grad(&g)
        .context("no gradient for the passage embeddings")?;
    Ok((v, Some((d_pairs, d_passages))))
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
    encoder.use_template(template.clone());
    encoder.batch_size = 32;
    let bar = crate::progress::bar(set.corpus.len(), "evaluating: encoding corpus");
    let passages =
        engine::evaluation::encode_passages(&encoder, set, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let runs = engine::evaluation::runs(
        &encoder,
        set,
        &passages,
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
        Ok(engine::atomic::write(&self.path, text.as_bytes())?)
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
        engine::atomic::write(dir.join("loss.svg"), loss.as_bytes())?;
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
            let chart = plot::line_chart("evaluation (x100)", "step", &series);
            engine::atomic::write(dir.join("eval.svg"), chart.as_bytes())?;
        }
        Ok(())
    }
}
