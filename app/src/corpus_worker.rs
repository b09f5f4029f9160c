//! Corpus encoding on the CPU in Web Workers (wasm32 only), so the page's thread stays free
//! for typing and painting however slow the machine (on the page's thread the encoder had to
//! pause after every layer of a 4-passage batch and still held it for 100-300 ms on a loaded
//! machine), and so that a machine with several cores encodes on several: wasm threads would
//! need cross-origin isolation (COOP/COEP headers) that a docs site embedding the demo cannot
//! promise, while workers that each hold the model need nothing from the host.
//!
//! Each worker runs the page's own wasm (`app.js`, already downloaded and compiled: no extra
//! download): its `main` finds no window and listens instead of mounting the page. It holds
//! its own encoder (the same files and arithmetic as the page's) and encodes the chunks of
//! passages it is sent, in length-sorted batches without pausing. The page deals the corpus
//! out longest first, a chunk to whichever worker is free, so the workers finish together and
//! each chunk's batches pad little. Queries stay on the page's thread (one short batch).
//!
//! Messages are `[json, payload]`: `load` with the model files (`{path: Uint8Array}`),
//! `encode` with the texts (an array of strings); replies `loaded`, `encoded` with the
//! embeddings, or `failed`.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use engine::{Embeddings, Encoder, ModelFiles, Precision};

use crate::state::MAX_CORPUS_WORKERS;
use js_sys::{Array, Float32Array, Object, Promise, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Passages per message to a worker (the encoder sorts each chunk by length into batches):
/// the page's progress moves after each, and the last chunks keep every worker busy.
const CHUNK: usize = 16;

/// Passages per forward pass in the worker: the attention scores of a batch of long passages
/// grow with its size, and wasm memory never shrinks back.
const BATCH: usize = 8;

/// The worker script beside index.html: it loads `app.js` in a module worker.
const SCRIPT: &str = "./encode_worker.js";

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Request {
    /// Build the encoder from the files beside the message.
    Load { int8: bool },
    /// Encode the texts beside the message; the reply carries the same `id`.
    Encode { id: u64 },
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Reply {
    /// The worker's wasm runs and listens (messages posted before would be lost).
    Listening,
    /// The encoder is built (the page times the start itself).
    Loaded,
    /// The texts encoded (the embeddings beside the message); the worker's wasm memory in bytes.
    Encoded {
        id: u64,
        dim: usize,
        memory_bytes: f64,
    },
    /// What went wrong (with the `id` of the request to encode, when it was one).
    Failed {
        error: String,
        #[serde(default)]
        id: Option<u64>,
    },
}

fn json<T: Serialize>(value: &T) -> JsValue {
    JsValue::from_str(&serde_json::to_string(value).expect("plain data serialises"))
}

/// Worker side: installs the message handler (called by `main` when there is no window).
pub fn listen() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let encoder: Rc<RefCell<Option<Encoder>>> = Rc::default();
    let post = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let parts: Array = event.data().unchecked_into();
            let send = |reply: &Reply, payload: Option<&JsValue>| {
                let message = Array::of1(&json(reply));
                if let Some(p) = payload {
                    message.push(p);
                }
                let _ = post.post_message(&message);
            };
            let request = parts
                .get(0)
                .as_string()
                .and_then(|t| serde_json::from_str::<Request>(&t).ok());
            let failed = |error: String| Reply::Failed { error, id: None };
            match request {
                Some(Request::Load { int8 }) => match load(&parts.get(1), int8) {
                    Ok(e) => {
                        *encoder.borrow_mut() = Some(e);
                        send(&Reply::Loaded, None);
                    }
                    Err(e) => send(&failed(e.to_string()), None),
                },
                Some(Request::Encode { id }) => {
                    let reply = match encoder.borrow().as_ref() {
                        Some(e) => {
                            let texts: Vec<String> = Array::from(&parts.get(1))
                                .iter()
                                .map(|t| t.as_string().unwrap_or_default())
                                .collect();
                            encode(e, &texts, id)
                        }
                        None => Err("no model loaded".into()),
                    };
                    match reply {
                        Ok((reply, data)) => send(&reply, Some(&data.into())),
                        Err(error) => send(
                            &Reply::Failed {
                                error,
                                id: Some(id),
                            },
                            None,
                        ),
                    }
                }
                None => send(&failed("an unreadable message".into()), None),
            }
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&Array::of1(&json(&Reply::Listening)));
}

fn load(files: &JsValue, int8: bool) -> engine::Result<Encoder> {
    let mut map = BTreeMap::new();
    for entry in Object::entries(files.unchecked_ref()).iter() {
        let pair: Array = entry.unchecked_into();
        if let Some(path) = pair.get(0).as_string() {
            map.insert(path, Uint8Array::new(&pair.get(1)).to_vec());
        }
    }
    let mut encoder = Encoder::from_files(
        &ModelFiles::from_memory("page", map),
        &engine::Device::flex(),
    )?;
    if int8 {
        encoder.set_precision(Precision::Int8)?;
    }
    encoder.batch_size = BATCH;
    warm_up(&encoder)?;
    Ok(encoder)
}

