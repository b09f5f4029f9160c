//! CPU kernels that burn-flex runs one scalar at a time, written so the compiler vectorises them.
//!
//! A profile of `trainer embed` (BENCHMARKS.md) put 17% of the CPU encoder's time in GELU:
//! burn-flex computes it with `libm::erff`, element by element on one thread, forward and
//! backward. Here GELU (the exact, erf form BERT uses) runs through burn's backend-extension
//! point instead of a fork of burn-flex: [`GeluKernel`] has burn's own GELU as its default body,
//! the Flex backend overrides it with [`erf`]/[`exp`] approximations built from `+ * /` and
//! min/max only (so the loops vectorise: AVX natively, `simd128` in the browser) over chunks
//! spread across rayon's threads natively, and the Autodiff backend wraps it with its backward.
//! Every other backend (wgpu, CUDA) keeps burn's GELU: [`gelu`] picks the route from the device.
//!
//! The other kernels take the same route, each in its own file: the softmax and the attention
//! weights (`softmax.rs`: one pass per row, the scale and mask bias folded in), the layer norm's
//! backward pass (`layer_norm.rs`: burn's autodiff has none of its own), and the matrix products
//! written straight into their output (`matmul.rs`, native only). This file holds GELU, the
//! products' extension trait, and what they share: the vector-width dispatch ([`Lanes`]), the
//! vectorised [`exp`] and lane sums, and the in-place and chunking helpers.
//!
//! `IFIR_KERNELS=burn` in the environment turns the kernels off (burn's own ops everywhere): for
//! same-binary speed comparisons (`cargo xtask bench`) and for ruling them out when triaging.
//!
//! Accuracy: [`erf`] is within 4.2e-7 of the exact function on the whole real line (libm's erff
//! is within about 1e-7), [`exp`] within 3 ulp; the unit tests check both, and the encoder's
//! golden tests against sentence-transformers run through this path.

use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::ops::{ActivationOps, FloatTensorOps};
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Backend, DType, DispatchDevice, Flex};
use burn::tensor::{Bytes, Device, Tensor};

#[cfg(not(target_arch = "wasm32"))]
mod matmul;

/// Defines `$name`, which runs `$plain` (an `#[inline(always)]` loop) compiled for the widest
/// vectors the x86-64 CPU has ([`Lanes`]), and the two copies it picks from (`$avx512`,
/// `$avx2`; the unit tests run each). The binary itself is built for baseline x86-64, whose
/// loops are 4 lanes wide; elsewhere `$name` is `$plain`.
macro_rules! widest_lanes {
    (
        $(#[$doc:meta])*
        fn $name:ident, $avx512:ident, $avx2:ident = $plain:ident($($arg:ident: $ty:ty),*)
    ) => {
        $(#[$doc])*
        fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            match $crate::kernels::Lanes::detect() {
                // SAFETY: the CPU has AVX-512 F (detected).
                $crate::kernels::Lanes::Avx512 => return unsafe { $avx512($($arg),*) },
                // SAFETY: the CPU has AVX2 and FMA (detected).
                $crate::kernels::Lanes::Avx2 => return unsafe { $avx2($($arg),*) },
                $crate::kernels::Lanes::Baseline => {}
            }
            $plain($($arg),*)
        }

        /// The loop compiled with AVX-512.
        ///
        /// # Safety
        /// The CPU must have AVX-512 F.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $avx512($($arg: $ty),*) {
            $plain($($arg),*)
        }

        /// The loop compiled with AVX2.
        ///
        /// # Safety
        /// The CPU must have AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx2($($arg: $ty),*) {
            $plain($($arg),*)
        }
    };
}

mod layer_norm;
mod softmax;

pub use layer_norm::{layer_norm, LayerNormKernel};
pub use softmax::{attention_weights, softmax_last, SoftmaxKernel};

