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
use burn::backend::DType;
use burn::tensor::Bytes;

use super::{contiguous, f32_values_mut, owned_f32, CHUNK};

/// Lanes of the running sums: one per lane of the widest vector, added up in a fixed order.
const LANES: usize = 16;

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

/// `Σ f(a[i], b[i], c[i])` in [`LANES`] running sums added in a fixed order at the end, then
/// the tail's own sum: the compiler vectorises it (one running sum is a chain it may not
/// reorder), and every vector width gives the same bits.
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
