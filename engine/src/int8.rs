//! 8-bit matrix products for the CPU encoder: `y = x Wᵀ + b` with W stored as int8 (one scale
//! per output row) and `x` quantised to 8 bits per row on the fly, multiplied in integers and
//! scaled back to f32 in one pass.
//!
//! Why: two thirds of the CPU encoder's time is its dense layers (BENCHMARKS.md), and a CPU with
//! AVX-512 VNNI multiplies four 8-bit pairs per 32-bit lane in one instruction (`vpdpbusd`),
//! four times the lanes of an f32 FMA. ONNX Runtime's dynamic quantisation runs the same scheme.
//! Without VNNI, AVX2 multiplies 16-bit pairs (`vpmaddwd`): twice an f32 FMA's lanes, at half
//! the instruction rate on some cores, so the gain there is smaller (BENCHMARKS.md).
//!
//! The scheme ([`QuantizedLinear`]):
//! - weights: symmetric int8 per output row, `w = q_w · s_w[n]`, `s_w = max|w| / 127` (the
//!   export's int8 format, [`quantize_rows`]);
//! - activations: symmetric int8 per input row, `x = q_x · s_x[m]`, `s_x = max|x| / 127`, stored
//!   as `q_x + 128` in a `u8` (VNNI multiplies unsigned by signed bytes); the `128 Σ_k q_w` that
//!   the offset adds is subtracted once per output column;
//! - `y[m, n] = s_x[m] s_w[n] Σ_k q_x[m, k] q_w[n, k] + b[n]`, the sum exact in `i32` (at most
//!   `255 · 127 · K`, far from overflow for any BERT width).
//!
//! The integer sum is exact, so every kernel computes the same `i32` for the same inputs: the
//! AVX-512 VNNI kernel and the AVX2 one (chosen at run time, so the binary runs on any x86-64)
//! and the portable one (every other CPU; wasm32 has its own SIMD kernel) are tested against
//! each other and against the plain f64 product of the dequantised values. The error against f32 weights is the quantisation's own:
//! the encoder's tests bound the cosine to the f32 embeddings and BENCHMARKS.md the nDCG@10.

/// Output columns per packed panel: 4 vectors of 16 `i32` lanes.
const PANEL: usize = 64;
/// Rows per micro-tile (the quantised activations are padded to a multiple of it).
const TILE_ROWS: usize = 6;
/// Rows per parallel task: a few tiles, so both cores share even a query's short batch.
const TASK_ROWS: usize = 4 * TILE_ROWS;

/// Symmetric int8 per row of `width` values: `q = round(v / s)` with `s = max|v| / 127` (1 for
/// an all-zero row), so `q * s` is within `s / 2` of `v`.
pub fn quantize_rows(values: &[f32], width: usize) -> (Vec<i8>, Vec<f32>) {
    let mut quantized = Vec::with_capacity(values.len());
    let mut scales = Vec::with_capacity(values.len() / width.max(1));
    for row in values.chunks(width) {
        let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        scales.push(scale);
        quantized.extend(
            row.iter()
                .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8),
        );
    }
    (quantized, scales)
}

/// A dense layer with int8 weights, packed for the kernels.
#[derive(Clone)]
pub struct QuantizedLinear {
    /// Input width K.
    d_in: usize,
    /// Output width N.
    d_out: usize,
    /// K rounded up to a multiple of 4 (one VNNI group).
    k_groups: usize,
    /// Weights in panels of [`PANEL`] output columns: for panel `p`, group `g` (inputs
    /// `4g..4g+4`) and column `j`, the four bytes at `((p · k_groups + g) · PANEL + j) · 4`.
    /// Columns past N and inputs past K are zero.
    packed: Vec<i8>,
    /// `s_w[n]`.
    scales: Vec<f32>,
    /// `128 Σ_k q_w[n, k]`: what the `+128` offset of the activations adds to column n.
    offsets: Vec<i32>,
    /// `b[n]` (zeros when the layer has none).
    bias: Vec<f32>,
    /// The weights as 16-bit pairs for the WebAssembly SIMD kernel ([`simd128::Packed`]).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    packed16: simd128::Packed,
}

impl std::fmt::Debug for QuantizedLinear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuantizedLinear")
            .field("d_in", &self.d_in)
            .field("d_out", &self.d_out)
            .finish()
    }
}

impl QuantizedLinear {
    /// From f32 weights `[d_out, d_in]` (row n = output n, the Hugging Face layout),
    /// quantised per row.
    pub fn from_f32(weights: &[f32], d_out: usize, d_in: usize, bias: Option<&[f32]>) -> Self {
        assert_eq!(weights.len(), d_out * d_in, "weights are d_out x d_in");
        let (q, scales) = quantize_rows(weights, d_in);
        Self::from_int8(&q, &scales, d_out, d_in, bias)
    }

