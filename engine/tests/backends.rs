//! Every GPU backend compiled in gives the CPU path's embeddings (cosine >= 0.99999), with each
//! GPU lever on and off (bucketed padding, pipelined readback, burn's attention operation), and
//! in f16 within half precision's rounding (cosine >= 0.999, the same nearest neighbours).
//! Built only with the `wgpu` feature; `cargo xtask test` runs it with `vulkan` on Mesa's
//! lavapipe driver when no GPU is present. With IFIR_REQUIRE_GPU=1 a missing adapter fails the
//! test instead of skipping it.
#![cfg(feature = "wgpu")]

use crate::common;

use engine::bert::AttentionKernel;
use engine::tokenize::Padding;
use engine::{BackendKind, Embeddings, Encoder, Precision, Readback};

fn texts() -> Vec<String> {
    let mut t: Vec<String> = common::golden("minilm_golden.json")
        .into_iter()
        .map(|g| g.text)
        .collect();
    t.truncate(24);
    t.push("a much longer passage ".repeat(80));
    t
}

fn check(kind: BackendKind) {
    let device = match kind.device() {
        Ok(d) => d,
        Err(e) if std::env::var("IFIR_REQUIRE_GPU").is_err() => {
            println!("SKIPPED {}: {e}", kind.name());
            return;
        }
        Err(e) => panic!("{}: {e}", kind.name()),
    };
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    let cpu = common::cpu_encoder().encode(&refs).unwrap();
    let mut gpu_encoder = Encoder::load(common::model_dir(), &device).unwrap();
    // Batches of 8 over 25 texts: several buckets, a pipelined queue, a short last batch.
    gpu_encoder.batch_size = 8;
    assert_eq!(gpu_encoder.padding, Padding::for_device(&device));
    assert_eq!(gpu_encoder.readback, Readback::Pipelined);
    gpu_encoder.padding = Padding::Buckets;
    let gpu = gpu_encoder.encode(&refs).unwrap();
    let asynchronous = pollster_block_on(gpu_encoder.encode_async(&refs, &mut |_, _| {})).unwrap();
    let worst = worst_cosine(&cpu, &gpu);
    assert!(worst >= 0.99999, "{}: worst cosine {worst}", kind.name());
    assert!(worst_cosine(&gpu, &asynchronous) > 0.9999999);
    // Each lever off: the same embeddings.
    gpu_encoder.padding = Padding::Longest;
    gpu_encoder.readback = Readback::EachBatch;
    let plain = gpu_encoder.encode(&refs).unwrap();
    let levers = worst_cosine(&plain, &gpu);
    assert!(
        levers > 0.999999,
        "{}: levers off vs on {levers}",
        kind.name()
    );
    gpu_encoder.set_attention(AttentionKernel::Fused);
    let fused = gpu_encoder.encode(&refs).unwrap();
    let attention = worst_cosine(&plain, &fused);
    assert!(
        attention > 0.99999,
        "{}: fused attention {attention}",
        kind.name()
    );
    println!(
        "{} ({device:?}): worst cosine with CPU {worst:.8}, levers off vs on {levers:.8}, fused attention {attention:.8}",
        kind.name()
    );
    check_half(kind, &device, &refs, &gpu);
}

/// The encoder in f16 against its f32 embeddings `full`: cosine >= 0.999 for every text and
/// every text's nearest other text unchanged.
fn check_half(kind: BackendKind, device: &engine::Device, refs: &[&str], full: &Embeddings) {
    let mut half = Encoder::load(common::model_dir(), device).unwrap();
    if !device.supports_dtype(burn::tensor::FloatDType::F16) {
        let err = half.set_precision(Precision::F16).unwrap_err();
        println!(
            "SKIPPED {} f16: the adapter has no f16 arithmetic ({err})",
            kind.name()
        );
        return;
    }
    half.set_precision(Precision::F16).unwrap();
    assert!(half.fingerprint().ends_with("+f16"));
    let half = half.encode(refs).unwrap();
    let worst = worst_cosine(full, &half);
    assert!(worst >= 0.999, "{} f16: worst cosine {worst}", kind.name());
    assert_eq!(
        nearest(full),
        nearest(&half),
        "{} f16: neighbours",
        kind.name()
    );
    println!("{} f16: worst cosine with f32 {worst:.6}", kind.name());
}

fn worst_cosine(a: &Embeddings, b: &Embeddings) -> f64 {
    assert_eq!(a.len(), b.len());
    (0..a.len())
        .map(|i| common::cosine(a.row(i), b.row(i)))
        .fold(1.0, f64::min)
}

/// Each row's most similar other row.
fn nearest(e: &Embeddings) -> Vec<usize> {
    (0..e.len())
        .map(|i| {
            (0..e.len())
                .filter(|&j| j != i)
                .max_by(|&a, &b| {
                    common::cosine(e.row(i), e.row(a))
                        .total_cmp(&common::cosine(e.row(i), e.row(b)))
                })
                .unwrap()
        })
        .collect()
}

/// Minimal executor for the async readback path.
fn pollster_block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
    fn noop(_: *const ()) {}
    fn clone(p: *const ()) -> RawWaker {
        RawWaker::new(p, &VTABLE)
    }
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

#[test]
fn wgpu_matches_cpu() {
    check(BackendKind::Wgpu);
}

#[cfg(feature = "vulkan")]
#[test]
fn vulkan_matches_cpu() {
    check(BackendKind::Vulkan);
}
