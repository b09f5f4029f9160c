//! One optimiser step, as `trainer train` takes it and as the page's learn-live mode takes it:
//! the data stream of micro-batches ([`RecordStream`]), the batch layout of a micro-batch with
//! its seeded I-block sampling ([`micro_batch_layout`]), the loss and its gradients over one
//! micro-batch held in memory ([`direct_gradients`]), PyTorch-style global gradient clipping
//! ([`clip_global_norm`]) and the learning-rate schedule ([`Schedule`]). The trainer adds
//! gradient accumulation, GradCache, data parallelism, checkpoints and logs around these; the
//! page adds nothing but a loop, so both follow the same trajectory from the same seed.

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};

use crate::data::records::TrainingTuple;
use crate::data::records::{RecordFile, TrainingRecord};
use crate::error::{EngineError, Result};
use crate::rng::SplitMix64;
use crate::training::batch::{epoch_order, BatchLayout};
use crate::training::model::{Texts, TrainModel, TrainingPrecision};
use crate::training::objectives::Loss;

/// Stream id of the I-block sampling generator (the data order uses the epoch number).
pub const SAMPLING_STREAM: u64 = 0x5EED_1B10_C40D;

/// AdamW over the trained modules.
pub type Optimizer = burn::optim::ModuleOptimizer;

/// The learning rate after warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// Down to 0 in a straight line.
    Linear,
    /// Half a cosine down to 0.
    Cosine,
    /// The peak rate throughout.
    Constant,
}

impl std::str::FromStr for Schedule {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "linear" => Ok(Schedule::Linear),
            "cosine" => Ok(Schedule::Cosine),
            "constant" => Ok(Schedule::Constant),
            other => Err(format!(
                "unknown schedule '{other}': use linear, cosine or constant"
            )),
        }
    }
}

impl Schedule {
    /// Learning-rate factor at `step` (0-based) of `total`: linear warm-up over
    /// `warmup_ratio` of the steps, then this decay.
    pub fn factor(self, step: usize, total: usize, warmup_ratio: f64) -> f64 {
        let warmup = (warmup_ratio * total as f64).round() as usize;
        let s = step as f64;
        if step < warmup {
            return (s + 1.0) / (warmup as f64 + 1.0);
        }
        let progress = (s - warmup as f64) / ((total - warmup).max(1) as f64);
        match self {
            Schedule::Cosine => 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()),
            Schedule::Constant => 1.0,
            Schedule::Linear => (1.0 - progress).max(0.0),
        }
    }
}

/// AdamW's settings (the defaults are `trainer train`'s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamW {
    /// β1 (0.9).
    pub beta1: f64,
    /// β2 (0.999).
    pub beta2: f64,
    /// ε (1e-8).
    pub epsilon: f64,
    /// Decoupled weight decay (0.01).
    pub weight_decay: f64,
}

impl Default for AdamW {
    fn default() -> Self {
        AdamW {
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            weight_decay: 0.01,
        }
    }
}

impl AdamW {
    /// burn's configuration of this optimiser.
    pub fn config(&self) -> AdamWConfig {
        AdamWConfig::new()
            .with_beta_1(self.beta1 as f32)
            .with_beta_2(self.beta2 as f32)
            .with_epsilon(self.epsilon as f32)
            .with_weight_decay(self.weight_decay as f32)
    }
}

/// Where a run's records come from: a training file read record by record, or records in
/// memory (the page's).
pub trait RecordSource {
    /// How many records.
    fn count(&self) -> usize;
    /// Record `i`.
    fn record(&mut self, i: usize) -> Result<TrainingRecord>;
}

impl RecordSource for RecordFile {
    fn count(&self) -> usize {
        self.len()
    }
    fn record(&mut self, i: usize) -> Result<TrainingRecord> {
        self.read(i)
    }
}

impl RecordSource for Vec<TrainingRecord> {
    fn count(&self) -> usize {
        self.len()
    }
    fn record(&mut self, i: usize) -> Result<TrainingRecord> {
        self.get(i)
            .cloned()
            .ok_or_else(|| EngineError::Invalid(format!("no training record {i}")))
    }
}

/// The data stream: the tuples of any micro-batch, records `order[k*B..(k+1)*B]` of its
/// epoch (each epoch's order is a seeded shuffle, computed once and kept).
pub struct RecordStream<S: RecordSource> {
    /// The records.
    pub records: S,
    /// Micro-batches per epoch.
    pub per_epoch: usize,
    batch: usize,
    seed: u64,
    max_negatives: usize,
    order: Option<(usize, Vec<usize>)>,
}

