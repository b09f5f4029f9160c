//! `trainer synth anchors`: distillation anchors for `train --distill-data` (learning without
//! forgetting, engine::training::distill). Each anchor is a free-form instruction that people
//! wrote for one of the set's queries (InstructIR's personas, say), with the query's relevant
//! passage and the passages the base model finds most similar to the query: a list of on-topic
//! passages whose order under the instruction is the teacher's to keep. No label is written
//! that the teacher does not give; the relevant passage is simply the first candidate.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use serde::Deserialize;

use engine::rng::SplitMix64;
use engine::training::records::InstructionNegativeRecord;
use engine::{EvalSet, Mode};

use crate::cli::ModelArgs;

/// `trainer synth anchors`.
#[derive(Args, Debug)]
pub struct AnchorsArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Evaluation-set folder with corpus.jsonl, queries.jsonl and qrels/og.tsv (e.g. ../shared/data/msmarco-subset).
    #[arg(long)]
    pub set: PathBuf,
    /// Instructions written for the set's queries: JSONL lines {"_id": "QUERYID_N", "text": str, "metadata": {"origin_query": str}} (the query found by its text, else by the id before the last '_').
    #[arg(long)]
    pub instructions: PathBuf,
    /// Evaluation-set folders whose queries get no anchor (the held-out ones), by id or text.
    #[arg(long)]
    pub exclude: Vec<PathBuf>,
    /// Passages per anchor: the relevant one and the most similar others.
    #[arg(long, default_value_t = 8)]
    pub candidates: usize,
    /// Anchors per query at most (each with another of its instructions).
    #[arg(long, default_value_t = 2)]
    pub per_query: usize,
    /// Anchors to write (JSONL, instruction-negative records of formats.md §3).
    #[arg(long)]
    pub output: PathBuf,
    /// Seed of the choice of instructions.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// One line of the instructions file.
#[derive(Deserialize)]
struct WrittenInstruction {
    #[serde(rename = "_id", default)]
    id: String,
    text: String,
    #[serde(default)]
    metadata: Metadata,
}

#[derive(Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    origin_query: String,
}

pub(crate) fn key(text: &str) -> String {
    text.trim().to_lowercase()
}

/// Runs `trainer synth anchors`.
pub fn run(args: AnchorsArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.candidates >= 2 && args.per_query >= 1,
        "--candidates must be at least 2 and --per-query at least 1"
    );
    let set = EvalSet::load(&args.set)?;
    let og = set
        .qrels
        .get(&Mode::Og)
        .cloned()
        .with_context(|| format!("{}: qrels/og.tsv is needed", args.set.display()))?;
    let excluded = excluded_queries(&args.exclude)?;
    let written: Vec<WrittenInstruction> = engine::data::read_jsonl(&args.instructions)?;
    let mut per_query = instructions_by_query(&set, &written, &excluded);
    anyhow::ensure!(
        !per_query.is_empty(),
        "{}: no instruction matches a query of {} outside the excluded sets",
        args.instructions.display(),
        args.set.display()
    );
    let found = crate::synth::neighbours(&args.model, &set, &og, args.candidates - 1, 2.0)?;
    let by_passage: BTreeMap<&str, &engine::Passage> =
        set.corpus.iter().map(|p| (p.id.as_str(), p)).collect();
    let text = |id: &str| {
        let p = by_passage[id];
        if p.title.trim().is_empty() {
            p.text.clone()
        } else {
            format!("{} {}", p.title, p.text)
        }
    };
    let mut rng = SplitMix64::new(args.seed);
    let mut records = Vec::new();
    for n in &found {
        let Some(instructions) = per_query.get_mut(&n.query) else {
            continue;
        };
        rng.shuffle(instructions);
        for instruction in instructions.iter().take(args.per_query) {
            records.push(
                InstructionNegativeRecord {
                    query: set.queries[n.query].text.clone(),
                    instruction: instruction.to_string(),
                    positive: text(&n.positive),
                    negatives: n.candidates.iter().map(|c| text(c)).collect(),
                    instruction_negatives: Vec::new(),
                    instruction_reversed: None,
                }
                .to_json(),
            );
        }
    }
    anyhow::ensure!(!records.is_empty(), "no anchor could be made");
    rng.shuffle(&mut records);
    let count = records.len();
    crate::synth::write_jsonl(&args.output, records.into_iter())?;
    eprintln!(
        "{count} distillation anchors written to {} ({} queries with instructions, {} excluded ids and texts)",
        args.output.display(),
        per_query.len(),
        excluded.len()
    );
    Ok(())
}

/// The written instructions of each query of `set` (by index), found by the query's text or
/// the id's prefix; queries in `excluded` (ids and lower-cased texts) get none.
fn instructions_by_query<'a>(
    set: &EvalSet,
    written: &'a [WrittenInstruction],
    excluded: &HashSet<String>,
) -> BTreeMap<usize, Vec<&'a str>> {
    let by_text: BTreeMap<String, usize> = set
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| (key(&q.text), i))
        .collect();
    let by_id: BTreeMap<&str, usize> = set
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    let mut per_query: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for w in written {
        let found = by_text
            .get(&key(&w.metadata.origin_query))
            .copied()
            .or_else(|| {
                w.id.rsplit_once('_')
                    .and_then(|(q, _)| by_id.get(q).copied())
            });
        let kept = found.filter(|&q| {
            let query = &set.queries[q];
            !excluded.contains(&query.id) && !excluded.contains(&key(&query.text))
        });
        if let Some(q) = kept.filter(|_| !w.text.trim().is_empty()) {
            per_query.entry(q).or_default().push(w.text.as_str());
        }
    }
    per_query
}

/// The ids and texts (lower-cased) of the queries of every `--exclude` folder.
pub(crate) fn excluded_queries(dirs: &[PathBuf]) -> anyhow::Result<HashSet<String>> {
    let mut out = HashSet::new();
    for dir in dirs {
        let queries: Vec<engine::Query> = engine::data::read_jsonl(&dir.join("queries.jsonl"))?;
        for q in queries {
            out.insert(key(&q.text));
            out.insert(q.id);
        }
    }
    Ok(out)
}
