//! `trainer synth attributes`: exactly labelled dual-view records (the `synth` crate's
//! `attributes`) from a corpus with queries and qrels, no LLM.

use std::collections::{BTreeMap, HashSet};

use clap::Args;

use engine::data::records::InstructionNegativeRecord;
use engine::rng::SplitMix64;
use synth::attributes::attribute_record;

use super::heldout::{write_heldout_sets, HeldOut, PassageRef};
use super::source::{
    load_set, neighbours, report_written, write_jsonl, BaseModel, Neighbours, SourceArgs,
};

/// `trainer synth attributes`.
#[derive(Args, Debug)]
pub struct AttributesArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// On-topic candidates considered per query (the most similar unjudged passages).
    #[arg(long, default_value_t = 10)]
    pub candidates: usize,
    /// A candidate must score within this cosine of the relevant passage (equally on topic).
    #[arg(long, default_value_t = 0.1)]
    pub max_score_gap: f64,
    /// Records per query at most (each with another candidate).
    #[arg(long, default_value_t = 2)]
    pub per_query: usize,
    /// Seed of the constraint choice, phrasing and held-out split.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Runs `trainer synth attributes`.
pub fn run(args: AttributesArgs) -> anyhow::Result<()> {
    let (set, og) = load_set(&args.source.set, args.source.heldout_fraction)?;
    let found = neighbours(
        &mut BaseModel::load(&args.source.model)?,
        &set,
        &og,
        args.candidates,
        args.max_score_gap,
    )?;
    let mut made = Made {
        by_id: set.corpus.iter().map(|p| (p.id.as_str(), p)).collect(),
        rng: SplitMix64::new(args.seed),
        train: Vec::new(),
        heldout: Vec::new(),
        kinds: BTreeMap::new(),
        heldout_queries: Vec::new(),
        skipped: set.queries.len() - found.len(),
    };
    for n in &found {
        made.query(&args, &set.queries[n.query], n);
    }
    anyhow::ensure!(!made.train.is_empty(), "{}: no record could be made (no query had an on-topic passage differing on any constraint)", args.source.set.display());
    let out = &args.source.output;
    write_jsonl(out, made.train.iter().map(|r| r.to_json()))?;
    report_written(out, made.train.len(), made.skipped, &made.kinds);
    if let Some(dir) = &args.source.heldout {
        let queries = &made.heldout_queries;
        write_heldout_sets(dir, &set, &og, &made.heldout, queries, &HashSet::new())?;
    }
    Ok(())
}

/// What `synth attributes` has made so far.
struct Made<'a> {
    by_id: BTreeMap<&'a str, &'a engine::Passage>,
    rng: SplitMix64,
    train: Vec<InstructionNegativeRecord>,
    heldout: Vec<HeldOut>,
    kinds: BTreeMap<&'static str, usize>,
    heldout_queries: Vec<&'a engine::Query>,
    skipped: usize,
}

impl<'a> Made<'a> {
    /// Up to `--per-query` records of one query, each of another kind, with the candidates
    /// that disagree with its relevant passage: training records, or held out.
    fn query(&mut self, args: &AttributesArgs, query: &'a engine::Query, n: &Neighbours) {
        let positive = self.by_id[n.positive.as_str()];
        // Drawn either way, so a seed gives the same records with or without --heldout.
        let hold =
            self.rng.uniform() < args.source.heldout_fraction && args.source.heldout.is_some();
        if hold {
            self.heldout_queries.push(query);
        }
        let mut made = 0;
        let mut used_kinds = HashSet::new();
        for candidate_id in &n.candidates {
            if made == args.per_query {
                break;
            }
            let candidate = self.by_id[candidate_id.as_str()];
            let Some(record) = attribute_record(
                &query.text,
                &positive.encoder_text(),
                &candidate.encoder_text(),
                &mut self.rng,
            ) else {
                continue;
            };
            if !used_kinds.insert(record.kind) {
                continue;
            }
            *self.kinds.entry(record.kind).or_default() += 1;
            made += 1;
            if hold {
                self.heldout.push(HeldOut {
                    id: format!("{}-{made}", query.id),
                    record: record.record,
                    kind: record.kind,
                    positive: PassageRef::Corpus(n.positive.clone()),
                    negative: PassageRef::Corpus(candidate_id.clone()),
                });
            } else {
                self.train.push(record.record);
            }
        }
        if made == 0 {
            self.skipped += 1;
        }
    }
}
