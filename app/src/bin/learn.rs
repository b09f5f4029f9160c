//! The learn-live Web Worker's entry point (see the library's `learn` module): a second wasm,
//! loaded only when the user presses "Train".

#[cfg(target_arch = "wasm32")]
fn main() {
    app::run_static_constructors();
    app::start_learn_worker();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the learn-live worker runs in a browser: `cargo xtask demo` builds and serves it");
}
