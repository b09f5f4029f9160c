//! GradCache and the loss's gradient with respect to the embeddings, which the data-parallel
//! step ([`super::parallel`]) shares.

use std::ops::Range;

use anyhow::Context;
use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::Tensor;

use engine::training::step::scalar;
use engine::training::{BatchLayout, Loss};

use super::{Texts, TrainModel};

/// GradCache (Gao et al. 2021): embed everything without a graph, take the loss's gradient
/// with respect to the embeddings, then re-embed chunk by chunk with a graph and back-propagate
/// `sum(embedding * its gradient)`. The parameter gradient is the direct one (up to float
/// rounding) while only one chunk's activations are alive at a time.
pub fn grad_cache_step(
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
    // Each side (pairs, then passages): its rows, their embeddings' gradient, and its embedding.
    type Embed<'a> = &'a dyn Fn(Range<usize>) -> engine::Result<Tensor<2>>;
    let sides: [(usize, Tensor<2>, Embed); 2] = [
        (layout.pairs.len(), d_pairs, &|r| {
            model.embed_pairs(texts, layout, r)
        }),
        (layout.passages.len(), d_passages, &|r| {
            model.embed_passages(texts, layout, r)
        }),
    ];
    for (rows, gradient, embed) in sides {
        for r in ranges(rows) {
            let e = embed(r.clone())?;
            let surrogate = (e * gradient.clone().narrow(0, r.start, r.len()).autodiff()).sum();
            accumulator.accumulate(
                model,
                GradientsParams::from_grads(surrogate.backward(), model),
            );
        }
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
