//! `trainer train`: contrastive fine-tuning of an encoder so that it follows instructions
//! (seeds-spec §2 InF-Embed, §3 dual view). The objectives, record formats and batching are
//! the engine's (`engine::training`); this module is the loop around them: AdamW with warm-up
//! and decay, global gradient clipping, gradient accumulation, GradCache, checkpoints and
//! resume, NaN guard, progress, metrics log, plots and periodic evaluation, and the optional
//! distillation term that keeps a frozen teacher's rankings ([`distill`]).
//!
//! This file is the run in its named stages ([`run`]: `Plan`, `resume_point`, `Setup`,
//! `read_records`, then `Run::start`, `train_step`, `after_step`, `finish`); what is resolved
//! before the first step is [`setup`], the log and periodic evaluation [`log`], GradCache
//! [`grad_cache`], data-parallel steps [`parallel`], checkpoints [`checkpoint`].

pub mod checkpoint;
pub mod config;
pub mod distill;
pub mod grad_cache;
pub mod log;
pub mod parallel;
pub mod plot;
pub mod setup;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::Tensor;

use engine::training::start_pull::StartPull;
use engine::training::step::{
    direct_gradients, micro_batch_layout, unscale_and_clip, BlockSampling, LossScale, Optimizer,
    RecordStream, StepArithmetic,
};
use engine::training::{BatchLayout, RecordFile};

use crate::cli::TrainArgs;
use checkpoint::CheckpointState;
use config::TrainConfig;
use grad_cache::grad_cache_step;
use log::{evaluate, MetricsLog};
use setup::{announce, load_model, read_records, resume_point, Plan, Setup};

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

/// A run in progress: the model, its optimiser, the data stream, the log, and where it is.
struct Run {
    config: TrainConfig,
    plan: Plan,
    setup: Setup,
    model: TrainModel,
    optimizer: Optimizer,
    /// The dynamic loss scale of a mixed-precision run.
    loss_scale: Option<LossScale>,
    batches: RecordStream<RecordFile>,
    log: MetricsLog,
    eval_set: Option<engine::EvalSet>,
    distillation: Option<distill::Distillation>,
    /// The pull toward the starting weights after each step (`start_pull` > 0).
    start_pull: Option<StartPull>,
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
        let total_steps = total_steps(&config, micro_per_epoch);
        let start = load_model(
            &config,
            &plan,
            &setup,
            records.len(),
            resume_from.as_deref(),
        )?;
        let start_step = start.step;
        let log = open_run_folder(&config, start_step)?;
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
        let distillation =
            distill::Distillation::prepare(&config, &setup, plan.loss.temperature, start_step > 0)?;
        let start_pull = start_pull(&config, &setup)?;
        let bar = crate::progress::train_bar(total_steps);
        bar.set_position(start_step as u64);
        Ok(Run {
            config,
            plan,
            setup,
            model: start.model,
            optimizer: start.optimizer,
            loss_scale: start.loss_scale,
            batches,
            log,
            eval_set,
            distillation,
            start_pull,
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
        let scale = self.loss_scale.map_or(1.0, |s| s.scale);
        let grad_norm = unscale_and_clip(&mut grads, &self.model, self.config.max_grad_norm, scale);
        // The mean loss over the accumulated micro-batches.
        let loss = loss_sum / self.accumulation as f64;
        if let Some(loss_scale) = &mut self.loss_scale {
            // At scale 1 nothing is left to scale down: gradients that still overflow are
            // broken, and the run stops below.
            let finite = grad_norm.is_finite();
            if (finite || scale > 1.0) && !loss_scale.after_step(finite) {
                return self.skip_step(loss, lr, pairs, scale);
            }
        }
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
        if let Some(pull) = &self.start_pull {
            self.model = pull.apply(self.model, lr)?;
        }
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

    /// A mixed-precision step whose gradients overflowed at loss scale `scale`: the weights
    /// stay, the data moves on (as PyTorch's `GradScaler` skips `optimizer.step`).
    /// The step is logged with its gradient norm as null.
    fn skip_step(mut self, loss: f64, lr: f64, pairs: usize, scale: f64) -> anyhow::Result<Self> {
        self.step += 1;
        self.last_loss = loss;
        self.pairs_done += pairs;
        self.bar.println(format!(
            "step {}: the gradients overflowed at loss scale {scale}: step skipped, scale now {}",
            self.step,
            self.loss_scale.map_or(1.0, |s| s.scale)
        ));
        self.bar.set_position(self.step as u64);
        let elapsed = self.started.elapsed().as_secs_f64();
        let rate = self.pairs_done as f64 / elapsed.max(1e-9);
        self.log
            .step(self.step, pairs, loss, lr, f64::INFINITY, rate, elapsed)?;
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
            let term = |model: &TrainModel, r: usize, n: usize| {
                let d = self
                    .distillation
                    .as_ref()
                    .expect("only called with distillation");
                d.share_loss(model, texts, micro, parallel::share(d.per_batch(), r, n))
            };
            let extra = self
                .distillation
                .as_ref()
                .map(|_| &term as parallel::ReplicaTerm<'_>);
            parallel::data_parallel_step(
                &self.model,
                &self.setup.replicas,
                texts,
                layout,
                &self.plan.loss,
                self.accumulation,
                extra,
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
            let arithmetic = StepArithmetic {
                accumulation: self.accumulation,
                precision: self.config.precision,
                loss_scale: self.loss_scale.map_or(1.0, |s| s.scale),
            };
            Ok(direct_gradients(
                &self.model,
                texts,
                layout,
                &self.plan.loss,
                arithmetic,
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
            loss_scale: self.loss_scale,
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
        if self.config.start_share != 0.0 {
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

/// The pull toward the starting model's encoder weights, when `start_pull` asks for one
/// (always the base model's weights: a resumed run pulls toward where the run began).
fn start_pull(config: &TrainConfig, setup: &Setup) -> anyhow::Result<Option<StartPull>> {
    if config.start_pull == 0.0 {
        return Ok(None);
    }
    let start =
        engine::bert::BertModel::from_files(&setup.base, &setup.model_config.bert, &setup.device)?;
    Ok(Some(StartPull::new(&start, config.start_pull)?))
}

/// The optimiser steps of a run: `max_steps`, else as many as `epochs` needs.
fn total_steps(config: &TrainConfig, micro_per_epoch: usize) -> usize {
    if config.max_steps > 0 {
        config.max_steps
    } else {
        (micro_per_epoch * config.epochs).div_ceil(config.grad_accumulation.max(1))
    }
}

/// Creates the run folder, writes its `config.json` and opens its log from `start_step` on.
fn open_run_folder(config: &TrainConfig, start_step: usize) -> anyhow::Result<MetricsLog> {
    let output = &config.output;
    std::fs::create_dir_all(output)
        .with_context(|| format!("{}: cannot create", output.display()))?;
    engine::atomic::write(
        output.join("config.json"),
        serde_json::to_string_pretty(config)?.as_bytes(),
    )?;
    MetricsLog::open(&output.join("metrics.jsonl"), start_step)
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
