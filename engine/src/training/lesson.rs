//! Learn live (the web page's teach mode): a few optimiser steps on a lesson's records (the
//! `synth` crate makes them from an evaluation set's judgments), watched on held-out queries
//! the steps never see.
//!
//! [`LessonSettings`] are `trainer train` settings under the names of its config file
//! ([`LessonSettings::trainer_config`]), so `trainer train --config lesson.json --data
//! lesson.jsonl` takes the steps the page takes: the same records in the same order, the same
//! I-block sampling, loss, clipping and AdamW. [`LessonRun`] is that loop with nothing around
//! it (the trainer adds accumulation, checkpoints and logs); [`LessonScores`] what the held-out
//! queries score.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::data::{EvalSet, Mode};
use crate::error::{EngineError, Result};
use crate::metrics::{Metric, ModeReport, Run};
use crate::training::objectives::{Factor, Objective};
use crate::training::step::Schedule;

/// How a lesson trains: `trainer train` settings, serialised under its config file's names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LessonSettings {
    /// Objective (InF-Embed's multivariate P + I, the trainer's default).
    pub loss: Objective,
    /// τ (0.05, the InF-Embed objectives' own).
    pub temperature: f64,
    /// Records per step (4: eight tuples with the dual view).
    pub batch_size: usize,
    /// Optimiser steps (8).
    pub max_steps: usize,
    /// AdamW's learning rate, constant (1e-4: a visible change in a few steps).
    pub lr: f64,
    /// Constant: a lesson can be stopped or extended at any step.
    pub schedule: Schedule,
    /// No warm-up (0).
    pub warmup_ratio: f64,
    /// Seed of the data order and the I-block sampling (42).
    pub seed: u64,
    /// Token limit of instruction + query (64).
    pub query_max_length: usize,
    /// Token limit of passages (128; the demo's passages are shorter).
    pub passage_max_length: usize,
    /// Global gradient-norm clipping (1.0).
    pub max_grad_norm: f64,
    /// Hard negatives kept per tuple (30, the trainer's default; a demo query has fewer).
    pub max_hard_negatives: usize,
}

impl Default for LessonSettings {
    fn default() -> Self {
        LessonSettings {
            loss: Objective::Multivariate(vec![Factor::P, Factor::I]),
            temperature: 0.05,
            batch_size: 4,
            max_steps: 8,
            lr: 1e-4,
            schedule: Schedule::Constant,
            warmup_ratio: 0.0,
            seed: 42,
            query_max_length: 64,
            passage_max_length: 128,
            max_grad_norm: 1.0,
            max_hard_negatives: 30,
        }
    }
}

impl LessonSettings {
    /// The settings as a `trainer train --config` file: every other setting at the trainer's
    /// default (AdamW's betas, ε and weight decay, the template, hard negatives, chunking).
    pub fn trainer_config(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plain fields serialise")
    }
}

/// What the held-out queries score (fractions, not points).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LessonScores {
    /// nDCG@10 under the changed instruction.
    pub ndcg10_changed: f64,
    /// p-MRR (og against changed).
    pub p_mrr: f64,
    /// WISE.
    pub wise: f64,
}

impl LessonScores {
    /// The scores of `encoder` on `held_out`: its held-out passages and the queries under each
    /// mode's instruction encoded, each query's judged passages re-ranked (native: blocking).
    pub fn evaluate(held_out: &EvalSet, encoder: &crate::Encoder) -> Result<LessonScores> {
        encoder.wait(Self::evaluate_async(held_out, encoder))
    }

    /// [`LessonScores::evaluate`] with asynchronous readback (the page, on WebGPU too).
    pub async fn evaluate_async(
        held_out: &EvalSet,
        encoder: &crate::Encoder,
    ) -> Result<LessonScores> {
        use crate::evaluation::{query_pairs, rank, DEFAULT_RUN_DEPTH};
        let set = held_out;
        let texts: Vec<String> = set.corpus.iter().map(|p| p.encoder_text()).collect();
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let mut passages = encoder.encode_async(&refs, &mut |_, _| {}).await?;
        passages.normalize();
        let mut runs = BTreeMap::new();
        for mode in set.modes() {
            let pairs = query_pairs(set, mode, false)?;
            let queries = encoder.encode_queries_async(&pairs).await?;
            runs.insert(mode, rank(set, &passages, &queries, DEFAULT_RUN_DEPTH)?);
        }
        LessonScores::of(set, &runs)
    }

