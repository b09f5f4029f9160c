//! Softmax over the last dimension, and the attention weights, on the CPU backend.
//!
//! burn-flex computes a softmax in five passes with libm's `expf`, and burn's autodiff
//! differentiates all five. [`SoftmaxKernel`] makes one pass per row (max, then the vectorised
//! [`exp`] into the row, their sum in lanes, then the division) and, under autodiff, a backward
//! pass of one pass per row from the output it keeps. The attention's scores go through
//! [`attention_weights`], which scales them and adds the mask's bias in the same pass (they were
//! two more passes over `[texts, heads, length, length]`, on one thread), with the same values
//! to the bit as the separate operations.

use burn::backend::flex::FlexTensor;
use burn::backend::ops::FloatTensorOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Backend, DType, Flex, TensorMetadata};
use burn::tensor::Tensor;

use super::{
    contiguous, dot, exp, f32_values_mut, for_each_block, map_f32_blocks, owned_f32, runs_kernels,
    sum, CHUNK,
};

/// Softmax over the last dimension, as an extension operation: one pass per row on the CPU
/// backend (max, then `e^(x - max)` with the vectorised [`exp`] and the sum, then the division)
/// where burn-flex makes five passes with libm's `expf`. Under autodiff its backward pass is one
/// pass per row too, from the saved output ([`SoftmaxKernel::softmax_rows_backward`]), where
/// burn's composed softmax differentiates all five operations and computes `expf` again.
#[backend_extension(Flex, Autodiff: cfg(feature = "autodiff"))]
pub trait SoftmaxKernel: Backend {
    /// Softmax of every row (the last dimension).
    fn softmax_rows(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let last = x.shape().num_dims() - 1;
        let shifted = Self::float_sub(x.clone(), Self::float_max_dim(x, last));
        let e = Self::float_exp(shifted);
        Self::float_div(e.clone(), Self::float_sum_dim(e, last))
    }

    /// The backward pass of [`SoftmaxKernel::softmax_rows`] from its output `y`:
    /// `y * (grad - sum(grad * y))`, the sum over each row.
    fn softmax_rows_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let last = y.shape().num_dims() - 1;
        let dot = Self::float_sum_dim(Self::float_mul(grad.clone(), y.clone()), last);
        Self::float_mul(y, Self::float_sub(grad, dot))
    }

    /// Softmax of every row of `x * scale + bias`: attention weights from the raw scores, the
    /// scale `1/sqrt(head size)` and the mask's additive bias (its dimensions each equal to
    /// `x`'s or 1, the last equal). The bias takes no gradient.
    fn softmax_rows_scaled(
        x: FloatTensor<Self>,
        scale: f32,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        softmax_rows_scaled_composed::<Self>(x, scale, bias)
    }

    /// The backward pass of [`SoftmaxKernel::softmax_rows_scaled`] from its output `y`:
    /// `y * (grad - sum(grad * y)) * scale`.
    fn softmax_rows_scaled_backward(
        y: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        scale: f32,
    ) -> FloatTensor<Self> {
        Self::float_mul_scalar(Self::softmax_rows_backward(y, grad), scale.into())
    }
}

/// [`SoftmaxKernel::softmax_rows_scaled`] in separate operations (the scale, the bias, the
/// softmax), as the attention layers made them before the fused kernel.
fn softmax_rows_scaled_composed<B: SoftmaxKernel>(
    x: FloatTensor<B>,
    scale: f32,
    bias: FloatTensor<B>,
) -> FloatTensor<B> {
    B::softmax_rows(B::float_add(B::float_mul_scalar(x, scale.into()), bias))
}

/// Attention weights, the softmax over the last dimension of `scores * scale + bias`: on the
/// CPU backend one pass per row (scale, bias and softmax together, where they were three
/// passes over the `[texts, heads, length, length]` scores, two of them on one thread), with a
/// one-pass backward in training; burn's operations elsewhere. The values are those of the
/// separate operations to the bit.
pub fn attention_weights(scores: Tensor<4>, scale: f64, bias: Tensor<4>) -> Tensor<4> {
    if !runs_kernels(&scores.device()) {
        return burn::tensor::activation::softmax(scores.mul_scalar(scale) + bias, 3);
    }
    Tensor::from_dispatch(
        <burn::backend::Dispatch as SoftmaxKernel>::softmax_rows_scaled(
            scores.into_dispatch(),
            scale as f32,
            bias.into_dispatch(),
        ),
    )
}

