//! Data-parallel training on several devices (`--devices cpu:2`, `wgpu:0,1`, `cuda:0,1`).
//!
//! Every replica holds the current weights on its device and, on its own thread, embeds its
//! contiguous share of the micro-batch's pair and passage texts with a graph: the encoder's
//! forward and backward passes, where the time goes, run on all devices at once. The
//! embeddings are gathered (detached copies) onto the first device, where the objective sees
//! every one of them, so each anchor meets the global in-batch negatives as with InF-Embed's
//! `dist_gather_tensor`. The loss's gradient with respect to the embeddings goes back to each
//! replica, which back-propagates `sum(embedding * gradient)` through its own rows only (the
//! GradCache identity). The replicas' parameter gradients are then summed on the first device
//! (the all-reduce) before the one AdamW step: the gradient of the whole batch, whatever the
//! number of devices, up to float rounding in the order of the sums.
//!
//! A term of the loss that does not read the batch's embeddings (distillation's anchors) is
//! split by its own rows: each replica computes its share of it with its own graph and adds
//! it to what it back-propagates.
//!
//! burn 0.22's own collectives (`DistributedOps::all_reduce`) exist only for CUDA (NCCL) and
//! have no all-gather; the exchange here moves tensors between devices with `to_device`, which
//! every backend has, so the same code runs on CPU replicas in a test and on GPUs.

use std::ops::Range;
use std::sync::mpsc;

use anyhow::Context;
use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::Tensor;

use engine::training::{BatchLayout, Loss};
use engine::Device;

use super::grad_cache::embedding_gradients;
use super::{Texts, TrainModel};

/// Rows `r` of `n` near-equal contiguous shares of `len` rows.
pub fn share(len: usize, r: usize, n: usize) -> Range<usize> {
    (r * len / n)..((r + 1) * len / n)
}

/// A loss term that each replica computes for its share: `term(replica, r, n)` is the part of
/// replica `r` of `n`, on its device (`None` when it has none); the parts add up to the term.
pub type ReplicaTerm<'a> =
    &'a (dyn Fn(&TrainModel, usize, usize) -> engine::Result<Option<Tensor<1>>> + Sync);

/// What a replica sends back after embedding its share.
struct Embedded {
    pairs: Tensor<2>,
    passages: Tensor<2>,
}

/// The loss and the summed gradients of one micro-batch over `devices` (autodiff devices; the
/// first holds `model`), with `extra`'s shares added. Same result as the one-device step,
/// computed on all devices.
pub fn data_parallel_step(
    model: &TrainModel,
    devices: &[Device],
    texts: &Texts,
    layout: &BatchLayout,
    loss: &Loss,
    accumulation: usize,
    extra: Option<ReplicaTerm<'_>>,
) -> anyhow::Result<(f64, GradientsParams)> {
    let (pair_rows, passage_rows) = (layout.pairs.len(), layout.passages.len());
    // A micro-batch smaller than the device count leaves the extra devices idle this time.
    let devices = &devices[..devices.len().min(pair_rows).min(passage_rows).max(1)];
    let n = devices.len();
    let main = &devices[0];
    std::thread::scope(|scope| {
        let mut to_replica = Vec::with_capacity(n);
        let mut from_replica = Vec::with_capacity(n);
        let mut workers = Vec::with_capacity(n);
        for (r, device) in devices.iter().enumerate() {
            let (send_embedded, embedded) = mpsc::channel::<anyhow::Result<Embedded>>();
            let (send_gradient, gradient) = mpsc::channel::<Option<Embedded>>();
            let replica = model.clone().fork(device);
            let rows = Rows {
                pairs: share(pair_rows, r, n),
                passages: share(passage_rows, r, n),
                extra: extra.map(|term| move |m: &TrainModel| term(m, r, n)),
            };
            workers.push(scope.spawn(move || {
                replica_work(
                    replica,
                    texts,
                    layout,
                    rows,
                    accumulation,
                    send_embedded,
                    gradient,
                )
            }));
            to_replica.push(send_gradient);
            from_replica.push(embedded);
        }
        let (pair_parts, passage_parts) = match gather(&from_replica, main) {
            Ok(parts) => parts,
            Err(e) => {
                to_replica.iter().for_each(|s| drop(s.send(None)));
                return Err(e);
            }
        };
        let (v, gradients) =
            embedding_gradients(pair_parts, passage_parts, layout, loss, accumulation)?;
        let Some((d_pairs, d_passages)) = gradients else {
            to_replica.iter().for_each(|s| drop(s.send(None)));
            return Ok((v, GradientsParams::new()));
        };
        scatter(
            &to_replica,
            devices,
            (&d_pairs, &d_passages),
            (pair_rows, passage_rows),
        )?;
        let (extra_value, gradients) = all_reduce(workers, model, main)?;
        Ok((v + extra_value, gradients))
    })
}