impl<S: RecordSource> RecordStream<S> {
    /// Micro-batches of `batch` records (the last of an epoch may be smaller), each tuple
    /// keeping at most `max_negatives` hard negatives.
    pub fn new(records: S, batch: usize, seed: u64, max_negatives: usize) -> Self {
        let batch = batch.max(1);
        RecordStream {
            per_epoch: records.count().div_ceil(batch),
            records,
            batch,
            seed,
            max_negatives,
            order: None,
        }
    }

    /// The tuples of micro-batch `micro` (counted from the start of the run).
    pub fn micro_batch(&mut self, micro: usize) -> Result<Vec<TrainingTuple>> {
        let per_epoch = self.per_epoch.max(1);
        let (epoch, k) = (micro / per_epoch, micro % per_epoch);
        if self.order.as_ref().is_none_or(|(e, _)| *e != epoch) {
            self.order = Some((
                epoch,
                epoch_order(self.records.count(), self.seed, epoch as u64),
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
            tuples.extend(self.records.record(i)?.tuples(self.max_negatives));
        }
        Ok(tuples)
    }
}

/// How a micro-batch's I block is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockSampling {
    /// Share of the batch's other instructions in the I block.
    pub instruction_fraction: f64,
    /// The query alone joins every anchor's I block.
    pub query_alone: bool,
    /// The run's seed.
    pub seed: u64,
}

/// The batch layout of micro-batch `micro`, its I block sampled from the micro-batch's own
/// seeded stream (so a resumed run draws what an uninterrupted one would).
pub fn micro_batch_layout(
    tuples: &[TrainingTuple],
    loss: &Loss,
    sampling: BlockSampling,
    micro: usize,
) -> BatchLayout {
    let mut rng = SplitMix64::for_stream(sampling.seed ^ SAMPLING_STREAM, micro as u64);
    let needs_block = loss.objective.needs_instruction_block();
    let mut layout = BatchLayout::new(tuples, needs_block, sampling.instruction_fraction, &mut rng);
    if sampling.query_alone && needs_block {
        layout = layout.with_query_alone();
    }
    if loss.needs_bare_queries() {
        layout = layout.with_bare_queries();
    }
    layout
}

/// The value of a one-element tensor.
pub fn scalar(t: Tensor<1>) -> Result<f64> {
    first_value(t.into_data())
}

/// [`scalar`] with asynchronous readback (WebGPU in a browser cannot read back synchronously).
pub async fn scalar_async(t: Tensor<1>) -> Result<f64> {
    let data = t
        .into_data_async()
        .await
        .map_err(|e| EngineError::Invalid(format!("reading a scalar back: {e:?}")))?;
    first_value(data)
}

fn first_value(data: burn::tensor::TensorData) -> Result<f64> {
    let v: Vec<f32> = data
        .convert::<f32>()
        .try_into_vec()
        .map_err(|e| EngineError::Invalid(format!("reading a scalar back: {e:?}")))?;
    Ok(v.first().copied().unwrap_or(f32::NAN) as f64)
}

/// The contrastive loss of a batch (all its pairs against all its passages).
pub fn batch_loss(
    model: &TrainModel,
    texts: &Texts,
    layout: &BatchLayout,
    loss: &Loss,
) -> Result<Tensor<1>> {
    let pairs = model.embed_pairs(texts, layout, 0..layout.pairs.len())?;
    let passages = model.embed_passages(texts, layout, 0..layout.passages.len())?;
    Ok(loss.forward(pairs.matmul(passages.transpose()), layout))
}

/// A term added to the contrastive loss of a micro-batch (the trainer's distillation).
pub type ExtraTerm<'a> = &'a dyn Fn(&TrainModel) -> Result<Tensor<1>>;

/// Dynamic loss scaling, as PyTorch's `GradScaler` does it: the loss is multiplied by `scale`
/// before the backward pass and the gradients divided by it before clipping; a step whose
/// gradients overflow is skipped and the scale halved; after [`LossScale::GROWTH_INTERVAL`]
/// good steps in a row it doubles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LossScale {
    /// The factor on the loss.
    pub scale: f64,
    /// Good steps since the last change.
    pub good_steps: usize,
}

