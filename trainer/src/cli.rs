//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::args::positive;
pub use crate::args::ModelArgs;

/// Instruction-following retrieval: embed, index and search with a BERT-family encoder.
#[derive(Parser, Debug)]
#[command(name = "trainer", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Embed JSONL texts ({"_id", "text"} per line) into JSONL embeddings.
    Embed(EmbedArgs),
    /// Encode a corpus once into a persistent index file (or one shard of it).
    Index(IndexArgs),
    /// Merge shard index files (`trainer index --shard i/n`) into one index.
    IndexMerge(IndexMergeArgs),
    /// Write an index file's embeddings into a LanceDB table and train its ANN index
    /// (needs the `lancedb` build feature).
    Store(StoreArgs),
    /// Rank a corpus for a query, optionally under an instruction.
    Search(SearchArgs),
    /// Rank the built-in demo corpus under an instruction and its reversal, side by side.
    Demo(DemoArgs),
    /// Evaluate runs or a model: nDCG, MAP, MRR, Recall, P, p-MRR, WISE, SICR; compare systems.
    Eval(EvalArgs),
    /// Copy a model folder (the files the engine reads), optionally with F16 weights for the web.
    Export(ExportArgs),
    /// Move a fine-tuned model's weights part of the way back to the model it started from
    /// (weight-space ensembling): most of the fine-tuning's gain, most of the start's general
    /// retrieval, no training.
    Interpolate(InterpolateArgs),
    /// Fine-tune an encoder to follow instructions (InF-Embed objectives, InfoNCE, dual views).
    Train(TrainArgs),
    /// Learn live as the web page's teach mode does: a few steps on dual-view records built
    /// from an evaluation set's judgments, scored after each step on queries it does not train on.
    Lesson(LessonArgs),
    /// Make instruction-following training data (offline attribute constraints, or an LLM).
    Synth {
        /// Which synthesis.
        #[command(subcommand)]
        command: crate::synth::SynthCommand,
    },
}

/// `trainer train`: every setting comes from `--config FILE` (JSON), overridden by the flags
/// below; the defaults are shown with each flag.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// JSON file with any of the settings below (missing ones take their defaults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Continue the run in --output from its newest checkpoint (exactly where it stopped).
    #[arg(long)]
    pub resume: bool,
    /// Skip malformed training records (counted and reported) instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_records: bool,
    #[command(flatten)]
    pub overrides: crate::train::config::TrainOverrides,
}

/// `trainer interpolate`.
#[derive(Args, Debug)]
pub struct InterpolateArgs {
    /// The model the fine-tuning started from.
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    pub start: PathBuf,
    /// The fine-tuned model (its other files are copied).
    #[arg(long)]
    pub tuned: PathBuf,
    /// Share of the start's weights: 0 = the fine-tuned model, 1 = the start, 0.3 = 0.7 x
    /// fine-tuned + 0.3 x start; negative extrapolates past the fine-tuned model, away from the
    /// start (-0.25 = 1.25 x fine-tuned - 0.25 x start).
    #[arg(long, value_parser = share, allow_negative_numbers = true)]
    pub start_share: f64,
    /// Destination folder (created).
    #[arg(long)]
    pub output: PathBuf,
}

/// A share in [-1, 1].
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if engine::training::interpolate::START_SHARES.contains(&v) => Ok(v),
        _ => Err(format!("'{text}' is not a number within -1 and 1")),
    }
}

