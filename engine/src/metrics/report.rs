//! The report of an evaluation with every per-query value: what `trainer eval --output` writes
//! and `--compare` reads, and the paired comparison of two reports.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::metrics::significance::{paired_t_test, randomization_test};
use crate::metrics::{ModeReport, PerQuery};

/// Everything one evaluation produced, per query included: what `--output` writes and
/// `--compare` reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// What was evaluated (model folder, run file...).
    pub system: String,
    /// Metric names in the order the user gave them.
    pub metrics: Vec<String>,
    /// Mode (or `run` for a single run) -> metric -> values.
    pub modes: BTreeMap<String, BTreeMap<String, Values>>,
    /// Instruction-following metrics (`p-mrr`, `wise`, `ideal-wise`, `sicr`).
    pub following: BTreeMap<String, Values>,
}

impl Report {
    /// The number of queries with a value in any mode or metric.
    pub fn query_count(&self) -> usize {
        let mut ids = std::collections::BTreeSet::new();
        for values in self
            .modes
            .values()
            .flat_map(|m| m.values())
            .chain(self.following.values())
        {
            ids.extend(values.per_query.keys());
        }
        ids.len()
    }
}

/// A mean and the per-query values behind it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Values {
    /// Mean over queries (a fraction).
    pub mean: f64,
    /// Query id -> value.
    pub per_query: BTreeMap<String, f64>,
}

impl From<&PerQuery> for Values {
    fn from(p: &PerQuery) -> Self {
        Values {
            mean: p.mean,
            per_query: p.per_query.clone(),
        }
    }
}

impl Report {
    /// The report of one run (`mode`: `run`).
    pub fn from_evaluation(
        system: String,
        names: &[String],
        mode: &str,
        eval: &crate::metrics::Evaluation,
    ) -> Self {
        let mut modes = BTreeMap::new();
        modes.insert(mode.to_string(), mode_values(names, eval));
        Report {
            system,
            metrics: names.to_vec(),
            modes,
            following: BTreeMap::new(),
        }
    }

    /// The report of a set's modes and instruction-following metrics.
    pub fn from_mode_report(system: String, names: &[String], r: &ModeReport) -> Self {
        let modes = r
            .modes
            .iter()
            .map(|(m, e)| (m.name().to_string(), mode_values(names, e)))
            .collect();
        let mut following = BTreeMap::new();
        if let Some(p) = r.p_mrr.as_ref().filter(|p| !p.is_empty()) {
            following.insert(P_MRR.to_string(), p.into());
        }
        if let Some(s) = r.infosearch.as_ref().filter(|s| !s.wise.is_empty()) {
            following.insert(WISE.to_string(), (&s.wise).into());
            following.insert(IDEAL_WISE.to_string(), (&s.ideal_wise).into());
            following.insert(SICR.to_string(), (&s.sicr).into());
        }
        Report {
            system,
            metrics: names.to_vec(),
            modes,
            following,
        }
    }

    /// The machine form of `--json`: exactly the documented keys, raw fractions.
    pub fn to_json(&self, single_run: bool) -> serde_json::Value {
        let means = |m: &BTreeMap<String, Values>| -> serde_json::Map<String, serde_json::Value> {
            self.metrics
                .iter()
                .filter_map(|n| {
                    m.get(n)
                        .map(|v| (n.clone(), crate::metrics::json_number(v.mean)))
                })
                .collect()
        };
        if single_run {
            return means(&self.modes["run"]).into();
        }
        let mut out = serde_json::Map::new();
        for (mode, values) in &self.modes {
            out.insert(mode.clone(), means(values).into());
        }
        for key in ["p-mrr", "wise", "sicr", "instfol"] {
            if let Some(v) = self.following.get(key) {
                out.insert(key.to_string(), crate::metrics::json_number(v.mean));
            }
        }
        out.into()
    }
}

/// What MTEB needs beside the scores to read a result file.
#[derive(Debug, Clone)]
pub struct MtebTask {
    /// The task's name (the file is `<name>.json`).
    pub name: String,
    /// The data set's revision on the hub (`unknown` when not known).
    pub revision: String,
    /// The split evaluated (`test`).
    pub split: String,
    /// Seconds the evaluation took.
    pub seconds: f64,
}

