//! # synth: training data for instruction following
//!
//! Every program that writes training records (docs/formats.md §3) lives here, beside the one
//! phrasing module they share, and nowhere else:
//!
//! * [`judged`]: records from any evaluation set's own judgments (both polarities of each
//!   instruction pair, judged non-relevant passages as hard negatives, replay), no text
//!   program: what the judged constraint topics train with;
//! * [`lesson`]: the page's learn-live lesson, a judged set split into records and held-out
//!   queries;
//! * [`renderings`]: one relevant passage rendered in two versions that differ in one
//!   property (source, format, length, content), with exact labels;
//! * [`settings`]: passages with their places, years or people moved into one of two
//!   categories (content constraints on where, when and whom);
//! * [`attributes`]: constraints checkable on a passage's text (numbers, years, money, ...);
//! * [`phrasing`]: how an instruction names what it wants, shared by the templates.
//!
//! Why a crate of its own: these are text programs, not the model. The engine keeps what
//! training needs at run time (record formats, batching, objectives, the step and the lesson's
//! loop) and compiles burn; this crate needs only the engine's formats, so it builds without
//! burn, and the trainer (`trainer synth`, `trainer lesson`) and the page (learn live) share
//! it. The pipelines that need a model or a network (neighbours found by the encoder, an LLM's
//! instructions) are the trainer's, on top of these.

#![deny(missing_docs)]

pub mod attributes;
pub mod judged;
pub mod lesson;
pub mod phrasing;
pub mod renderings;
pub mod settings;