/// GELU, `x Φ(x)`, as an extension operation: burn's own on every backend but Flex.
#[backend_extension(Flex, Autodiff: cfg(feature = "autodiff"))]
pub trait GeluKernel: Backend {
    /// GELU of every element.
    fn gelu_erf(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu(x)
    }

    /// `grad * GELU'(x)`, the backward pass of [`GeluKernel::gelu_erf`].
    fn gelu_erf_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu_backward(x, grad)
    }
}

/// GELU (erf form) of every element: the vectorised kernel on the CPU backend, burn's elsewhere.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    if !runs_kernels(&x.device()) {
        return burn::tensor::activation::gelu(x);
    }
    Tensor::from_dispatch(<burn::backend::Dispatch as GeluKernel>::gelu_erf(
        x.into_dispatch(),
    ))
}

/// `lhs · rhs` over the last two dimensions (the leading ones broadcast), as an extension
/// operation: burn's own on every backend but Flex, where f32 products are written straight
/// into their output (the `matmul` submodule says why).
#[backend_extension(Flex, Autodiff: cfg(feature = "autodiff"))]
pub trait MatmulKernel: Backend {
    /// The product.
    fn matmul_into(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::float_matmul(lhs, rhs)
    }
}

impl MatmulKernel for Flex {
    fn matmul_into(lhs: FlexTensor, rhs: FlexTensor) -> FlexTensor {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(product) = matmul::matmul(&lhs, &rhs) {
            return product;
        }
        Flex::float_matmul(lhs, rhs)
    }
}

/// `lhs · rhs` (burn's `matmul`): the CPU backend's product without its output's zero-fill and
/// copy, burn's elsewhere.
pub fn matmul<const D: usize>(lhs: Tensor<D>, rhs: Tensor<D>) -> Tensor<D> {
    if !runs_kernels(&lhs.device()) {
        return lhs.matmul(rhs);
    }
    Tensor::from_dispatch(<burn::backend::Dispatch as MatmulKernel>::matmul_into(
        lhs.into_dispatch(),
        rhs.into_dispatch(),
    ))
}

/// A dense layer, `x W + b` over the last dimension: on the CPU backend the rows of every
/// leading dimension as one product ([`matmul`]), so its backward pass is one product for the
/// input's gradient and one for the weight's, as burn's `linear` makes them; burn's `linear`
/// elsewhere.
pub fn linear<const D: usize>(x: Tensor<D>, layer: &burn::nn::Linear) -> Tensor<D> {
    if !runs_kernels(&x.device()) {
        return layer.forward(x);
    }
    let dims = x.dims();
    let rows = dims[..D - 1].iter().product::<usize>();
    let weight = layer.weight.val();
    let outputs = weight.dims()[1];
    let mut y = matmul(x.reshape([rows, dims[D - 1]]), weight);
    if let Some(bias) = &layer.bias {
        y = y + bias.val().unsqueeze_dim(0);
    }
    let mut out_dims = dims;
    out_dims[D - 1] = outputs;
    y.reshape(out_dims)
}

/// Whether tensors on `device` take this module's kernels: Flex, and Flex under autodiff when
/// this crate's `autodiff` feature built the backward pass.
fn runs_kernels(device: &Device) -> bool {
    if !enabled() || (device.is_autodiff() && !cfg!(feature = "autodiff")) {
        return false;
    }
    matches!(
        device.clone().inner().as_dispatch(),
        DispatchDevice::Flex(_)
    )
}

/// Whether `device` is the CPU backend, with or without autodiff.
pub fn is_cpu(device: &Device) -> bool {
    matches!(
        device.clone().inner().as_dispatch(),
        DispatchDevice::Flex(_)
    )
}

/// Whether `device` is the CPU backend without autodiff: where the 8-bit dense layers
/// ([`crate::int8`]) run.
pub fn is_cpu_inference(device: &Device) -> bool {
    !device.is_autodiff()
        && matches!(
            device.clone().inner().as_dispatch(),
            DispatchDevice::Flex(_)
        )
}

