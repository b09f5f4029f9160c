//! `trainer synth attributes`: exactly labelled dual-view records (the `synth` crate's
//! `attributes`) from a corpus with queries and qrels, no LLM.

use std::collections::{BTreeMap, HashSet};

use clap::Args;

use engine::rng::SplitMix64;
use synth::attributes::attribute_record;

use super::heldout::{write_heldout_sets, HeldOut, PassageRef};
use super::source::{load_set, neighbours, report_written, write_jsonl, SourceArgs};

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
        &args.source.model,
        &set,
        &og,
        args.candidates,
        args.max_score_gap,
    )?;
    let by_id: BTreeMap<&str, &engine::Passage> =
        set.corpus.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut rng = SplitMix64::new(args.seed);
    let mut train = Vec::new();
    let mut heldout: Vec<HeldOut> = Vec::new();
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut heldout_queries: Vec<&engine::Query> = Vec::new();
    let mut skipped = set.queries.len() - found.len();
    for n in &found {
        let query = &set.queries[n.query];
        let positive = by_id[n.positive.as_str()];
        // Drawn either way, so a seed gives the same records with or without --heldout.
        let hold = rng.uniform() < args.source.heldout_fraction && args.source.heldout.is_some();
        if hold {
            heldout_queries.push(query);
        }
        let mut made = 0;
        let mut used_kinds = HashSet::new();
        for candidate_id in &n.candidates {
            if made == args.per_query {
                break;
            }
            let candidate = by_id[candidate_id.as_str()];
            let Some(record) = attribute_record(
                &query.text,
                &positive.encoder_text(),
                &candidate.encoder_text(),
                &mut rng,
            ) else {
                continue;
            };
            if !used_kinds.insert(record.kind) {
                continue;
            }
            *kinds.entry(record.kind).or_default() += 1;
            made += 1;
            if hold {
                heldout.push(HeldOut {
                    id: format!("{}-{made}", query.id),
                    record: record.record,
                    kind: record.kind,
                    positive: PassageRef::Corpus(n.positive.clone()),
                    negative: PassageRef::Corpus(candidate_id.clone()),
                });
            } else {
                train.push(record.record);
            }
        }
        if made == 0 {
            skipped += 1;
        }
    }
    anyhow::ensure!(!train.is_empty(), "{}: no record could be made (no query had an on-topic passage differing on any constraint)", args.source.set.display());
    write_jsonl(&args.source.output, train.iter().map(|r| r.to_json()))?;
    report_written(&args.source.output, train.len(), skipped, &kinds);
    if let Some(dir) = &args.source.heldout {
        write_heldout_sets(dir, &set, &og, &heldout, &heldout_queries, &HashSet::new())?;
    }
    Ok(())
}
