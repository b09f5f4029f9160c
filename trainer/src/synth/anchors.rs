//! `trainer synth anchors`: distillation anchors for `train --distill-data` (learning without
//! forgetting, engine::training::distill). Each anchor is a free-form instruction that people
//! wrote for one of the set's queries (InstructIR's personas, say), with the query's relevant
//! passage and the passages the base model finds most similar to the query: a list of on-topic
//! passages whose order under the instruction is the teacher's to keep. No label is written
//! that the teacher does not give; the relevant passage is simply the first candidate.
//!
//! With `--passages-as-queries N`, N of the set's passages are the queries instead, with no
//! instruction, and the passages the base model finds most similar to each are the candidates:
//! anchors that keep the base model's matching of a long free text against documents (a
//! patient's case against trials, a half-remembered plot against book descriptions), which
//! training on short queries under instructions wears away (RESULTS.md, BIRCO).
//!
//! With `--queries FILE`, long queries written apart from any set (a situation described, as
//! `datasets/situation-queries` holds) are anchors too, with no instruction: their candidates
//! are the passages the base model finds most similar over the sets' corpora joined, so the
//! base model's matching of a described case to documents is what the anchors keep.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use serde::Deserialize;

use engine::data::records::InstructionNegativeRecord;
use engine::rng::SplitMix64;
use engine::EngineError;
use engine::{EvalSet, Mode};

use super::source::{excluded_queries, key, neighbours, write_jsonl, BaseModel};
use crate::args::ModelArgs;

/// `trainer synth anchors`.
#[derive(Args, Debug)]
pub struct AnchorsArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Evaluation-set folder with corpus.jsonl, queries.jsonl and qrels/og.tsv (e.g. ../shared/data/msmarco-subset); repeat for several (--passages-as-queries takes N from each).
    #[arg(long, required = true)]
    pub set: Vec<PathBuf>,
    /// Instructions written for the sets' queries: JSONL lines {"_id": "QUERYID_N", "text": str, "metadata": {"origin_query": str}} (the query found by its text, else by the id before the last '_').
    #[arg(long, required_unless_present_any = ["passages_as_queries", "queries"])]
    pub instructions: Option<PathBuf>,
    /// Instead of written instructions: N passages of each set as queries with no instruction, their most similar passages as the candidates.
    #[arg(long, conflicts_with = "instructions", value_parser = clap::value_parser!(u64).range(1..))]
    pub passages_as_queries: Option<u64>,
    /// Long queries written apart from the sets (queries.jsonl lines of formats.md §1, e.g. datasets/situation-queries/queries.jsonl): each an anchor with no instruction, its candidates its most similar passages over the sets' corpora joined; adds to the other anchors.
    #[arg(long)]
    pub queries: Option<PathBuf>,
    /// Evaluation-set folders whose queries get no anchor (the held-out ones), by id or text.
    #[arg(long)]
    pub exclude: Vec<PathBuf>,
    /// Passages per anchor: the relevant one and the most similar others.
    #[arg(long, default_value_t = 8)]
    pub candidates: usize,
    /// Of the --candidates of an anchor with no instruction (--passages-as-queries, --queries),
    /// how many are drawn (seeded) from the base model's ranks after the nearest ones, down to
    /// --far-depth, instead of being the nearest: the teacher's order then also holds passages
    /// that share only part of the query (on a patient's case, trials on a comorbidity), which
    /// fine-tuning lets climb, not only near-duplicates.
    #[arg(long, default_value_t = 0)]
    pub far_candidates: usize,
    /// The deepest base-model rank a far candidate is drawn from (with --far-candidates).
    #[arg(long, default_value_t = 40)]
    pub far_depth: usize,
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

/// Runs `trainer synth anchors`.
pub fn run(args: AnchorsArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.candidates >= 2 && args.per_query >= 1,
        "--candidates must be at least 2 and --per-query at least 1"
    );
    if args.far_candidates > 0 {
        anyhow::ensure!(
            args.far_candidates < args.candidates && args.far_depth > args.candidates,
            "--far-candidates must be below --candidates (the nearest passage stays) and --far-depth above --candidates"
        );
        anyhow::ensure!(
            args.passages_as_queries.is_some() || args.queries.is_some(),
            "--far-candidates applies to anchors with no instruction: give --passages-as-queries or --queries"
        );
    }
    let excluded = excluded_queries(&args.exclude)?;
    let mut rng = SplitMix64::new(args.seed);
    // Far candidates are drawn from a stream of their own, so the passages chosen as anchors
    // and the file's order are the same with and without them.
    let mut spread = Spread::of(&args, SplitMix64::new(args.seed ^ FAR_STREAM));
    let mut base = BaseModel::load(&args.model)?;
    let mut records = Vec::new();
    let mut sets = Vec::new();
    for dir in &args.set {
        let set = EvalSet::load(dir)?;
        records.extend(match (args.passages_as_queries, &args.instructions) {
            (Some(count), _) => {
                passage_anchors(&mut base, &set, count as usize, &mut rng, &mut spread)?
            }
            (None, Some(instructions)) => {
                instruction_anchors(&args, &mut base, &set, instructions, &excluded, &mut rng)?
            }
            (None, None) => Vec::new(),
        });
        sets.push(set);
    }
    if let Some(file) = &args.queries {
        records.extend(written_query_anchors(
            &mut base,
            &sets,
            file,
            &excluded,
            &mut spread,
        )?);
    }
    anyhow::ensure!(!records.is_empty(), "no anchor could be made");
    rng.shuffle(&mut records);
    let count = records.len();
    write_jsonl(&args.output, records.into_iter())?;
    eprintln!(
        "{count} distillation anchors written to {} ({} excluded ids and texts)",
        args.output.display(),
        excluded.len()
    );
    Ok(())
}

