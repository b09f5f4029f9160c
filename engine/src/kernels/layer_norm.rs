//! The layer norm's backward pass on the CPU backend, one sweep per row.
//!
//! burn's autodiff has no step of its own for `layer_norm`: it differentiates the
//! normalisation as the backend's default body writes it, ten operations (mean, centring,
//! square, mean, epsilon, square root, division, scale, shift, reshape), each a pass over the
//! `[tokens, hidden]` states that burn-flex makes on one thread, and about as many again
//! backward. A BERT layer has two layer norms, and those passes ran on the main thread, which
//! nothing overlaps (with the attention kernel beside it, the main thread's share of a training
//! step's samples fell from 16% to 9%). Here a row's statistics are computed again from the
//! saved input (the row is in cache), then its input gradient in two passes, while `dγ` and `dβ`
//! are summed per block of rows and the blocks' sums added in order (the same bits on any number
//! of threads).

use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Backend, DType, Flex, TensorMetadata};
use burn::tensor::{Bytes, Tensor};

use super::{contiguous, f32_values_mut, lane_sum, owned_f32, runs_kernels, CHUNK};

/// Layer normalisation over the last dimension with a bias, as an extension operation. The
/// forward pass is the backend's own fused `layer_norm` on every backend; what the extension
/// adds is the backward pass, which burn's autodiff otherwise derives from the normalisation
/// written as ten separate operations (each a pass over the hidden states on one thread on the
/// CPU backend, forward and backward). On the CPU backend it is one sweep per row
/// (`kernels/layer_norm.rs`).
#[backend_extension(Flex, Autodiff: cfg(feature = "autodiff"))]
pub trait LayerNormKernel: Backend {
    /// `(x - mean) / sqrt(var + epsilon) * gamma + beta` over each row (the last dimension).
    fn layer_norm_rows(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        Self::layer_norm(x, gamma, Some(beta), epsilon)
    }

    /// The backward pass of [`LayerNormKernel::layer_norm_rows`]: the gradients of `x`, `gamma`
    /// and `beta`, from the input, `gamma` and the output's gradient.
    fn layer_norm_rows_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        layer_norm_backward_composed::<Self>(x, gamma, grad, epsilon)
    }
}

/// [`LayerNormKernel::layer_norm_rows_backward`] in burn's operations: with `x̂` the normalised
/// input and `r = 1/sqrt(var + epsilon)`, `dx = r (g γ - mean(g γ) - x̂ mean(g γ x̂))` per row,
/// `dγ = Σ g x̂` and `dβ = Σ g` over the rows.
fn layer_norm_backward_composed<B: Backend>(
    x: FloatTensor<B>,
    gamma: FloatTensor<B>,
    grad: FloatTensor<B>,
    epsilon: f64,
) -> (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>) {
    let shape = x.shape();
    let width = shape[shape.num_dims() - 1];
    let rows = shape.num_elements() / width.max(1);
    let x = B::float_reshape(x, [rows, width].into());
    let grad = B::float_reshape(grad, [rows, width].into());
    let centered = B::float_sub(x.clone(), B::float_mean_dim(x, 1));
    let var = B::float_mean_dim(B::float_mul(centered.clone(), centered.clone()), 1);
    let inv_std = B::float_recip(B::float_sqrt(B::float_add_scalar(var, epsilon.into())));
    let normed = B::float_mul(centered, inv_std.clone());
    let scaled = B::float_mul(grad.clone(), B::float_reshape(gamma, [1, width].into()));
    let mean_scaled = B::float_mean_dim(scaled.clone(), 1);
    let mean_projected = B::float_mean_dim(B::float_mul(scaled.clone(), normed.clone()), 1);
    let dx = B::float_mul(
        B::float_sub(
            B::float_sub(scaled, mean_scaled),
            B::float_mul(normed.clone(), mean_projected),
        ),
        inv_std,
    );
    let dgamma = B::float_sum_dim(B::float_mul(grad.clone(), normed), 0);
    let dbeta = B::float_sum_dim(grad, 0);
    (
        B::float_reshape(dx, shape),
        B::float_reshape(dgamma, [width].into()),
        B::float_reshape(dbeta, [width].into()),
    )
}

/// A layer norm (`norm`, built with `epsilon`) over the last dimension: with the one-sweep
/// backward pass on the CPU backend in training ([`LayerNormKernel`]), burn's `LayerNorm`
/// elsewhere. The forward values are burn's on every backend.
pub fn layer_norm<const D: usize>(
    x: Tensor<D>,
    norm: &burn::nn::LayerNorm,
    epsilon: f64,
) -> Tensor<D> {
    let Some(beta) = &norm.beta else {
        return norm.forward(x);
    };
    if !runs_kernels(&x.device()) || x.dtype() != burn::tensor::DType::F32 {
        return norm.forward(x);
    }
    Tensor::from_dispatch(
        <burn::backend::Dispatch as LayerNormKernel>::layer_norm_rows(
            x.into_dispatch(),
            norm.gamma.val().into_dispatch(),
            beta.val().into_dispatch(),
            epsilon,
        ),
    )
}