/// Softmax over the last dimension: the one-pass kernel on the CPU backend (the attention
/// weights; in training with its one-pass backward), burn's `softmax` on the GPU backends.
pub fn softmax_last<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    if !runs_kernels(&x.device()) {
        return burn::tensor::activation::softmax(x, D - 1);
    }
    Tensor::from_dispatch(<burn::backend::Dispatch as SoftmaxKernel>::softmax_rows(
        x.into_dispatch(),
    ))
}

impl SoftmaxKernel for Flex {
    fn softmax_rows(x: FlexTensor) -> FlexTensor {
        if x.dtype() != DType::F32 {
            let last = x.layout().shape().num_dims() - 1;
            let shifted = Flex::float_sub(x.clone(), Flex::float_max_dim(x, last));
            let e = Flex::float_exp(shifted);
            return Flex::float_div(e.clone(), Flex::float_sum_dim(e, last));
        }
        let shape = x.layout().shape().clone();
        let width = shape[shape.num_dims() - 1].max(1);
        let mut x = owned_f32(x);
        let rows_per_task = (CHUNK / width).max(1);
        for_each_block(f32_values_mut(&mut x), rows_per_task * width, |_, block| {
            for row in block.chunks_exact_mut(width) {
                softmax_row(row);
            }
        });
        x
    }

    fn softmax_rows_backward(y: FlexTensor, grad: FlexTensor) -> FlexTensor {
        if y.dtype() != DType::F32
            || grad.dtype() != DType::F32
            || y.layout().shape() != grad.layout().shape()
        {
            let last = y.layout().shape().num_dims() - 1;
            let dot = Flex::float_sum_dim(Flex::float_mul(grad.clone(), y.clone()), last);
            return Flex::float_mul(y, Flex::float_sub(grad, dot));
        }
        backward_rows(y, grad, softmax_row_backward)
    }

    fn softmax_rows_scaled(x: FlexTensor, scale: f32, bias: FlexTensor) -> FlexTensor {
        let rows = BiasRows::new(x.layout().shape(), bias.layout().shape());
        let (Some(rows), DType::F32, DType::F32) = (rows, x.dtype(), bias.dtype()) else {
            return softmax_rows_scaled_composed::<Flex>(x, scale, bias);
        };
        let width = rows.width;
        let bias = contiguous(bias);
        let bias = &bias.as_slice::<f32>().expect("contiguous f32 tensor")[..rows.bias_len()];
        let mut x = owned_f32(x);
        let rows_per_task = (CHUNK / width).max(1);
        for_each_block(
            f32_values_mut(&mut x),
            rows_per_task * width,
            |start, block| {
                for (i, row) in block.chunks_exact_mut(width).enumerate() {
                    let at = rows.bias_row(start / width + i) * width;
                    scaled_softmax_row(row, scale, &bias[at..at + width]);
                }
            },
        );
        x
    }

    fn softmax_rows_scaled_backward(y: FlexTensor, grad: FlexTensor, scale: f32) -> FlexTensor {
        if y.dtype() != DType::F32
            || grad.dtype() != DType::F32
            || y.layout().shape() != grad.layout().shape()
        {
            let unscaled = Flex::softmax_rows_backward(y, grad);
            return Flex::float_mul_scalar(unscaled, scale.into());
        }
        backward_rows(y, grad, |g, y| scaled_softmax_row_backward(g, y, scale))
    }
}

/// `row(grad's row, y's row)` over every row (the last dimension) of two f32 tensors of one
/// shape, the result written into `grad`'s buffer when it owns it alone: a backward pass from
/// the saved output.
fn backward_rows(
    y: FlexTensor,
    grad: FlexTensor,
    row: impl Fn(&mut [f32], &[f32]) + Sync + Send,
) -> FlexTensor {
    let shape = y.layout().shape().clone();
    let width = shape[shape.num_dims() - 1].max(1);
    let y = contiguous(y);
    let y = &y.as_slice::<f32>().expect("contiguous f32 tensor")[..shape.num_elements()];
    let rows_per_task = (CHUNK / width).max(1);
    map_f32_blocks(grad, y, rows_per_task * width, |g, y| {
        for (g, y) in g.chunks_exact_mut(width).zip(y.chunks_exact(width)) {
            row(g, y);
        }
    })
}

