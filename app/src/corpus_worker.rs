//! Corpus encoding on the CPU in a Web Worker (wasm32 only), so the page's thread stays free
//! for typing and painting however slow the machine: on the page's thread the encoder had to
//! pause after every layer of a 4-passage batch and still held it for 100-300 ms on a loaded
//! machine.
//!
//! The worker runs the page's own wasm (`app.js`, already downloaded and compiled: no extra
//! download): its `main` finds no window and listens instead of mounting the page. It holds
//! its own encoder (the same files and arithmetic as the page's), encodes a corpus in large
//! length-sorted batches without pausing, posts progress after each chunk, and sends the
//! embeddings back as one `Float32Array`. Queries stay on the page's thread (one short batch).
//!
//! Messages are `[json, payload]`: `load` with the model files (`{path: Uint8Array}`),
//! `encode` with the texts (an array of strings); replies `loaded`, `progress`, `encoded` with
//! the embeddings, or `failed`.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use engine::{Embeddings, Encoder, ModelFiles, Precision};
use js_sys::{Array, Float32Array, Object, Promise, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Passages per encoder call (the encoder sorts each call's texts by length into batches):
/// progress is posted after each.
const CHUNK: usize = 32;

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
    /// Encode the texts beside the message.
    Encode,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Reply {
    /// The worker's wasm runs and listens (messages posted before would be lost).
    Listening,
    /// The encoder is built (in `ms`).
    Loaded { ms: f64 },
    /// `done` of `total` passages encoded.
    Progress { done: usize, total: usize },
    /// All encoded (the embeddings beside the message); the worker's wasm memory in bytes.
    Encoded {
        dim: usize,
        ms: f64,
        memory_bytes: f64,
    },
    /// What went wrong.
    Failed { error: String },
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
            let failed = |error: String| Reply::Failed { error };
            match request {
                Some(Request::Load { int8 }) => {
                    let started = js_sys::Date::now();
                    match load(&parts.get(1), int8) {
                        Ok(e) => {
                            *encoder.borrow_mut() = Some(e);
                            let ms = js_sys::Date::now() - started;
                            send(&Reply::Loaded { ms }, None);
                        }
                        Err(e) => send(&failed(e.to_string()), None),
                    }
                }
                Some(Request::Encode) => match encoder.borrow().as_ref() {
                    Some(e) => {
                        let texts: Vec<String> = Array::from(&parts.get(1))
                            .iter()
                            .map(|t| t.as_string().unwrap_or_default())
                            .collect();
                        encode(e, &texts, &send);
                    }
                    None => send(&failed("no model loaded".into()), None),
                },
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
    Ok(encoder)
}

fn encode(encoder: &Encoder, texts: &[String], send: &dyn Fn(&Reply, Option<&JsValue>)) {
    let started = js_sys::Date::now();
    let mut data = Vec::with_capacity(texts.len() * encoder.dim());
    for (i, chunk) in texts.chunks(CHUNK).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        match encoder.encode(&refs) {
            Ok(e) => data.extend(e.data),
            Err(e) => {
                return send(
                    &Reply::Failed {
                        error: e.to_string(),
                    },
                    None,
                )
            }
        }
        let done = (i * CHUNK + chunk.len()).min(texts.len());
        send(
            &Reply::Progress {
                done,
                total: texts.len(),
            },
            None,
        );
    }
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let memory_bytes = memory
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64;
    let reply = Reply::Encoded {
        dim: encoder.dim(),
        ms: js_sys::Date::now() - started,
        memory_bytes,
    };
    send(&reply, Some(&Float32Array::from(data.as_slice()).into()));
}

/// Page side: a worker holding one model's encoder.
pub struct CorpusWorker {
    worker: web_sys::Worker,
    inbox: Rc<Inbox>,
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
    /// Starts a worker and builds `files`' encoder in it (int8 dense layers when `int8`);
    /// returns it with the milliseconds it took from start to ready.
    pub async fn start(files: &ModelFiles, int8: bool) -> Result<(Self, f64), String> {
        let started = js_sys::Date::now();
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
                .push_back(Array::of1(&json(&Reply::Failed { error })));
            if let Some(resolve) = sink.waiting.borrow_mut().take() {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        let this = CorpusWorker { worker, inbox };
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
            (Reply::Loaded { .. }, _) => Ok((this, js_sys::Date::now() - started)),
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
            Reply::Failed { error } => Err(error),
            reply => Ok((reply, parts.get(1))),
        }
    }

    /// Encodes `texts` (in order), reporting `progress(done, total)`; returns the embeddings
    /// and the worker's memory in bytes.
    pub async fn encode(
        &self,
        texts: &[String],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<(Embeddings, f64), String> {
        let list: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
        let message = Array::of2(&json(&Request::Encode), &list);
        self.worker
            .post_message(&message)
            .map_err(|e| format!("{e:?}"))?;
        loop {
            match self.reply().await? {
                (Reply::Progress { done, total }, _) => progress(done, total),
                (
                    Reply::Encoded {
                        dim, memory_bytes, ..
                    },
                    data,
                ) => {
                    let data = Float32Array::new(&data).to_vec();
                    if data.len() != texts.len() * dim {
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
