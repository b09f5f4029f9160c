//! Every GPU backend compiled in gives the CPU path's embeddings (cosine >= 0.99999), with each
//! GPU lever on and off (bucketed padding, pipelined readback, burn's attention operation), and
//! in f16 within half precision's rounding (cosine >= 0.999, the same nearest neighbours); a
//! mixed-precision training step gives the f32 step's loss and gradients (f32, same direction).
//! Built only with the `wgpu` feature; `cargo xtask test` runs it with `vulkan` on Mesa's
//! lavapipe driver when no GPU is present. With IFIR_REQUIRE_GPU=1 a missing adapter fails the
//! test instead of skipping it.
#![cfg(feature = "wgpu")]

use crate::common;

use engine::bert::AttentionKernel;
use engine::tokenize::Padding;
use engine::{BackendKind, Embeddings, Encoder, Precision, Readback};

/// Sixteen parity texts and one of 98 tokens: lengths for several buckets. Few and short on
/// purpose: on lavapipe (the CI's software Vulkan) this test encodes them six times, and 24
/// texts plus a 256-token one took 412 s of a 2-core CPU (now 190 s).
fn texts() -> Vec<String> {
    let mut t: Vec<String> = common::golden("minilm_golden.json")
        .into_iter()
        .map(|g| g.text)
        .collect();
    t.truncate(16);
    t.push("a much longer passage ".repeat(24));
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
    // Batches of 8 over 17 texts: several buckets, a pipelined queue, a short last batch.
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
    check_mixed_training(kind, &device);
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

/// Two dual-view records on gardening: a micro-batch of four tuples.
const RECORDS: [&str; 2] = [
    r#"{"query":"how to grow tomatoes","instruction":"Only container gardening on a balcony or patio.","positive":"Tomatoes grow well in large pots on a sunny balcony if you water them every day.","negatives":["Potatoes are planted in spring in rows of loose soil."],"instruction_negatives":["Plant tomatoes in open beds, forty centimetres apart, after the last frost."],"instruction_reversed":"Nothing about pots or containers: I have a field."}"#,
    r#"{"query":"when to prune roses","instruction":"Only climbing roses.","positive":"Prune climbing roses after they flower, tying the long canes in sideways.","negatives":["Lavender is cut back by a third after flowering."],"instruction_negatives":["Cut bush roses back hard in late winter to an outward-facing bud."],"instruction_reversed":"Shrub and bush roses, not climbers."}"#,
];

/// A training step in mixed precision against the same step in f32: the loss within 1%, the
/// gradients, once the loss scale is divided out, f32 with their norm within 3% and cosine
/// >= 0.99 to the f32 gradients.
fn check_mixed_training(kind: BackendKind, device: &engine::Device) {
    use engine::training::model::{Texts, TrainModel};
    use engine::training::step::{
        direct_gradients, micro_batch_layout, unscale_and_clip, BlockSampling, StepArithmetic,
    };
    use engine::training::{Loss, TrainingPrecision, TrainingRecord};
    if !device.supports_dtype(burn::tensor::FloatDType::F16) {
        println!(
            "SKIPPED {} mixed-f16 training: the adapter has no f16 arithmetic",
            kind.name()
        );
        return;
    }
    let files = engine::ModelFiles::read_dir(common::model_dir()).unwrap();
    let config = engine::ModelConfig::from_files(&files).unwrap();
    let texts = Texts::new(&files, &config, 64, 64, Default::default(), 16).unwrap();
    let model = TrainModel::load(&files, &config, false, &device.clone().autodiff()).unwrap();
    let tuples: Vec<_> = RECORDS
        .iter()
        .flat_map(|r| TrainingRecord::parse(r).unwrap().tuples(4))
        .collect();
    let loss = Loss::new("multi-p-i".parse().unwrap());
    let sampling = BlockSampling {
        instruction_fraction: 1.0,
        query_alone: false,
        seed: 1,
    };
    let layout = micro_batch_layout(&tuples, &loss, sampling, 0);
    let step = |precision, loss_scale| {
        let arithmetic = StepArithmetic {
            accumulation: 1,
            precision,
            loss_scale,
        };
        let (value, mut grads) =
            direct_gradients(&model, &texts, &layout, &loss, arithmetic, None).unwrap();
        let norm = unscale_and_clip(&mut grads, &model, 0.0, loss_scale);
        (value, norm, flat_gradients(&grads, &model))
    };
    assert!(model
        .computing_in(TrainingPrecision::MixedF16)
        .bert
        .is_half());
    assert!(!model.bert.is_half(), "the master weights stay f32");
    let (full_loss, full_norm, full) = step(TrainingPrecision::F32, 1.0);
    let (mixed_loss, mixed_norm, mixed) = step(TrainingPrecision::MixedF16, 1024.0);
    let name = kind.name();
    assert_ne!(
        mixed_loss, full_loss,
        "{name}: the mixed step computes in f16"
    );
    assert_eq!(full.len(), mixed.len());
    assert!(
        (mixed_loss - full_loss).abs() <= 0.01 * full_loss.abs(),
        "{name} mixed-f16: loss {mixed_loss} vs f32 {full_loss}"
    );
    assert!(
        (mixed_norm - full_norm).abs() <= 0.03 * full_norm,
        "{name} mixed-f16: gradient norm {mixed_norm} vs f32 {full_norm}"
    );
    let agreement = common::cosine(&full, &mixed);
    assert!(
        agreement >= 0.99,
        "{name} mixed-f16: gradient cosine {agreement}"
    );
    println!(
        "{name} mixed-f16 training step: loss {mixed_loss:.5} vs f32 {full_loss:.5}, gradient norm {mixed_norm:.5} vs {full_norm:.5}, cosine {agreement:.6}"
    );
}

/// Every parameter's gradient, in the model's parameter order, flattened; each must be f32.
fn flat_gradients(
    grads: &burn::optim::GradientsParams,
    model: &engine::training::model::TrainModel,
) -> Vec<f32> {
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::tensor::{DType, Tensor};
    struct Collect<'a>(&'a burn::optim::GradientsParams, Vec<f32>);
    impl ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.0.get::<D>(param.id) {
                assert_eq!(g.dtype(), DType::F32, "gradients arrive in f32");
                self.1.extend(
                    g.into_data()
                        .convert::<f32>()
                        .try_into_vec::<f32>()
                        .unwrap(),
                );
            }
        }
    }
    let mut collect = Collect(grads, Vec::new());
    model.visit(&mut collect);
    assert!(!collect.1.is_empty(), "the step has gradients");
    collect.1
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