/// The scatter: each replica gets the gradient of its own rows (`d_pairs`, `d_passages` of
/// `rows` pairs and passages), on its device.
fn scatter(
    to_replica: &[mpsc::Sender<Option<Embedded>>],
    devices: &[Device],
    (d_pairs, d_passages): (&Tensor<2>, &Tensor<2>),
    (pair_rows, passage_rows): (usize, usize),
) -> anyhow::Result<()> {
    let n = to_replica.len();
    for (r, (send, device)) in to_replica.iter().zip(devices).enumerate() {
        let rows = |d: &Tensor<2>, range: Range<usize>| {
            d.clone()
                .narrow(0, range.start, range.len())
                .autodiff()
                .to_device(device)
        };
        let part = Embedded {
            pairs: rows(d_pairs, share(pair_rows, r, n)),
            passages: rows(d_passages, share(passage_rows, r, n)),
        };
        send.send(Some(part))
            .context("a replica stopped before its backward pass")?;
    }
    Ok(())
}

/// The all-reduce: the replicas' gradients summed on the first device (`main`), in replica
/// order, with the sum of their extra terms' values.
fn all_reduce(
    workers: Vec<std::thread::ScopedJoinHandle<'_, anyhow::Result<Option<Backward>>>>,
    model: &TrainModel,
    main: &Device,
) -> anyhow::Result<(f64, GradientsParams)> {
    let mut sum = GradientsAccumulator::<TrainModel>::new();
    let mut extra = 0.0;
    for worker in workers {
        let backward = worker
            .join()
            .map_err(|_| anyhow::anyhow!("a replica's thread panicked"))??;
        if let Some(backward) = backward {
            sum.accumulate(model, backward.grads.to_device(main, model));
            extra += backward.extra;
        }
    }
    Ok((extra, sum.grads()))
}

/// The gather: every replica's rows (detached) on the first device, in replica order.
fn gather(
    from_replica: &[mpsc::Receiver<anyhow::Result<Embedded>>],
    main: &Device,
) -> anyhow::Result<(Vec<Tensor<2>>, Vec<Tensor<2>>)> {
    let mut pair_parts = Vec::with_capacity(from_replica.len());
    let mut passage_parts = Vec::with_capacity(from_replica.len());
    let mut failure = None;
    for embedded in from_replica {
        match embedded
            .recv()
            .context("a replica stopped before embedding")?
        {
            Ok(e) => {
                pair_parts.push(e.pairs.to_device(main));
                passage_parts.push(e.passages.to_device(main));
            }
            Err(e) => failure = Some(e),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok((pair_parts, passage_parts)),
    }
}

/// A replica's rows of the micro-batch and its part of the extra term.
struct Rows<F> {
    pairs: Range<usize>,
    passages: Range<usize>,
    extra: Option<F>,
}

/// What a replica's backward pass gives: its parameter gradients and the value of its part of
/// the extra term (0 without one).
struct Backward {
    grads: GradientsParams,
    extra: f64,
}

/// One replica: embed its rows (and its part of the extra term) with a graph, hand detached
/// copies of the embeddings over, wait for their gradient, back-propagate it (with the extra
/// part / `accumulation`) through its own graph.
fn replica_work<F>(
    replica: TrainModel,
    texts: &Texts,
    layout: &BatchLayout,
    rows: Rows<F>,
    accumulation: usize,
    embedded: mpsc::Sender<anyhow::Result<Embedded>>,
    gradient: mpsc::Receiver<Option<Embedded>>,
) -> anyhow::Result<Option<Backward>>
where
    F: Fn(&TrainModel) -> engine::Result<Option<Tensor<1>>>,
{
    let own = (|| -> anyhow::Result<(Tensor<2>, Tensor<2>, Option<Tensor<1>>)> {
        let extra = match &rows.extra {
            Some(term) => term(&replica)?,
            None => None,
        };
        Ok((
            replica.embed_pairs(texts, layout, rows.pairs.clone())?,
            replica.embed_passages(texts, layout, rows.passages.clone())?,
            extra,
        ))
    })();
    let (pairs, passages, extra) = match own {
        Ok(own) => own,
        Err(e) => {
            let message = format!("{e:#}");
            drop(embedded.send(Err(e)));
            anyhow::bail!("replica failed: {message}");
        }
    };
    let detached = Embedded {
        pairs: pairs.clone().detach(),
        passages: passages.clone().detach(),
    };
    embedded.send(Ok(detached)).context("the gather stopped")?;
    let Some(d) = gradient.recv().context("the gather stopped")? else {
        return Ok(None);
    };
    let mut surrogate = (pairs * d.pairs).sum() + (passages * d.passages).sum();
    if let Some(extra) = &extra {
        surrogate = surrogate + extra.clone().div_scalar(accumulation as f64);
    }
    // The backward pass is queued before the term's value is read (on a GPU the read then
    // waits for both passes, as in the one-device step).
    let grads = GradientsParams::from_grads(surrogate.backward(), &replica);
    let extra = match extra {
        Some(extra) => engine::training::step::scalar(extra)?,
        None => 0.0,
    };
    Ok(Some(Backward { grads, extra }))
}