/// False when `IFIR_KERNELS=burn` (read once).
fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("IFIR_KERNELS").map_or(true, |v| v != "burn"))
}

impl GeluKernel for Flex {
    fn gelu_erf(x: FlexTensor) -> FlexTensor {
        if x.dtype() != DType::F32 {
            return <Flex as ActivationOps<Flex>>::gelu(x);
        }
        map_f32(x, gelu_scalar)
    }

    fn gelu_erf_backward(x: FlexTensor, grad: FlexTensor) -> FlexTensor {
        if x.dtype() != DType::F32
            || grad.dtype() != DType::F32
            || x.layout().shape() != grad.layout().shape()
        {
            return <Flex as ActivationOps<Flex>>::gelu_backward(x, grad);
        }
        let n = x.layout().shape().num_elements();
        let x = contiguous(x);
        let x = &x.as_slice::<f32>().expect("contiguous f32 tensor")[..n];
        map_f32_blocks(grad, x, CHUNK, gelu_backward_chunk)
    }
}

#[cfg(feature = "autodiff")]
mod autodiff {
    use burn::backend::autodiff::checkpoint::base::Checkpointer;
    use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
    use burn::backend::autodiff::grads::Gradients;
    use burn::backend::autodiff::ops::{binary, unary, Backward, Ops, OpsKind};
    use burn::backend::autodiff::NodeId;
    use burn::backend::tensor::FloatTensor;
    use burn::backend::{Autodiff, Backend};

    use burn::backend::ops::FloatTensorOps;
    use burn::backend::TensorMetadata;

    use super::{GeluKernel, MatmulKernel};

    /// The backward step of [`GeluKernel::gelu_erf`]: it keeps the input's node.
    #[derive(Debug)]
    struct GeluErfBackward;

    impl<B: Backend + GeluKernel> Backward<B, 1> for GeluErfBackward {
        type State = NodeId;

        fn backward(
            self,
            ops: Ops<Self::State, 1>,
            grads: &mut Gradients,
            checkpointer: &mut Checkpointer,
        ) {
            let input: FloatTensor<B> = checkpointer.retrieve_node_output(ops.state);
            unary::<B, _>(ops.parents, ops.node, grads, |grad| {
                B::gelu_erf_backward(input, grad)
            });
        }
    }

    /// The backward step of [`MatmulKernel::matmul_into`] when neither operand is broadcast:
    /// `grad · rhsᵀ` and `lhsᵀ · grad`, products of the same kernel (burn's `Matmul` step
    /// without its reduction over broadcast dimensions). It keeps each operand the other's
    /// gradient needs.
    #[derive(Debug)]
    struct MatmulBackward;

    impl<B: Backend + MatmulKernel> Backward<B, 2> for MatmulBackward {
        type State = (Option<NodeId>, Option<NodeId>);

        fn backward(
            self,
            ops: Ops<Self::State, 2>,
            grads: &mut Gradients,
            checkpointer: &mut Checkpointer,
        ) {
            let (lhs, rhs) = ops.state;
            let lhs: Option<FloatTensor<B>> = lhs.map(|id| checkpointer.retrieve_node_output(id));
            let rhs: Option<FloatTensor<B>> = rhs.map(|id| checkpointer.retrieve_node_output(id));
            binary::<B, _, _>(
                ops.parents,
                ops.node,
                grads,
                |grad| B::matmul_into(grad, B::float_transpose(rhs.expect("kept for lhs"))),
                |grad| B::matmul_into(B::float_transpose(lhs.expect("kept for rhs")), grad),
            );
        }
    }

