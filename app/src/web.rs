//! Browser plumbing (wasm32 only): downloads with byte progress through the Cache API, yielding
//! to the event loop, the URL, WebGPU detection, reading uploaded files, the learn-live worker.

use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Name of the Cache API bucket that holds model files.
pub const CACHE_NAME: &str = "ifir-models-v1";

fn window() -> web_sys::Window {
    web_sys::window().expect("a window")
}

fn js_err(v: JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

/// Gives the page the thread back for one macrotask (lets it paint and handle input).
pub async fn yield_now() {
    let promise = Promise::new(&mut |resolve, _| {
        let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
    });
    let _ = JsFuture::from(promise).await;
}

/// Milliseconds since navigation started.
pub fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or(0.0)
}

/// The location's query string (with its `?`).
pub fn location_search() -> String {
    window().location().search().unwrap_or_default()
}

/// Replaces the URL's query string without reloading or adding a history entry.
pub fn replace_search(query: &str) {
    if let Ok(history) = window().history() {
        let url = if query.is_empty() {
            window().location().pathname().unwrap_or_default()
        } else {
            format!("?{query}")
        };
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

/// True when the browser exposes WebGPU and grants an adapter (headless browsers without a
/// GPU usually expose `navigator.gpu` but refuse the adapter).
pub async fn webgpu_adapter() -> bool {
    let Ok(gpu) = Reflect::get(&window().navigator(), &JsValue::from_str("gpu")) else {
        return false;
    };
    if gpu.is_undefined() || gpu.is_null() {
        return false;
    }
    let Some(request) = Reflect::get(&gpu, &JsValue::from_str("requestAdapter"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
    else {
        return false;
    };
    let Ok(promise) = request.call0(&gpu) else {
        return false;
    };
    match JsFuture::from(Promise::from(promise)).await {
        Ok(adapter) => !adapter.is_null() && !adapter.is_undefined(),
        Err(_) => false,
    }
}

async fn cache() -> Result<web_sys::Cache, String> {
    let caches = window().caches().map_err(js_err)?;
    let c = JsFuture::from(caches.open(CACHE_NAME))
        .await
        .map_err(js_err)?;
    Ok(c.unchecked_into())
}

/// Deletes every cached model file.
pub async fn clear_cache() -> Result<(), String> {
    let caches = window().caches().map_err(js_err)?;
    JsFuture::from(caches.delete(CACHE_NAME))
        .await
        .map_err(js_err)?;
    Ok(())
}

/// Fetches `url` as text (no caching: small index files).
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let resp: web_sys::Response = JsFuture::from(window().fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?
        .unchecked_into();
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let text = JsFuture::from(resp.text().map_err(js_err)?)
        .await
        .map_err(js_err)?;
    Ok(text.as_string().unwrap_or_default())
}

/// Where a file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The browser's cache.
    Cache,
    /// The network.
    Network,
}

/// The copy of `url` stored under `version` in the browser cache, if any (unverified).
pub async fn cached(url: &str, version: &str) -> Option<Vec<u8>> {
    cache_get(&cache_key(url, version)).await
}

/// The cache entry of `url` stored under `version`.
fn cache_key(url: &str, version: &str) -> String {
    format!("{url}?v={version}")
}

/// Drops the copy of `url` stored under `version` (best effort).
pub async fn forget_cached(url: &str, version: &str) {
    cache_delete(&cache_key(url, version)).await;
}

/// Deletes the cache entry `key` (best effort).
async fn cache_delete(key: &str) {
    if let Ok(c) = cache().await {
        let _ = JsFuture::from(c.delete_with_str(key)).await;
    }
}

/// Bytes a download takes in before it gives the thread back: chunks that have already
/// arrived resolve their reads as microtasks, so without a pause a fast connection (or a
/// local server) made the whole file, every chunk's copy and every progress update one task
/// of the page's thread (211 ms for a 23 MB model on a loaded 2-core machine).
const DOWNLOAD_STEP: usize = 1 << 20;

/// A download's copy on its way into the browser cache (see [`download`]): kept once the
/// page has checked the bytes, deleted otherwise.
#[must_use = "a cache copy is kept or discarded once the bytes are verified"]
pub struct CacheCopy {
    key: String,
    put: Option<Promise>,
}

impl CacheCopy {
    /// Waits until the copy is stored (best effort: a browser without storage still works,
    /// it just downloads again).
    pub async fn keep(self) {
        if let Some(put) = self.put {
            let _ = JsFuture::from(put).await;
        }
    }

    /// Waits until the copy is stored, then deletes it: the bytes did not verify.
    pub async fn discard(self) {
        let key = self.key.clone();
        self.keep().await;
        cache_delete(&key).await;
    }
}

/// Downloads `url`, reporting the bytes received so far (about once a megabyte). The
/// response is also streamed into the browser cache under `url` + `version` as it arrives
/// (a clone of the response, which the browser writes itself): storing the finished bytes
/// instead copied the whole file twice and had the Cache API take it in on the page's thread,
/// one task of 95 ms of CPU for the 23 MB model (107 ms in a profile).
pub async fn download(
    url: &str,
    version: &str,
    mut progress: impl FnMut(u64),
) -> Result<(Vec<u8>, CacheCopy), String> {
    let resp: web_sys::Response = JsFuture::from(window().fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: network error: {}", js_err(e)))?
        .unchecked_into();
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let copy = cache_copy(&cache_key(url, version), &resp).await;
    let body = resp
        .body()
        .ok_or_else(|| format!("{url}: empty response"))?;
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::new();
    let mut since_pause = 0;
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("{url}: download interrupted: {}", js_err(e)))?;
        let done = Reflect::get(&chunk, &JsValue::from_str("done"))
            .map(|d| d.as_bool().unwrap_or(false))
            .unwrap_or(true);
        if done {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &JsValue::from_str("value"))
            .map_err(js_err)?
            .unchecked_into();
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        since_pause += value.length() as usize;
        if since_pause >= DOWNLOAD_STEP {
            since_pause = 0;
            progress(bytes.len() as u64);
            yield_now().await;
        }
    }
    progress(bytes.len() as u64);
    Ok((bytes, copy))
}

/// Starts storing a clone of `resp` (its body not yet read) under `key`.
async fn cache_copy(key: &str, resp: &web_sys::Response) -> CacheCopy {
    let put = match (cache().await, resp.clone()) {
        (Ok(cache), Ok(clone)) => Some(cache.put_with_str(key, &clone)),
        _ => None,
    };
    CacheCopy {
        key: key.to_string(),
        put,
    }
}

/// Bytes cached under `key` (a same-origin path such as `embeddings/<hash>`), if any.
pub async fn cache_get(key: &str) -> Option<Vec<u8>> {
    let c = cache().await.ok()?;
    let hit = JsFuture::from(c.match_with_str(key)).await.ok()?;
    if hit.is_undefined() {
        return None;
    }
    let resp: web_sys::Response = hit.unchecked_into();
    let buf = JsFuture::from(resp.array_buffer().ok()?).await.ok()?;
    Some(Uint8Array::new(&buf).to_vec())
}

/// Stores verified bytes in the cache under `url` + `version` (best effort: a browser without
/// storage still works, it just downloads again).
pub async fn store_cached(url: &str, version: &str, bytes: &[u8]) {
    let Ok(cache) = cache().await else { return };
    let array = Uint8Array::from(bytes);
    let Ok(resp) = web_sys::Response::new_with_opt_buffer_source(Some(&array)) else {
        return;
    };
    let _ = JsFuture::from(cache.put_with_str(&cache_key(url, version), &resp)).await;
}

/// Reads an uploaded file as text.
pub async fn read_file(file: &web_sys::File) -> Result<String, String> {
    let text = JsFuture::from(file.text()).await.map_err(js_err)?;
    Ok(text.as_string().unwrap_or_default())
}

/// The learn-live worker's loader beside index.html (a module worker): it loads the `learn`
/// wasm, a download made only when the user presses "Train".
const LEARN_WORKER: &str = "./learn_loader.js";

/// Starts the learn-live worker; `on_reply` receives each reply's JSON text, `on_error` what
/// went wrong when the worker itself fails (its script missing, a crash).
pub fn learn_worker(
    mut on_reply: impl FnMut(String) + 'static,
    mut on_error: impl FnMut(String) + 'static,
) -> Result<web_sys::Worker, String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let worker = web_sys::Worker::new_with_options(LEARN_WORKER, &options).map_err(js_err)?;
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            if let Some(text) = event.data().as_string() {
                on_reply(text);
            }
        });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let on_failure = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
        let message = Reflect::get(&event, &JsValue::from_str("message"))
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_else(|| format!("the training worker ({LEARN_WORKER}) failed to load"));
        on_error(message);
    });
    worker.set_onerror(Some(on_failure.as_ref().unchecked_ref()));
    on_failure.forget();
    Ok(worker)
}