    /// From int8 weights `[d_out, d_in]` and their row scales.
    pub fn from_int8(
        q: &[i8],
        scales: &[f32],
        d_out: usize,
        d_in: usize,
        bias: Option<&[f32]>,
    ) -> Self {
        assert_eq!(q.len(), d_out * d_in, "weights are d_out x d_in");
        assert_eq!(scales.len(), d_out, "one scale per output row");
        let k_groups = d_in.div_ceil(4);
        let panels = d_out.div_ceil(PANEL);
        let mut packed = vec![0i8; panels * k_groups * PANEL * 4];
        for n in 0..d_out {
            let (p, j) = (n / PANEL, n % PANEL);
            for (k, &w) in q[n * d_in..(n + 1) * d_in].iter().enumerate() {
                packed[((p * k_groups + k / 4) * PANEL + j) * 4 + k % 4] = w;
            }
        }
        let offsets = (0..d_out)
            .map(|n| {
                128 * q[n * d_in..(n + 1) * d_in]
                    .iter()
                    .map(|&w| w as i32)
                    .sum::<i32>()
            })
            .collect();
        let bias = match bias {
            Some(b) => {
                assert_eq!(b.len(), d_out, "one bias per output");
                b.to_vec()
            }
            None => vec![0.0; d_out],
        };
        QuantizedLinear {
            d_in,
            d_out,
            k_groups,
            packed,
            scales: scales.to_vec(),
            offsets,
            bias,
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            packed16: simd128::Packed::new(q, d_out, d_in),
        }
    }

    /// Input width.
    pub fn d_in(&self) -> usize {
        self.d_in
    }

    /// Output width.
    pub fn d_out(&self) -> usize {
        self.d_out
    }

    /// `y = x Wᵀ + b` for `x` of `rows x d_in` (row-major): `rows x d_out`.
    pub fn forward(&self, x: &[f32], rows: usize) -> Vec<f32> {
        self.forward_with(x, rows, Kernel::detect())
    }

    /// [`QuantizedLinear::forward`] with a chosen kernel (the tests run each).
    ///
    /// # Panics
    /// If this CPU cannot run `kernel` ([`Kernel::available`]).
    pub fn forward_with(&self, x: &[f32], rows: usize, kernel: Kernel) -> Vec<f32> {
        assert_eq!(x.len(), rows * self.d_in, "x is rows x d_in");
        assert!(
            kernel.available(),
            "the {kernel:?} kernel needs a CPU feature this one lacks"
        );
        let (d_in, k_groups) = (self.d_in, self.k_groups);
        match kernel {
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => simd128::forward(&self.packed16, &self.scales, &self.bias, x, rows),
            // SAFETY (both x86 arms): the kernel's CPU features were checked above.
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni => {
                let a = QuantizedRows::new(x, rows, d_in, k_groups, |row, out| unsafe {
                    vnni::quantize_row(row, out)
                });
                self.products(&a, |block, out, stride| unsafe {
                    vnni::block(block, out, stride)
                })
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                let a = QuantizedRows::new(x, rows, d_in, k_groups, |row, out| unsafe {
                    avx2::quantize_row(row, out)
                });
                self.products(&a, |block, out, stride| unsafe {
                    avx2::block(block, out, stride)
                })
            }
            _ => {
                let a = QuantizedRows::new(x, rows, d_in, k_groups, quantize_row);
                self.products(&a, portable_block)
            }
        }
    }

    /// Every row tile of the quantised activations `a` against every panel, each by `kernel`,
    /// in parallel tasks of [`TASK_ROWS`] rows.
    fn products<T: Sync>(
        &self,
        a: &QuantizedRows<T>,
        kernel: impl Fn(&Block<T>, &mut [f32], usize) + Sync,
    ) -> Vec<f32> {
        // Every element is written below (each tile writes all its rows' columns).
        let mut y = vec![0.0f32; a.scales.len() * self.d_out];
        for_each_task(&mut y, TASK_ROWS * self.d_out, |task, out| {
            let first = task * TASK_ROWS;
            let count = out.len() / self.d_out;
            for tile in (0..count).step_by(TILE_ROWS) {
                let out = &mut out[tile * self.d_out..];
                let rows_here = (count - tile).min(TILE_ROWS);
                self.tile(a, first + tile, rows_here, out, &kernel);
            }
        });
        y
    }

    /// Rows `first..first + rows` (at most [`TILE_ROWS`]) of the output, every panel.
    fn tile<T>(
        &self,
        a: &QuantizedRows<T>,
        first: usize,
        rows: usize,
        out: &mut [f32],
        kernel: &impl Fn(&Block<T>, &mut [f32], usize),
    ) {
        for panel in 0..self.d_out.div_ceil(PANEL) {
            let n0 = panel * PANEL;
            let block = Block {
                a: a.tile(first),
                stride: a.stride,
                weights: &self.packed[n0 * self.k_groups * 4..][..self.k_groups * PANEL * 4],
                k_groups: self.k_groups,
                row_scales: &a.scales[first..first + rows],
                col_scales: &self.scales[n0..],
                offsets: &self.offsets[n0..],
                bias: &self.bias[n0..],
                width: (self.d_out - n0).min(PANEL),
            };
            kernel(&block, &mut out[n0..], self.d_out);
        }
    }
}

