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
    /// Relevance-preserving dual-view records: each relevant passage rendered in two versions
    /// (source, format, length, content) that only the instruction separates; plus replay.
    Renderings(RenderingsArgs),
    /// InF-IR and dual-view records from an OpenAI-compatible chat endpoint.
    Llm(crate::synth_llm::LlmArgs),
    /// Records from the judgments of evaluation sets: both polarities of every instruction pair, every relevant passage a positive, replay (no model, no LLM).
    Judged(crate::synth_judged::JudgedArgs),
    /// Distillation anchors for `train --distill-data`: instructions written for the set's queries, each with the query's on-topic passages.
    Anchors(crate::synth_anchors::AnchorsArgs),
}

/// `trainer synth renderings`.
#[derive(Args, Debug)]
pub struct RenderingsArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The hard negative (the most similar unjudged passage) must score within this cosine of the relevant one (2 = any).
    #[arg(long, default_value_t = 2.0)]
    pub max_score_gap: f64,
    /// Dual-view records per query (each along another drawn dimension).
    #[arg(long, default_value_t = 2)]
    pub per_query: usize,
    /// Also write the InF-IR record of each dual-view record (the nearest other query as Q-).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub inf_ir: bool,
    /// Share of instructions phrased as the exclusion of the other value ("anything but a list") rather than a request for their own.
    #[arg(long, default_value_t = 0.3)]
    pub exclusion_share: f64,
    /// Share of instructions that name both values, the wanted and the excluded ("forum posts, not news articles").
    #[arg(long, default_value_t = 0.3)]
    pub contrast_share: f64,
    /// Share of queries whose first record is a setting constraint (where, when, whom: the passage's places, years or people moved into one of two categories) when the passage has one.
    #[arg(long, default_value_t = 0.0)]
    pub setting_share: f64,
    /// Also write each training query's plain retrieval record (no instruction).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub replay: bool,
    /// Seed of the dimensions, phrasing and held-out split.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// What both offline syntheses read and write.
#[derive(Args, Debug)]
pub struct SourceArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Evaluation-set folder with corpus.jsonl, queries.jsonl and qrels/og.tsv (e.g. ../shared/data/msmarco-subset).
    #[arg(long)]
    pub set: PathBuf,
    /// Training records to write (JSONL, formats.md §3).
    #[arg(long)]
    pub output: PathBuf,
    /// Write the held-out queries as evaluation-set folders here (instructions/, retrieval/).
    #[arg(long)]
    pub heldout: Option<PathBuf>,
    /// Share of the queries held out (with --heldout).
    #[arg(long, default_value_t = 0.1)]
    pub heldout_fraction: f64,
}

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

/// Runs `trainer synth ...`.
pub fn run(command: SynthCommand) -> anyhow::Result<()> {
    match command {
        SynthCommand::Attributes(a) => attributes(a),
        SynthCommand::Renderings(a) => renderings(a),
        SynthCommand::Llm(a) => crate::synth_llm::run(a),
        SynthCommand::Anchors(a) => crate::synth_anchors::run(a),
        SynthCommand::Judged(a) => crate::synth_judged::run(a),
    }
}

/// What the base model finds around each judged query of a set.
pub(crate) struct Neighbours {
    /// Index into `set.queries`.
    pub query: usize,
    /// The relevant passage's id.
    pub positive: String,
    /// The most similar unjudged passages scoring within the gap of the positive, best first.
    pub candidates: Vec<String>,
    /// The most similar other judged query (index into `set.queries`).
    pub nearest_query: Option<usize>,
}