impl LayerNormKernel for Flex {
    fn layer_norm_rows_backward(
        x: FlexTensor,
        gamma: FlexTensor,
        grad: FlexTensor,
        epsilon: f64,
    ) -> (FlexTensor, FlexTensor, FlexTensor) {
        let same = x.layout().shape() == grad.layout().shape();
        let f32s = [&x, &gamma, &grad].iter().all(|t| t.dtype() == DType::F32);
        if !same || !f32s {
            return layer_norm_backward_composed::<Flex>(x, gamma, grad, epsilon);
        }
        backward(x, gamma, grad, epsilon as f32)
    }
}

/// The gradients of the input, `gamma` and `beta` of `layer_norm(x, gamma, beta, epsilon)`
/// over the last dimension, from the output's gradient `grad` (f32 tensors, `grad` of `x`'s
/// shape). `grad`'s buffer becomes the input's gradient when the tensor owns it alone.
pub(super) fn backward(
    x: FlexTensor,
    gamma: FlexTensor,
    grad: FlexTensor,
    epsilon: f32,
) -> (FlexTensor, FlexTensor, FlexTensor) {
    let shape = x.layout().shape().clone();
    let width = shape[shape.num_dims() - 1];
    let n = shape.num_elements();
    let x = contiguous(x);
    let x = &x.as_slice::<f32>().expect("contiguous f32 tensor")[..n];
    let gamma = contiguous(gamma);
    let gamma = &gamma.as_slice::<f32>().expect("contiguous f32 tensor")[..width];
    let mut dx = owned_f32(grad);
    let mut dgamma = vec![0.0f32; width];
    let mut dbeta = vec![0.0f32; width];
    if let Some(rows_per_block) = CHUNK.checked_div(width) {
        let block = rows_per_block.max(1) * width;
        let sums = map_blocks(f32_values_mut(&mut dx), block, |start, g| {
            let mut sums = ParamSums::new(width);
            let x = &x[start..start + g.len()];
            for (g, x) in g.chunks_exact_mut(width).zip(x.chunks_exact(width)) {
                row_backward(g, x, gamma, epsilon, &mut sums.gamma, &mut sums.beta);
            }
            sums
        });
        for block in sums {
            add_into(&mut dgamma, &block.gamma);
            add_into(&mut dbeta, &block.beta);
        }
    }
    let vector = |values: Vec<f32>| {
        FlexTensor::new(
            Bytes::from_elems(values),
            Layout::contiguous([width].into()),
            DType::F32,
        )
    };
    (dx, vector(dgamma), vector(dbeta))
}

/// One block's sums of `dγ` and `dβ`.
struct ParamSums {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

impl ParamSums {
    fn new(width: usize) -> ParamSums {
        ParamSums {
            gamma: vec![0.0; width],
            beta: vec![0.0; width],
        }
    }
}

/// `into[i] += from[i]`.
fn add_into(into: &mut [f32], from: &[f32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// `f(offset, block)` over `values` in blocks of `block` elements (on rayon's threads
/// natively), the results in the blocks' order.
fn map_blocks<T: Send>(
    values: &mut [f32],
    block: usize,
    f: impl Fn(usize, &mut [f32]) -> T + Sync + Send,
) -> Vec<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        values
            .par_chunks_mut(block)
            .enumerate()
            .map(|(i, chunk)| f(i * block, chunk))
            .collect()
    }
    #[cfg(target_arch = "wasm32")]
    values
        .chunks_mut(block)
        .enumerate()
        .map(|(i, chunk)| f(i * block, chunk))
        .collect()
}

#[inline(always)]
fn row_backward_plain(
    g: &mut [f32],
    x: &[f32],
    gamma: &[f32],
    epsilon: f32,
    dgamma: &mut [f32],
    dbeta: &mut [f32],
) {
    let n = x.len() as f32;
    let mean = lane_sum(x, x, x, |x, _, _| x) / n;
    let var = lane_sum(x, x, x, |x, _, _| (x - mean) * (x - mean)) / n;
    let inv_std = 1.0 / (var + epsilon).sqrt();
    let mean_scaled = lane_sum(g, gamma, x, |g, gamma, _| g * gamma) / n;
    let mean_projected = lane_sum(g, gamma, x, |g, gamma, x| {
        g * gamma * ((x - mean) * inv_std)
    }) / n;
    let rows = g
        .iter_mut()
        .zip(x)
        .zip(gamma)
        .zip(dgamma.iter_mut().zip(dbeta.iter_mut()));
    for (((g, &x), &gamma), (dgamma, dbeta)) in rows {
        let normed = (x - mean) * inv_std;
        *dgamma += *g * normed;
        *dbeta += *g;
        *g = inv_std * (*g * gamma - mean_scaled - normed * mean_projected);
    }
}

widest_lanes! {
    /// One row of the layer norm's backward pass: `g` becomes the input's gradient, and the
    /// row's `g x̂` and `g` are added to `dgamma` and `dbeta` (in the CPU's widest vectors:
    /// [`super::Lanes`]).
    fn row_backward, row_backward_avx512, row_backward_avx2 = row_backward_plain(
        g: &mut [f32],
        x: &[f32],
        gamma: &[f32],
        epsilon: f32,
        dgamma: &mut [f32],
        dbeta: &mut [f32]
    )
}

#[cfg(feature = "autodiff")]
mod autodiff {
    use burn::backend::autodiff::checkpoint::base::Checkpointer;
    use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
    use burn::backend::autodiff::grads::Gradients;
    use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
    use burn::backend::autodiff::NodeId;
    use burn::backend::tensor::FloatTensor;
    use burn::backend::{Autodiff, Backend};