/// One micro-tile's work: [`TILE_ROWS`] rows of quantised activations (the first
/// `row_scales.len()` real; `q + 128` as bytes or as 16-bit integers) against one panel of
/// weights (the first `width` columns real).
struct Block<'a, T> {
    a: &'a [T],
    stride: usize,
    weights: &'a [i8],
    k_groups: usize,
    row_scales: &'a [f32],
    col_scales: &'a [f32],
    offsets: &'a [i32],
    bias: &'a [f32],
    width: usize,
}

#[cfg(target_arch = "x86_64")]
impl<T> Block<'_, T> {
    /// What the x86 SIMD kernels read and write unchecked: [`TILE_ROWS`] rows of activations, a
    /// whole panel of weights, and `width` columns of every real row of `out`.
    fn assert_in_bounds(&self, out: &[f32], out_stride: usize) {
        assert!(self.a.len() >= (TILE_ROWS - 1) * self.stride + self.k_groups * 4);
        assert!(self.weights.len() >= self.k_groups * PANEL * 4);
        assert!(self.row_scales.len() <= TILE_ROWS && self.width <= PANEL);
        assert!(self.col_scales.len() >= self.width && self.offsets.len() >= self.width);
        assert!(self.bias.len() >= self.width);
        let rows = self.row_scales.len();
        assert!(rows == 0 || out.len() >= (rows - 1) * out_stride + self.width);
    }
}

/// `out[r · out_stride + j] = (Σ_k a[r][k] w[j][k] - offset[j]) s_x[r] s_w[j] + b[j]`, in
/// plain loops.
fn portable_block(b: &Block<u8>, out: &mut [f32], out_stride: usize) {
    for (r, &row_scale) in b.row_scales.iter().enumerate() {
        let mut sums = [0i32; PANEL];
        let a = &b.a[r * b.stride..];
        for g in 0..b.k_groups {
            let x = &a[g * 4..g * 4 + 4];
            let w = &b.weights[g * PANEL * 4..(g + 1) * PANEL * 4];
            for (j, s) in sums.iter_mut().enumerate() {
                let w = &w[j * 4..j * 4 + 4];
                *s += (0..4).map(|i| x[i] as i32 * w[i] as i32).sum::<i32>();
            }
        }
        let out = &mut out[r * out_stride..][..b.width];
        for (j, o) in out.iter_mut().enumerate() {
            *o = (sums[j] - b.offsets[j]) as f32 * (row_scale * b.col_scales[j]) + b.bias[j];
        }
    }
}

/// Which integer kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust loops (any CPU, wasm32).
    Portable,
    /// AVX-512 VNNI (`vpdpbusd`), x86-64 CPUs that have it.
    Vnni,
    /// AVX2 (`vpmaddwd` on 16-bit pairs): every other x86-64 CPU of the last decade.
    Avx2,
    /// WebAssembly SIMD (`i32x4.dot_i16x8_s`): wasm32 built with `+simd128`, as the page is.
    Simd128,
}

impl Kernel {
    /// The fastest kernel this CPU runs (checked once).
    pub fn detect() -> Kernel {
        static KERNEL: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *KERNEL.get_or_init(|| {
            if Kernel::Vnni.available() {
                Kernel::Vnni
            } else if Kernel::Avx2.available() {
                Kernel::Avx2
            } else if Kernel::Simd128.available() {
                Kernel::Simd128
            } else {
                Kernel::Portable
            }
        })
    }

    /// Whether this CPU can run the kernel.
    pub fn available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Vnni | Kernel::Avx2 => false,
            Kernel::Simd128 => cfg!(all(target_arch = "wasm32", target_feature = "simd128")),
        }
    }
}

/// Activations quantised per row: `q_x + 128` as bytes (`T = u8`) or as 16-bit integers (`T =
/// i16`, for kernels that widen before multiplying), rows padded to a multiple of [`TILE_ROWS`]
/// and to `k_groups · 4` values (padding is the quantised zero, 128).
struct QuantizedRows<T> {
    values: Vec<T>,
    stride: usize,
    scales: Vec<f32>,
}