/// Which row of a broadcast bias each row of a tensor takes: the bias has the tensor's rank,
/// its last dimension equal to the tensor's and each other dimension equal to the tensor's or 1.
#[derive(Debug)]
struct BiasRows {
    /// The rows' width (the last dimension).
    width: usize,
    /// The tensor's leading dimensions (all but the last), outermost first.
    leading: Vec<usize>,
    /// For each leading dimension, the bias rows a step along it moves (0 where the bias has 1).
    steps: Vec<usize>,
    /// The number of bias rows.
    bias_rows: usize,
}

impl BiasRows {
    /// The mapping, or None when `bias` does not broadcast to `x` that way.
    fn new(x: &burn::tensor::Shape, bias: &burn::tensor::Shape) -> Option<BiasRows> {
        let (x, bias) = (x.as_slice(), bias.as_slice());
        let rank = x.len();
        if rank == 0 || bias.len() != rank || bias[rank - 1] != x[rank - 1] || x[rank - 1] == 0 {
            return None;
        }
        let mut steps = vec![0; rank - 1];
        let mut stride = 1;
        for d in (0..rank - 1).rev() {
            match bias[d] {
                1 => {}
                n if n == x[d] => steps[d] = stride,
                _ => return None,
            }
            stride *= bias[d];
        }
        Some(BiasRows {
            width: x[rank - 1],
            leading: x[..rank - 1].to_vec(),
            steps,
            bias_rows: stride,
        })
    }

    /// The bias row of the tensor's row `row`.
    fn bias_row(&self, mut row: usize) -> usize {
        let mut at = 0;
        for (&n, &step) in self.leading.iter().zip(&self.steps).rev() {
            at += (row % n) * step;
            row /= n;
        }
        at
    }

    /// The number of bias values.
    fn bias_len(&self) -> usize {
        self.bias_rows * self.width
    }
}

#[inline(always)]
fn scaled_softmax_row_plain(row: &mut [f32], scale: f32, bias: &[f32]) {
    for (v, &b) in row.iter_mut().zip(bias) {
        *v = *v * scale + b;
    }
    softmax_row_plain(row);
}

widest_lanes! {
    /// Softmax of one row of `row * scale + bias` in place (in the CPU's widest vectors:
    /// [`Lanes`]); the same bits as the scale, the addition and [`softmax_row`] one after the
    /// other (no fused multiply-add).
    fn scaled_softmax_row, scaled_softmax_row_avx512, scaled_softmax_row_avx2
        = scaled_softmax_row_plain(row: &mut [f32], scale: f32, bias: &[f32])
}

#[inline(always)]
fn scaled_softmax_row_backward_plain(grad: &mut [f32], y: &[f32], scale: f32) {
    let dot = dot(grad, y);
    for (g, &y) in grad.iter_mut().zip(y) {
        *g = y * (*g - dot) * scale;
    }
}

widest_lanes! {
    /// One row of the scaled softmax's backward pass in place:
    /// `grad = y * (grad - sum(grad * y)) * scale` (in the CPU's widest vectors: [`Lanes`]).
    fn scaled_softmax_row_backward, scaled_softmax_row_backward_avx512,
        scaled_softmax_row_backward_avx2
        = scaled_softmax_row_backward_plain(grad: &mut [f32], y: &[f32], scale: f32)
}

#[inline(always)]
fn softmax_row_plain(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    // The exponentials, then their sum in lanes: a running sum in the same loop is a chain the
    // compiler may not reorder, and it kept the whole loop scalar (10% of a training step's
    // samples on an AVX-512 Xeon, where the vector loop is about 10x faster).
    for v in row.iter_mut() {
        // Masked entries ([`crate::bert::MASKED`]) weigh exactly 0, as with libm's expf.
        let d = *v - max;
        let e = exp(d);
        *v = if d < -87.0 { 0.0 } else { e };
    }
    let inv = 1.0 / sum(row);
    for v in row.iter_mut() {
        *v *= inv;
    }
}

widest_lanes! {
    /// Softmax of one row in place (in the CPU's widest vectors: [`Lanes`]).
    fn softmax_row, softmax_row_avx512, softmax_row_avx2
        = softmax_row_plain(row: &mut [f32])
}

#[inline(always)]
fn softmax_row_backward_plain(grad: &mut [f32], y: &[f32]) {
    let dot = dot(grad, y);
    for (g, &y) in grad.iter_mut().zip(y) {
        *g = y * (*g - dot);
    }
}

widest_lanes! {
    /// One row of the softmax's backward pass in place: `grad = y * (grad - sum(grad * y))`
    /// (in the CPU's widest vectors: [`Lanes`]).
    fn softmax_row_backward, softmax_row_backward_avx512, softmax_row_backward_avx2
        = softmax_row_backward_plain(grad: &mut [f32], y: &[f32])
}

