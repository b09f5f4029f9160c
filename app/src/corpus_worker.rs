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
//! each chunk's batches pad little. On the CPU the page holds no model at all: the first
//! worker encodes the queries too (one short batch, a few milliseconds there), so building
//! and quantising the model, hashing its weights and every forward pass stay off the page's
//! thread.
//!
//! Messages are `[json, payload]`: `load` with the model files (`{path: Uint8Array}`, their
//! buffers transferred, not copied), `encode` with the texts (an array of strings),
//! `encode_queries` with its pairs in the JSON; replies `loaded` with the encoder's
//! [`EmbeddingSpace`], `encoded` with the embeddings, or `failed`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use engine::{EmbeddingSpace, Embeddings, Encoder, ModelFiles, Precision};

use crate::session::QueryEncoder;
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
    /// Encode `(instruction, query)` pairs as [`Encoder::encode_queries`] does (rows
    /// normalised); the reply carries the same `id`.
    EncodeQueries {
        id: u64,
        pairs: Vec<(String, String)>,
    },
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Reply {
    /// The worker's wasm runs and listens (messages posted before would be lost).
    Listening,
    /// The encoder is built (the page times the start itself).
    Loaded { space: EmbeddingSpace },
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
            let (reply, payload) = answer(&encoder, &event.data().unchecked_into());
            let message = Array::of1(&json(&reply));
            if let Some(p) = payload {
                message.push(&p);
            }
            let _ = post.post_message(&message);
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&Array::of1(&json(&Reply::Listening)));
}

/// The worker's reply to one message, and its payload.
fn answer(encoder: &RefCell<Option<Encoder>>, parts: &Array) -> (Reply, Option<JsValue>) {
    let request = parts
        .get(0)
        .as_string()
        .and_then(|t| serde_json::from_str::<Request>(&t).ok());
    let failed = |error: String, id: Option<u64>| (Reply::Failed { error, id }, None);
    let (id, texts) = match request {
        None => return failed("an unreadable message".into(), None),
        Some(Request::Load { int8 }) => {
            return match load(&parts.get(1), int8) {
                Ok(e) => {
                    let space = e.space();
                    *encoder.borrow_mut() = Some(e);
                    (Reply::Loaded { space }, None)
                }
                Err(e) => failed(e.to_string(), None),
            };
        }
        Some(Request::Encode { id }) => {
            let texts: Vec<String> = Array::from(&parts.get(1))
                .iter()
                .map(|t| t.as_string().unwrap_or_default())
                .collect();
            (id, Texts::Passages(texts))
        }
        Some(Request::EncodeQueries { id, pairs }) => (id, Texts::Queries(pairs)),
    };
    let reply = match encoder.borrow().as_ref() {
        Some(e) => encode(e, &texts, id),
        None => Err("no model loaded".into()),
    };
    match reply {
        Ok((reply, data)) => (reply, Some(data.into())),
        Err(error) => failed(error, Some(id)),
    }
}