impl<T: Copy + Send + Sync + From<u8>> QuantizedRows<T> {
    /// Each of the `rows` rows of `x` (`width` wide) by `quantize`, which writes a row's values
    /// and returns its scale.
    fn new(
        x: &[f32],
        rows: usize,
        width: usize,
        k_groups: usize,
        quantize: impl Fn(&[f32], &mut [T]) -> f32 + Sync + Send,
    ) -> Self {
        let stride = k_groups * 4;
        let padded = rows.div_ceil(TILE_ROWS) * TILE_ROWS;
        let mut values = vec![T::from(128); padded * stride];
        let mut scales = vec![0.0f32; rows];
        let quantize = |(row, (out, scale)): (&[f32], (&mut [T], &mut f32))| {
            *scale = quantize(row, out);
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            x.par_chunks_exact(width)
                .zip(
                    values
                        .par_chunks_exact_mut(stride)
                        .zip(scales.par_iter_mut()),
                )
                .with_min_len(TILE_ROWS)
                .for_each(quantize);
        }
        #[cfg(target_arch = "wasm32")]
        x.chunks_exact(width)
            .zip(values.chunks_exact_mut(stride).zip(scales.iter_mut()))
            .for_each(quantize);
        QuantizedRows {
            values,
            stride,
            scales,
        }
    }
}

impl<T> QuantizedRows<T> {
    /// The [`TILE_ROWS`] rows from `first` on.
    fn tile(&self, first: usize) -> &[T] {
        &self.values[first * self.stride..(first + TILE_ROWS) * self.stride]
    }
}

/// Quantises one row into `out` (`q + 128`, the first `row.len()` bytes); returns its scale.
fn quantize_row(row: &[f32], out: &mut [u8]) -> f32 {
    quantize_row_as(row, out, |q| (q + 128.0) as u8)
}

/// Quantises one row: `store(q)` of each value's integer `q` in [-127, 127] into `out`;
/// returns the row's scale. The one rule behind every kernel's activations.
#[inline(always)]
fn quantize_row_as<T>(row: &[f32], out: &mut [T], store: impl Fn(f32) -> T) -> f32 {
    let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inv = 1.0 / scale;
    for (b, &v) in out.iter_mut().zip(row) {
        *b = store(round_to_integer(v * inv));
    }
    scale
}

/// `v` (within ±127.5) rounded to the nearest integer, ties to even: adding 1.5 · 2²³ rounds in
/// the float unit, so the loop vectorises (`f32::round` is a libm call without SSE4.1).
#[inline(always)]
fn round_to_integer(v: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0;
    (v.clamp(-127.0, 127.0) + ROUND) - ROUND
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use super::{Block, PANEL, TILE_ROWS};
    use std::arch::x86_64::*;

    /// The AVX-512 form of [`super::quantize_row`] (the same bytes: both round half to even).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn quantize_row(row: &[f32], out: &mut [u8]) -> f32 {
        assert!(out.len() >= row.len());
        let chunks = row.chunks_exact(16);
        let tail = chunks.remainder();
        let mut max = _mm512_setzero_ps();
        for c in chunks.clone() {
            // SAFETY: 16 floats.
            let v = unsafe { _mm512_loadu_ps(c.as_ptr()) };
            max = _mm512_max_ps(max, _mm512_abs_ps(v));
        }
        let max = tail
            .iter()
            .fold(_mm512_reduce_max_ps(max), |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        let inv = 1.0 / scale;
        let (inv_v, lo, hi, offset) = (
            _mm512_set1_ps(inv),
            _mm512_set1_ps(-127.0),
            _mm512_set1_ps(127.0),
            _mm512_set1_epi32(128),
        );
        for (i, c) in chunks.enumerate() {
            // SAFETY: 16 floats in, 16 bytes out at 16 i.
            let v = unsafe { _mm512_loadu_ps(c.as_ptr()) };
            let v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v, inv_v), lo), hi);
            // Round to nearest, ties to even (the MXCSR default), as `round_to_integer`.
            let q = _mm512_add_epi32(_mm512_cvtps_epi32(v), offset);
            unsafe {
                _mm_storeu_si128(
                    out.as_mut_ptr().add(i * 16) as *mut _,
                    _mm512_cvtepi32_epi8(q),
                )
            };
        }
        let start = row.len() - tail.len();
        for (b, &v) in out[start..].iter_mut().zip(tail) {
            *b = (super::round_to_integer(v * inv) + 128.0) as u8;
        }
        scale
    }

    /// The VNNI form of [`super::portable_block`]: 6 rows x 64 columns in 24 registers; per
    /// group of four inputs, 4 weight loads, 6 broadcasts and 24 `vpdpbusd`; then the scaling,
    /// offset and bias in registers, stored with a mask past the last real column.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and VNNI.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub unsafe fn block(b: &Block<u8>, out: &mut [f32], out_stride: usize) {
        b.assert_in_bounds(out, out_stride);
        let mut acc = [[_mm512_setzero_si512(); 4]; TILE_ROWS];
        let a = b.a.as_ptr();
        let w = b.weights.as_ptr();
        for g in 0..b.k_groups {
            // SAFETY: in bounds by `assert_in_bounds`.
            let (wg, ag) = unsafe { (w.add(g * PANEL * 4), a.add(g * 4)) };
            let wv = unsafe {
                [
                    _mm512_loadu_si512(wg as *const _),
                    _mm512_loadu_si512(wg.add(64) as *const _),
                    _mm512_loadu_si512(wg.add(128) as *const _),
                    _mm512_loadu_si512(wg.add(192) as *const _),
                ]
            };
            for (r, acc) in acc.iter_mut().enumerate() {
                let x = unsafe { (ag.add(r * b.stride) as *const i32).read_unaligned() };
                let x = _mm512_set1_epi32(x);
                for (v, w) in acc.iter_mut().zip(wv) {
                    *v = _mm512_dpbusd_epi32(*v, x, w);
                }
            }
        }
        #[allow(clippy::needless_range_loop)] // `v` indexes the registers of every row
        for v in 0..4 {
            let j = v * 16;
            if j >= b.width {
                break;
            }
            let mask: __mmask16 = if b.width - j >= 16 {
                0xFFFF
            } else {
                (1u16 << (b.width - j)) - 1
            };
            // SAFETY: masked loads and stores touch only columns j..width, in bounds above.
            let (offsets, col_scales, bias) = unsafe {
                (
                    _mm512_maskz_loadu_epi32(mask, b.offsets.as_ptr().add(j)),
                    _mm512_maskz_loadu_ps(mask, b.col_scales.as_ptr().add(j)),
                    _mm512_maskz_loadu_ps(mask, b.bias.as_ptr().add(j)),
                )
            };
            for (r, &row_scale) in b.row_scales.iter().enumerate() {
                let sums = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][v], offsets));
                let scale = _mm512_mul_ps(col_scales, _mm512_set1_ps(row_scale));
                // Multiply, then add (no FMA): the same rounding as the portable kernel.
                let y = _mm512_add_ps(_mm512_mul_ps(sums, scale), bias);
                unsafe { _mm512_mask_storeu_ps(out.as_mut_ptr().add(r * out_stride + j), mask, y) };
            }
        }
    }
}

