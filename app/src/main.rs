//! Entry point of the web demo (see the library's docs).

#[cfg(target_arch = "wasm32")]
fn main() {
    // `start` runs the static constructors (in a task of their own on the page).
    app::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the app runs in a browser: `cargo xtask demo` builds and serves it");
}