    use super::LayerNormKernel;

    /// The backward step of [`LayerNormKernel::layer_norm_rows`]: it keeps the input and
    /// `gamma` (the row statistics are computed again, a pass over a row in cache).
    #[derive(Debug)]
    struct LayerNormBackward;

    impl<B: Backend + LayerNormKernel> Backward<B, 3> for LayerNormBackward {
        type State = (NodeId, NodeId, f64);

        fn backward(
            self,
            ops: Ops<Self::State, 3>,
            grads: &mut Gradients,
            checkpointer: &mut Checkpointer,
        ) {
            let [x_node, gamma_node, beta_node] = ops.parents;
            let grad = grads.consume::<B>(&ops.node);
            let (x, gamma, epsilon) = ops.state;
            let x: FloatTensor<B> = checkpointer.retrieve_node_output(x);
            let gamma: FloatTensor<B> = checkpointer.retrieve_node_output(gamma);
            let (dx, dgamma, dbeta) = B::layer_norm_rows_backward(x, gamma, grad, epsilon);
            if let Some(node) = x_node {
                grads.register::<B>(node.id, dx);
            }
            if let Some(node) = gamma_node {
                grads.register::<B>(node.id, dgamma);
            }
            if let Some(node) = beta_node {
                grads.register::<B>(node.id, dbeta);
            }
        }
    }

    impl<B: Backend + LayerNormKernel, C: CheckpointStrategy> LayerNormKernel for Autodiff<B, C> {
        fn layer_norm_rows(
            x: FloatTensor<Self>,
            gamma: FloatTensor<Self>,
            beta: FloatTensor<Self>,
            epsilon: f64,
        ) -> FloatTensor<Self> {
            match LayerNormBackward
                .prepare::<C>([x.node(), gamma.node(), beta.node()])
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(mut prep) => {
                    let state = (prep.checkpoint(&x), prep.checkpoint(&gamma), epsilon);
                    let y = B::layer_norm_rows(
                        x.into_primitive(),
                        gamma.into_primitive(),
                        beta.into_primitive(),
                        epsilon,
                    );
                    prep.finish(state, y)
                }
                OpsKind::UnTracked(prep) => prep.finish(B::layer_norm_rows(
                    x.into_primitive(),
                    gamma.into_primitive(),
                    beta.into_primitive(),
                    epsilon,
                )),
            }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::kernels::Lanes;

    /// Every vector width the CPU has gives the baseline loop's bits.
    #[test]
    fn every_vector_width_gives_the_baseline_bits() {
        let width = 37;
        let x: Vec<f32> = (0..width)
            .map(|i| ((i * 29 % 41) as f32 - 20.0) * 0.17)
            .collect();
        let gamma: Vec<f32> = (0..width).map(|i| 0.5 + (i % 7) as f32 * 0.1).collect();
        let grad: Vec<f32> = (0..width)
            .map(|i| ((i * 13 % 23) as f32 - 11.0) * 0.05)
            .collect();
        let run = |lanes: Lanes| {
            let (mut g, mut dgamma, mut dbeta) = (grad.clone(), vec![0.0; width], vec![0.0; width]);
            // SAFETY: each width runs only where detected (below).
            unsafe {
                match lanes {
                    Lanes::Avx512 => {
                        row_backward_avx512(&mut g, &x, &gamma, 1e-12, &mut dgamma, &mut dbeta)
                    }
                    Lanes::Avx2 => {
                        row_backward_avx2(&mut g, &x, &gamma, 1e-12, &mut dgamma, &mut dbeta)
                    }
                    Lanes::Baseline => {
                        row_backward_plain(&mut g, &x, &gamma, 1e-12, &mut dgamma, &mut dbeta)
                    }
                }
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            (bits(&g), bits(&dgamma), bits(&dbeta))
        };
        let baseline = run(Lanes::Baseline);
        if std::arch::is_x86_feature_detected!("avx512f") {
            assert!(run(Lanes::Avx512) == baseline, "AVX-512 differs");
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            assert!(run(Lanes::Avx2) == baseline, "AVX2 differs");
        }
    }
}
