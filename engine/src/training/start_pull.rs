//! A pull toward the start model's weights after every optimiser step: decoupled L2-SP.
//!
//! L2-SP (Li, Grandvalet and Davoine 2018, "Explicit inductive bias for transfer learning with
//! convolutional networks") regularises fine-tuning toward the weights it started from,
//! `λ/2·‖θ - θ₀‖²`, instead of toward zero. Added to the loss, that penalty would pass through
//! Adam's per-weight normalisation and pull rarely-updated weights as hard as busy ones; as
//! AdamW decouples its weight decay (Loshchilov and Hutter 2019), this applies it as a step of
//! its own after the optimiser's: `θ ← θ - lr·λ·(θ - θ₀)`, the step's learning rate times the
//! strength λ, so it follows the schedule.
//!
//! Why: fine-tuning on instruction topics costs some of what the base model did well (long
//! queries against long documents). Interpolating the finished weights back toward the base
//! (`interpolate`) shrinks every change alike; the pull acts during training, so the rest of
//! the network can adapt to what it holds back, and the latest steps keep more than the first.
//!
//! The pull covers the encoder; Interaction II's cross-attention module starts from random
//! weights and is left free. Frozen weights are not touched.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::Tensor;

use crate::bert::BertModel;
use crate::error::{EngineError, Result};
use crate::training::model::TrainModel;

/// The start weights and the strength λ of the pull.
pub struct StartPull {
    /// The start encoder's weights, flattened, in the order the encoder visits them.
    start: Vec<Tensor<1>>,
    /// λ: after a step at learning rate `lr`, each weight moves `lr·λ` of its distance back.
    strength: f64,
}

impl StartPull {
    /// The pull toward `start`'s weights with strength `strength` (λ > 0). `start` lives on
    /// the training device without autodiff.
    pub fn new(start: &BertModel, strength: f64) -> Result<Self> {
        if !(strength > 0.0 && strength.is_finite()) {
            return Err(EngineError::Invalid(format!(
                "the pull toward the start weights must be a positive number, not {strength}"
            )));
        }
        struct Collect(Vec<Tensor<1>>);
        impl ModuleVisitor for Collect {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                let value = param.val();
                let n = value.shape().num_elements();
                self.0.push(value.reshape([n]));
            }
        }
        let mut collect = Collect(Vec::new());
        start.visit(&mut collect);
        Ok(StartPull {
            start: collect.0,
            strength,
        })
    }

    /// `model` after the pull of a step taken at learning rate `lr`: every trainable encoder
    /// weight `θ` becomes `θ - lr·λ·(θ - θ₀)`. The share moved is capped at 1 (the start
    /// weight itself). The model must have the start model's shape.
    pub fn apply(&self, mut model: TrainModel, lr: f64) -> Result<TrainModel> {
        let share = (lr * self.strength).clamp(0.0, 1.0);
        let mut pull = Pull {
            start: self.start.iter(),
            share,
            mismatch: None,
        };
        model.bert = model.bert.map(&mut pull);
        if let Some(what) = pull.mismatch {
            return Err(EngineError::Invalid(format!(
                "the pull toward the start weights: {what}"
            )));
        }
        if pull.start.next().is_some() {
            return Err(EngineError::Invalid(
                "the pull toward the start weights: the encoder has fewer weights than the start model".into(),
            ));
        }
        Ok(model)
    }
}

/// The mapper of [`StartPull::apply`]: the start weights in visiting order, the share of the
/// distance to move, and the first shape mismatch met.
struct Pull<'a> {
    start: std::slice::Iter<'a, Tensor<1>>,
    share: f64,
    mismatch: Option<String>,
}

impl ModuleMapper for Pull<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let Some(start) = self.start.next() else {
            self.mismatch
                .get_or_insert_with(|| "the encoder has more weights than the start model".into());
            return param;
        };
        let share = self.share;
        let mismatch = &mut self.mismatch;
        param.map(|weight| {
            let shape = weight.shape();
            if start.shape().num_elements() != shape.num_elements() {
                mismatch.get_or_insert_with(|| {
                    format!(
                        "a weight of shape {shape:?} meets a start weight of {} values",
                        start.shape().num_elements()
                    )
                });
                return weight;
            }
            if !weight.is_require_grad() || share == 0.0 {
                return weight;
            }
            // Outside the autodiff graph, as the optimiser's own update; the result is a
            // fresh leaf that requires gradients again.
            let value = weight.inner();
            let distance = value.clone() - start.clone().reshape(shape);
            Tensor::from_inner(value - distance * share).require_grad()
        })
    }
}