/// What a worker is asked to encode.
enum Texts {
    /// Passages (their encoder texts).
    Passages(Vec<String>),
    /// `(instruction, query)` pairs.
    Queries(Vec<(String, String)>),
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
fn encode(encoder: &Encoder, texts: &Texts, id: u64) -> Result<(Reply, Float32Array), String> {
    let embeddings = match texts {
        Texts::Passages(texts) => {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            encoder.encode(&refs)
        }
        Texts::Queries(pairs) => {
            let refs: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(i, q)| (i.as_str(), q.as_str()))
                .collect();
            encoder.encode_queries(&refs)
        }
    }
    .map_err(|e| e.to_string())?;
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
    /// The workers' encoder (the same in each: same files, same arithmetic).
    space: EmbeddingSpace,
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
        let started_workers = futures::future::try_join_all(starts).await?;
        let space = started_workers[0].1.clone();
        if started_workers.iter().any(|(_, s)| *s != space) {
            return Err("the encoding workers built different encoders from one model".into());
        }
        let workers = started_workers.into_iter().map(|(w, _)| w).collect();
        Ok((
            CorpusWorkers { workers, space },
            js_sys::Date::now() - started,
        ))
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// The workers' encoder.
    pub fn space(&self) -> &EmbeddingSpace {
        &self.space
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

/// The queries are encoded by the first worker (between its corpus chunks, when a corpus
/// encodes meanwhile).
impl QueryEncoder for CorpusWorkers {
    fn space(&self) -> EmbeddingSpace {
        self.space.clone()
    }

    async fn encode_queries(&self, pairs: &[(&str, &str)]) -> engine::Result<Embeddings> {
        self.workers[0]
            .encode_queries(pairs, self.space.dim)
            .await
            .map_err(|problem| engine::EngineError::Backend {
                backend: "cpu (encoding worker)".into(),
                problem,
            })
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

/// Replies as they arrive, each kept until the request it answers takes it; the resolvers
/// of the requests waiting. A worker's requests may overlap (a query ranked while a corpus
/// encodes), so each takes the reply with its own `id`.
#[derive(Default)]
struct Inbox {
    replies: RefCell<Vec<(Reply, JsValue)>>,
    waiting: RefCell<Vec<js_sys::Function>>,
    /// Requests sent and not yet answered or given up: a reply to any other is dropped.
    pending: RefCell<BTreeSet<u64>>,
}

impl Reply {
    /// The request this reply answers; `None` for the worker's own news (listening, loaded,
    /// a failure of the worker itself).
    fn request(&self) -> Option<u64> {
        match self {
            Reply::Encoded { id, .. } => Some(*id),
            Reply::Failed { id, .. } => *id,
            Reply::Listening | Reply::Loaded { .. } => None,
        }
    }
}

impl Inbox {
    /// Keeps `reply` for the request it answers and wakes every waiting request.
    fn receive(&self, reply: Reply, payload: JsValue) {
        let keep = reply
            .request()
            .is_none_or(|id| self.pending.borrow().contains(&id));
        if keep {
            self.replies.borrow_mut().push((reply, payload));
        }
        for resolve in self.waiting.borrow_mut().drain(..) {
            let _ = resolve.call0(&JsValue::NULL);
        }
    }

    /// The next reply to `request` (`None`: the worker's own news). A failure of the whole
    /// worker answers every request.
    async fn next(&self, request: Option<u64>) -> (Reply, JsValue) {
        loop {
            let found = {
                let mut replies = self.replies.borrow_mut();
                let at = replies.iter().position(|(r, _)| {
                    r.request() == request || matches!(r, Reply::Failed { id: None, .. })
                });
                at.map(|i| match &replies[i].0 {
                    Reply::Failed { id: None, .. } if request.is_some() => replies[i].clone(),
                    _ => replies.remove(i),
                })
            };
            if let Some(reply) = found {
                return reply;
            }
            let wait = Promise::new(&mut |resolve, _| self.waiting.borrow_mut().push(resolve));
            let _ = JsFuture::from(wait).await;
        }
    }
}

/// A request in flight: its reply is kept until it is taken or the request is given up
/// (dropped, when the corpus changed under an encoding).
struct Pending<'a> {
    inbox: &'a Inbox,
    id: u64,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.inbox.pending.borrow_mut().remove(&self.id);
        self.inbox
            .replies
            .borrow_mut()
            .retain(|(r, _)| r.request() != Some(self.id));
    }
}

impl CorpusWorker {
    /// Starts a worker and builds `files`' encoder in it (int8 dense layers when `int8`);
    /// returns it with the encoder's space.
    async fn start(files: &ModelFiles, int8: bool) -> Result<(Self, EmbeddingSpace), String> {
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        let worker =
            web_sys::Worker::new_with_options(SCRIPT, &options).map_err(|e| format!("{e:?}"))?;
        let inbox = Rc::new(Inbox::default());
        let sink = inbox.clone();
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                let parts: Array = event.data().unchecked_into();
                let reply = parts
                    .get(0)
                    .as_string()
                    .and_then(|t| serde_json::from_str::<Reply>(&t).ok())
                    .unwrap_or_else(|| Reply::Failed {
                        error: "an unreadable reply from the encoding worker".into(),
                        id: None,
                    });
                sink.receive(reply, parts.get(1));
            },
        );
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        // A script that fails to load or a crash: the waiting requests fail instead of hanging.
        let sink = inbox.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            let error = "the encoding worker failed (its script missing, or a crash)".to_string();
            sink.receive(Reply::Failed { error, id: None }, JsValue::UNDEFINED);
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        let this = CorpusWorker {
            worker,
            inbox,
            requests: Default::default(),
        };
        if !matches!(this.news().await?, Reply::Listening) {
            return Err("the encoding worker answered out of turn".into());
        }
        this.send_files(files, int8)?;
        match this.news().await? {
            Reply::Loaded { space } => Ok((this, space)),
            _ => Err("the encoding worker answered out of turn".into()),
        }
    }

