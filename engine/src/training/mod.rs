//! Fine-tuning support that belongs with the model rather than with a training loop: the
//! record formats ([`records`]), batching ([`batch`]), the contrastive objectives
//! ([`objectives`]) and the differentiable embedding of texts ([`embed`]). The loop itself
//! (optimiser, checkpoints, logs) is the `trainer` binary's.

pub mod attributes;
pub mod batch;
pub mod objectives;
pub mod records;
pub mod renderings;

use burn::tensor::{Int, Tensor, TensorData};

use crate::bert::BertModel;
use crate::config::Pooling;
use crate::error::Result;
use crate::tokenize::{TextTokenizer, TokenBatch};

pub use batch::{epoch_order, BatchLayout, TrainingTuple, TupleIndex};
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
/// tokenise with `tokenizer` (its max length truncates), run the transformer in length-sorted
/// chunks of at most `chunk` texts (little padding), pool, L2-normalise. Rows are in input
/// order.
pub fn embed(
    model: &BertModel,
    tokenizer: &TextTokenizer,
    pad_id: u32,
    pooling: Pooling,
    texts: &[String],
    chunk: usize,
) -> Result<Tensor<2>> {
    let device = model_device(model);
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    let tokens = tokenizer.encode(&refs)?;
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tokens[i].len()));
    let mut parts = Vec::new();
    for c in order.chunks(chunk.max(1)) {
        let rows: Vec<&[u32]> = c.iter().map(|&i| tokens[i].as_slice()).collect();
        let batch = TokenBatch::pad(&rows, pad_id);
        let shape = [batch.batch(), batch.seq];
        let ids = Tensor::<2, Int>::from_data(TensorData::new(batch.ids.clone(), shape), &device);
        let mask = Tensor::<2>::from_data(TensorData::new(batch.mask.clone(), shape), &device);
        let hidden = model.forward(ids, mask);
        parts.push(crate::encoder::pool(hidden, &batch, pooling, &device));
    }
    let sorted = Tensor::cat(parts, 0);
    // Back to input order: row r of the result is row inverse[r] of `sorted`.
    let mut inverse = vec![0i64; texts.len()];
    for (pos, &i) in order.iter().enumerate() {
        inverse[i] = pos as i64;
    }
    let inverse = Tensor::<1, Int>::from_data(TensorData::new(inverse, [texts.len()]), &device);
    Ok(l2_normalize_rows(sorted.select(0, inverse)))
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
/// gradients flowing into both `model` and `module`; a pair with an empty instruction is the
/// query's own embedding. Rows are L2-normalised, in input order.
pub fn embed_cross_attention(
    model: &BertModel,
    module: &crate::instruction::CrossAttentionInteraction,
    tokenizer: &TextTokenizer,
    pad_id: u32,
    pooling: Pooling,
    pairs: &[(String, String)],
) -> Result<Tensor<2>> {
    let device = model_device(model);
    let mut rows = Vec::with_capacity(pairs.len());
    for (instruction, query) in pairs {
        if instruction.trim().is_empty() {
            rows.push(embed(
                model,
                tokenizer,
                pad_id,
                pooling,
                std::slice::from_ref(query),
                1,
            )?);
            continue;
        }
        let hidden = |text: &str| -> Result<(Tensor<3>, Tensor<2>)> {
            let tokens = tokenizer.encode(&[text])?;
            let batch = TokenBatch::pad(&[tokens[0].as_slice()], pad_id);
            let shape = [1, batch.seq];
            let ids = Tensor::<2, Int>::from_data(TensorData::new(batch.ids, shape), &device);
            let mask = Tensor::<2>::from_data(TensorData::new(batch.mask, shape), &device);
            Ok((model.forward(ids, mask.clone()), mask))
        };
        let (hi, mi) = hidden(instruction)?;
        let (hq, mq) = hidden(query)?;
        rows.push(l2_normalize_rows(module.forward(hi, mi, hq, mq)));
    }
    Ok(Tensor::cat(rows, 0))
}