/// `trainer lesson`.
#[derive(Args, Debug)]
pub struct LessonArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Evaluation set (formats.md §1) the lesson is built from; default the built-in demo set.
    #[arg(long)]
    pub set: Option<PathBuf>,
    /// Only the set's queries whose id starts with this and "-" (one topic of a judged-topics set, e.g. `--topic w2-031` keeps w2-031-i1, w2-031-i2, ...).
    #[arg(long)]
    pub topic: Option<String>,
    /// Run folder: records.jsonl and config.json (`trainer train --config DIR/config.json`
    /// takes the same steps), metrics.jsonl, and the trained model in model/.
    #[arg(long)]
    pub output: PathBuf,
    /// Optimiser steps.
    #[arg(long, default_value_t = 8, value_parser = positive)]
    pub steps: usize,
    /// Seed of the record order and the I-block sampling.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// `trainer export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Source model folder.
    #[arg(long, env = "IFIR_MODEL", default_value = "models/all-MiniLM-L6-v2")]
    pub model: PathBuf,
    /// Destination folder (created).
    #[arg(long)]
    pub output: PathBuf,
    /// Store the weights as F16 (half the size).
    #[arg(long, conflicts_with = "int8")]
    pub f16: bool,
    /// Store the matrices as int8 with one scale per row, the rest as F16 (a quarter of the
    /// size; what the web demo serves).
    #[arg(long)]
    pub int8: bool,
    /// A web deployment's `models/index.json` to list the exported files in (sizes and
    /// sha256; created when absent, an entry with the same key replaced).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// The model's key in the index (default: the output folder's name).
    #[arg(long, requires = "index")]
    pub key: Option<String>,
    /// The model's name in the page's picker (default: the key).
    #[arg(long, requires = "index")]
    pub name: Option<String>,
}

/// `trainer embed`.
#[derive(Args, Debug)]
pub struct EmbedArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Input JSONL: one {"_id": str, "text": str} per line.
    #[arg(long)]
    pub input: PathBuf,
    /// Output JSONL: one {"_id": str, "embedding": [floats]} per line, in input order.
    #[arg(long)]
    pub output: PathBuf,
    /// Embed the input this many times and print each pass's seconds and the rate after the
    /// first pass as one JSON line (a throughput measurement: a GPU compiles its kernels
    /// during the first pass).
    #[arg(long, default_value_t = 1, value_parser = crate::args::positive)]
    pub repeat: usize,
}

/// `trainer index`.
#[derive(Args, Debug)]
pub struct IndexArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Corpus JSONL ({"_id", "title"?, "text"} per line).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Index file to write.
    #[arg(long)]
    pub output: PathBuf,
    /// Encode only part I of N (from 0) of the corpus, e.g. `--shard 2/8`: run one process
    /// (or machine) per part, then `trainer index-merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

