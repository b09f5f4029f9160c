//! The web demo: its build tools ([`tools`]), the static site with its models ([`site`]), a
//! small static file server ([`serve`]) and the end-to-end browser test ([`e2e`]).

pub mod e2e;
pub mod serve;
pub mod site;
pub mod tools;

pub use e2e::{build_test_trainer, cargo_test, e2e, run_in_browser, trainer, wasm_kernels};
pub use site::{build_site, demo, dist, site_models, Builder, WebProfile};
pub use tools::npm_ci;
