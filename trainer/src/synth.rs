//! `trainer synth`: making instruction-following training data.
//!
//! `synth attributes` needs no LLM: for every query of an evaluation-set folder with a
//! relevant passage P, the base model retrieves the most similar unjudged passages (on topic,
//! by construction), and a text constraint that P and one of them disagree on becomes a
//! dual-view record (engine::training::attributes). A seeded share of the queries is held out
//! as an evaluation set (og = the query alone, both passages relevant; changed = the
//! instruction; reversed = its reversal), so the recipe can measure p-MRR, WISE and SICR on
//! instructions the model never trained on.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use engine::evaluation::{encode_passages, rank};
use engine::rng::SplitMix64;
use engine::training::attributes::attribute_record;
use engine::{EvalSet, Mode};

use crate::cli::ModelArgs;
use crate::progress;

/// `trainer synth`.
#[derive(Subcommand, Debug)]
pub enum SynthCommand {
    /// Exactly labelled dual-view records from a corpus with queries and qrels (no LLM).
    Attributes(AttributesArgs),
    /// InF-IR and dual-view records from an OpenAI-compatible chat endpoint.
    Llm(crate::synth_llm::LlmArgs),
}

/// `trainer synth attributes`.
#[derive(Args, Debug)]
pub struct AttributesArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Evaluation-set folder with corpus.jsonl, queries.jsonl and qrels/og.tsv (e.g. ../shared/data/msmarco-subset).
    #[arg(long)]
    pub set: PathBuf,
    /// Training records to write (JSONL, formats.md §3).
    #[arg(long)]
    pub output: PathBuf,
    /// Write the held-out queries as an evaluation-set folder here.
    #[arg(long)]
    pub heldout: Option<PathBuf>,
    /// Share of the queries held out (with --heldout).
    #[arg(long, default_value_t = 0.1)]
    pub heldout_fraction: f64,
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

/// Runs `trainer synth ...`.
pub fn run(command: SynthCommand) -> anyhow::Result<()> {
    match command {
        SynthCommand::Attributes(a) => attributes(a),
        SynthCommand::Llm(a) => crate::synth_llm::run(a),
    }
}

fn attributes(args: AttributesArgs) -> anyhow::Result<()> {
    let set = EvalSet::load(&args.set)?;
    let og = set.qrels.get(&Mode::Og).with_context(|| {
        format!(
            "{}: qrels/og.tsv is needed (the relevant passage of each query)",
            args.set.display()
        )
    })?;
    if !(0.0..1.0).contains(&args.heldout_fraction) {
        anyhow::bail!("--heldout-fraction must be in [0, 1)");
    }
    let encoder = args.model.load()?;
    let bar = progress::bar(set.corpus.len(), "encoding corpus");
    let passages = encode_passages(&encoder, &set, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let texts: Vec<&str> = set.queries.iter().map(|q| q.text.as_str()).collect();
    let mut queries = encoder.encode(&texts)?;
    queries.normalize();
    let depth = args.candidates + 20;
    let run = rank(&set, &passages, &queries, depth)?;
    let by_id: BTreeMap<&str, &engine::Passage> =
        set.corpus.iter().map(|p| (p.id.as_str(), p)).collect();
    let row_of: BTreeMap<&str, usize> = set
        .corpus
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.as_str(), i))
        .collect();

    let mut rng = SplitMix64::new(args.seed);
    let mut train = Vec::new();
    let mut heldout: Vec<(
        String,
        String,
        engine::training::attributes::AttributeRecord,
        String,
        String,
    )> = Vec::new();
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut heldout_queries: Vec<&engine::Query> = Vec::new();
    let mut skipped = 0usize;
    for (q, query) in set.queries.iter().enumerate() {
        let Some(judged) = og.get(&query.id) else {
            continue;
        };
        let Some((positive_id, _)) = judged.iter().find(|(_, &level)| level > 0.0) else {
            continue;
        };
        let Some(positive) = by_id.get(positive_id.as_str()) else {
            continue;
        };
        let positive_score: f64 = queries
            .row(q)
            .iter()
            .zip(passages.row(row_of[positive_id.as_str()]))
            .map(|(a, b)| (*a as f64) * (*b as f64))
            .sum();
        let candidates: Vec<&str> = engine::metrics::run::rank(run.docs(&query.id).unwrap_or(&[]))
            .into_iter()
            .filter(|(d, score)| {
                !judged.contains_key(*d) && *score >= positive_score - args.max_score_gap
            })
            .map(|(d, _)| d)
            .take(args.candidates)
            .collect();
        // Drawn either way, so a seed gives the same records with or without --heldout.
        let hold = rng.uniform() < args.heldout_fraction && args.heldout.is_some();
        if hold {
            heldout_queries.push(query);
        }
        let mut made = 0;
        let mut used_kinds = HashSet::new();
        for candidate_id in candidates {
            if made == args.per_query {
                break;
            }
            let candidate = by_id[candidate_id];
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
                heldout.push((
                    format!("{}-{made}", query.id),
                    query.id.clone(),
                    record,
                    positive_id.clone(),
                    candidate_id.to_string(),
                ));
            } else {
                train.push(record);
            }
        }
        if made == 0 {
            skipped += 1;
        }
    }
    anyhow::ensure!(!train.is_empty(), "{}: no record could be made (no query had an on-topic passage differing on any constraint)", args.set.display());
    write_jsonl(&args.output, train.iter().map(|r| r.record.to_json()))?;
    eprintln!(
        "{} training records written to {} ({} queries gave none); constraints: {}",
        train.len(),
        args.output.display(),
        skipped,
        kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(dir) = &args.heldout {
        write_heldout(&dir.join("instructions"), &set, &heldout)?;
        write_retrieval(&dir.join("retrieval"), &set, og, &heldout_queries)?;
        eprintln!(
            "held out: {} instruction queries in {} and {} plain queries in {} (evaluation sets)",
            heldout.len(),
            dir.join("instructions").display(),
            heldout_queries.len(),
            dir.join("retrieval").display()
        );
    }
    Ok(())
}