    impl<B: Backend + MatmulKernel, C: CheckpointStrategy> MatmulKernel for Autodiff<B, C> {
        fn matmul_into(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
            let (ls, rs) = (lhs.shape(), rhs.shape());
            let (lr, rr) = (ls.num_dims(), rs.num_dims());
            if lr != rr || ls.as_slice()[..lr - 2] != rs.as_slice()[..rr - 2] {
                // Broadcast batches: burn's step, which sums the gradient over them.
                return Self::float_matmul(lhs, rhs);
            }
            let (lhs_tracked, rhs_tracked) = (lhs.is_tracked(), rhs.is_tracked());
            match MatmulBackward
                .prepare::<C>([lhs.node(), rhs.node()])
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(mut prep) => {
                    let lhs_state = rhs_tracked.then(|| prep.checkpoint(&lhs));
                    let rhs_state = lhs_tracked.then(|| prep.checkpoint(&rhs));
                    prep.finish(
                        (lhs_state, rhs_state),
                        B::matmul_into(lhs.into_primitive(), rhs.into_primitive()),
                    )
                }
                OpsKind::UnTracked(prep) => {
                    prep.finish(B::matmul_into(lhs.into_primitive(), rhs.into_primitive()))
                }
            }
        }
    }

    impl<B: Backend + GeluKernel, C: CheckpointStrategy> GeluKernel for Autodiff<B, C> {
        fn gelu_erf(x: FloatTensor<Self>) -> FloatTensor<Self> {
            match GeluErfBackward
                .prepare::<C>([x.node()])
                .compute_bound()
                .stateful()
            {
                OpsKind::Tracked(mut prep) => {
                    let state = prep.checkpoint(&x);
                    prep.finish(state, B::gelu_erf(x.primitive().clone()))
                }
                OpsKind::UnTracked(prep) => prep.finish(B::gelu_erf(x.into_primitive())),
            }
        }
    }
}

/// `x` itself when it is contiguous from offset 0, else a contiguous copy.
fn contiguous(x: FlexTensor) -> FlexTensor {
    if x.layout().is_contiguous() && x.layout().start_offset() == 0 {
        x
    } else {
        x.to_contiguous()
    }
}

/// An f32 tensor with `x`'s values, contiguous from offset 0 and the only owner of its buffer,
/// so that a kernel can write its result in place: `x` itself when it already is, else a copy.
fn owned_f32(x: FlexTensor) -> FlexTensor {
    let mut x = contiguous(x);
    if x.try_storage_mut::<f32>().is_some() {
        return x;
    }
    let shape = x.layout().shape().clone();
    let values =
        x.as_slice::<f32>().expect("contiguous f32 tensor")[..shape.num_elements()].to_vec();
    FlexTensor::new(
        Bytes::from_elems(values),
        Layout::contiguous(shape),
        DType::F32,
    )
}

/// The values of a tensor made by [`owned_f32`], writable.
fn f32_values_mut(x: &mut FlexTensor) -> &mut [f32] {
    let n = x.layout().shape().num_elements();
    &mut x
        .try_storage_mut::<f32>()
        .expect("owned_f32 owns its buffer")[..n]
}

/// `f` of every element of an f32 tensor, in one pass: in place when the tensor is the only owner of its
/// buffer, else into a new one.
fn map_f32(x: FlexTensor, f: impl Fn(f32) -> f32 + Sync + Send) -> FlexTensor {
    let mut x = contiguous(x);
    let shape = x.layout().shape().clone();
    let n = shape.num_elements();
    if let Some(values) = x.try_storage_mut::<f32>() {
        for_each_chunk(&mut values[..n], |_, chunk| map_chunk(chunk, None, &f));
        return x;
    }
    let src = x.as_slice::<f32>().expect("contiguous f32 tensor");
    let mut out = vec![0.0f32; n];
    for_each_chunk(&mut out, |start, chunk| {
        map_chunk(chunk, Some(&src[start..start + chunk.len()]), &f);
    });
    FlexTensor::new(
        Bytes::from_elems(out),
        Layout::contiguous(shape),
        DType::F32,
    )
}