/// Encodes the corpus and the queries with the base model and finds, for every query with a
/// relevant passage, its on-topic unjudged candidates and its nearest other query.
pub(crate) fn neighbours(
    model: &ModelArgs,
    set: &EvalSet,
    og: &engine::data::Qrels,
    candidates: usize,
    max_score_gap: f64,
) -> anyhow::Result<Vec<Neighbours>> {
    let encoder = model.load()?;
    let bar = progress::bar(set.corpus.len(), "encoding corpus");
    let passages = encode_passages(&encoder, set, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let texts: Vec<&str> = set.queries.iter().map(|q| q.text.as_str()).collect();
    let mut queries = encoder.encode(&texts)?;
    queries.normalize();
    let run = rank(set, &passages, &queries, candidates + 20)?;
    let row_of = set.passage_rows();
    let dot = |a: &[f32], b: &[f32]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (*x as f64) * (*y as f64))
            .sum()
    };
    let mut out = Vec::new();
    for (q, query) in set.queries.iter().enumerate() {
        let Some(judged) = og.get(&query.id) else {
            continue;
        };
        let Some((positive, _)) = judged.iter().find(|(_, &level)| level > 0.0) else {
            continue;
        };
        let Some(&row) = row_of.get(positive.as_str()) else {
            continue;
        };
        let positive_score = dot(queries.row(q), passages.row(row));
        let candidates = engine::metrics::run::rank(run.docs(&query.id).unwrap_or(&[]))
            .into_iter()
            .filter(|(d, score)| {
                !judged.contains_key(*d) && *score >= positive_score - max_score_gap
            })
            .map(|(d, _)| d.to_string())
            .take(candidates)
            .collect();
        out.push(Neighbours {
            query: q,
            positive: positive.clone(),
            candidates,
            nearest_query: None,
        });
    }
    let judged: Vec<usize> = out.iter().map(|n| n.query).collect();
    for n in &mut out {
        n.nearest_query = judged
            .iter()
            .copied()
            .filter(|&o| o != n.query)
            .max_by(|&a, &b| {
                dot(queries.row(n.query), queries.row(a))
                    .total_cmp(&dot(queries.row(n.query), queries.row(b)))
            });
    }
    Ok(out)
}

/// Loads the set and its og qrels, checking the held-out share.
fn load_set(
    set_dir: &Path,
    heldout_fraction: f64,
) -> anyhow::Result<(EvalSet, engine::data::Qrels)> {
    let set = EvalSet::load(set_dir)?;
    let og = set.qrels.get(&Mode::Og).cloned().with_context(|| {
        format!(
            "{}: qrels/og.tsv is needed (the relevant passage of each query)",
            set_dir.display()
        )
    })?;
    if !(0.0..1.0).contains(&heldout_fraction) {
        anyhow::bail!("--heldout-fraction must be in [0, 1)");
    }
    Ok((set, og))
}

fn attributes(args: AttributesArgs) -> anyhow::Result<()> {
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

fn report_written(
    output: &Path,
    records: usize,
    skipped: usize,
    kinds: &BTreeMap<&'static str, usize>,
) {
    eprintln!(
        "{records} training records written to {} ({skipped} queries gave none); kinds: {}",
        output.display(),
        kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

fn write_heldout_sets(
    dir: &Path,
    set: &EvalSet,
    og: &engine::data::Qrels,
    heldout: &[HeldOut],
    queries: &[&engine::Query],
    removed: &HashSet<String>,
) -> anyhow::Result<()> {
    write_heldout(&dir.join("instructions"), set, heldout, removed)?;
    write_retrieval(&dir.join("retrieval"), set, og, queries)?;
    eprintln!(
        "held out: {} instruction queries in {} and {} plain queries in {} (evaluation sets)",
        heldout.len(),
        dir.join("instructions").display(),
        queries.len(),
        dir.join("retrieval").display()
    );
    Ok(())
}

/// A passage of a held-out record: one of the corpus, or a synthesized version.
enum PassageRef {
    Corpus(String),
    New { id: String, text: String },
}

impl PassageRef {
    fn id(&self) -> &str {
        match self {
            PassageRef::Corpus(id) | PassageRef::New { id, .. } => id,
        }
    }
}

/// A held-out record and where its two passages are.
struct HeldOut {
    id: String,
    record: engine::training::records::InstructionNegativeRecord,
    kind: &'static str,
    positive: PassageRef,
    negative: PassageRef,
}

fn renderings(args: RenderingsArgs) -> anyhow::Result<()> {
    let shares = [args.exclusion_share, args.contrast_share];
    anyhow::ensure!(
        shares.iter().all(|s| (0.0..=1.0).contains(s)) && shares.iter().sum::<f64>() <= 1.0,
        "--exclusion-share and --contrast-share must be in [0, 1] and add up to at most 1"
    );
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.setting_share),
        "--setting-share must be in [0, 1]"
    );
    let (set, og) = load_set(&args.source.set, args.source.heldout_fraction)?;
    let found = neighbours(&args.source.model, &set, &og, 3, args.max_score_gap)?;
    let by_query: BTreeMap<usize, &Neighbours> = found.iter().map(|n| (n.query, n)).collect();
    let mut made = Rendered {
        by_id: set.corpus.iter().map(|p| (p.id.as_str(), p)).collect(),
        set: &set,
        by_query,
        rng: SplitMix64::new(args.seed),
        train: Vec::new(),
        heldout: Vec::new(),
        heldout_queries: Vec::new(),
        removed: HashSet::new(),
        kinds: BTreeMap::new(),
        skipped: set.queries.len() - found.len(),
    };
    // The split has its own stream: every variant with the same seed holds out the same queries.
    let mut split = SplitMix64::for_stream(args.seed, 1);
    for n in &found {
        let hold = split.uniform() < args.source.heldout_fraction && args.source.heldout.is_some();
        made.query(&args, n, hold);
    }
    anyhow::ensure!(
        !made.train.is_empty(),
        "{}: no record could be made",
        args.source.set.display()
    );
    // Seeded shuffle so that a file read in order still mixes kinds.
    made.rng.shuffle(&mut made.train);
    write_jsonl(&args.source.output, made.train.iter().cloned())?;
    report_written(
        &args.source.output,
        made.train.len(),
        made.skipped,
        &made.kinds,
    );
    if let Some(dir) = &args.source.heldout {
        let queries = &made.heldout_queries;
        write_heldout_sets(dir, &set, &og, &made.heldout, queries, &made.removed)?;
    }
    Ok(())
}

/// What `synth renderings` has made so far.
struct Rendered<'a> {
    set: &'a EvalSet,
    by_id: BTreeMap<&'a str, &'a engine::Passage>,
    by_query: BTreeMap<usize, &'a Neighbours>,
    rng: SplitMix64,
    train: Vec<serde_json::Value>,
    heldout: Vec<HeldOut>,
    heldout_queries: Vec<&'a engine::Query>,
    removed: HashSet<String>,
    kinds: BTreeMap<&'static str, usize>,
    skipped: usize,
}

