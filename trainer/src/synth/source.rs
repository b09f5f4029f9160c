//! What the syntheses share: the set a synthesis reads (with the base model that finds each
//! query's on-topic passages), the queries kept out of every training file, and the writer.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use engine::evaluation::{encode_passages, passage_cache_key, rank};
use engine::metrics::run::Run;
use engine::{Embeddings, EvalSet, Mode};

use crate::args::ModelArgs;
use crate::progress;

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

/// What the base model finds around each judged query of a set.
pub struct Neighbours {
    /// Index into `set.queries`.
    pub query: usize,
    /// The relevant passage's id.
    pub positive: String,
    /// The most similar unjudged passages scoring within the gap of the positive, best first.
    pub candidates: Vec<String>,
    /// The most similar other judged query (index into `set.queries`).
    pub nearest_query: Option<usize>,
}

/// Ranks the corpus for the queries with the base model (the corpus encoded once per
/// [`BaseModel`]) and finds, for every query with a relevant passage, its on-topic unjudged candidates and its nearest other query.
pub fn neighbours(
    base: &mut BaseModel,
    set: &EvalSet,
    og: &engine::data::Qrels,
    candidates: usize,
    max_score_gap: f64,
) -> anyhow::Result<Vec<Neighbours>> {
    let BaseRanking {
        passages,
        queries,
        run,
    } = base.ranking(set, candidates + 20)?;
    let row_of = set.passage_rows();
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
    link_nearest_queries(&mut out, &queries);
    Ok(out)
}

/// The base model's embeddings of a set's passages and queries (normalised) and its ranking.
pub struct BaseRanking {
    /// Row `i`: passage `i` of the corpus.
    pub passages: Embeddings,
    /// Row `i`: query `i` of the set, alone.
    pub queries: Embeddings,
    /// Each query's best passages (the set's candidates when it has them).
    pub run: Run,
}

/// The base model, loaded once, with the corpus embeddings it has made so far, keyed by the
/// corpus itself (ids and texts, as the evaluation's passage cache keys them): a synthesis
/// that reads a set twice (its passages as anchors, then written queries over the sets'
/// corpora joined) encodes each corpus once.
pub struct BaseModel {
    encoder: engine::Encoder,
    corpora: HashMap<String, Embeddings>,
}

impl BaseModel {
    /// Loads the model `model` names.
    pub fn load(model: &ModelArgs) -> anyhow::Result<Self> {
        Ok(BaseModel {
            encoder: model.load()?,
            corpora: HashMap::new(),
        })
    }

    /// Encodes `set`'s bare queries and ranks `depth` of its passages for each (its candidates
    /// when it has them).
    pub fn ranking(&mut self, set: &EvalSet, depth: usize) -> anyhow::Result<BaseRanking> {
        let passages = self.corpus(set)?.clone();
        self.rank(set, passages, depth)
    }

    /// [`BaseModel::ranking`] of `joined`, whose corpus is the corpora of `sets` one after
    /// another (ids renamed, texts and order kept): each corpus encoded once, here or before.
    pub fn joined_ranking(
        &mut self,
        sets: &[EvalSet],
        joined: &EvalSet,
        depth: usize,
    ) -> anyhow::Result<BaseRanking> {
        let mut passages = Embeddings::new(self.encoder.dim());
        for set in sets {
            passages.data.extend_from_slice(&self.corpus(set)?.data);
        }
        anyhow::ensure!(
            passages.len() == joined.corpus.len(),
            "the joined corpus has {} passages, its sets {}",
            joined.corpus.len(),
            passages.len()
        );
        self.rank(joined, passages, depth)
    }

    /// The normalised embeddings of `set`'s corpus (encoded with progress the first time).
    fn corpus(&mut self, set: &EvalSet) -> anyhow::Result<&Embeddings> {
        let key = passage_cache_key(&self.encoder.space(), &set.corpus);
        if !self.corpora.contains_key(&key) {
            let bar = progress::bar(set.corpus.len(), "encoding corpus");
            let passages =
                encode_passages(&self.encoder, set, &mut |d, _| bar.set_position(d as u64))?;
            bar.finish_and_clear();
            self.corpora.insert(key.clone(), passages);
        }
        Ok(&self.corpora[&key])
    }

    fn rank(
        &self,
        set: &EvalSet,
        passages: Embeddings,
        depth: usize,
    ) -> anyhow::Result<BaseRanking> {
        let texts: Vec<&str> = set.queries.iter().map(|q| q.text.as_str()).collect();
        let mut queries = self.encoder.encode(&texts)?;
        queries.normalize();
        let run = rank(set, &passages, &queries, depth)?;
        Ok(BaseRanking {
            passages,
            queries,
            run,
        })
    }
}

/// The cosine of two normalised embeddings, in f64.
fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x as f64) * (*y as f64))
        .sum()
}

/// Each found query's most similar other found query (`queries` holds every query's
/// embedding, by index).
fn link_nearest_queries(found: &mut [Neighbours], queries: &Embeddings) {
    let judged: Vec<usize> = found.iter().map(|n| n.query).collect();
    for n in found {
        n.nearest_query = judged
            .iter()
            .copied()
            .filter(|&o| o != n.query)
            .max_by(|&a, &b| {
                dot(queries.row(n.query), queries.row(a))
                    .total_cmp(&dot(queries.row(n.query), queries.row(b)))
            });
    }
}

/// Loads the set and its og qrels, checking the held-out share.
pub fn load_set(
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

/// The one-line report of a written training file.
pub fn report_written(
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

/// Writes JSON lines to `path` atomically, creating its folder.
pub fn write_jsonl(
    path: &Path,
    lines: impl Iterator<Item = serde_json::Value>,
) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("{}: cannot create", parent.display()))?;
    }
    Ok(engine::data::write_jsonl(path, lines)?)
}

/// The ids and texts (lower-cased) of the queries of every `--exclude` folder.
pub fn excluded_queries(dirs: &[PathBuf]) -> anyhow::Result<HashSet<String>> {
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

/// A query's text as the exclusion lists compare it.
pub fn key(text: &str) -> String {
    text.trim().to_lowercase()
}