/// `f(block of x, the same block of other)` over blocks of `block` elements (on rayon's threads
/// natively), `f` writing the result into x's block: in place when the tensor is the only owner
/// of its buffer, else into a copy. `other` has x's number of elements.
fn map_f32_blocks(
    x: FlexTensor,
    other: &[f32],
    block: usize,
    f: impl Fn(&mut [f32], &[f32]) + Sync + Send,
) -> FlexTensor {
    let mut x = owned_f32(x);
    let values = f32_values_mut(&mut x);
    debug_assert_eq!(other.len(), values.len());
    for_each_block(values, block, |start, chunk| {
        f(chunk, &other[start..start + chunk.len()])
    });
    x
}

#[inline(always)]
fn map_chunk_plain(out: &mut [f32], src: Option<&[f32]>, f: &impl Fn(f32) -> f32) {
    match src {
        Some(src) => {
            for (o, &v) in out.iter_mut().zip(src) {
                *o = f(v);
            }
        }
        None => {
            for v in out.iter_mut() {
                *v = f(*v);
            }
        }
    }
}

widest_lanes! {
    /// `out[i] = f(src[i])` (`src` defaults to `out` itself), in the CPU's widest vectors
    /// ([`Lanes`]): 16 or 8 lanes where the CPU has them, 4 in the baseline build.
    fn map_chunk, map_chunk_avx512, map_chunk_avx2
        = map_chunk_plain(out: &mut [f32], src: Option<&[f32]>, f: &impl Fn(f32) -> f32)
}

#[inline(always)]
fn gelu_backward_chunk_plain(grad: &mut [f32], x: &[f32]) {
    for (g, &x) in grad.iter_mut().zip(x) {
        *g *= gelu_derivative(x);
    }
}

widest_lanes! {
    /// `grad[i] *= GELU'(x[i])` (in the CPU's widest vectors: [`Lanes`]). A loop over two
    /// zipped slices: indexing `x` from a closure, as this once did, kept the compiler from
    /// vectorising it (one call per element, 7% of a training step on an AVX2 CPU).
    fn gelu_backward_chunk, gelu_backward_chunk_avx512, gelu_backward_chunk_avx2
        = gelu_backward_chunk_plain(grad: &mut [f32], x: &[f32])
}

/// Lanes of the running sums: one per lane of the widest vector.
const LANES: usize = 16;

/// `Σ f(a[i], b[i], c[i])` in [`LANES`] running sums added in a fixed order at the end, then
/// the tail's own sum: the compiler vectorises it (one running sum is a chain it may not
/// reorder; a tail added into the lanes by index kept the lanes in memory and the loop
/// scalar), and every vector width gives the same bits. The one lane-sum loop of the kernels.
#[inline(always)]
fn lane_sum(a: &[f32], b: &[f32], c: &[f32], f: impl Fn(f32, f32, f32) -> f32) -> f32 {
    let mut sums = [0.0f32; LANES];
    let (a, a_tail) = a.as_chunks::<LANES>();
    let (b, b_tail) = b.as_chunks::<LANES>();
    let (c, c_tail) = c.as_chunks::<LANES>();
    for ((a, b), c) in a.iter().zip(b).zip(c) {
        for lane in 0..LANES {
            sums[lane] += f(a[lane], b[lane], c[lane]);
        }
    }
    let mut tail = 0.0f32;
    for ((a, b), c) in a_tail.iter().zip(b_tail).zip(c_tail) {
        tail += f(*a, *b, *c);
    }
    sums.iter().sum::<f32>() + tail
}

/// The sum of `values` ([`lane_sum`]).
#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    lane_sum(values, values, values, |v, _, _| v)
}

/// `sum(a * b)` ([`lane_sum`]).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    lane_sum(a, b, b, |a, b, _| a * b)
}

