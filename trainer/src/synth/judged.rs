//! `trainer synth judged`: training records from the judgments of evaluation-set folders
//! (the `synth` crate's `judged`, the path lessons take too): both polarities of every instruction
//! pair, every relevant passage a positive, the judged non-relevant passages as hard
//! negatives, optional InF-IR records, and plain replay. Needs no model and no LLM.

use std::collections::HashSet;
use std::path::PathBuf;

use clap::Args;

use engine::data::records::{RecordFile, TrainingRecord};
use engine::EvalSet;
use synth::judged::{JudgedCounts, JudgedRecords, JudgedSettings, Positives};

use super::source::{excluded_queries, key, write_jsonl};

/// `trainer synth judged`.
#[derive(Args, Debug)]
pub struct JudgedArgs {
    /// Evaluation-set folder (formats.md §1, or a published set `trainer eval --set` reads); repeat to mix several, in order.
    #[arg(long, required = true)]
    pub set: Vec<PathBuf>,
    /// Training records to write (JSONL, formats.md §3).
    #[arg(long)]
    pub output: PathBuf,
    /// Which relevant passages become positives: every (each passage of both groups once) or zip (the groups paired in order).
    #[arg(long, default_value = "every", value_parser = parse_positives)]
    pub positives: Positives,
    /// Plain records per distinct query text under its original instruction (0 = none).
    #[arg(long, default_value_t = 1)]
    pub replay: usize,
    /// Also write each dual-view pair as an InF-IR record (another query of the set as the poisoned query).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub inf_ir: bool,
    /// Each dual-view record lists the whole group its instruction rules out as instruction negatives (the paired passage first; every other record the other way round, so both polarities see whole groups), for `trainer train --excluded-order-weight`.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub whole_groups: bool,
    /// Passages judged for other queries only, added to each record's hard negatives.
    #[arg(long, default_value_t = 0)]
    pub foreign_negatives: usize,
    /// Evaluation-set folders whose queries (by id or text) give no record.
    #[arg(long)]
    pub exclude: Vec<PathBuf>,
    /// Training files (formats.md §3) whose records are appended after the judged ones, each checked line by line: a mix in one file (e.g. `synth renderings --replay false` output for document-attribute instructions).
    #[arg(long)]
    pub mix: Vec<PathBuf>,
    /// Seed of the foreign negatives and the poisoned queries.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

fn parse_positives(s: &str) -> Result<Positives, String> {
    s.parse().map_err(|e: engine::EngineError| e.to_string())
}

/// Runs `trainer synth judged`.
pub fn run(args: JudgedArgs) -> anyhow::Result<()> {
    let excluded: HashSet<String> = excluded_queries(&args.exclude)?;
    let settings = JudgedSettings {
        positives: args.positives,
        foreign_negatives: args.foreign_negatives,
        inf_ir: args.inf_ir,
        replay: args.replay,
        whole_groups: args.whole_groups,
        seed: args.seed,
    };
    let mut records: Vec<TrainingRecord> = Vec::new();
    for dir in &args.set {
        let set = EvalSet::load(dir)?;
        let made = JudgedRecords::from_set(&set, &settings, |q| {
            !excluded.contains(&q.id) && !excluded.contains(&key(&q.text))
        })?;
        eprintln!("{}: {}", dir.display(), describe(&made.counts));
        records.extend(made.records);
    }
    for file in &args.mix {
        let mut mixed = RecordFile::open(file, false, &mut |_, _| {})?;
        let before = records.len();
        for i in 0..mixed.len() {
            records.push(mixed.read(i)?);
        }
        eprintln!(
            "{}: {} records mixed in",
            file.display(),
            records.len() - before
        );
    }
    write_jsonl(
        &args.output,
        records.iter().map(|r| match r {
            TrainingRecord::InstructionNegative(r) => r.to_json(),
            TrainingRecord::InfIr(r) => r.to_json(),
        }),
    )?;
    eprintln!(
        "{} training records written to {}",
        records.len(),
        args.output.display()
    );
    Ok(())
}

fn describe(c: &JudgedCounts) -> String {
    format!(
        "{} dual-view, {} single-view, {} InF-IR and {} replay records; {} kept queries gave none",
        c.dual_view, c.single_view, c.inf_ir, c.replay, c.without_records
    )
}
