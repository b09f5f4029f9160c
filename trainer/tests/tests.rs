//! The trainer's integration tests, one test binary (ripgrep's layout): each module drives
//! the `trainer` binary through one area, `common` holds what they share.

mod common;

mod cli;
mod eval;
mod llm_server;
mod recipes;
#[cfg(feature = "lancedb")]
mod store;
mod synth;
mod train;