/// The widest vectors the x86-64 CPU has, detected once: the kernels' loops are compiled for
/// each and the widest runs. The copies compute the same values bit for bit: the loops use
/// `+ * /` and min/max only (no `mul_add`), which FMA cannot contract without fast-math.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lanes {
    /// 16 f32 lanes (AVX-512 F).
    Avx512,
    /// 8 f32 lanes (AVX2 and FMA: Zen 1-3, Intel from Haswell without AVX-512).
    Avx2,
    /// 4 f32 lanes (SSE2, every x86-64 CPU).
    Baseline,
}

#[cfg(target_arch = "x86_64")]
impl Lanes {
    fn detect() -> Lanes {
        static LANES: std::sync::OnceLock<Lanes> = std::sync::OnceLock::new();
        *LANES.get_or_init(|| {
            if std::arch::is_x86_feature_detected!("avx512f") {
                Lanes::Avx512
            } else if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                Lanes::Avx2
            } else {
                Lanes::Baseline
            }
        })
    }
}

/// Elements per task: large enough that a task outweighs rayon's scheduling, small enough that
/// both cores get work on one layer's activations (a few hundred thousand elements).
const CHUNK: usize = 1 << 14;

/// Runs `f(offset, chunk)` over `values` in chunks of [`CHUNK`], on rayon's threads natively.
fn for_each_chunk(values: &mut [f32], f: impl Fn(usize, &mut [f32]) + Sync + Send) {
    for_each_block(values, CHUNK, f)
}

/// Runs `f(offset, block)` over `values` in blocks of `block` elements, on rayon's threads
/// natively.
fn for_each_block(values: &mut [f32], block: usize, f: impl Fn(usize, &mut [f32]) + Sync + Send) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        values
            .par_chunks_mut(block)
            .enumerate()
            .for_each(|(i, chunk)| f(i * block, chunk));
    }
    #[cfg(target_arch = "wasm32")]
    for (i, chunk) in values.chunks_mut(block).enumerate() {
        f(i * block, chunk);
    }
}

/// `x Φ(x) = x (1 + erf(x / √2)) / 2`.
#[inline(always)]
pub fn gelu_scalar(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `GELU'(x) = Φ(x) + x φ(x)`.
#[inline(always)]
pub fn gelu_derivative(x: f32) -> f32 {
    /// `1 / √(2π)`.
    const INV_SQRT_2PI: f32 = 0.398_942_3;
    let cdf = 0.5 * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
    cdf + x * INV_SQRT_2PI * exp(-0.5 * x * x)
}

/// The error function: a rational approximation on [-4, 4] (Eigen's `generic_fast_erf_float`,
/// as in TensorFlow and XLA); outside, erf is ±1 to f32 precision.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = ALPHA[0];
    for a in &ALPHA[1..] {
        p = p * x2 + a;
    }
    let mut q = BETA[0];
    for b in &BETA[1..] {
        q = q * x2 + b;
    }
    x * p / q
}

