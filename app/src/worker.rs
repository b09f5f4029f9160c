//! The learn-live Web Worker (wasm32, feature `learn`): receives [`LearnRequest`]s as JSON text
//! (the first, `start`, with the page's model files beside it as `{path: Uint8Array}`) and
//! posts one [`LearnReply`] for each, in order. Everything it computes is [`Learner`]'s, on
//! the CPU or on its own WebGPU device (asynchronous readback).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use engine::{BackendKind, Device, ModelFiles};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::learn::{LearnReply, LearnRequest, Learner};

/// Installs the message handler and tells the page the worker is listening.
pub fn start() {
    console_error_panic_hook::set_once();
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let lesson: Rc<RefCell<Option<Learner>>> = Rc::default();
    let post = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let (lesson, post) = (lesson.clone(), post.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let reply = answer(&lesson, event.data()).await;
                let _ = post.post_message(&JsValue::from_str(&reply.to_json()));
            });
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(&LearnReply::Loaded.to_json()));
}

fn now() -> f64 {
    js_sys::Date::now()
}

/// The reply to one message: `[json]` or, for `start`, `[json, files]`. The page sends one
/// request at a time; the lesson is taken out of `lesson` while a request runs.
async fn answer(lesson: &RefCell<Option<Learner>>, data: JsValue) -> LearnReply {
    let parts: js_sys::Array = data.unchecked_into();
    let request = match parts
        .get(0)
        .as_string()
        .ok_or_else(|| "a message without its JSON text".to_string())
        .and_then(|text| serde_json::from_str::<LearnRequest>(&text).map_err(|e| e.to_string()))
    {
        Ok(request) => request,
        Err(error) => return LearnReply::Failed { error },
    };
    let failed = |e: engine::EngineError| LearnReply::Failed {
        error: e.to_string(),
    };
    match request {
        LearnRequest::Start { seed, webgpu } => {
            let files = model_files(&parts.get(1));
            let (backend, device) = match device(webgpu).await {
                Ok(found) => found,
                Err(e) => return failed(e),
            };
            let learner = match Learner::start(&files, seed, backend, device) {
                Ok(learner) => learner,
                Err(e) => return failed(e),
            };
            let reply = learner.started().await.unwrap_or_else(failed);
            *lesson.borrow_mut() = Some(learner);
            reply
        }
        other => {
            let Some(mut learner) = lesson.borrow_mut().take() else {
                return LearnReply::Failed {
                    error: "no lesson started, or one request already running".into(),
                };
            };
            let reply = learner.answer(&other, &now).await;
            *lesson.borrow_mut() = Some(learner);
            reply
        }
    }
}

/// WebGPU when asked for (the worker's own adapter), else the CPU.
async fn device(webgpu: bool) -> engine::Result<(BackendKind, Device)> {
    if webgpu {
        Ok((BackendKind::Wgpu, BackendKind::Wgpu.device_async().await?))
    } else {
        Ok((BackendKind::Cpu, Device::flex()))
    }
}

/// `{path: Uint8Array}` as model files.
fn model_files(object: &JsValue) -> ModelFiles {
    let mut files = BTreeMap::new();
    if let Ok(entries) = js_sys::Object::entries(object.unchecked_ref()).dyn_into::<js_sys::Array>()
    {
        for entry in entries.iter() {
            let pair: js_sys::Array = entry.unchecked_into();
            if let Some(path) = pair.get(0).as_string() {
                files.insert(path, js_sys::Uint8Array::new(&pair.get(1)).to_vec());
            }
        }
    }
    ModelFiles::from_memory("page", files)
}