/// Posts a request's JSON text to the worker, with `files` (`{path: Uint8Array}`) beside it
/// when given (their buffers transferred, see [`files_object`]).
pub fn post_learn(
    worker: &web_sys::Worker,
    json: &str,
    files: Option<&engine::ModelFiles>,
) -> Result<(), String> {
    let message = js_sys::Array::new();
    message.push(&JsValue::from_str(json));
    let transfer = match files {
        Some(files) => {
            let (object, transfer) = files_object(files);
            message.push(&object);
            transfer
        }
        None => js_sys::Array::new(),
    };
    worker
        .post_message_with_transfer(&message, &transfer)
        .map_err(js_err)
}

/// `files` as `{path: Uint8Array}`, each copied once out of the wasm memory, and the list of
/// their buffers: posted with it as the transfer list, they move to the worker instead of
/// being cloned again on the page's thread (a structured clone of the model held the page for
/// 50-150 ms on a loaded 2-core machine).
pub fn files_object(files: &engine::ModelFiles) -> (js_sys::Object, js_sys::Array) {
    let object = js_sys::Object::new();
    let transfer = js_sys::Array::new();
    for name in files.names() {
        if let Some(bytes) = files.get(name) {
            let array = Uint8Array::from(bytes);
            transfer.push(&array.buffer());
            let _ = Reflect::set(&object, &JsValue::from_str(name), &array);
        }
    }
    (object, transfer)
}
