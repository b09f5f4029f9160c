//! Matrix products on the CPU backend, written straight into their output.
//!
//! burn-flex computes a product with the `gemm` crate into a tensor made by `FlexTensor::empty`,
//! which zero-fills a byte vector and then, because a byte vector's alignment is 1, copies it
//! into a 16-byte-aligned buffer (cubecl's `Bytes::from_bytes_vec`): two passes over memory
//! that the product then overwrites (it never reads its output). The encoder's products are
//! large (the attention scores are `[texts, heads, length, length]`, 60 MB a layer for 32
//! passages of 200 tokens, and their gradients as large), and the passes run on the calling
//! thread while rayon's workers wait: a profile of the recipe's training step put 42% of the
//! main thread's time, a tenth of all the CPU time, in that `memset` and `memcpy`
//! (BENCHMARKS.md, "Training throughput").
//!
//! [`matmul`] makes the same `gemm` calls as burn-flex (sizes, strides, broadcasting, the
//! thresholds that decide how rayon's threads share the work), so its results are burn-flex's
//! to the bit, into an f32 buffer left uninitialised until `gemm` writes every element of it.

use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::DType;
use burn::tensor::{Bytes, Shape};

/// Products of at least this many multiply-adds (M·N·K) run on rayon's threads inside `gemm`
/// (burn-flex's `PARALLEL_THRESHOLD`).
const PARALLEL_THRESHOLD: usize = 192 * 192 * 192;

/// A batch of products with at least this many multiply-adds in all shares its matrices among
/// rayon's threads when they are small (burn-flex's `BATCH_PARALLEL_THRESHOLD`).
const BATCH_PARALLEL_THRESHOLD: usize = 128 * 128 * 128;

/// `lhs · rhs` over the last two dimensions, the leading (batch) dimensions broadcast, for f32
/// tensors of any strides; `None` when the operands are not both f32 with matching inner sizes
/// and broadcastable batches, or when the product has no terms (K = 0), which burn-flex handles.
pub fn matmul(lhs: &FlexTensor, rhs: &FlexTensor) -> Option<FlexTensor> {
    let plan = Plan::of(lhs, rhs)?;
    let len = plan.batch * plan.m * plan.n;
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let target = &mut out.spare_capacity_mut()[..len];
    let lhs_data: &[f32] = lhs.storage();
    let rhs_data: &[f32] = rhs.storage();
    plan.run(lhs_data, rhs_data, target);
    // SAFETY: `Plan::run` called `gemm` once for every matrix of the output, each writing all
    // of its M·N elements (`read_dst` false, K > 0), so the first `len` elements are written.
    unsafe { out.set_len(len) };
    let mut dims = plan.batch_shape;
    dims.extend([plan.m, plan.n]);
    Some(FlexTensor::new(
        Bytes::from_elems(out),
        Layout::contiguous(Shape::from(dims)),
        DType::F32,
    ))
}

/// One product's sizes and the element offset of each operand's matrices.
struct Plan {
    m: usize,
    k: usize,
    n: usize,
    /// Matrices in the output (the broadcast batch's size).
    batch: usize,
    /// The broadcast batch dimensions (the output's leading dimensions).
    batch_shape: Vec<usize>,
    lhs: Operand,
    rhs: Operand,
}

/// Where one operand's matrices lie in its storage.
struct Operand {
    start: isize,
    /// Per broadcast batch dimension (0 where the operand is broadcast).
    batch_strides: Vec<isize>,
    row_stride: isize,
    col_stride: isize,
}

impl Operand {
    fn new(layout: &Layout, broadcast_len: usize) -> Self {
        let shape = layout.shape();
        let strides = layout.strides();
        let rank = shape.num_dims();
        let own = rank - 2;
        let batch_strides = (0..broadcast_len)
            .map(|i| match (i + own).checked_sub(broadcast_len) {
                Some(d) if shape[d] > 1 => strides[d],
                _ => 0,
            })
            .collect();
        Operand {
            start: layout.start_offset() as isize,
            batch_strides,
            row_stride: strides[rank - 2],
            col_stride: strides[rank - 1],
        }
    }

    /// Element offset of matrix `b` of the broadcast batch.
    fn offset(&self, b: usize, batch_shape: &[usize]) -> isize {
        let mut offset = self.start;
        let mut rest = b;
        for (&size, &stride) in batch_shape.iter().zip(&self.batch_strides).rev() {
            offset += (rest % size) as isize * stride;
            rest /= size;
        }
        offset
    }
}