impl<'a> Rendered<'a> {
    fn anchor(&self, q: usize, id: &str) -> engine::training::renderings::Anchor<'a> {
        let p = self.by_id[id];
        engine::training::renderings::Anchor {
            query: self.set.queries[q].text.as_str(),
            title: p.title.as_str(),
            text: p.text.as_str(),
        }
    }

    /// Up to `--per-query` renderings of one query's relevant passage: training records, or a
    /// held-out evaluation query when `hold`; plus its replay record.
    fn query(&mut self, args: &RenderingsArgs, n: &Neighbours, hold: bool) {
        use engine::training::renderings::{random_dimension, rendered_records, replay_record};
        let set = self.set;
        let query = &set.queries[n.query];
        let positive = self.anchor(n.query, &n.positive);
        let negative = n.candidates.first().map(|c| self.anchor(n.query, c));
        let poisoned = n
            .nearest_query
            .filter(|_| args.inf_ir)
            .map(|o| self.anchor(o, &self.by_query[&o].positive));
        let term = engine::training::attributes::distinguishing_word(
            positive.text,
            negative.map(|a| a.text).unwrap_or(""),
            positive.query,
            &mut self.rng,
        );
        let mix = engine::training::renderings::PhrasingMix {
            exclusion: args.exclusion_share,
            contrast: args.contrast_share,
        };
        let mut setting =
            engine::training::settings::applicable(positive.query, positive.text, &mut self.rng)
                .filter(|_| self.rng.uniform() < args.setting_share);
        let mut made = 0;
        for attempt in 0..args.per_query * 4 {
            if made == args.per_query {
                break;
            }
            let dimension = match setting.take() {
                Some(s) => engine::training::renderings::Dimension::Setting(s),
                None => random_dimension(term.clone(), &mut self.rng),
            };
            let Some(records) =
                rendered_records(&dimension, positive, negative, poisoned, mix, &mut self.rng)
            else {
                continue;
            };
            made += 1;
            *self.kinds.entry(records.kind).or_default() += 1;
            if hold {
                self.hold_out(n, &query.id, attempt, records.kind, records.dual_view);
            } else {
                self.train.push(records.dual_view.to_json());
                self.train.extend(records.inf_ir.map(|r| r.to_json()));
            }
        }
        if hold {
            self.heldout_queries.push(query);
        } else if args.replay {
            self.train.push(replay_record(positive, negative).to_json());
            *self.kinds.entry("replay").or_default() += 1;
        }
        if made == 0 {
            self.skipped += 1;
        }
    }

    /// A held-out rendering: both versions join the evaluation corpus, the passage they were
    /// made from leaves it.
    fn hold_out(
        &mut self,
        n: &Neighbours,
        query_id: &str,
        attempt: usize,
        kind: &'static str,
        d: engine::training::records::InstructionNegativeRecord,
    ) {
        self.removed.insert(n.positive.clone());
        self.heldout.push(HeldOut {
            id: format!("{query_id}-{attempt}"),
            kind,
            positive: PassageRef::New {
                id: format!("{}~{attempt}a", n.positive),
                text: d.positive.clone(),
            },
            negative: PassageRef::New {
                id: format!("{}~{attempt}b", n.positive),
                text: d.instruction_negatives[0].clone(),
            },
            record: d,
        });
    }
}