    /// The scores of `runs` (one per mode, as [`crate::evaluation::runs`] makes) on the held-out
    /// set.
    pub fn of(held_out: &EvalSet, runs: &BTreeMap<Mode, Run>) -> Result<LessonScores> {
        let metric: Metric = "ndcg@10".parse()?;
        let report = ModeReport::compute(&held_out.qrels, runs, &[metric], Default::default());
        let missing =
            |what: &str| EngineError::Invalid(format!("the held-out queries give no {what}"));
        Ok(LessonScores {
            ndcg10_changed: report
                .modes
                .get(&Mode::Changed)
                .map(|e| e.mean[0])
                .ok_or_else(|| missing("nDCG@10 under the changed instruction"))?,
            p_mrr: report
                .p_mrr
                .as_ref()
                .filter(|p| !p.is_empty())
                .map(|p| p.mean)
                .ok_or_else(|| missing("p-MRR"))?,
            wise: report
                .infosearch
                .as_ref()
                .filter(|s| !s.wise.is_empty())
                .map(|s| s.wise.mean)
                .ok_or_else(|| missing("WISE"))?,
        })
    }
}

pub use run::{LessonRun, LessonStep};

mod run {
    use super::LessonSettings;
    use crate::data::records::TrainingRecord;
    use crate::error::{EngineError, Result};
    use crate::model_files::ModelFiles;
    use crate::training::model::{Texts, TrainModel};
    use crate::training::objectives::Loss;
    use crate::training::step::{
        batch_loss, clip_global_norm_async, micro_batch_layout, scalar_async, AdamW, BlockSampling,
        Optimizer, RecordStream,
    };
    use crate::{Device, Encoder, ModelConfig, QueryTemplate};
    use burn::optim::GradientsParams;

    /// A lesson in progress: the model being trained, its optimiser and the record stream.
    pub struct LessonRun {
        base: ModelFiles,
        /// The device the model was loaded for (its autodiff form holds the model).
        device: Device,
        settings: LessonSettings,
        texts: Texts,
        loss: Loss,
        model: Option<TrainModel>,
        optimizer: Optimizer,
        stream: RecordStream<Vec<TrainingRecord>>,
        /// Steps taken.
        pub step: usize,
    }

    /// What one step did.
    #[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
    pub struct LessonStep {
        /// The step's number, from 1.
        pub step: usize,
        /// Its loss (before the update).
        pub loss: f64,
        /// The same batch's loss with the updated weights: what the step taught, on the
        /// examples it saw (the page shows the two side by side).
        pub loss_after: f64,
        /// The gradient norm before clipping.
        pub grad_norm: f64,
        /// The learning rate it used.
        pub lr: f64,
        /// Tuples (query views) it trained on.
        pub pairs: usize,
    }

    /// Texts per forward pass: the trainer's default `encode_chunk`, which `trainer train` uses
    /// with a lesson's config.
    const ENCODE_CHUNK: usize = 32;

    impl LessonRun {
        /// Starts a lesson on `records` (a lesson's, `synth::lesson`) from `base` (the model
        /// as loaded, on `device`; gradients on its autodiff form).
        pub fn new(
            base: &ModelFiles,
            records: Vec<TrainingRecord>,
            settings: LessonSettings,
            device: &Device,
        ) -> Result<Self> {
            let config = ModelConfig::from_files(base)?;
            let texts = Texts::new(
                base,
                &config,
                settings.query_max_length,
                settings.passage_max_length,
                QueryTemplate::default(),
                ENCODE_CHUNK,
            )?;
            let model = TrainModel::load(base, &config, false, &device.clone().autodiff())?;
            let loss = Loss {
                temperature: settings.temperature,
                ..Loss::new(settings.loss.clone())
            };
            let stream = RecordStream::new(
                records,
                settings.batch_size,
                settings.seed,
                settings.max_hard_negatives,
            );
            Ok(LessonRun {
                base: base.clone(),
                device: device.clone(),
                texts,
                loss,
                model: Some(model),
                optimizer: AdamW::default().config().init(),
                stream,
                settings,
                step: 0,
            })
        }

