//! Every GPU backend compiled in gives the CPU path's embeddings (cosine >= 0.99999).
//! Built only with the `wgpu` feature; `cargo xtask test` runs it with `vulkan` on Mesa's
//! lavapipe driver when no GPU is present. With IFIR_REQUIRE_GPU=1 a missing adapter fails the
//! test instead of skipping it.
#![cfg(feature = "wgpu")]

use crate::common;

use engine::{BackendKind, Encoder};

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
    let gpu_encoder = Encoder::load(common::model_dir(), &device).unwrap();
    let gpu = gpu_encoder.encode(&refs).unwrap();
    let asynchronous = pollster_block_on(gpu_encoder.encode_async(&refs, &mut |_, _| {})).unwrap();
    let mut worst = 1.0f64;
    for i in 0..refs.len() {
        let c = common::cosine(cpu.row(i), gpu.row(i));
        worst = worst.min(c);
        assert!(c >= 0.99999, "{} text {i}: cosine {c}", kind.name());
        assert!(common::cosine(gpu.row(i), asynchronous.row(i)) > 0.9999999);
    }
    println!(
        "{} ({device:?}): worst cosine with CPU {worst:.8}",
        kind.name()
    );
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