fn write_jsonl(path: &Path, lines: impl Iterator<Item = serde_json::Value>) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("{}: cannot create", parent.display()))?;
    }
    let partial = path.with_extension("partial");
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(&partial)
            .with_context(|| format!("{}: cannot create", partial.display()))?,
    );
    for line in lines {
        writeln!(f, "{line}")?;
    }
    f.flush()?;
    drop(f);
    std::fs::rename(&partial, path).with_context(|| format!("{}: cannot write", path.display()))
}

/// Creates an evaluation-set folder `dir` (with `qrels/`) holding the whole corpus of `set`.
fn write_corpus(dir: &Path, set: &EvalSet) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("qrels"))
        .with_context(|| format!("{}: cannot create", dir.display()))?;
    write_jsonl(
        &dir.join("corpus.jsonl"),
        set.corpus
            .iter()
            .map(|p| serde_json::json!({"_id": p.id, "title": p.title, "text": p.text})),
    )
}

/// The held-out queries without instructions, with their original judgments: the general
/// retrieval check on queries the model never trained on.
fn write_retrieval(
    dir: &Path,
    set: &EvalSet,
    og: &engine::data::Qrels,
    queries: &[&engine::Query],
) -> anyhow::Result<()> {
    write_corpus(dir, set)?;
    write_jsonl(
        &dir.join("queries.jsonl"),
        queries
            .iter()
            .map(|q| serde_json::json!({"_id": q.id, "text": q.text})),
    )?;
    let mut text = String::from("query-id\tcorpus-id\tscore\n");
    for q in queries {
        for (doc, level) in og.get(&q.id).into_iter().flatten() {
            text.push_str(&format!("{}\t{doc}\t{level}\n", q.id));
        }
    }
    std::fs::write(dir.join("qrels/og.tsv"), text)
        .with_context(|| format!("{}: cannot write", dir.display()))
}

/// The held-out records as an evaluation set over the whole corpus.
fn write_heldout(
    dir: &Path,
    set: &EvalSet,
    records: &[(
        String,
        String,
        engine::training::attributes::AttributeRecord,
        String,
        String,
    )],
) -> anyhow::Result<()> {
    write_corpus(dir, set)?;
    write_jsonl(
        &dir.join("queries.jsonl"),
        records.iter().map(|(id, _, r, _, _)| {
            serde_json::json!({
                "_id": id,
                "text": r.record.query,
                "instruction_og": "",
                "instruction_changed": r.record.instruction,
                "instruction_reversed": r.record.instruction_reversed,
                "constraint": r.kind,
            })
        }),
    )?;
    for (mode, positive_level, candidate_level) in
        [("og", 1, 1), ("changed", 1, 0), ("reversed", 0, 1)]
    {
        let mut text = String::from("query-id\tcorpus-id\tscore\n");
        for (id, _, _, positive, candidate) in records {
            text.push_str(&format!(
                "{id}\t{positive}\t{positive_level}\n{id}\t{candidate}\t{candidate_level}\n"
            ));
        }
        std::fs::write(dir.join(format!("qrels/{mode}.tsv")), text)?;
    }
    Ok(())
}