    /// Posts `files` to build the encoder, their buffers transferred.
    fn send_files(&self, files: &ModelFiles, int8: bool) -> Result<(), String> {
        let (files_object, transfer) = crate::web::files_object(files);
        let message = Array::of2(&json(&Request::Load { int8 }), &files_object);
        self.worker
            .post_message_with_transfer(&message, &transfer)
            .map_err(|e| format!("{e:?}"))
    }

    /// The worker's next news (not a reply to a request); its failure as an error.
    async fn news(&self) -> Result<Reply, String> {
        match self.inbox.next(None).await.0 {
            Reply::Failed { error, .. } => Err(error),
            reply => Ok(reply),
        }
    }

    /// Encodes `texts` (in order) into rows of `dim`; returns them with the worker's memory
    /// in bytes.
    async fn encode(&self, texts: &[&str], dim: usize) -> Result<(Embeddings, f64), String> {
        let list: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
        self.ask(|id| Request::Encode { id }, &list, texts.len(), dim)
            .await
    }

    /// Embeds `(instruction, query)` pairs (rows normalised) into rows of `dim`.
    async fn encode_queries(
        &self,
        pairs: &[(&str, &str)],
        dim: usize,
    ) -> Result<Embeddings, String> {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(i, q)| (i.to_string(), q.to_string()))
            .collect();
        let request = |id| Request::EncodeQueries {
            id,
            pairs: owned.clone(),
        };
        let (embeddings, _) = self
            .ask(request, &JsValue::UNDEFINED, pairs.len(), dim)
            .await?;
        Ok(embeddings)
    }

    /// Sends the request `request(id)` with `payload` and awaits its `rows` x `dim`
    /// embeddings and the worker's memory in bytes.
    async fn ask(
        &self,
        request: impl FnOnce(u64) -> Request,
        payload: &JsValue,
        rows: usize,
        dim: usize,
    ) -> Result<(Embeddings, f64), String> {
        let id = self.requests.get() + 1;
        self.requests.set(id);
        self.inbox.pending.borrow_mut().insert(id);
        let _pending = Pending {
            inbox: &self.inbox,
            id,
        };
        let message = Array::of2(&json(&request(id)), payload);
        self.worker
            .post_message(&message)
            .map_err(|e| format!("{e:?}"))?;
        match self.inbox.next(Some(id)).await {
            (Reply::Failed { error, .. }, _) => Err(error),
            (
                Reply::Encoded {
                    dim: d,
                    memory_bytes,
                    ..
                },
                data,
            ) => {
                let data = Float32Array::new(&data).to_vec();
                if d != dim || data.len() != rows * dim {
                    return Err("the encoding worker sent embeddings of another size".into());
                }
                Ok((Embeddings { dim, data }, memory_bytes))
            }
            _ => Err("the encoding worker answered out of turn".into()),
        }
    }
}

impl Drop for CorpusWorker {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}
