//! The web demo: the same `engine` as the native tools, running in the browser (WebGPU or CPU
//! wasm). The user types an instruction and a query and compares three rankings (query alone,
//! with the instruction, with its reversal) while the metrics recompute live.
//!
//! * [`state`]: the page's logic (columns, moves, judgments, live metrics, user corpora, URL),
//!   browser-free and unit-tested natively;
//! * [`session`]: an encoder with an encoded corpus, ranking queries;
//! * [`models`]: the served model index, download verification;
//! * [`learn`]: learn live, the page's training worker (its protocol, and with the `learn`
//!   feature what the worker computes);
//! * `web` and `ui` (wasm32 only): browser plumbing and the leptos components;
//!   `corpus_worker` (wasm32): CPU corpus encoding in Web Workers running this same wasm;
//!   `worker` (wasm32, `learn`): the learn-live worker's message loop.

#![deny(missing_docs)]

#[cfg(target_arch = "wasm32")]
mod corpus_worker;
pub mod learn;
pub mod models;
pub mod session;
pub mod state;
#[cfg(target_arch = "wasm32")]
mod ui;
#[cfg(target_arch = "wasm32")]
mod web;
#[cfg(all(target_arch = "wasm32", feature = "learn"))]
mod worker;

/// Runs the module's static constructors (cubecl registers its IR dialects through
/// `inventory`) once. Without an explicit call wasm-ld links a binary as a "command": it wraps
/// every export so the constructors run again on each call from JavaScript, and the glue calls
/// exports for every DOM node and every value it converts: profiled, re-running them was about
/// two thirds of the 300 ms the page took to render its first rankings. The explicit call
/// tells wasm-ld not to wrap (the wasi-libc convention).
#[cfg(target_arch = "wasm32")]
pub fn run_static_constructors() {
    extern "C" {
        fn __wasm_call_ctors();
    }
    // SAFETY: called once per instance (by `start` for the page and its workers, by the learn
    // worker's `main`), before any code that needs what the constructors set up; wasm-ld
    // synthesises the function for every module.
    unsafe { __wasm_call_ctors() }
}

/// Mounts the page on `<body>`; in a Web Worker (no window) listens as the page's corpus
/// encoder instead (`corpus_worker`: the same wasm, so a worker costs no download). Runs the
/// static constructors first ([`run_static_constructors`]; the binary's `main` calls only
/// this).
///
/// On the page each step is a task of its own: the constructors, parsing the demo set, then
/// the mount. Instantiating the wasm, running the constructors and building the page's
/// elements together held the thread for over 100 ms on a loaded 2-core machine, and the
/// wasm's instantiation alone is 50-55 ms of it there. Nothing before the constructors' task
/// touches what they register (cubecl's dialects).
#[cfg(target_arch = "wasm32")]
pub fn start() {
    console_error_panic_hook::set_once();
    if web_sys::window().is_none() {
        run_static_constructors();
        return corpus_worker::listen();
    }
    wasm_bindgen_futures::spawn_local(async {
        web::yield_now().await;
        run_static_constructors();
        web::yield_now().await;
        ui::demo();
        web::yield_now().await;
        leptos::mount::mount_to_body(ui::App);
    });
}

/// Runs the learn-live worker (the `learn` binary, inside a Web Worker).
#[cfg(all(target_arch = "wasm32", feature = "learn"))]
pub fn start_learn_worker() {
    worker::start();
}
