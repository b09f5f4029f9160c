//! Evaluation: every metric of the seeds, one implementation for the CLI, the trainer and the
//! browser app.
//!
//! * [`run`]: runs (TREC format) and the single ranking order (trec_eval's) all metrics use;
//! * [`standard`]: nDCG@k, MAP@k, MRR@k, Recall@k, P@k, trec_eval-exact;
//! * [`instruction_following`]: p-MRR, WISE (+ ideal, Per.), SICR, Robustness@k, FollowIR score;
//! * [`instfol`]: IFIR's INSTFOL@K with a pluggable judge;
//! * [`significance`]: paired t-test and randomization test between two systems;
//! * [`explain`]: per-document terms of each metric of one query (the demo's teach mode);
//! * [`ModeReport`] here: everything for one evaluation set's og / changed / reversed runs.

pub mod explain;
pub mod instfol;
pub mod instruction_following;
pub mod report;
pub mod run;
pub mod significance;
pub mod standard;

use std::collections::BTreeMap;

pub use instruction_following::{InfoSearchScores, PerQuery, WiseConfig};
pub use run::Run;
pub use standard::{evaluate, Evaluation, Measure, Metric, QuerySet};

use crate::data::{Mode, Qrels};

/// The evaluation of a set's runs: standard metrics per mode plus the instruction-following
/// metrics the available modes allow.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeReport {
    /// Standard metrics of each mode's run against that mode's qrels.
    pub modes: BTreeMap<Mode, Evaluation>,
    /// p-MRR (og vs changed), when both runs and qrels exist.
    pub p_mrr: Option<PerQuery>,
    /// WISE / ideal WISE / SICR, when all three modes exist.
    pub infosearch: Option<InfoSearchScores>,
}

impl ModeReport {
    /// Evaluates whatever the runs and qrels allow.
    pub fn compute(
        qrels: &BTreeMap<Mode, Qrels>,
        runs: &BTreeMap<Mode, Run>,
        metrics: &[Metric],
        wise: WiseConfig,
    ) -> Self {
        let modes = runs
            .iter()
            .filter_map(|(mode, run)| {
                qrels
                    .get(mode)
                    .map(|q| (*mode, evaluate(q, run, metrics, QuerySet::Judged)))
            })
            .collect();
        let get = |m: Mode| qrels.get(&m).zip(runs.get(&m));
        let p_mrr = match (get(Mode::Og), get(Mode::Changed)) {
            (Some((qo, ro)), Some((qc, rc))) => Some(instruction_following::p_mrr(qo, qc, ro, rc)),
            _ => None,
        };
        let infosearch =
            match (get(Mode::Og), get(Mode::Changed), runs.get(&Mode::Reversed)) {
                (Some((qo, ro)), Some((qc, rc)), Some(rr)) => Some(
                    instruction_following::infosearch(qo, qc, [ro, rc, rr], wise),
                ),
                _ => None,
            };
        ModeReport {
            modes,
            p_mrr,
            infosearch,
        }
    }
}

/// A finite f64 as a JSON number (non-finite values become null).
pub fn json_number(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}