/// Runs the encoder over one text of each length from 2 to 13 tokens, before any corpus.
///
/// V8 compiles the wasm in two tiers, and its optimising tier inlines a `call_indirect` target
/// it has seen at that call site. burn-flex's f32 GEMM (every product in f32 arithmetic, the
/// attention products in int8) picks its micro-kernel through a function table by the tile's
/// remainders; when a batch of a new shape calls a target the optimised code did not inline,
/// V8 deoptimises it, and in Chromium 156 the worker then ran 2.8x slower for the rest of the
/// corpus (f32 arithmetic: 51 s instead of 21 s; the same with `--js-flags=--no-wasm-inlining-call-indirect`:
/// 21 s). Passes over every remainder of rows (mod 12) and columns (mod 4) while the code is
/// still in the baseline tier make each call site's targets many from the start, so the
/// optimising tier does not bet on one.
fn warm_up(encoder: &Encoder) -> engine::Result<()> {
    let mut text = String::new();
    for _ in 0..12 {
        encoder.encode(&[text.as_str()])?;
        text.push_str(" a");
    }
    Ok(())
}

/// The `Encoded` reply to request `id` and its embeddings.
fn encode(encoder: &Encoder, texts: &[String], id: u64) -> Result<(Reply, Float32Array), String> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embeddings = encoder.encode(&refs).map_err(|e| e.to_string())?;
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let memory_bytes = memory
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64;
    let reply = Reply::Encoded {
        id,
        dim: encoder.dim(),
        memory_bytes,
    };
    Ok((reply, Float32Array::from(embeddings.data.as_slice())))
}

/// Page side: workers holding one model's encoder, which encode a corpus together.
pub struct CorpusWorkers {
    workers: Vec<CorpusWorker>,
}

impl CorpusWorkers {
    /// How many workers this machine affords: one per core the browser reports
    /// (`navigator.hardwareConcurrency`), at most [`MAX_CORPUS_WORKERS`], and one per 2 GB of
    /// memory where the browser says (`navigator.deviceMemory`, Chromium only): each worker
    /// holds a copy of the model.
    pub fn affordable() -> usize {
        let Some(navigator) = web_sys::window().map(|w| w.navigator()) else {
            return 1;
        };
        let cores = navigator.hardware_concurrency() as usize;
        let memory_gb = js_sys::Reflect::get(&navigator, &JsValue::from_str("deviceMemory"))
            .ok()
            .and_then(|v| v.as_f64());
        let by_memory = memory_gb.map_or(usize::MAX, |gb| (gb / 2.0) as usize);
        cores.min(by_memory).clamp(1, MAX_CORPUS_WORKERS)
    }

    /// Starts `count` workers together, each building `files`' encoder (int8 dense layers when
    /// `int8`); returns them with the milliseconds from start to all ready.
    pub async fn start(
        files: &ModelFiles,
        int8: bool,
        count: usize,
    ) -> Result<(Self, f64), String> {
        let started = js_sys::Date::now();
        let starts = (0..count.max(1)).map(|_| CorpusWorker::start(files, int8));
        let workers = futures::future::try_join_all(starts).await?;
        Ok((CorpusWorkers { workers }, js_sys::Date::now() - started))
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Encodes `texts` into rows of `dim` (in input order), reporting `progress(done, total)`
    /// after each chunk; returns the embeddings and the workers' memory in bytes, together.
    pub async fn encode<'a>(
        &self,
        texts: &'a [String],
        dim: usize,
        progress: impl FnMut(usize, usize) + 'a,
    ) -> Result<(Embeddings, f64), String> {
        let order = longest_first(texts);
        let deal = Deal {
            texts,
            dim,
            chunks: RefCell::new(order.chunks(CHUNK).collect()),
            out: RefCell::new(Embeddings::zeros(texts.len(), dim)),
            done: Default::default(),
            progress: RefCell::new(Box::new(progress)),
        };
        let runs = self.workers.iter().map(|worker| deal.run(worker));
        let memory = futures::future::try_join_all(runs).await?;
        Ok((deal.out.into_inner(), memory.iter().sum()))
    }
}

/// A corpus dealt out in chunks to whichever worker is free.
struct Deal<'a> {
    texts: &'a [String],
    dim: usize,
    /// Row indices of the chunks not yet taken, in the order to take them.
    chunks: RefCell<VecDeque<&'a [usize]>>,
    out: RefCell<Embeddings>,
    /// Passages encoded so far.
    done: std::cell::Cell<usize>,
    /// Told `(done, total)` after each chunk.
    progress: RefCell<Box<dyn FnMut(usize, usize) + 'a>>,
}

impl Deal<'_> {
    /// `worker` takes chunks until none is left; returns its memory in bytes.
    async fn run(&self, worker: &CorpusWorker) -> Result<f64, String> {
        let mut memory = 0.0;
        loop {
            let Some(rows) = self.chunks.borrow_mut().pop_front() else {
                return Ok(memory);
            };
            let chunk: Vec<&str> = rows.iter().map(|&i| self.texts[i].as_str()).collect();
            let (embeddings, bytes) = worker.encode(&chunk, self.dim).await?;
            memory = bytes;
            self.out
                .borrow_mut()
                .set_rows(rows, &embeddings.data, false);
            self.done.set(self.done.get() + rows.len());
            (self.progress.borrow_mut())(self.done.get(), self.texts.len());
        }
    }
}