impl LossScale {
    /// The starting scale (PyTorch's: 2^16).
    pub const INITIAL: f64 = 65536.0;
    /// Good steps before the scale doubles (PyTorch's: 2000).
    pub const GROWTH_INTERVAL: usize = 2000;

    /// A scale at [`LossScale::INITIAL`].
    pub fn dynamic() -> Self {
        LossScale {
            scale: Self::INITIAL,
            good_steps: 0,
        }
    }

    /// Records a step whose gradients were `finite`; returns whether to apply them.
    pub fn after_step(&mut self, finite: bool) -> bool {
        if !finite {
            self.scale = (self.scale / 2.0).max(1.0);
            self.good_steps = 0;
            return false;
        }
        self.good_steps += 1;
        if self.good_steps >= Self::GROWTH_INTERVAL {
            self.scale *= 2.0;
            self.good_steps = 0;
        }
        true
    }
}

/// How a micro-batch's gradients are computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepArithmetic {
    /// Micro-batches per optimiser step: the loss is divided by it before back-propagation.
    pub accumulation: usize,
    /// f32 or mixed precision.
    pub precision: TrainingPrecision,
    /// The factor on the loss before back-propagation (1 without loss scaling); the
    /// gradients come back multiplied by it ([`unscale_and_clip`] divides it out).
    pub loss_scale: f64,
}

/// The loss of one micro-batch (with the whole graph in memory) and its parameter gradients
/// for `model`'s own (f32) parameters, the loss divided by `arithmetic.accumulation` and
/// multiplied by its loss scale before back-propagation; the value returned is the
/// micro-batch's own loss. No gradients when the loss is not finite (the caller stops the run).
pub fn direct_gradients(
    model: &TrainModel,
    texts: &Texts,
    layout: &BatchLayout,
    loss: &Loss,
    arithmetic: StepArithmetic,
    extra: Option<ExtraTerm<'_>>,
) -> Result<(f64, GradientsParams)> {
    let computing = model.computing_in(arithmetic.precision);
    let mut value = batch_loss(&computing, texts, layout, loss)?;
    if let Some(term) = extra {
        value = value + term(&computing)?;
    }
    let factor = arithmetic.loss_scale / arithmetic.accumulation as f64;
    let value = value.mul_scalar(factor);
    // The backward pass is queued before the loss is read: on a GPU the read waits for both
    // passes instead of the device idling while the host queues the backward one.
    let grads = value.backward();
    let v = scalar(value)? / factor;
    if !v.is_finite() {
        return Ok((v, GradientsParams::new()));
    }
    let grads = GradientsParams::from_grads(grads, model);
    Ok((v, grads))
}

/// Scales all gradients together so their global L2 norm is at most `max_norm` (PyTorch's
/// `clip_grad_norm_`; burn's own clipping works per tensor; 0 = no clipping). Returns the
/// norm before clipping.
pub fn clip_global_norm(grads: &mut GradientsParams, model: &TrainModel, max_norm: f64) -> f64 {
    unscale_and_clip(grads, model, max_norm, 1.0)
}

/// [`clip_global_norm`] for gradients of a loss multiplied by `loss_scale`: they are divided
/// by it in the same pass as the clipping. Returns the norm of the unscaled gradients, before
/// clipping (not finite when they overflowed; then they are left as they are).
pub fn unscale_and_clip(
    grads: &mut GradientsParams,
    model: &TrainModel,
    max_norm: f64,
    loss_scale: f64,
) -> f64 {
    let clip = GlobalNorm::of(grads, model);
    let norm = clip
        .squared
        .clone()
        .map(|sq| scalar(sq).unwrap_or(f64::NAN).sqrt() / loss_scale);
    clip.apply(grads, norm, max_norm, loss_scale)
}

/// [`clip_global_norm`] with asynchronous readback of the norm.
pub async fn clip_global_norm_async(
    grads: &mut GradientsParams,
    model: &TrainModel,
    max_norm: f64,
) -> f64 {
    let clip = GlobalNorm::of(grads, model);
    let norm = match clip.squared.clone() {
        Some(sq) => Some(scalar_async(sq).await.unwrap_or(f64::NAN).sqrt()),
        None => None,
    };
    clip.apply(grads, norm, max_norm, 1.0)
}

/// The gradients' global norm, squared, as a tensor still on the device, and the parameters
/// it sums over.
struct GlobalNorm {
    ids: Vec<(ParamId, usize)>,
    squared: Option<Tensor<1>>,
}