/// The AVX2 kernel, for x86-64 CPUs without AVX-512 VNNI. AVX2's 8-bit product
/// (`vpmaddubsw`) saturates its 16-bit pair sums (255 · 127 · 2 > 32767), so the integer sums
/// would not be exact; `vpmaddwd` multiplies 16-bit pairs into exact `i32` lanes instead: the
/// activations are widened once, when quantised, and the weights at load (`vpmovsxbw`), from
/// the same packed bytes as the VNNI kernel's.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Block, PANEL, TILE_ROWS};
    use std::arch::x86_64::*;

    /// Output columns per register block: 6 rows x 2 accumulators of 4 columns, 2 weight
    /// vectors and a broadcast, 15 of the 16 registers.
    const COLS: usize = 8;

    /// [`super::quantize_row`]'s values (`q + 128`) as 16-bit integers; the portable loop,
    /// compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn quantize_row(row: &[f32], out: &mut [i16]) -> f32 {
        super::quantize_row_as(row, out, |q| (q + 128.0) as i16)
    }

    /// The AVX2 form of [`super::portable_block`]: per block of 8 columns and group of four
    /// inputs, 2 weight loads widened to 16 bits, 6 broadcasts of a row's four inputs and 12
    /// `vpmaddwd` into 12 accumulators, each holding two partial sums per column; then the
    /// pairwise sums, scaling, offset and bias in registers.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn block(b: &Block<i16>, out: &mut [f32], out_stride: usize) {
        b.assert_in_bounds(out, out_stride);
        let (a, w) = (b.a.as_ptr(), b.weights.as_ptr());
        for c0 in (0..b.width).step_by(COLS) {
            let mut acc = [[_mm256_setzero_si256(); 2]; TILE_ROWS];
            for g in 0..b.k_groups {
                // SAFETY: columns c0..c0 + 8 of group g (c0 + 8 <= PANEL) are the 32 bytes at
                // (g · PANEL + c0) · 4, and each row's four inputs of the group the 8 bytes at
                // 4g: in bounds by `assert_in_bounds`.
                unsafe {
                    let wg = w.add((g * PANEL + c0) * 4);
                    let w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(wg as *const __m128i));
                    let w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(wg.add(16) as *const __m128i));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let x = (a.add(r * b.stride + g * 4) as *const i64).read_unaligned();
                        let x = _mm256_set1_epi64x(x);
                        acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(x, w0));
                        acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(x, w1));
                    }
                }
            }
            let width = (b.width - c0).min(COLS);
            let (mut offsets, mut col_scales, mut bias) =
                ([0i32; COLS], [0.0f32; COLS], [0.0f32; COLS]);
            offsets[..width].copy_from_slice(&b.offsets[c0..c0 + width]);
            col_scales[..width].copy_from_slice(&b.col_scales[c0..c0 + width]);
            bias[..width].copy_from_slice(&b.bias[c0..c0 + width]);
            // SAFETY: 8 values from arrays of 8.
            let (offsets, col_scales, bias) = unsafe {
                (
                    _mm256_loadu_si256(offsets.as_ptr() as *const __m256i),
                    _mm256_loadu_ps(col_scales.as_ptr()),
                    _mm256_loadu_ps(bias.as_ptr()),
                )
            };
            for (r, &row_scale) in b.row_scales.iter().enumerate() {
                // acc[r][0] holds [c0 c0 c1 c1 | c2 c2 c3 c3] (two partial sums a column),
                // acc[r][1] the same for c4-c7: the pairwise sums are [c0 c1 c4 c5 | c2 c3 c6
                // c7], put in order by moving 64-bit quarters (0, 2, 1, 3).
                let sums = _mm256_hadd_epi32(acc[r][0], acc[r][1]);
                let sums = _mm256_permute4x64_epi64::<0b11_01_10_00>(sums);
                let sums = _mm256_cvtepi32_ps(_mm256_sub_epi32(sums, offsets));
                let scale = _mm256_mul_ps(col_scales, _mm256_set1_ps(row_scale));
                // Multiply, then add (no FMA): the same rounding as the portable kernel.
                let y = _mm256_add_ps(_mm256_mul_ps(sums, scale), bias);
                let mut lanes = [0.0f32; COLS];
                // SAFETY: 8 floats into an array of 8.
                unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), y) };
                out[r * out_stride + c0..][..width].copy_from_slice(&lanes[..width]);
            }
        }
    }
}