/// Indices of `texts`, longest first (by bytes: a proxy for tokens that costs nothing on the
/// page's thread); ties keep input order.
fn longest_first(texts: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
    order
}

/// Page side: a worker holding one model's encoder.
struct CorpusWorker {
    worker: web_sys::Worker,
    inbox: Rc<Inbox>,
    /// Encoding requests sent so far (the last one's `id`).
    requests: std::cell::Cell<u64>,
}

/// Replies as they arrive, and the resolver of the one waiting for the next.
#[derive(Default)]
struct Inbox {
    replies: RefCell<VecDeque<Array>>,
    waiting: RefCell<Option<js_sys::Function>>,
}

impl Inbox {
    async fn next(&self) -> Array {
        loop {
            if let Some(reply) = self.replies.borrow_mut().pop_front() {
                return reply;
            }
            let wait = Promise::new(&mut |resolve, _| {
                *self.waiting.borrow_mut() = Some(resolve);
            });
            let _ = JsFuture::from(wait).await;
        }
    }
}

impl CorpusWorker {
    /// Starts a worker and builds `files`' encoder in it (int8 dense layers when `int8`).
    async fn start(files: &ModelFiles, int8: bool) -> Result<Self, String> {
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        let worker =
            web_sys::Worker::new_with_options(SCRIPT, &options).map_err(|e| format!("{e:?}"))?;
        let inbox = Rc::new(Inbox::default());
        let sink = inbox.clone();
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                sink.replies
                    .borrow_mut()
                    .push_back(event.data().unchecked_into());
                if let Some(resolve) = sink.waiting.borrow_mut().take() {
                    let _ = resolve.call0(&JsValue::NULL);
                }
            },
        );
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        // A script that fails to load or a crash: the waiting request fails instead of hanging.
        let sink = inbox.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            let error = "the encoding worker failed (its script missing, or a crash)".to_string();
            sink.replies
                .borrow_mut()
                .push_back(Array::of1(&json(&Reply::Failed { error, id: None })));
            if let Some(resolve) = sink.waiting.borrow_mut().take() {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        let this = CorpusWorker {
            worker,
            inbox,
            requests: Default::default(),
        };
        if !matches!(this.reply().await?, (Reply::Listening, _)) {
            return Err("the encoding worker answered out of turn".into());
        }
        let files_object = Object::new();
        for name in files.names() {
            if let Some(bytes) = files.get(name) {
                let _ = js_sys::Reflect::set(
                    &files_object,
                    &JsValue::from_str(name),
                    &Uint8Array::from(bytes),
                );
            }
        }
        let message = Array::of2(&json(&Request::Load { int8 }), &files_object);
        this.worker
            .post_message(&message)
            .map_err(|e| format!("{e:?}"))?;
        match this.reply().await? {
            (Reply::Loaded, _) => Ok(this),
            _ => Err("the encoding worker answered out of turn".into()),
        }
    }

    async fn reply(&self) -> Result<(Reply, JsValue), String> {
        let parts = self.inbox.next().await;
        let reply = parts
            .get(0)
            .as_string()
            .and_then(|t| serde_json::from_str::<Reply>(&t).ok())
            .ok_or("an unreadable reply from the encoding worker")?;
        match reply {
            Reply::Failed { error, id: None } => Err(error),
            reply => Ok((reply, parts.get(1))),
        }
    }

    /// Encodes `texts` (in order) into rows of `dim`; returns them with the worker's memory
    /// in bytes. Replies to earlier requests (an encoding the page gave up on, when the corpus
    /// changed under it) are passed over by their `id`.
    async fn encode(&self, texts: &[&str], dim: usize) -> Result<(Embeddings, f64), String> {
        let id = self.requests.get() + 1;
        self.requests.set(id);
        let list: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
        let message = Array::of2(&json(&Request::Encode { id }), &list);
        self.worker
            .post_message(&message)
            .map_err(|e| format!("{e:?}"))?;
        loop {
            match self.reply().await? {
                (Reply::Encoded { id: of, .. }, _) | (Reply::Failed { id: Some(of), .. }, _)
                    if of != id => {}
                (Reply::Failed { error, .. }, _) => return Err(error),
                (
                    Reply::Encoded {
                        dim: d,
                        memory_bytes,
                        ..
                    },
                    data,
                ) => {
                    let data = Float32Array::new(&data).to_vec();
                    if d != dim || data.len() != texts.len() * dim {
                        return Err("the encoding worker sent embeddings of another size".into());
                    }
                    return Ok((Embeddings { dim, data }, memory_bytes));
                }
                _ => return Err("the encoding worker answered out of turn".into()),
            }
        }
    }
}

impl Drop for CorpusWorker {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}
