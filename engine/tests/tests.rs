//! The engine's integration tests, one test binary (one link instead of ten): each module is
//! one area, `common` holds what they share.

mod common;

mod backends;
mod data;
mod encoder;
mod export;
mod fuzz;
mod instruction;
mod metrics;
mod parity;
mod published;
mod retrieval;
#[cfg(feature = "lancedb")]
mod store;
mod training;