/// `trainer index-merge`.
#[derive(Args, Debug)]
pub struct IndexMergeArgs {
    /// The merged index file to write.
    #[arg(long)]
    pub output: PathBuf,
    /// Every shard of the corpus, in any order.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// `trainer store`.
#[derive(Args, Debug)]
pub struct StoreArgs {
    /// Index file to read (`trainer index`, or `index-merge` of shards).
    #[arg(long)]
    pub index: PathBuf,
    /// LanceDB database folder (created when absent).
    #[arg(long)]
    pub store: PathBuf,
    /// Table to write.
    #[arg(long, default_value = "corpus")]
    pub table: String,
    /// Replace an existing table of that name.
    #[arg(long)]
    pub overwrite: bool,
    /// ANN index: ivf-pq (product-quantised, compact), ivf-hnsw-sq, ivf-flat, or none.
    #[arg(long, default_value = "ivf-pq", value_parser = parse_ann)]
    pub ann: engine::retrieval::store::AnnIndex,
    /// IVF partitions (default: LanceDB's, about the square root of the row count).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub partitions: Option<u32>,
}

fn parse_ann(s: &str) -> Result<engine::retrieval::store::AnnIndex, String> {
    engine::retrieval::store::AnnIndex::parse(s).map_err(|e| e.to_string())
}

/// How `trainer search --store` queries the table.
#[derive(Args, Debug, Clone)]
pub struct StoreQueryArgs {
    /// LanceDB database folder (`trainer store`): search its table through the ANN index.
    /// With --index as well, also report recall@k against exact search over that index.
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Table of --store.
    #[arg(long, default_value = "corpus", requires = "store")]
    pub table: String,
    /// IVF partitions probed per query (more: higher recall, slower).
    #[arg(long, default_value_t = 20, value_parser = positive, requires = "store")]
    pub nprobes: usize,
    /// Re-rank top_k x N candidates with their exact vectors (0: the index's own scores).
    #[arg(long, default_value_t = 20, requires = "store")]
    pub refine: u32,
}

/// Instruction options shared by search and demo.
#[derive(Args, Debug, Clone)]
pub struct TemplateArgs {
    /// How instruction and query are joined: instruction-first (default, "{instruction} {query}"),
    /// query-first, instruct, or a pattern containing {query} and {instruction}.
    #[arg(long, default_value = "instruction-first", value_parser = parse_template)]
    pub template: engine::QueryTemplate,
}

/// `trainer search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub template: TemplateArgs,
    /// Corpus JSONL; needed unless --index points to an existing index.
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Index file: used when it exists (the model must match), else built from --corpus and saved.
    #[arg(long)]
    pub index: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreQueryArgs,
    /// The query.
    #[arg(long)]
    pub query: String,
    /// The instruction (empty: the query alone).
    #[arg(long, default_value = "")]
    pub instruction: String,
    /// Number of results.
    #[arg(long, default_value_t = 10, value_parser = positive)]
    pub top_k: usize,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Where `trainer search` ranks, resolved once from `--store`, `--index` and `--corpus`.
pub enum SearchSource {
    /// A LanceDB table through its ANN index; `exact`, an index file to measure recall against.
    Store {
        query: StoreQueryArgs,
        exact: Option<PathBuf>,
    },
    /// An index file, built from `corpus` first when it does not exist.
    Index {
        path: PathBuf,
        corpus: Option<PathBuf>,
    },
    /// The corpus (`--corpus`, read for display in every case), encoded now.
    Corpus,
}

impl SearchArgs {
    /// The source the flags name: the store when given, else the index, else the corpus.
    pub fn source(&self) -> anyhow::Result<SearchSource> {
        Ok(match (&self.store.store, &self.index, &self.corpus) {
            (Some(_), exact, _) => SearchSource::Store {
                query: self.store.clone(),
                exact: exact.clone(),
            },
            (None, Some(path), corpus) => SearchSource::Index {
                path: path.clone(),
                corpus: corpus.clone(),
            },
            (None, None, Some(_)) => SearchSource::Corpus,
            (None, None, None) => anyhow::bail!("give --corpus FILE.jsonl or --index FILE"),
        })
    }
}

/// `trainer demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub template: TemplateArgs,
    /// Demo query id to show (default: the first three); `all` shows every query.
    #[arg(long)]
    pub query_id: Option<String>,
    /// Rows per ranking.
    #[arg(long, default_value_t = 5, value_parser = positive)]
    pub top_k: usize,
}

/// Who judges INSTFOL's passages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeKind {
    /// The changed qrels, binary.
    Qrels,
    /// The changed qrels' levels.
    Graded,
    /// An LLM over an OpenAI-compatible endpoint.
    Llm,
}

