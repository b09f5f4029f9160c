//! Fine-tuning support that belongs with the model rather than with a training loop: batching
//! ([`batch`]) of the training records ([`crate::data::records`]), the contrastive objectives
//! ([`objectives`]), distillation ([`distill`]), one optimiser step ([`step`]) and the pull
//! toward the start weights after it ([`start_pull`]), the lesson's loop ([`lesson`]), weight
//! interpolation ([`interpolate`]) and the differentiable embedding of texts. The loop of a run
//! (checkpoints, logs) is the `trainer` binary's; the programs that write training records are
//! the `synth` crate's.

pub mod batch;
pub mod distill;
pub mod interpolate;
#[cfg(feature = "autodiff")]
pub mod lesson;
pub mod model;
pub mod objectives;
#[cfg(feature = "autodiff")]
pub mod start_pull;
#[cfg(feature = "autodiff")]
pub mod step;

use burn::tensor::{Int, Tensor, TensorData};

use crate::bert::BertModel;
use crate::config::Pooling;
use crate::encoder::{forward_pooled, Plan};
use crate::error::Result;
use crate::instruction::CrossAttentionInteraction;
use crate::tokenize::TextTokenizer;

pub use crate::data::records;
pub use crate::data::records::TrainingTuple;
pub use batch::{epoch_order, BareContrast, BatchLayout, Demotion, ExcludedGroup, TupleIndex};
pub use distill::{distillation_loss, embedding_drift, AnchorRow, DistillationAnchor};
pub use model::TrainingPrecision;
pub use objectives::{Factor, Loss, Objective};
pub use records::{RecordFile, TrainingRecord};

/// L2-normalises each row of `x` (`[n, d]`), as the seeds' cosine scores need.
pub fn l2_normalize_rows(x: Tensor<2>) -> Tensor<2> {
    let norm = x
        .clone()
        .powf_scalar(2.0)
        .sum_dim(1)
        .sqrt()
        .clamp_min(1e-12);
    x / norm
}

/// Embeds `texts` with gradients flowing into `model` (when it lives on an autodiff device):
/// the encoder's own planning and forward pass ([`crate::encoder::Plan`],
/// [`crate::encoder::forward_pooled`]) in length-sorted batches of at most `chunk` texts, padded
/// as the device pads ([`crate::tokenize::Padding::for_device`]), then L2-normalised rows in
/// input order.
pub fn embed(
    model: &BertModel,
    tokenizer: &TextTokenizer,
    pad_id: u32,
    pooling: Pooling,
    texts: &[&str],
    chunk: usize,
) -> Result<Tensor<2>> {
    let device = model_device(model);
    let plan = Plan::new(tokenizer, texts, chunk)?
        .padded(
            crate::tokenize::Padding::for_device(&device),
            model.config().max_position_embeddings,
        )
        .cut(
            crate::tokenize::Batching::for_device(&device),
            model.config().hidden_size,
        );
    let parts: Vec<Tensor<2>> = plan
        .batches
        .iter()
        .map(|rows| forward_pooled(model, &plan.batch(rows, pad_id), pooling, &device))
        .collect();
    let order: Vec<usize> = plan.batches.concat();
    Ok(l2_normalize_rows(in_input_order(
        Tensor::cat(parts, 0),
        &order,
        &device,
    )))
}

/// Rows of `stacked` (row `k` is input row `order[k]`) put back in input order.
fn in_input_order(stacked: Tensor<2>, order: &[usize], device: &burn::tensor::Device) -> Tensor<2> {
    let mut inverse = vec![0i64; order.len()];
    for (pos, &i) in order.iter().enumerate() {
        inverse[i] = pos as i64;
    }
    let inverse = Tensor::<1, Int>::from_data(TensorData::new(inverse, [order.len()]), device);
    stacked.select(0, inverse)
}

fn model_device(model: &BertModel) -> burn::tensor::Device {
    use burn::module::Module;
    model
        .devices()
        .into_iter()
        .next()
        .expect("a model has parameters")
}

/// Embeds (instruction, query) pairs with the cross-attention interaction (Interaction II),
/// gradients flowing into both `model` and `module`: the pairs with an instruction through
/// [`CrossAttentionInteraction::embed`] (the encoder's code), the others as the query's own
/// embedding. Rows are L2-normalised, in input order.
pub fn embed_cross_attention(
    model: &BertModel,
    module: &CrossAttentionInteraction,
    tokenizer: &TextTokenizer,
    pad_id: u32,
    pooling: Pooling,
    pairs: &[(&str, &str)],
) -> Result<Tensor<2>> {
    let device = model_device(model);
    let (plain, mixed): (Vec<usize>, Vec<usize>) =
        (0..pairs.len()).partition(|&i| crate::instruction::is_absent(pairs[i].0));
    let mut parts = Vec::new();
    if !plain.is_empty() {
        let queries: Vec<&str> = plain.iter().map(|&i| pairs[i].1).collect();
        parts.push(embed(
            model,
            tokenizer,
            pad_id,
            pooling,
            &queries,
            plain.len(),
        )?);
    }
    if !mixed.is_empty() {
        let chosen: Vec<(&str, &str)> = mixed.iter().map(|&i| pairs[i]).collect();
        let pooled = module.embed(model, tokenizer, pad_id, &chosen)?;
        parts.push(l2_normalize_rows(pooled));
    }
    let order: Vec<usize> = plain.into_iter().chain(mixed).collect();
    Ok(in_input_order(Tensor::cat(parts, 0), &order, &device))
}