#[cfg(feature = "autodiff")]
mod autodiff {
    use burn::backend::autodiff::checkpoint::base::Checkpointer;
    use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
    use burn::backend::autodiff::grads::Gradients;
    use burn::backend::autodiff::ops::{unary, Backward, Ops, OpsKind};
    use burn::backend::tensor::FloatTensor;
    use burn::backend::{Autodiff, Backend};

    use super::SoftmaxKernel;

    /// The backward step of [`SoftmaxKernel::softmax_rows`]: it keeps the output, from which
    /// the gradient follows without computing the exponentials again.
    #[derive(Debug)]
    struct SoftmaxRowsBackward;

    impl<B: Backend + SoftmaxKernel> Backward<B, 1> for SoftmaxRowsBackward {
        type State = FloatTensor<B>;

        fn backward(
            self,
            ops: Ops<Self::State, 1>,
            grads: &mut Gradients,
            _checkpointer: &mut Checkpointer,
        ) {
            let output = ops.state;
            unary::<B, _>(ops.parents, ops.node, grads, |grad| {
                B::softmax_rows_backward(output, grad)
            });
        }
    }

    /// The backward step of [`SoftmaxKernel::softmax_rows_scaled`]: it keeps the output and the
    /// scale.
    #[derive(Debug)]
    struct SoftmaxScaledBackward;

    impl<B: Backend + SoftmaxKernel> Backward<B, 1> for SoftmaxScaledBackward {
        type State = (FloatTensor<B>, f32);

        fn backward(
            self,
            ops: Ops<Self::State, 1>,
            grads: &mut Gradients,
            _checkpointer: &mut Checkpointer,
        ) {
            let (output, scale) = ops.state;
            unary::<B, _>(ops.parents, ops.node, grads, |grad| {
                B::softmax_rows_scaled_backward(output, grad, scale)
            });
        }
    }

    impl<B: Backend + SoftmaxKernel, C: CheckpointStrategy> SoftmaxKernel for Autodiff<B, C> {
        fn softmax_rows(x: FloatTensor<Self>) -> FloatTensor<Self> {
            match SoftmaxRowsBackward
                .prepare::<C>([x.node()])
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(prep) => {
                    let output = B::softmax_rows(x.into_primitive());
                    prep.finish(output.clone(), output)
                }
                OpsKind::UnTracked(prep) => prep.finish(B::softmax_rows(x.into_primitive())),
            }
        }