/// The WebAssembly SIMD kernel. wasm's baseline SIMD has no 8-bit dot product (relaxed SIMD's
/// `i32x4.relaxed_dot_i8x16_i7x16_add_s` is not in every browser), but `i32x4.dot_i16x8_s`
/// multiplies eight 16-bit pairs and adds neighbours into four `i32` lanes: with the weights
/// widened to 16 bits once, at load, and laid out as input pairs per output column, one
/// instruction does 8 multiply-adds, twice the f32 kernel's 4 per `f32x4.mul` + `f32x4.add`.
/// The activations are the same symmetric 8-bit values as the other kernels', held in `i16`
/// (no `+128` offset: both operands are signed here), so the integer sums are identical.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use core::arch::wasm32::*;

    /// Output columns per panel: two vectors of four `i32` lanes.
    const COLS: usize = 8;
    /// Rows per register tile: 4 rows x 2 vectors = 8 accumulators, plus 2 weight vectors and
    /// one activation pair, within the 16 registers engines map wasm SIMD onto.
    const ROWS: usize = 4;
    /// Bytes of activations per block of rows: the block stays in the first-level cache while
    /// every panel of weights passes over it.
    const BLOCK_BYTES: usize = 16 * 1024;

    /// Weights for `i32x4.dot_i16x8_s`: for panel `p` ([`COLS`] output columns) and input pair
    /// `t` (inputs `2t`, `2t + 1`), 16 values `[c0 k0, c0 k1, c1 k0, c1 k1, ..., c7 k0, c7 k1]`
    /// at `(p · pairs + t) · 16`; zero past N and K.
    #[derive(Clone)]
    pub struct Packed {
        values: Vec<i16>,
        pairs: usize,
        d_in: usize,
        d_out: usize,
    }

    impl Packed {
        pub fn new(q: &[i8], d_out: usize, d_in: usize) -> Self {
            let pairs = d_in.div_ceil(2);
            let mut values = vec![0i16; d_out.div_ceil(COLS) * pairs * 2 * COLS];
            for n in 0..d_out {
                let (p, j) = (n / COLS, n % COLS);
                for (k, &w) in q[n * d_in..(n + 1) * d_in].iter().enumerate() {
                    values[((p * pairs + k / 2) * COLS + j) * 2 + k % 2] = w as i16;
                }
            }
            Packed {
                values,
                pairs,
                d_in,
                d_out,
            }
        }
    }

    /// `y = x Wᵀ + b` (as [`super::QuantizedLinear::forward_with`]).
    pub fn forward(w: &Packed, scales: &[f32], bias: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
        let stride = w.pairs * 2;
        let padded = rows.div_ceil(ROWS) * ROWS;
        // Padding rows and the odd input's pair partner are zeros.
        let mut a = vec![0i16; padded * stride];
        let mut row_scales = vec![0.0f32; padded];
        for ((row, out), s) in x
            .chunks_exact(w.d_in.max(1))
            .zip(a.chunks_exact_mut(stride.max(1)))
            .zip(row_scales.iter_mut())
        {
            *s = quantize_row(row, out);
        }
        let mut y = vec![0.0f32; rows * w.d_out];
        let panel_len = w.pairs * 2 * COLS;
        let block_rows = (BLOCK_BYTES / (2 * stride.max(1)) / ROWS).max(1) * ROWS;
        for block in (0..rows).step_by(block_rows) {
            let block_end = (block + block_rows).min(rows);
            for p in 0..w.d_out.div_ceil(COLS) {
                let n0 = p * COLS;
                let width = (w.d_out - n0).min(COLS);
                let panel = &w.values[p * panel_len..(p + 1) * panel_len];
                for r0 in (block..block_end).step_by(ROWS) {
                    let acc = tile(
                        &a[r0 * stride..(r0 + ROWS) * stride],
                        stride,
                        panel,
                        w.pairs,
                    );
                    for r in 0..ROWS.min(rows - r0) {
                        let out = &mut y[(r0 + r) * w.d_out + n0..][..width];
                        epilogue(
                            &acc[2 * r..2 * r + 2],
                            row_scales[r0 + r],
                            &scales[n0..],
                            &bias[n0..],
                            out,
                        );
                    }
                }
            }
        }
        y
    }

    /// The integer sums of [`ROWS`] rows of activations against one panel: for row `r`,
    /// `acc[2r]` holds columns 0-3 and `acc[2r + 1]` columns 4-7.
    #[inline(always)]
    fn tile(a: &[i16], stride: usize, panel: &[i16], pairs: usize) -> [v128; 2 * ROWS] {
        assert!(a.len() >= ROWS * stride && stride >= 2 * pairs);
        assert!(panel.len() >= pairs * 2 * COLS);
        let (w, a) = (panel.as_ptr(), a.as_ptr());
        let zero = i32x4_splat(0);
        let (mut c00, mut c01, mut c10, mut c11) = (zero, zero, zero, zero);
        let (mut c20, mut c21, mut c30, mut c31) = (zero, zero, zero, zero);
        for t in 0..pairs {
            // SAFETY: `t < pairs`: the panel holds 16 values per pair and every row `stride >=
            // 2 · pairs` values (asserted above); wasm loads need no alignment.
            unsafe {
                let w0 = v128_load(w.add(t * 16) as *const v128);
                let w1 = v128_load(w.add(t * 16 + 8) as *const v128);
                let x = v128_load32_splat(a.add(2 * t) as *const u32);
                c00 = i32x4_add(c00, i32x4_dot_i16x8(w0, x));
                c01 = i32x4_add(c01, i32x4_dot_i16x8(w1, x));
                let x = v128_load32_splat(a.add(stride + 2 * t) as *const u32);
                c10 = i32x4_add(c10, i32x4_dot_i16x8(w0, x));
                c11 = i32x4_add(c11, i32x4_dot_i16x8(w1, x));
                let x = v128_load32_splat(a.add(2 * stride + 2 * t) as *const u32);
                c20 = i32x4_add(c20, i32x4_dot_i16x8(w0, x));
                c21 = i32x4_add(c21, i32x4_dot_i16x8(w1, x));
                let x = v128_load32_splat(a.add(3 * stride + 2 * t) as *const u32);
                c30 = i32x4_add(c30, i32x4_dot_i16x8(w0, x));
                c31 = i32x4_add(c31, i32x4_dot_i16x8(w1, x));
            }
        }
        [c00, c01, c10, c11, c20, c21, c30, c31]
    }

    /// `out[j] = sum[j] · (s_x · s_w[j]) + b[j]`: the portable kernel's operations in its order.
    #[inline(always)]
    fn epilogue(acc: &[v128], row_scale: f32, col_scales: &[f32], bias: &[f32], out: &mut [f32]) {
        let mut scale = [0.0f32; COLS];
        let mut b = [0.0f32; COLS];
        scale[..out.len()].copy_from_slice(&col_scales[..out.len()]);
        b[..out.len()].copy_from_slice(&bias[..out.len()]);
        let mut y = [0.0f32; COLS];
        for (v, sums) in acc.iter().enumerate() {
            // SAFETY: four floats at `4v` of arrays of 8.
            unsafe {
                let s = f32x4_mul(
                    f32x4_splat(row_scale),
                    v128_load(scale.as_ptr().add(4 * v) as *const v128),
                );
                let r = f32x4_add(
                    f32x4_mul(f32x4_convert_i32x4(*sums), s),
                    v128_load(b.as_ptr().add(4 * v) as *const v128),
                );
                v128_store(y.as_mut_ptr().add(4 * v) as *mut v128, r);
            }
        }
        out.copy_from_slice(&y[..out.len()]);
    }

    /// [`super::quantize_row`]'s values without the `+128` offset; returns the row's scale.
    fn quantize_row(row: &[f32], out: &mut [i16]) -> f32 {
        super::quantize_row_as(row, out, |q| q as i16)
    }
}

