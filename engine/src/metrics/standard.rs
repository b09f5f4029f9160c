//! The standard ranking metrics (seeds-spec §1.1-1.3), computed exactly as trec_eval does:
//! linear gain, log2 discount, ideal DCG over all judged documents, AP divided by the number of
//! relevant documents (retrieved or not), unjudged = non-relevant, ranking order of
//! [`super::run::rank`]. Golden-tested against pytrec_eval (engine/tests/metrics.rs).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::data::Qrels;
use crate::error::{EngineError, Result};

use super::run::{on_threads, threads, Run};

/// What a metric measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Measure {
    /// Normalised discounted cumulative gain (trec_eval `ndcg_cut`).
    Ndcg,
    /// Average precision (trec_eval `map_cut`, `map`).
    Map,
    /// Reciprocal rank of the first relevant document (trec_eval `recip_rank`).
    Mrr,
    /// Fraction of the relevant documents retrieved (trec_eval `recall`).
    Recall,
    /// Fraction of the retrieved documents that are relevant (trec_eval `P`).
    Precision,
}

/// A measure with an optional cut-off: `ndcg@10`, `map@1000`, `mrr@10`, `recall@100`, `p@10`,
/// or without cut-off `ndcg`, `map`, `mrr`, `recall`, `p` (the whole run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Metric {
    /// The measure.
    pub measure: Measure,
    /// Only the top `k` documents count; `None` = all of them.
    pub cutoff: Option<usize>,
}

impl Metric {
    /// `measure@k`.
    pub fn at(measure: Measure, k: usize) -> Self {
        Metric {
            measure,
            cutoff: Some(k),
        }
    }

    /// Parses a comma-separated list such as `ndcg@10,map@1000`.
    pub fn parse_list(list: &str) -> Result<Vec<Metric>> {
        let items: Vec<&str> = list.split(',').map(str::trim).collect();
        if items.iter().any(|s| s.is_empty()) {
            return Err(EngineError::Invalid(format!(
                "metric list '{list}' has an empty item (two commas, or one at an end)"
            )));
        }
        items.into_iter().map(str::parse).collect()
    }
}

impl FromStr for Metric {
    type Err = EngineError;

    fn from_str(s: &str) -> Result<Self> {
        let lower = s.trim().to_ascii_lowercase();
        let (name, cutoff) = match lower.split_once('@') {
            Some((n, k)) => {
                let k: usize = k.parse().ok().filter(|k| *k > 0).ok_or_else(|| {
                    EngineError::Invalid(format!(
                        "metric '{s}': cut-off must be a positive integer"
                    ))
                })?;
                (n.to_string(), Some(k))
            }
            None => (lower.clone(), None),
        };
        let measure = match name.as_str() {
            "ndcg" | "ndcg_cut" => Measure::Ndcg,
            "map" | "ap" | "map_cut" => Measure::Map,
            "mrr" | "rr" | "recip_rank" => Measure::Mrr,
            "recall" | "r" => Measure::Recall,
            "p" | "precision" => Measure::Precision,
            _ => {
                return Err(EngineError::Invalid(format!(
                "unknown metric '{s}' (known: ndcg, map, mrr, recall, p, each with an optional @k)"
            )))
            }
        };
        Ok(Metric { measure, cutoff })
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.measure {
            Measure::Ndcg => "ndcg",
            Measure::Map => "map",
            Measure::Mrr => "mrr",
            Measure::Recall => "recall",
            Measure::Precision => "p",
        };
        match self.cutoff {
            Some(k) => write!(f, "{name}@{k}"),
            None => write!(f, "{name}"),
        }
    }
}

/// Which queries an aggregate averages over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuerySet {
    /// Every query with at least one judgment; a query the run lacks scores 0
    /// (trec_eval `-c`; what a complete evaluation needs). The default.
    #[default]
    Judged,
    /// Only judged queries present in the run (trec_eval without `-c`, pytrec_eval, BEIR).
    JudgedAndRun,
}