impl Plan {
    fn of(lhs: &FlexTensor, rhs: &FlexTensor) -> Option<Plan> {
        if lhs.dtype() != DType::F32 || rhs.dtype() != DType::F32 {
            return None;
        }
        let (ls, rs) = (lhs.layout().shape(), rhs.layout().shape());
        let (lr, rr) = (ls.num_dims(), rs.num_dims());
        if lr < 2 || rr < 2 || ls[lr - 1] != rs[rr - 2] || ls[lr - 1] == 0 {
            return None;
        }
        let batch_shape = broadcast(&ls.as_slice()[..lr - 2], &rs.as_slice()[..rr - 2])?;
        Some(Plan {
            m: ls[lr - 2],
            k: ls[lr - 1],
            n: rs[rr - 1],
            batch: batch_shape.iter().product(),
            lhs: Operand::new(lhs.layout(), batch_shape.len()),
            rhs: Operand::new(rhs.layout(), batch_shape.len()),
            batch_shape,
        })
    }

    /// Every matrix of the output into `out` (`batch` blocks of M·N), threaded as burn-flex
    /// threads it: large matrices inside `gemm`, a large batch of small ones across matrices.
    fn run(&self, lhs: &[f32], rhs: &[f32], out: &mut [std::mem::MaybeUninit<f32>]) {
        let size = self.m * self.n;
        if size == 0 {
            return;
        }
        let per_matrix = self.m.saturating_mul(self.n).saturating_mul(self.k);
        let total = self.batch.saturating_mul(per_matrix);
        let batch_parallel = self.batch >= 4 && total >= BATCH_PARALLEL_THRESHOLD;
        let one = |b: usize, dst: &mut [std::mem::MaybeUninit<f32>], threads| {
            self.gemm(lhs, rhs, b, dst, threads)
        };
        if per_matrix >= PARALLEL_THRESHOLD && !batch_parallel {
            for (b, dst) in out.chunks_mut(size).enumerate() {
                one(b, dst, gemm::Parallelism::Rayon(0));
            }
        } else if total >= BATCH_PARALLEL_THRESHOLD && self.batch > 1 {
            use rayon::prelude::*;
            out.par_chunks_mut(size)
                .enumerate()
                .for_each(|(b, dst)| one(b, dst, gemm::Parallelism::None));
        } else {
            for (b, dst) in out.chunks_mut(size).enumerate() {
                one(b, dst, gemm::Parallelism::None);
            }
        }
    }

    /// Matrix `b` of the output into `dst` (M·N elements, row-major).
    fn gemm(
        &self,
        lhs: &[f32],
        rhs: &[f32],
        b: usize,
        dst: &mut [std::mem::MaybeUninit<f32>],
        threads: gemm::Parallelism,
    ) {
        debug_assert_eq!(dst.len(), self.m * self.n);
        let (l, r) = (&self.lhs, &self.rhs);
        // SAFETY: the offsets and strides are the operands' own layouts (start offset, batch
        // strides of the broadcast batch, row and column strides), so every element `gemm`
        // reads lies inside `lhs` and `rhs`; `dst` holds exactly M·N elements, written
        // row-major (column stride 1, row stride N) without being read (`read_dst` false).
        unsafe {
            gemm::gemm(
                self.m,
                self.n,
                self.k,
                dst.as_mut_ptr().cast::<f32>(),
                1,
                self.n as isize,
                false,
                lhs.as_ptr().offset(l.offset(b, &self.batch_shape)),
                l.col_stride,
                l.row_stride,
                rhs.as_ptr().offset(r.offset(b, &self.batch_shape)),
                r.col_stride,
                r.row_stride,
                0.0,
                1.0,
                false,
                false,
                false,
                threads,
            );
        }
    }
}

/// The broadcast of two batch shapes (the shorter padded with 1s on the left), `None` when
/// they do not broadcast.
fn broadcast(lhs: &[usize], rhs: &[usize]) -> Option<Vec<usize>> {
    let len = lhs.len().max(rhs.len());
    let padded = |s: &[usize], i: usize| (i + s.len()).checked_sub(len).map_or(1, |d| s[d]);
    (0..len)
        .map(|i| match (padded(lhs, i), padded(rhs, i)) {
            (a, b) if a == b || b == 1 => Some(a),
            (1, b) => Some(b),
            _ => None,
        })
        .collect()
}