/// Anchors of `set`'s queries under the instructions written for them.
fn instruction_anchors(
    args: &AnchorsArgs,
    base: &mut BaseModel,
    set: &EvalSet,
    instructions: &std::path::Path,
    excluded: &HashSet<String>,
    rng: &mut SplitMix64,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let og = set
        .qrels
        .get(&Mode::Og)
        .cloned()
        .with_context(|| format!("{}: qrels/og.tsv is needed", set.root.display()))?;
    let written: Vec<WrittenInstruction> = engine::data::read_jsonl(instructions)?;
    let mut per_query = instructions_by_query(set, &written, excluded);
    anyhow::ensure!(
        !per_query.is_empty(),
        "{}: no instruction matches a query of {} outside the excluded sets",
        instructions.display(),
        set.root.display()
    );
    let found = neighbours(base, set, &og, args.candidates - 1, 2.0)?;
    let texts = passage_texts(set);
    let mut records = Vec::new();
    for n in &found {
        let Some(instructions) = per_query.get_mut(&n.query) else {
            continue;
        };
        rng.shuffle(instructions);
        for instruction in instructions.iter().take(args.per_query) {
            records.push(anchor(
                &set.queries[n.query].text,
                instruction,
                std::iter::once(&n.positive).chain(&n.candidates),
                &texts,
            ));
        }
    }
    eprintln!(
        "{}: {} queries with instructions",
        set.root.display(),
        per_query.len()
    );
    Ok(records)
}

/// Anchors of `count` passages of `set` (seeded choice) as queries with no instruction.
fn passage_anchors(
    base: &mut BaseModel,
    set: &EvalSet,
    count: usize,
    rng: &mut SplitMix64,
    spread: &mut Spread,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut chosen: Vec<&engine::Passage> = set.corpus.iter().collect();
    rng.shuffle(&mut chosen);
    chosen.truncate(count);
    let as_query = |p: &engine::Passage| format!("passage:{}", p.id);
    let itself: engine::data::Qrels = chosen
        .iter()
        .map(|p| (as_query(p), BTreeMap::from([(p.id.clone(), 1.0)])))
        .collect();
    let derived = EvalSet {
        root: set.root.clone(),
        corpus: set.corpus.clone(),
        queries: chosen
            .iter()
            .map(|p| engine::Query {
                id: as_query(p),
                text: p.encoder_text(),
                instruction_og: String::new(),
                instruction_changed: None,
                instruction_reversed: None,
                constraint: None,
            })
            .collect(),
        qrels: BTreeMap::from([(Mode::Og, itself.clone())]),
        candidates: None,
    };
    let found = neighbours(base, &derived, &itself, spread.ranks_needed(), 2.0)?;
    let texts = passage_texts(set);
    Ok(found
        .into_iter()
        .map(|n| (n.query, spread.choose(n.candidates)))
        .filter(|(_, candidates)| candidates.len() >= 2)
        .map(|(q, candidates)| anchor(&derived.queries[q].text, "", candidates.iter(), &texts))
        .collect())
}

/// Anchors of the queries written in `file` (none in `excluded`, by id or text) against the
/// passages of `sets` joined.
fn written_query_anchors(
    base: &mut BaseModel,
    sets: &[EvalSet],
    file: &Path,
    excluded: &HashSet<String>,
    spread: &mut Spread,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut queries = read_written_queries(file)?;
    queries.retain(|q| !excluded.contains(&q.id) && !excluded.contains(&key(&q.text)));
    let joined = joined_corpus(sets, queries);
    let found: Vec<Vec<String>> = nearest_passages(base, sets, &joined, spread.ranks_needed())?
        .into_iter()
        .map(|ranked| spread.choose(ranked))
        .collect();
    let texts = passage_texts(&joined);
    let records: Vec<serde_json::Value> = joined
        .queries
        .iter()
        .zip(&found)
        .filter(|(_, candidates)| candidates.len() >= 2)
        .map(|(q, candidates)| anchor(&q.text, "", candidates.iter(), &texts))
        .collect();
    eprintln!(
        "{}: {} anchors over {} passages of {} sets",
        file.display(),
        records.len(),
        joined.corpus.len(),
        sets.len()
    );
    Ok(records)
}