/// `e^x`: Cody-Waite reduction to `2^k e^r` with |r| <= ln2/2 and a degree-6 polynomial; the
/// rounding of `k` and the power of two are bit operations, so the loop vectorises.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    /// 1.5 * 2^23: adding it rounds a float of magnitude < 2^22 to an integer in the mantissa.
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let k = shifted - ROUND;
    let k_int = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = x - k * LN2_HI - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * f32::from_bits(((k_int + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points over the range GELU sees in BERT (and past it), dense near zero.
    fn points() -> impl Iterator<Item = f32> {
        (-200_000..=200_000).map(|i| i as f32 * 1e-4)
    }

    #[test]
    fn erf_is_within_5e_7_of_the_exact_function() {
        let worst = points()
            .map(|x| (erf(x) as f64 - libm_erf(x as f64)).abs())
            .fold(0.0, f64::max);
        assert!(worst < 5e-7, "max |erf - exact| = {worst:e}");
        assert_eq!(erf(f32::INFINITY), erf(4.0));
        assert!(erf(4.0) > 0.999_999);
        assert!(erf(f32::NAN).is_nan());
    }

    #[test]
    fn exp_is_within_3_ulp_over_its_range() {
        for x in (-8_700..=8_800).map(|i| i as f32 * 0.01) {
            let got = exp(x);
            let want = (x as f64).exp();
            let ulp = (want as f32).to_bits().abs_diff(got.to_bits());
            assert!(ulp <= 3, "exp({x}) = {got}, want {want} ({ulp} ulp)");
        }
        assert_eq!(exp(-1000.0), exp(-87.0));
    }

    #[test]
    fn gelu_and_its_derivative_match_the_erf_definition() {
        for x in points().step_by(37) {
            let xd = x as f64;
            let want = 0.5 * xd * (1.0 + libm_erf(xd / std::f64::consts::SQRT_2));
            assert!((gelu_scalar(x) as f64 - want).abs() < 1e-6 * (1.0 + xd.abs()));
            let pdf = (-0.5 * xd * xd).exp() / (2.0 * std::f64::consts::PI).sqrt();
            let d = 0.5 * (1.0 + libm_erf(xd / std::f64::consts::SQRT_2)) + xd * pdf;
            assert!((gelu_derivative(x) as f64 - d).abs() < 1e-6, "GELU'({x})");
        }
    }

    /// Every vector width the CPU has computes GELU and its backward pass bit for bit as the
    /// baseline loop does (the widths run on whichever CPU runs the tests; the softmax's are
    /// checked in `softmax.rs`, the layer norm's in `layer_norm.rs`).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_vector_width_gives_the_baseline_bits() {
        let xs: Vec<f32> = points().step_by(101).collect();
        let grads: Vec<f32> = xs.iter().rev().map(|g| g * 0.3).collect();
        let gelu = |x: f32| gelu_scalar(x);
        let run = |lanes: Lanes| {
            let (mut g, mut d) = (vec![0.0; xs.len()], grads.clone());
            // SAFETY: each width runs only where detected (below).
            unsafe {
                match lanes {
                    Lanes::Avx512 => {
                        map_chunk_avx512(&mut g, Some(&xs), &gelu);
                        gelu_backward_chunk_avx512(&mut d, &xs);
                    }
                    Lanes::Avx2 => {
                        map_chunk_avx2(&mut g, Some(&xs), &gelu);
                        gelu_backward_chunk_avx2(&mut d, &xs);
                    }
                    Lanes::Baseline => {
                        map_chunk_plain(&mut g, Some(&xs), &gelu);
                        gelu_backward_chunk_plain(&mut d, &xs);
                    }
                }
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            (bits(&g), bits(&d))
        };
        let baseline = run(Lanes::Baseline);
        let mut widths = vec![];
        if std::arch::is_x86_feature_detected!("avx512f") {
            widths.push(Lanes::Avx512);
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            widths.push(Lanes::Avx2);
        }
        println!("vector widths checked against the baseline: {widths:?}");
        for lanes in widths {
            assert!(
                run(lanes) == baseline,
                "{lanes:?} differs from the baseline"
            );
        }
    }

    /// erf in f64 to 1e-16 (series near 0, continued fraction of erfc beyond), as the reference.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        let v = if a < 2.5 {
            // Maclaurin series: erf(a) = 2/√π Σ (-1)^n a^(2n+1) / (n! (2n+1)).
            let mut term = a;
            let mut sum = a;
            let mut n = 0.0;
            while term.abs() > 1e-18 {
                n += 1.0;
                term *= -a * a / n;
                sum += term / (2.0 * n + 1.0);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc(a) = e^(-a²)/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...)))), Lentz-free.
            let mut f = a;
            for k in (1..60).rev() {
                f = a + (k as f64 / 2.0) / f;
            }
            1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
        };
        v.copysign(x)
    }
}