impl Report {
    /// The report as MTEB's result file (`mteb.TaskResult`, as `TaskResult.from_disk` reads
    /// it): one `default` subset of the split, each metric under MTEB's name (`ndcg@10` as
    /// `ndcg_at_10`, `p@10` as `precision_at_10`). A plain retrieval set's main score is its
    /// first metric; an instruction set's is p-MRR (as MTEB's FollowIR tasks), with each
    /// mode's metrics beside it (`og`, `changed`, `reversed`) and WISE and SICR.
    pub fn to_mteb(&self, task: &MtebTask) -> serde_json::Value {
        let mut scores = self.mteb_scores();
        scores.insert("hf_subset".into(), "default".into());
        scores.insert("languages".into(), serde_json::json!(["eng-Latn"]));
        serde_json::json!({
            "dataset_revision": task.revision,
            "task_name": task.name,
            "mteb_version": null,
            "scores": { task.split.clone(): [scores] },
            "evaluation_time": task.seconds,
            "kg_co2_emissions": null,
        })
    }

    /// MTEB's score object: every mode's means and the instruction-following metrics for an
    /// instructed set (main score p-MRR), else the run's means (main score the first metric).
    fn mteb_scores(&self) -> serde_json::Map<String, serde_json::Value> {
        let means = |m: &BTreeMap<String, Values>| -> serde_json::Map<String, serde_json::Value> {
            self.metrics
                .iter()
                .filter_map(|n| {
                    m.get(n)
                        .map(|v| (mteb_name(n), crate::metrics::json_number(v.mean)))
                })
                .collect()
        };
        let first = self
            .metrics
            .first()
            .map(|m| mteb_name(m))
            .unwrap_or_default();
        let mut scores = serde_json::Map::new();
        let instructed = self.modes.len() > 1 || !self.following.is_empty();
        let og = self.modes.get("og").or_else(|| self.modes.get("run"));
        if instructed {
            for (mode, values) in &self.modes {
                scores.insert(mode.clone(), means(values).into());
            }
            for (key, name) in [
                (P_MRR, "p-MRR"),
                (WISE, "wise"),
                (SICR, "sicr"),
                ("instfol", "instfol"),
            ] {
                if let Some(v) = self.following.get(key) {
                    scores.insert(name.to_string(), crate::metrics::json_number(v.mean));
                }
            }
        } else if let Some(og) = og {
            scores = means(og);
        }
        let main = match (instructed, scores.get("p-MRR")) {
            (true, Some(p)) => p.clone(),
            _ => og
                .and_then(|o| means(o).get(&first).cloned())
                .unwrap_or(serde_json::Value::Null),
        };
        scores.insert("main_score".into(), main);
        scores
    }
}

impl MtebTask {
    /// The file MTEB reads a task's rankings from: `<name>_predictions.json`.
    pub fn predictions_file(&self) -> String {
        format!("{}_predictions.json", self.name)
    }

    /// `run` as MTEB's predictions file (what `mteb.evaluate(..., prediction_folder=DIR)`
    /// writes and `AbsTaskRetrieval.convert_to_reranking(DIR)` reads back to re-rank a run):
    /// the model's name and revision, then subset `default`, the split, and per query the
    /// documents with their scores.
    pub fn predictions(
        &self,
        run: &crate::metrics::Run,
        model_name: &str,
        model_revision: &str,
    ) -> serde_json::Value {
        let queries: serde_json::Map<String, serde_json::Value> = run
            .query_ids()
            .map(|q| {
                let docs: serde_json::Map<String, serde_json::Value> = run
                    .docs(q)
                    .unwrap_or_default()
                    .iter()
                    .map(|(d, score)| (d.clone(), crate::metrics::json_number(*score)))
                    .collect();
                (q.to_string(), docs.into())
            })
            .collect();
        serde_json::json!({
            "mteb_model_meta": {"model_name": model_name, "revision": model_revision},
            "default": { self.split.clone(): queries },
        })
    }
}

fn mode_values(names: &[String], eval: &crate::metrics::Evaluation) -> BTreeMap<String, Values> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let per_query = eval
                .per_query
                .iter()
                .map(|(q, v)| (q.clone(), v[i]))
                .collect();
            (
                n.clone(),
                Values {
                    mean: eval.mean[i],
                    per_query,
                },
            )
        })
        .collect()
}