impl GlobalNorm {
    fn of(grads: &GradientsParams, model: &TrainModel) -> Self {
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
        let squared = (!parts.is_empty()).then(|| Tensor::cat(parts, 0).sum());
        GlobalNorm {
            ids: ids.0,
            squared,
        }
    }

    /// Divides the gradients by `loss_scale` and scales them down when `norm` (of the
    /// unscaled gradients, read back; `None`: no gradients) is over `max_norm`, in one pass;
    /// returns the norm (0 without gradients). Gradients with a norm that is not finite are
    /// left alone.
    fn apply(
        &self,
        grads: &mut GradientsParams,
        norm: Option<f64>,
        max_norm: f64,
        loss_scale: f64,
    ) -> f64 {
        fn scale<const D: usize>(grads: &mut GradientsParams, id: ParamId, f: f64) {
            if let Some(g) = grads.remove::<D>(id) {
                grads.register::<D>(id, g.mul_scalar(f));
            }
        }
        let Some(norm) = norm else { return 0.0 };
        if !norm.is_finite() {
            return norm;
        }
        let clip = if max_norm > 0.0 && norm > max_norm {
            max_norm / (norm + 1e-6)
        } else {
            1.0
        };
        let f = clip / loss_scale;
        if f != 1.0 {
            for &(id, rank) in &self.ids {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loss_scale_halves_on_overflow_and_doubles_after_good_steps() {
        let mut s = LossScale::dynamic();
        assert!(!s.after_step(false), "an overflowed step is skipped");
        assert_eq!(s.scale, LossScale::INITIAL / 2.0);
        for _ in 0..LossScale::GROWTH_INTERVAL - 1 {
            assert!(s.after_step(true));
        }
        assert_eq!(s.scale, LossScale::INITIAL / 2.0);
        assert!(s.after_step(true));
        assert_eq!(s.scale, LossScale::INITIAL);
        assert_eq!(s.good_steps, 0);
        let mut floor = LossScale {
            scale: 1.0,
            good_steps: 3,
        };
        floor.after_step(false);
        assert_eq!(floor.scale, 1.0, "never below 1");
        assert_eq!(
            "mixed-f16".parse::<TrainingPrecision>().unwrap(),
            TrainingPrecision::MixedF16
        );
        assert!("f8".parse::<TrainingPrecision>().is_err());
    }

    #[test]
    fn schedules_warm_up_then_decay() {
        assert_eq!(Schedule::Constant.factor(0, 10, 0.0), 1.0);
        assert_eq!(Schedule::Constant.factor(9, 10, 0.0), 1.0);
        assert!((Schedule::Linear.factor(5, 10, 0.0) - 0.5).abs() < 1e-12);
        // Two warm-up steps of ten: 1/3, 2/3, then the decay from 1.
        assert!((Schedule::Linear.factor(0, 10, 0.2) - 1.0 / 3.0).abs() < 1e-12);
        assert!((Schedule::Cosine.factor(2, 10, 0.2) - 1.0).abs() < 1e-12);
        assert!("sideways".parse::<Schedule>().is_err());
    }

    #[test]
    fn a_stream_visits_every_record_once_per_epoch_in_whole_batches() {
        use crate::data::records::InstructionNegativeRecord;
        let records: Vec<TrainingRecord> = (0..5)
            .map(|i| {
                TrainingRecord::InstructionNegative(InstructionNegativeRecord {
                    query: format!("q{i}"),
                    instruction: String::new(),
                    positive: format!("p{i}"),
                    negatives: Vec::new(),
                    instruction_negatives: Vec::new(),
                    instruction_reversed: None,
                })
            })
            .collect();
        let mut stream = RecordStream::new(records, 2, 7, 3);
        assert_eq!(stream.per_epoch, 3);
        for epoch in 0..2 {
            let mut seen: Vec<String> = (0..3)
                .flat_map(|k| stream.micro_batch(epoch * 3 + k).unwrap())
                .map(|t| t.query)
                .collect();
            seen.sort();
            assert_eq!(seen, ["q0", "q1", "q2", "q3", "q4"]);
        }
        let first = stream.micro_batch(0).unwrap();
        let again = RecordStream::new(stream.records.clone(), 2, 7, 3)
            .micro_batch(0)
            .unwrap();
        assert_eq!(first, again, "a pure function of the seed");
    }
}