        fn softmax_rows_scaled(
            x: FloatTensor<Self>,
            scale: f32,
            bias: FloatTensor<Self>,
        ) -> FloatTensor<Self> {
            if bias.is_tracked() {
                // A bias that takes a gradient: the separate operations, which give it one.
                return super::softmax_rows_scaled_composed::<Self>(x, scale, bias);
            }
            match SoftmaxScaledBackward
                .prepare::<C>([x.node()])
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(prep) => {
                    let output =
                        B::softmax_rows_scaled(x.into_primitive(), scale, bias.into_primitive());
                    prep.finish((output.clone(), scale), output)
                }
                OpsKind::UnTracked(prep) => prep.finish(B::softmax_rows_scaled(
                    x.into_primitive(),
                    scale,
                    bias.into_primitive(),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use burn::backend::flex::Layout;
    use burn::tensor::Bytes;

    use super::*;

    /// A kernel given a tensor that shares its buffer writes into a copy and leaves the other
    /// owner's values alone; given the only owner, it writes in place.
    #[test]
    fn the_kernels_write_in_place_only_into_a_buffer_they_own_alone() {
        let values: Vec<f32> = (0..24).map(|i| (i as f32 * 0.7).sin()).collect();
        let tensor = || {
            FlexTensor::new(
                Bytes::from_elems(values.clone()),
                Layout::contiguous([4, 6].into()),
                DType::F32,
            )
        };
        let address = |t: &FlexTensor| t.as_slice::<f32>().unwrap().as_ptr();
        let shared = tensor();
        let kept = shared.clone();
        let soft = <Flex as SoftmaxKernel>::softmax_rows(shared);
        assert_eq!(kept.as_slice::<f32>().unwrap(), &values[..]);
        assert_ne!(address(&soft), address(&kept));
        let alone = tensor();
        let before = address(&alone);
        let alone = <Flex as SoftmaxKernel>::softmax_rows(alone);
        assert_eq!(
            address(&alone),
            before,
            "the only owner is written in place"
        );
        let soft = soft.as_slice::<f32>().unwrap().to_vec();
        assert_eq!(alone.as_slice::<f32>().unwrap(), &soft[..]);
        for row in soft.chunks(6) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
        let grad = <Flex as SoftmaxKernel>::softmax_rows_backward(alone.clone(), kept.clone());
        assert_eq!(kept.as_slice::<f32>().unwrap(), &values[..]);
        assert_eq!(alone.as_slice::<f32>().unwrap(), &soft[..]);
        let own_grad = tensor();
        let before = address(&own_grad);
        let in_place = <Flex as SoftmaxKernel>::softmax_rows_backward(alone.clone(), own_grad);
        assert_eq!(
            address(&in_place),
            before,
            "the only owner is written in place"
        );
        assert_eq!(
            in_place.as_slice::<f32>().unwrap(),
            grad.as_slice::<f32>().unwrap()
        );
        for (g, y) in grad
            .as_slice::<f32>()
            .unwrap()
            .chunks(6)
            .zip(soft.chunks(6))
        {
            // y * (g - sum(g * y)) sums to zero over a row when y sums to one.
            assert!(g.iter().sum::<f32>().abs() < 1e-6, "{g:?} for {y:?}");
        }
    }

    /// Every vector width the CPU has computes softmax and its backward pass, plain and scaled,
    /// bit for bit as the baseline loop does (the widths run on whichever CPU runs the tests).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_vector_width_gives_the_baseline_bits() {
        use crate::kernels::Lanes;
        let mut rows: Vec<Vec<f32>> = (1..40)
            .map(|n| {
                (0..n * 7)
                    .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.3)
                    .collect()
            })
            .collect();
        rows[3][5] = crate::bert::MASKED;
        let row_grads: Vec<Vec<f32>> = rows
            .iter()
            .map(|r| r.iter().rev().map(|v| v * 0.1 - 0.4).collect())
            .collect();
        let bias: Vec<f32> = (0..300)
            .map(|i| {
                if i % 11 == 3 {
                    crate::bert::MASKED
                } else {
                    0.0
                }
            })
            .collect();
        type Kernels = (
            unsafe fn(&mut [f32]),
            unsafe fn(&mut [f32], f32, &[f32]),
            unsafe fn(&mut [f32], &[f32]),
            unsafe fn(&mut [f32], &[f32], f32),
        );
        let kernels = |lanes: Lanes| -> Kernels {
            match lanes {
                Lanes::Avx512 => (
                    softmax_row_avx512,
                    scaled_softmax_row_avx512,
                    softmax_row_backward_avx512,
                    scaled_softmax_row_backward_avx512,
                ),
                Lanes::Avx2 => (
                    softmax_row_avx2,
                    scaled_softmax_row_avx2,
                    softmax_row_backward_avx2,
                    scaled_softmax_row_backward_avx2,
                ),
                Lanes::Baseline => (
                    |r| softmax_row_plain(r),
                    |r, s, b| scaled_softmax_row_plain(r, s, b),
                    |g, y| softmax_row_backward_plain(g, y),
                    |g, y, s| scaled_softmax_row_backward_plain(g, y, s),
                ),
            }
        };
        let run = |lanes: Lanes| {
            let (forward, scaled_forward, backward, scaled_backward) = kernels(lanes);
            let mut soft = rows.clone();
            let mut scaled = rows.clone();
            let mut soft_grads = row_grads.clone();
            let mut scaled_grads = row_grads.clone();
            // SAFETY: each width runs only where detected (below).
            unsafe {
                for r in soft.iter_mut() {
                    forward(r);
                }
                for r in scaled.iter_mut() {
                    let n = r.len();
                    scaled_forward(r, 0.17, &bias[..n]);
                }
                for (g, y) in soft_grads.iter_mut().zip(&soft) {
                    backward(g, y);
                }
                for (g, y) in scaled_grads.iter_mut().zip(&scaled) {
                    scaled_backward(g, y, 0.17);
                }
            }
            let bits = |rows: &[Vec<f32>]| {
                rows.iter()
                    .map(|r| r.iter().map(|x| x.to_bits()).collect::<Vec<u32>>())
                    .collect::<Vec<_>>()
            };
            (
                bits(&soft),
                bits(&scaled),
                bits(&soft_grads),
                bits(&scaled_grads),
            )
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