impl Report {
    /// Writes the report as pretty JSON, atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| EngineError::Invalid(e.to_string()))?;
        crate::atomic::write(path, text.as_bytes())
    }

    /// Reads a report written by [`Report::write`].
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::data::read_text(path)?;
        serde_json::from_str(&text).map_err(|e| {
            EngineError::data(
                path,
                e.line(),
                format!("not a report written by `trainer eval --output` (per-query values are needed to compare): {e}"),
            )
        })
    }

    /// Every value both reports have (per mode and metric, then the instruction-following
    /// metrics), compared over their shared queries. Refused when they share no metric, or no
    /// query.
    pub fn compare(&self, other: &Report, permutations: usize) -> Result<Vec<(String, Compared)>> {
        let mut rows: Vec<(String, Compared)> = Vec::new();
        for (mode, metrics) in &self.modes {
            let Some(theirs) = other.modes.get(mode) else {
                continue;
            };
            for name in &self.metrics {
                if let (Some(va), Some(vb)) = (metrics.get(name), theirs.get(name)) {
                    let label = mode_metric_label(mode, name);
                    rows.push((label, compare_values(va, vb, permutations)));
                }
            }
        }
        for (key, va) in &self.following {
            if let Some(vb) = other.following.get(key) {
                rows.push((key.clone(), compare_values(va, vb, permutations)));
            }
        }
        if rows.is_empty() {
            return Err(EngineError::Invalid(
                "the two reports share no metric to compare".into(),
            ));
        }
        // A metric without a query in common has no mean and no test: leave it out, and say
        // so when nothing is left.
        rows.retain(|(_, c)| c.queries > 0);
        if rows.is_empty() {
            return Err(EngineError::Invalid(format!(
                "the two reports share no query ({}: {} queries, {}: {}): nothing to compare",
                self.system,
                self.query_count(),
                other.system,
                other.query_count()
            )));
        }
        Ok(rows)
    }
}

/// A metric's name as MTEB writes it (`ndcg@10` -> `ndcg_at_10`, `p@10` -> `precision_at_10`).
fn mteb_name(name: &str) -> String {
    match name.split_once('@') {
        Some(("p", k)) => format!("precision_at_{k}"),
        Some((metric, k)) => format!("{metric}_at_{k}"),
        None => name.to_string(),
    }
}

/// The name of p-MRR's row in a report and a comparison.
pub const P_MRR: &str = "p-mrr";
/// The name of WISE's row.
pub const WISE: &str = "wise";
/// The name of ideal WISE's row.
pub const IDEAL_WISE: &str = "ideal-wise";
/// The name of SICR's row.
pub const SICR: &str = "sicr";

/// The name of a per-mode metric's row in a comparison: "changed ndcg@10"; the metric alone for
/// the reports of run files (mode "run").
pub fn mode_metric_label(mode: &str, metric: &str) -> String {
    if mode == "run" {
        metric.to_string()
    } else {
        format!("{mode} {metric}")
    }
}

/// Two systems compared (`trainer eval --compare ... --json`, `--compare-model ... --json`):
/// the serde type that writes that output and that its readers (the recipe's tables) read back,
/// so a renamed field fails loudly instead of reading as missing.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    /// System A (the report's `system`).
    pub a: String,
    /// System B.
    pub b: String,
    /// Every compared row by name ([`mode_metric_label`], [`P_MRR`], [`WISE`], ...).
    pub comparison: BTreeMap<String, Compared>,
}

impl Comparison {
    /// `a` against `b` ([`Report::compare`]).
    pub fn of(a: &Report, b: &Report, permutations: usize) -> Result<Self> {
        Ok(Comparison {
            a: a.system.clone(),
            b: b.system.clone(),
            comparison: a.compare(b, permutations)?.into_iter().collect(),
        })
    }
}

/// One compared value: both means over the shared queries, and the paired tests.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Compared {
    /// A's mean over the shared queries.
    pub a: f64,
    /// B's mean over the shared queries.
    pub b: f64,
    /// Number of shared queries.
    pub queries: usize,
    /// Paired t-test p-value.
    pub p_t_test: Option<f64>,
    /// Paired randomization test p-value.
    pub p_randomization: Option<f64>,
}

/// Both means over the queries `a` and `b` share, and the paired tests (the randomization
/// test seeded, so a comparison is reproducible).
pub fn compare_values(a: &Values, b: &Values, permutations: usize) -> Compared {
    let shared: Vec<&String> = a
        .per_query
        .keys()
        .filter(|q| b.per_query.contains_key(*q))
        .collect();
    let xa: Vec<f64> = shared.iter().map(|q| a.per_query[*q]).collect();
    let xb: Vec<f64> = shared.iter().map(|q| b.per_query[*q]).collect();
    let mean = |x: &[f64]| {
        if x.is_empty() {
            0.0
        } else {
            x.iter().sum::<f64>() / x.len() as f64
        }
    };
    Compared {
        a: mean(&xa),
        b: mean(&xb),
        queries: shared.len(),
        p_t_test: paired_t_test(&xa, &xb).p_value,
        p_randomization: randomization_test(&xa, &xb, permutations, 42).p_value,
    }
}