        /// One optimiser step on the next batch of records, then that batch's loss again. A
        /// non-finite loss or gradient is an error and leaves the weights as they were.
        /// Natively, and on the CPU in a browser, it completes at once; WebGPU in a browser
        /// needs [`LessonRun::step_async`].
        pub fn step(&mut self) -> Result<LessonStep> {
            burn::tensor::try_read_sync(self.step_async()).unwrap_or_else(|| {
                Err(EngineError::Invalid(
                    "this device cannot be waited for here: use step_async".into(),
                ))
            })
        }

        /// [`LessonRun::step`] with asynchronous readback of the loss and gradient norm (the
        /// one implementation: `trainer train` takes the same step with its own loop).
        pub async fn step_async(&mut self) -> Result<LessonStep> {
            let s = &self.settings;
            let lr = s.lr
                * s.schedule
                    .factor(self.step, s.max_steps.max(self.step + 1), s.warmup_ratio);
            let tuples = self.stream.micro_batch(self.step)?;
            let sampling = BlockSampling {
                instruction_fraction: 1.0,
                query_alone: false,
                seed: s.seed,
            };
            let max_grad_norm = s.max_grad_norm;
            let layout = micro_batch_layout(&tuples, &self.loss, sampling, self.step);
            let model = self
                .model
                .as_ref()
                .expect("a lesson always holds its model");
            let value = batch_loss(model, &self.texts, &layout, &self.loss)?;
            let loss = scalar_async(value.clone()).await?;
            if !loss.is_finite() {
                return Err(self.not_finite(loss, f64::NAN));
            }
            let mut grads = GradientsParams::from_grads(value.backward(), model);
            let grad_norm = clip_global_norm_async(&mut grads, model, max_grad_norm).await;
            if !grad_norm.is_finite() {
                return Err(self.not_finite(loss, grad_norm));
            }
            // The model moves through the optimiser: no second reference keeps its old weights.
            let model = self.model.take().expect("held above");
            let model = self.model.insert(self.optimizer.step(lr, model, grads));
            // Forward only: the graph it records is dropped with the tensor.
            let loss_after =
                scalar_async(batch_loss(model, &self.texts, &layout, &self.loss)?).await?;
            self.step += 1;
            Ok(LessonStep {
                step: self.step,
                loss,
                loss_after,
                grad_norm,
                lr,
                pairs: layout.tuples.len(),
            })
        }

        fn not_finite(&self, loss: f64, grad_norm: f64) -> EngineError {
            EngineError::Invalid(format!(
                "step {}: loss {loss}, gradient norm {grad_norm}; the weights are unchanged",
                self.step + 1
            ))
        }

        /// The trained model's files (the base model's, with the current weights).
        pub fn files(&self) -> Result<ModelFiles> {
            use burn::module::Module;
            self.model
                .as_ref()
                .expect("a lesson always holds its model")
                .valid()
                .to_files(&self.base)
        }

        /// An encoder with the current weights, on the device the lesson was started for
        /// (the model itself, read without a round trip through a weights file).
        pub fn encoder(&self) -> Result<Encoder> {
            let fingerprint = format!("{}+lesson-step-{}", self.base.fingerprint(), self.step);
            self.model
                .as_ref()
                .expect("a lesson always holds its model")
                .encoder(&self.base, &self.device, fingerprint)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_are_a_trainer_config() {
        let config = LessonSettings::default().trainer_config();
        assert_eq!(config["loss"], "multi-p-i");
        assert_eq!(config["schedule"], "constant");
        assert_eq!(config["batch_size"], 4);
    }
}