pub(crate) fn write_jsonl(
    path: &Path,
    lines: impl Iterator<Item = serde_json::Value>,
) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("{}: cannot create", parent.display()))?;
    }
    Ok(engine::data::write_jsonl(path, lines)?)
}

/// The corpus of `set` without the `removed` ids, plus `extra` passages.
fn corpus_with(
    set: &EvalSet,
    removed: &HashSet<String>,
    extra: &[(&str, &str)],
) -> Vec<engine::Passage> {
    let added = extra.iter().map(|(id, text)| engine::Passage {
        id: id.to_string(),
        title: String::new(),
        text: text.to_string(),
    });
    set.corpus
        .iter()
        .filter(|p| !removed.contains(&p.id))
        .cloned()
        .chain(added)
        .collect()
}

/// The held-out queries without instructions, with their original judgments: the general
/// retrieval check on queries the model never trained on.
fn write_retrieval(
    dir: &Path,
    set: &EvalSet,
    og: &engine::data::Qrels,
    queries: &[&engine::Query],
) -> anyhow::Result<()> {
    let judged = queries
        .iter()
        .filter_map(|q| Some((q.id.clone(), og.get(&q.id)?.clone())))
        .collect();
    let plain = queries
        .iter()
        .map(|q| engine::Query {
            id: q.id.clone(),
            text: q.text.clone(),
            instruction_og: String::new(),
            instruction_changed: None,
            instruction_reversed: None,
            constraint: None,
        })
        .collect();
    EvalSet {
        root: dir.to_path_buf(),
        corpus: corpus_with(set, &HashSet::new(), &[]),
        queries: plain,
        qrels: [(Mode::Og, judged)].into(),
        candidates: None,
    }
    .write(dir)?;
    Ok(())
}

/// The held-out records as an evaluation set over the corpus (synthesized versions added, the
/// passages they were made from removed).
fn write_heldout(
    dir: &Path,
    set: &EvalSet,
    records: &[HeldOut],
    removed: &HashSet<String>,
) -> anyhow::Result<()> {
    let extra: Vec<(&str, &str)> = records
        .iter()
        .flat_map(|r| [&r.positive, &r.negative])
        .filter_map(|p| match p {
            PassageRef::New { id, text } => Some((id.as_str(), text.as_str())),
            PassageRef::Corpus(_) => None,
        })
        .collect();
    let queries = records
        .iter()
        .map(|r| engine::Query {
            id: r.id.clone(),
            text: r.record.query.clone(),
            instruction_og: String::new(),
            instruction_changed: Some(r.record.instruction.clone()),
            instruction_reversed: r.record.instruction_reversed.clone(),
            constraint: Some(r.kind.to_string()),
        })
        .collect();
    // Under the query alone both passages are relevant; the instruction keeps one of them,
    // its reversal the other.
    let judged = |positive_level: f64, negative_level: f64| -> engine::data::Qrels {
        records
            .iter()
            .map(|r| {
                let levels = [
                    (r.positive.id().to_string(), positive_level),
                    (r.negative.id().to_string(), negative_level),
                ];
                (r.id.clone(), levels.into())
            })
            .collect()
    };
    EvalSet {
        root: dir.to_path_buf(),
        corpus: corpus_with(set, removed, &extra),
        queries,
        qrels: [
            (Mode::Og, judged(1.0, 1.0)),
            (Mode::Changed, judged(1.0, 0.0)),
            (Mode::Reversed, judged(0.0, 1.0)),
        ]
        .into(),
        candidates: None,
    }
    .write(dir)?;
    Ok(())
}