/// The seed of the far candidates' own random stream (xor-ed with `--seed`).
const FAR_STREAM: u64 = 0xFA2C_A9D1_DA7E_5EED;

/// Which of the base model's ranked passages an anchor with no instruction keeps: the
/// `candidates - far` nearest, and `far` drawn from the ranks after them down to `far_depth`.
struct Spread {
    candidates: usize,
    far: usize,
    far_depth: usize,
    rng: SplitMix64,
}

impl Spread {
    fn of(args: &AnchorsArgs, rng: SplitMix64) -> Self {
        Spread {
            candidates: args.candidates,
            far: args.far_candidates,
            far_depth: args.far_depth,
            rng,
        }
    }

    /// How many of the base model's ranked passages to ask for.
    fn ranks_needed(&self) -> usize {
        if self.far == 0 {
            self.candidates
        } else {
            self.far_depth
        }
    }

    /// The kept passages of `ranked` (best first), in rank order. Draws nothing when `far` is
    /// 0, so anchors without far candidates stay as they were for a seed.
    fn choose(&mut self, mut ranked: Vec<String>) -> Vec<String> {
        ranked.truncate(self.ranks_needed());
        if self.far == 0 || ranked.len() <= self.candidates {
            ranked.truncate(self.candidates);
            return ranked;
        }
        let near = self.candidates - self.far;
        let mut later: Vec<usize> = (near..ranked.len()).collect();
        self.rng.shuffle(&mut later);
        let mut kept: Vec<usize> = (0..near).chain(later.into_iter().take(self.far)).collect();
        kept.sort_unstable();
        kept.into_iter().map(|i| ranked[i].clone()).collect()
    }
}

/// The ids of the `depth` passages of `joined` (the corpora of `sets` joined) most similar to
/// each of its queries under the base model, best first (by query index).
fn nearest_passages(
    base: &mut BaseModel,
    sets: &[EvalSet],
    joined: &EvalSet,
    depth: usize,
) -> anyhow::Result<Vec<Vec<String>>> {
    let run = base.joined_ranking(sets, joined, depth)?.run;
    Ok(joined
        .queries
        .iter()
        .map(|q| {
            engine::metrics::run::rank(run.docs(&q.id).unwrap_or(&[]))
                .into_iter()
                .take(depth)
                .map(|(d, _)| d.to_string())
                .collect()
        })
        .collect())
}

/// The queries of a queries.jsonl file (formats.md §1): ids unique, every text non-empty.
fn read_written_queries(file: &Path) -> anyhow::Result<Vec<engine::Query>> {
    let text = engine::data::read_text(file)?;
    let queries = engine::data::parse_queries(&text, file)?;
    let lines = engine::data::record_lines(&text).map(|(number, _)| number);
    if let Some((line, q)) = lines.zip(&queries).find(|(_, q)| q.text.trim().is_empty()) {
        return Err(EngineError::data(file, line, format!("query '{}' has no text", q.id)).into());
    }
    anyhow::ensure!(!queries.is_empty(), "{}: no queries", file.display());
    Ok(queries)
}

/// One set holding `queries` and the passages of every set of `sets`, each id prefixed with
/// its set's position (`2:p17`) so that equal ids of different sets stay apart.
fn joined_corpus(sets: &[EvalSet], queries: Vec<engine::Query>) -> EvalSet {
    let corpus = sets
        .iter()
        .enumerate()
        .flat_map(|(k, set)| {
            set.corpus.iter().map(move |p| engine::Passage {
                id: format!("{k}:{}", p.id),
                ..p.clone()
            })
        })
        .collect();
    EvalSet {
        root: PathBuf::from("(the sets' corpora joined)"),
        corpus,
        queries,
        qrels: BTreeMap::new(),
        candidates: None,
    }
}

/// The encoder text (title and text) of every passage of `set`, by id.
fn passage_texts(set: &EvalSet) -> BTreeMap<&str, String> {
    set.corpus
        .iter()
        .map(|p| (p.id.as_str(), p.encoder_text()))
        .collect()
}

/// One anchor as an instruction-negative record: the first candidate is the positive.
fn anchor<'a>(
    query: &str,
    instruction: &str,
    mut candidates: impl Iterator<Item = &'a String>,
    texts: &BTreeMap<&str, String>,
) -> serde_json::Value {
    let text = |id: &String| texts.get(id.as_str()).cloned().unwrap_or_default();
    let positive = candidates.next().map(text).unwrap_or_default();
    InstructionNegativeRecord {
        query: query.to_string(),
        instruction: instruction.to_string(),
        positive,
        negatives: candidates.map(text).collect(),
        instruction_negatives: Vec::new(),
        instruction_reversed: None,
    }
    .to_json()
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
