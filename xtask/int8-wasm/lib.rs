//! The engine's int8 kernels (`engine/src/int8.rs`, included by path) compiled alone for
//! wasm32 with `+simd128`, driven from Node by `run.mjs`:
//! - [`check`]: the WebAssembly SIMD kernel against the portable one on odd shapes (one row,
//!   one input, widths off every multiple, a 512-token batch, BERT's widths): the integer sums
//!   are exact, so the outputs must be equal bit for bit;
//! - [`bench`]: one shape through the SIMD kernel, the portable kernel, or the f32 GEMM that
//!   burn-flex runs in the page (`gemm` with `wasm-simd128-enable`, one thread), timed with the
//!   host's clock.

#[allow(dead_code)]
#[path = "../../engine/src/int8.rs"]
mod int8;

use int8::{Kernel, QuantizedLinear};

extern "C" {
    /// Milliseconds from the host (`performance.now()`).
    fn now_ms() -> f64;
}

/// Values in [-scale, scale) from a fixed generator (SplitMix64), with some exact zeros and an
/// outlier per 97 values, as the engine's own kernel tests.
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|i| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 40) as f32 / (1u64 << 24) as f32;
            match i % 97 {
                13 => 0.0,
                41 => 8.0 * scale,
                _ => (u * 2.0 - 1.0) * scale,
            }
        })
        .collect()
}

/// (rows, inputs, outputs).
const SHAPES: [(usize, usize, usize); 11] = [
    (1, 1, 1),
    (1, 384, 384),
    (5, 3, 1),
    (7, 13, 70),
    (3, 2, 9),
    (4, 7, 8),
    (25, 384, 1152),
    (512, 384, 384),
    (33, 1536, 384),
    (6, 5, 129),
    (37, 31, 17),
];

/// How many shapes' outputs differ between the SIMD and the portable kernel (0 = all equal);
/// 1000 when the SIMD kernel is not the one `Kernel::detect` picks.
#[no_mangle]
pub extern "C" fn check() -> u32 {
    if Kernel::detect() != Kernel::Simd128 {
        return 1000;
    }
    let mut failures = 0;
    for (i, &(m, k, n)) in SHAPES.iter().enumerate() {
        let x = values(m * k, 2 * i as u64, 1.5);
        let w = values(n * k, 2 * i as u64 + 1, 0.1);
        let b = values(n, 99, 1.0);
        let layer = QuantizedLinear::from_f32(&w, n, k, Some(&b));
        let simd = layer.forward_with(&x, m, Kernel::Simd128);
        let portable = layer.forward_with(&x, m, Kernel::Portable);
        let same = simd.len() == m * n
            && simd
                .iter()
                .zip(&portable)
                .all(|(a, b)| a.to_bits() == b.to_bits());
        if !same {
            failures += 1;
        }
    }
    failures
}

/// Milliseconds per product of `rows x inputs` by `inputs x outputs`, the best of `reps` runs:
/// `which` 0 = SIMD int8 kernel, 1 = portable int8 kernel, 2 = f32 GEMM.
#[no_mangle]
pub extern "C" fn bench(
    rows: usize,
    inputs: usize,
    outputs: usize,
    reps: usize,
    which: u32,
) -> f64 {
    let x = values(rows * inputs, 1, 1.0);
    let w = values(outputs * inputs, 2, 0.1);
    let b = values(outputs, 3, 1.0);
    let layer = QuantizedLinear::from_f32(&w, outputs, inputs, Some(&b));
    // The f32 product as burn-flex computes a linear layer: x (rows x inputs) times the weight
    // (inputs x outputs, row-major), one thread.
    let wt: Vec<f32> = (0..inputs * outputs)
        .map(|i| w[(i % outputs) * inputs + i / outputs])
        .collect();
    let mut y = vec![0.0f32; rows * outputs];
    let mut best = f64::INFINITY;
    let mut sink = 0.0f32;
    for _ in 0..reps.max(1) {
        let start = unsafe { now_ms() };
        match which {
            0 => sink += layer.forward_with(&x, rows, Kernel::Simd128)[0],
            1 => sink += layer.forward_with(&x, rows, Kernel::Portable)[0],
            _ => {
                // SAFETY: every pointer and stride describes the vectors above.
                unsafe {
                    gemm::gemm(
                        rows,
                        outputs,
                        inputs,
                        y.as_mut_ptr(),
                        1,
                        outputs as isize,
                        false,
                        x.as_ptr(),
                        1,
                        inputs as isize,
                        wt.as_ptr(),
                        1,
                        outputs as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    )
                };
                sink += y[0];
            }
        }
        best = best.min(unsafe { now_ms() } - start);
    }
    std::hint::black_box(sink);
    best
}