/// Runs `f(task, chunk)` over `out` in chunks of `chunk` elements, on rayon's threads natively.
fn for_each_task(out: &mut [f32], chunk: usize, f: impl Fn(usize, &mut [f32]) + Sync + Send) {
    let chunk = chunk.max(1);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| f(i, c));
    }
    #[cfg(target_arch = "wasm32")]
    for (i, c) in out.chunks_mut(chunk).enumerate() {
        f(i, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values in [-scale, scale) from a fixed generator, with some exact zeros and an outlier.
    fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
        let mut rng = crate::rng::SplitMix64::new(seed);
        (0..n)
            .map(|i| match i % 97 {
                13 => 0.0,
                41 => 8.0 * scale,
                _ => (rng.uniform() as f32 * 2.0 - 1.0) * scale,
            })
            .collect()
    }

    /// Odd shapes: one row, one input, widths that are not multiples of 4, 16 or 64, a
    /// 512-token batch, BERT's 384/1536 widths.
    const SHAPES: [(usize, usize, usize); 8] = [
        (1, 1, 1),
        (1, 384, 384),
        (5, 3, 1),
        (7, 13, 70),
        (25, 384, 1152),
        (512, 384, 384),
        (33, 1536, 384),
        (6, 5, 129),
    ];

    #[test]
    fn the_kernels_agree_exactly_and_match_the_dequantised_product() {
        for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
            let x = values(m * k, 2 * i as u64, 1.5);
            let w = values(n * k, 2 * i as u64 + 1, 0.1);
            let b = values(n, 99, 1.0);
            let layer = QuantizedLinear::from_f32(&w, n, k, Some(&b));
            let y = layer.forward_with(&x, m, Kernel::Portable);
            assert_eq!(y.len(), m * n);
            for kernel in [Kernel::Vnni, Kernel::Avx2] {
                if kernel.available() {
                    assert_eq!(
                        layer.forward_with(&x, m, kernel),
                        y,
                        "{kernel:?} {m}x{k}x{n}"
                    );
                } else {
                    println!("this CPU cannot run the {kernel:?} kernel: not tested here");
                }
            }
            // The plain product of the dequantised values, in f64.
            let (qw, sw) = quantize_rows(&w, k);
            let (qx, sx) = quantize_rows(&x, k);
            for r in 0..m {
                for c in 0..n {
                    let dot: i64 = (0..k)
                        .map(|j| qx[r * k + j] as i64 * qw[c * k + j] as i64)
                        .sum();
                    let want = dot as f64 * sx[r] as f64 * sw[c] as f64 + b[c] as f64;
                    let got = y[r * n + c] as f64;
                    assert!(
                        (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                        "{m}x{k}x{n} [{r},{c}]: {got} vs {want}"
                    );
                }
            }
        }
    }

    /// `forward_with` runs kernels unchecked, so a kernel the CPU lacks must be refused first
    /// (the WebAssembly kernel, natively, on every CPU).
    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    #[should_panic(expected = "needs a CPU feature this one lacks")]
    fn a_kernel_the_cpu_lacks_is_refused() {
        let layer = QuantizedLinear::from_f32(&[0.5], 1, 1, None);
        layer.forward_with(&[1.0], 1, Kernel::Simd128);
    }

    #[test]
    fn the_error_against_f32_stays_within_the_quantisation_bound() {
        let (m, k, n) = (9, 384, 200);
        let x = values(m * k, 5, 2.0);
        let w = values(n * k, 6, 0.05);
        let layer = QuantizedLinear::from_f32(&w, n, k, None);
        let y = layer.forward(&x, m);
        let (_, sw) = quantize_rows(&w, k);
        let (_, sx) = quantize_rows(&x, k);
        for r in 0..m {
            for c in 0..n {
                let (xr, wc) = (&x[r * k..(r + 1) * k], &w[c * k..(c + 1) * k]);
                let exact: f64 = xr.iter().zip(wc).map(|(&a, &b)| a as f64 * b as f64).sum();
                // x̂ŵ - xw = x e_w + w e_x + e_x e_w with |e_x| <= s_x / 2, |e_w| <= s_w / 2.
                let bound: f64 = xr
                    .iter()
                    .zip(wc)
                    .map(|(&a, &b)| {
                        let (ex, ew) = (sx[r] as f64 / 2.0, sw[c] as f64 / 2.0);
                        (a as f64).abs() * ew + (b as f64).abs() * ex + ex * ew
                    })
                    .sum::<f64>()
                    + 1e-5;
                let err = (y[r * n + c] as f64 - exact).abs();
                assert!(
                    err <= bound,
                    "[{r},{c}]: error {err} over the bound {bound}"
                );
            }
        }
    }

    #[test]
    fn int8_weights_pack_as_their_f32_values_do() {
        let (k, n) = (37, 65);
        let w = values(n * k, 3, 0.2);
        let (q, scales) = quantize_rows(&w, k);
        let a = QuantizedLinear::from_f32(&w, n, k, None);
        let b = QuantizedLinear::from_int8(&q, &scales, n, k, None);
        assert_eq!(a.packed, b.packed);
        assert_eq!(a.offsets, b.offsets);
        let x = values(3 * k, 4, 1.0);
        assert_eq!(a.forward(&x, 3), b.forward(&x, 3));
        assert_eq!((a.d_in(), a.d_out()), (k, n));
        assert!(a.forward(&[], 0).is_empty());
    }
}