/// The metric values of one query for a list of metrics, from its ranked documents
/// (best first) and its judgments.
pub fn evaluate_query(
    ranked: &[(&str, f64)],
    judgments: &BTreeMap<String, f64>,
    metrics: &[Metric],
) -> Vec<f64> {
    let num_rel = judgments.values().filter(|r| **r > 0.0).count();
    // Gains of the ranked list, and cumulative counts, computed once for every metric.
    let gains: Vec<f64> = ranked
        .iter()
        .map(|(d, _)| judgments.get(*d).copied().unwrap_or(0.0).max(0.0))
        .collect();
    let mut ideal: Vec<f64> = judgments.values().copied().filter(|r| *r > 0.0).collect();
    ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    metrics
        .iter()
        .map(|m| {
            let k = m.cutoff.unwrap_or(usize::MAX).min(gains.len());
            let top = &gains[..k];
            match m.measure {
                Measure::Ndcg => {
                    let ik = m.cutoff.unwrap_or(usize::MAX).min(ideal.len());
                    let idcg = dcg(&ideal[..ik]);
                    if idcg > 0.0 {
                        dcg(top) / idcg
                    } else {
                        0.0
                    }
                }
                Measure::Map => average_precision(top, num_rel),
                Measure::Mrr => top
                    .iter()
                    .position(|g| *g > 0.0)
                    .map(|i| 1.0 / (i + 1) as f64)
                    .unwrap_or(0.0),
                Measure::Recall => {
                    if num_rel == 0 {
                        0.0
                    } else {
                        top.iter().filter(|g| **g > 0.0).count() as f64 / num_rel as f64
                    }
                }
                Measure::Precision => {
                    let hits = top.iter().filter(|g| **g > 0.0).count() as f64;
                    // trec_eval divides by the cut-off even when fewer documents were returned.
                    let denom = m.cutoff.unwrap_or(gains.len()).max(1);
                    hits / denom as f64
                }
            }
        })
        .collect()
}

fn dcg(gains: &[f64]) -> f64 {
    gains
        .iter()
        .enumerate()
        .filter(|(_, g)| **g > 0.0)
        .map(|(i, g)| *g / ((i + 2) as f64).log2())
        .sum()
}

/// Per-query and mean values of a list of metrics over a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The metrics, in the order of every value vector below.
    pub metrics: Vec<Metric>,
    /// Query id -> one value per metric.
    pub per_query: BTreeMap<String, Vec<f64>>,
    /// Mean over the evaluated queries, one per metric (0 when no query was evaluated).
    pub mean: Vec<f64>,
}

impl Evaluation {
    /// The mean of `metric`, if it was computed.
    pub fn mean_of(&self, metric: Metric) -> Option<f64> {
        self.metrics
            .iter()
            .position(|m| *m == metric)
            .map(|i| self.mean[i])
    }

    /// Per-query values of `metric`, if it was computed.
    pub fn per_query_of(&self, metric: Metric) -> Option<BTreeMap<&str, f64>> {
        let i = self.metrics.iter().position(|m| *m == metric)?;
        Some(
            self.per_query
                .iter()
                .map(|(q, v)| (q.as_str(), v[i]))
                .collect(),
        )
    }
}

/// Average precision of a cut ranked list's gains against `num_rel` relevant documents.
fn average_precision(top: &[f64], num_rel: usize) -> f64 {
    if num_rel == 0 {
        return 0.0;
    }
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, g) in top.iter().enumerate() {
        if *g > 0.0 {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / num_rel as f64
}

/// Evaluates `run` against `qrels`. Queries with no judgment at all are skipped (trec_eval does
/// the same); `queries` says whether judged queries the run lacks count as 0.
pub fn evaluate(qrels: &Qrels, run: &Run, metrics: &[Metric], queries: QuerySet) -> Evaluation {
    let todo: Vec<(&String, &BTreeMap<String, f64>)> = qrels
        .iter()
        .filter(|(_, judgments)| !judgments.is_empty())
        .filter(|(qid, _)| queries == QuerySet::Judged || run.docs(qid).is_some())
        .collect();
    let one = |(qid, judgments): &(&String, &BTreeMap<String, f64>)| {
        (
            (*qid).clone(),
            evaluate_query(&run.ranked(qid), judgments, metrics),
        )
    };
    // Queries are independent: large runs are split over the cores (not on wasm32).
    let work: usize = todo
        .iter()
        .map(|(q, _)| run.docs(q).map(|d| d.len()).unwrap_or(0))
        .sum();
    let threads = threads().min(todo.len().max(1));
    let per_query: BTreeMap<String, Vec<f64>> = if threads > 1 && work > 100_000 {
        let parts: Vec<_> = todo.chunks(todo.len().div_ceil(threads)).collect();
        let values = on_threads(
            &parts,
            |part| part.iter().map(one).collect::<Vec<_>>(),
            "metric worker",
        );
        values.into_iter().flatten().collect()
    } else {
        todo.iter().map(one).collect()
    };
    let n = per_query.len();
    let mean = (0..metrics.len())
        .map(|i| {
            if n == 0 {
                0.0
            } else {
                per_query.values().map(|v: &Vec<f64>| v[i]).sum::<f64>() / n as f64
            }
        })
        .collect();
    Evaluation {
        metrics: metrics.to_vec(),
        per_query,
        mean,
    }
}
