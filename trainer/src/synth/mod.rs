//! `trainer synth`: making instruction-following training data.
//!
//! `synth attributes` needs no LLM: for every query of an evaluation-set folder with a
//! relevant passage P, the base model retrieves the most similar unjudged passages (on topic,
//! by construction), and a text constraint that P and one of them disagree on becomes a
//! dual-view record (the `synth` crate's `attributes`). A seeded share of the queries is held out
//! as an evaluation set (og = the query alone, both passages relevant; changed = the
//! instruction; reversed = its reversal), so the recipe can measure p-MRR, WISE and SICR on
//! instructions the model never trained on.

//!
//! Every generator is the `synth` crate's; these modules read the sets, run the base model
//! where a synthesis needs it (`source::neighbours`), and write the records and held-out sets.

mod anchors;
mod attributes;
mod heldout;
mod judged;
mod llm;
mod renderings;
mod source;

use clap::Subcommand;

/// `trainer synth`.
#[derive(Subcommand, Debug)]
pub enum SynthCommand {
    /// Exactly labelled dual-view records from a corpus with queries and qrels (no LLM).
    Attributes(attributes::AttributesArgs),
    /// Relevance-preserving dual-view records: each relevant passage rendered in two versions
    /// (source, format, length, content) that only the instruction separates; plus replay.
    Renderings(renderings::RenderingsArgs),
    /// InF-IR and dual-view records from an OpenAI-compatible chat endpoint.
    Llm(llm::LlmArgs),
    /// Records from the judgments of evaluation sets: both polarities of every instruction pair, every relevant passage a positive, replay (no model, no LLM).
    Judged(judged::JudgedArgs),
    /// Distillation anchors for `train --distill-data`: instructions written for the set's queries, each with the query's on-topic passages.
    Anchors(anchors::AnchorsArgs),
}

/// Runs `trainer synth ...`.
pub fn run(command: SynthCommand) -> anyhow::Result<()> {
    match command {
        SynthCommand::Attributes(a) => attributes::run(a),
        SynthCommand::Renderings(a) => renderings::run(a),
        SynthCommand::Llm(a) => llm::run(a),
        SynthCommand::Anchors(a) => anchors::run(a),
        SynthCommand::Judged(a) => judged::run(a),
    }
}
