//! The learn-live Web Worker (wasm32, feature `learn`): receives [`LearnRequest`]s as JSON text
//! (the first, `start`, with the page's model files beside it as `{path: Uint8Array}`) and
//! posts one [`LearnReply`] for each, in order. Everything it computes is [`Learner`]'s.

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
            let reply = answer(&lesson, event.data());
            let _ = post.post_message(&JsValue::from_str(&reply.to_json()));
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(&LearnReply::Loaded.to_json()));
}

fn now() -> f64 {
    js_sys::Date::now()
}

/// The reply to one message: `[json]` or, for `start`, `[json, files]`.
fn answer(lesson: &RefCell<Option<Learner>>, data: JsValue) -> LearnReply {
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
    match request {
        LearnRequest::Start { seed } => {
            let files = model_files(&parts.get(1));
            let started = Learner::start(&files, seed, BackendKind::Cpu, Device::flex()).and_then(
                |learner| {
                    let reply = learner.started()?;
                    *lesson.borrow_mut() = Some(learner);
                    Ok(reply)
                },
            );
            started.unwrap_or_else(|e| LearnReply::Failed {
                error: e.to_string(),
            })
        }
        other => match lesson.borrow_mut().as_mut() {
            Some(learner) => learner.answer(&other, &now),
            None => LearnReply::Failed {
                error: "no lesson started".into(),
            },
        },
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