/// `trainer eval`. Forms:
/// `--qrels FILE --run FILE [--run FILE2]` (a second run compares the two);
/// `--set DIR --run og=FILE [--run changed=FILE] [--run reversed=FILE]`;
/// `--set DIR --model DIR [--compare-model DIR2]` (encode, rank, evaluate every mode);
/// `--compare A.json B.json` (reports written with --output).
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Qrels file (BEIR TSV with header, or TREC `qid 0 docid rel`).
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// Run file(s) in TREC format; with --set written MODE=FILE (og, changed, reversed).
    #[arg(long)]
    pub run: Vec<String>,
    /// Evaluation-set folder: formats.md §1, or a data set as published on the Hugging Face
    /// hub (MTEB/BEIR JSONL or Parquet, FollowIR, InfoSearch; see README).
    #[arg(long)]
    pub set: Option<PathBuf>,
    /// The qrels split of a published set (default `test`, or its only split).
    #[arg(long, requires = "set")]
    pub split: Option<String>,
    /// Model folder to encode the set with.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// A second model folder: both are evaluated and compared with significance tests.
    #[arg(long)]
    pub compare_model: Option<PathBuf>,
    /// Evaluate only the set's queries whose `constraint` label starts with this (e.g. `content` on evalsets/instructions-heldout).
    #[arg(long)]
    pub constraint: Option<String>,
    /// Compare two reports written by `--output`: side-by-side table with significance.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub compare: Vec<PathBuf>,
    /// Comma-separated metrics, e.g. ndcg@10,map@1000,mrr@10,recall@100,p@10.
    #[arg(long)]
    pub metrics: Option<String>,
    #[command(flatten)]
    pub template: TemplateArgs,
    /// Encode the query alone in every mode (the no-instruction baseline).
    #[arg(long)]
    pub no_instruction: bool,
    /// Write the runs (og.trec, changed.trec, reversed.trec) into this folder.
    #[arg(long)]
    pub save_runs: Option<PathBuf>,
    /// Keep passage embeddings in this folder, keyed by model and corpus, so evaluating the
    /// same set again (another template, --no-instruction) only encodes the queries.
    #[arg(long, env = "IFIR_PASSAGE_CACHE")]
    pub passage_cache: Option<PathBuf>,
    /// Write the full report (per-query values included) as JSON, for --compare.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Also write the result as MTEB reads it (`mteb.TaskResult`): DIR/TASK.json.
    #[arg(long, value_name = "DIR")]
    pub mteb_output: Option<PathBuf>,
    /// The task name in the MTEB result (default: the set folder's name).
    #[arg(long, requires = "mteb_output")]
    pub mteb_task: Option<String>,
    /// The data set's hub revision in the MTEB result.
    #[arg(long, requires = "mteb_output", default_value = "unknown")]
    pub mteb_revision: String,
    /// Print JSON (raw fractions) instead of a table (x100).
    #[arg(long)]
    pub json: bool,
    /// WISE: full reward needs R_ori < N (the reference code) instead of the paper's R_ori <= N.
    #[arg(long)]
    pub wise_strict: bool,
    /// Documents kept per query in full-corpus retrieval.
    #[arg(long, default_value_t = engine::evaluation::DEFAULT_RUN_DEPTH)]
    pub depth: usize,
    /// Also compute INSTFOL@k (query alone vs query + changed instruction) with this judge:
    /// `qrels` (changed qrels, binary), `graded` (changed qrels levels) or `llm`.
    #[arg(long, value_enum)]
    pub instfol: Option<JudgeKind>,
    /// K of INSTFOL@K.
    #[arg(long, default_value_t = 20)]
    pub instfol_k: usize,
    /// Top of the judge's score scale (s_max; IFIR's rubric is 0-3).
    #[arg(long, default_value_t = 3.0)]
    pub judge_max_score: f64,
    /// LLM judge: OpenAI-compatible base URL (else $IFIR_JUDGE_BASE_URL); key from
    /// $IFIR_JUDGE_API_KEY or $OPENAI_API_KEY.
    #[arg(long)]
    pub judge_url: Option<String>,
    /// LLM judge model (else $IFIR_JUDGE_MODEL, else gpt-4o-mini).
    #[arg(long)]
    pub judge_model: Option<String>,
    /// Permutations of the randomization test.
    #[arg(long, default_value_t = 10_000, value_parser = positive)]
    pub permutations: usize,
    #[command(flatten)]
    pub compute: crate::args::ComputeArgs,
}

impl TemplateArgs {
    /// Joins `encoder`'s instructions and queries with the template; a model trained with
    /// cross-attention keeps its module, and says so when a template other than the default
    /// was asked for.
    pub fn apply(&self, encoder: &mut engine::Encoder) {
        let custom = self.template != engine::QueryTemplate::default();
        if !encoder.use_template(self.template.clone()) && custom {
            eprintln!(
                "note: the model joins instruction and query with its cross-attention module \
                 (cross_attention.safetensors); --template is not used"
            );
        }
    }
}

/// `I/N`: part I (from 0) of N.
fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?}: expected I/N, e.g. 0/4"))?;
    let part = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|e| format!("{text:?}: {e}"))
    };
    let (i, n) = (part(i)?, part(n)?);
    if n == 0 || i >= n {
        return Err(format!(
            "{text:?}: parts count from 0 and stay below N (0/{n} .. {}/{n})",
            n.max(1) - 1
        ));
    }
    Ok((i, n))
}

fn parse_template(text: &str) -> Result<engine::QueryTemplate, String> {
    text.parse().map_err(|e: engine::EngineError| e.to_string())
}
