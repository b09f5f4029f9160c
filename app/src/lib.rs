//! The web demo: the same `engine` as the native tools, running in the browser (WebGPU or CPU
//! wasm). The user types an instruction and a query and compares three rankings (query alone,
//! with the instruction, with its reversal) while the metrics recompute live.
//!
//! * [`state`]: the page's logic (columns, moves, judgments, live metrics, user corpora, URL),
//!   browser-free and unit-tested natively;
//! * [`session`]: an encoder with an encoded corpus, ranking queries;
//! * [`models`]: the served model index, download verification;
//! * `web` and `ui` (wasm32 only): browser plumbing and the leptos components.

#![deny(missing_docs)]

pub mod models;
pub mod session;
pub mod state;
#[cfg(target_arch = "wasm32")]
mod ui;
#[cfg(target_arch = "wasm32")]
mod web;

/// Mounts the page on `<body>`.
#[cfg(target_arch = "wasm32")]
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(ui::App);
}
