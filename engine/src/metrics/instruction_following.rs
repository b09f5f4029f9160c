//! Instruction-following metrics: p-MRR (FollowIR, seeds-spec §1.4 and §5.4.4), WISE, ideal
//! WISE and Per. (InfoSearch, §5.4.2), SICR (§5.4.1), Robustness@k (InstructIR, §1.6) and the
//! FollowIR "score" aggregate (§1.5).
//!
//! Ranks come from [`super::run::Run::ranks`]: trec_eval order, and a document a run lacks has
//! rank `|run| + 1` and score 0 (the reference code's `get_rank_from_dict`). Every metric is a
//! mean over the documents of a query, then a mean over the queries that have such documents.
//! Values are fractions (the papers print them x100). Checked against the spec's worked examples
//! and an independent Python implementation (engine/tests/golden/metrics/).

use std::collections::BTreeMap;

use crate::data::Qrels;

use super::run::Run;

/// Per-query values and their mean over queries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PerQuery {
    /// Query id -> value (mean over that query's documents).
    pub per_query: BTreeMap<String, f64>,
    /// Mean over the queries (0 when there is none).
    pub mean: f64,
}

impl PerQuery {
    fn from_map(per_query: BTreeMap<String, f64>) -> Self {
        let mean = if per_query.is_empty() {
            0.0
        } else {
            per_query.values().sum::<f64>() / per_query.len() as f64
        };
        PerQuery { per_query, mean }
    }

    /// True when no query qualified.
    pub fn is_empty(&self) -> bool {
        self.per_query.is_empty()
    }
}

fn relevant(qrels: &Qrels, qid: &str, doc: &str) -> bool {
    qrels
        .get(qid)
        .and_then(|j| j.get(doc))
        .map(|r| *r > 0.0)
        .unwrap_or(false)
}

/// The p-MRR change score of one document: positive when it moved down from `r_og` to `r_new`.
pub fn p_mrr_doc(r_og: usize, r_new: usize) -> f64 {
    let (r_og, r_new) = (r_og as f64, r_new as f64);
    if r_og >= r_new {
        r_new / r_og - 1.0
    } else {
        1.0 - r_og / r_new
    }
}

/// p-MRR over the documents relevant under `qrels_og` and not relevant under `qrels_changed`
/// (FollowIR's `create_qrel_diff`; on InfoSearch sets these are the instruction negatives).
/// Queries without such a document are left out.
pub fn p_mrr(qrels_og: &Qrels, qrels_changed: &Qrels, run_og: &Run, run_changed: &Run) -> PerQuery {
    let mut out = BTreeMap::new();
    for (qid, judged) in qrels_og {
        let changed: Vec<&str> = judged
            .iter()
            .filter(|(d, r)| **r > 0.0 && !relevant(qrels_changed, qid, d))
            .map(|(d, _)| d.as_str())
            .collect();
        if changed.is_empty() {
            continue;
        }
        let (og, new) = (run_og.ranks(qid), run_changed.ranks(qid));
        let sum: f64 = changed
            .iter()
            .map(|d| p_mrr_doc(og.rank(d), new.rank(d)))
            .sum();
        out.insert(qid.clone(), sum / changed.len() as f64);
    }
    PerQuery::from_map(out)
}

/// Settings of WISE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WiseConfig {
    /// Rank window K (20 in InfoSearch).
    pub k: usize,
    /// The full reward needs `R_ori < N` (the reference code) instead of the paper's `R_ori <= N`.
    pub strict_n: bool,
}

impl Default for WiseConfig {
    fn default() -> Self {
        WiseConfig {
            k: 20,
            strict_n: false,
        }
    }
}

/// WISE of one gold document (Eq. 3-5): ranks in the original, instructed and reversed runs,
/// `n` = the number of original-mode positives of its query.
pub fn wise_doc(r_ori: usize, r_ins: usize, r_rev: usize, n: usize, config: WiseConfig) -> f64 {
    let within_n = if config.strict_n {
        r_ori < n
    } else {
        r_ori <= n
    };
    if r_ins <= r_ori && r_ori < r_rev {
        if within_n && r_ins == 1 {
            1.0
        } else if r_ori <= config.k {
            (1.0 - ((r_ori - r_ins) as f64).sqrt() / config.k as f64) / (r_ins as f64).sqrt()
        } else {
            0.01
        }
    } else if r_rev < r_ori && r_ori < r_ins {
        -1.0
    } else if r_ori <= r_ins {
        (r_ori as f64 - r_ins as f64) / r_ins as f64
    } else {
        // r_rev <= r_ori (the only case left).
        (r_rev as f64 - r_ori as f64) / r_ori as f64
    }
}

/// SICR's compliance indicator for one gold document (Eq. 1 with the reference code's rule when
/// `R_ori = 1`).
pub fn sicr_doc(ranks: (usize, usize, usize), scores: (f64, f64, f64)) -> bool {
    let (r_ori, r_ins, r_rev) = ranks;
    let (s_ori, s_ins, s_rev) = scores;
    if r_ori == 1 {
        r_ins == 1 && r_rev > 1 && s_ins >= s_ori && s_ori > s_rev
    } else {
        r_ins < r_ori && s_ins > s_ori && r_ori < r_rev && s_ori > s_rev
    }
}

/// WISE, ideal WISE, Per. and SICR of one system on one set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InfoSearchScores {
    /// WISE (mean of F over gold documents, then over queries).
    pub wise: PerQuery,
    /// WISE with `R_ins := 1`, `R_rev := R_ori + 1` (the model's own `R_ori`).
    pub ideal_wise: PerQuery,
    /// SICR (fraction of compliant gold documents, then mean over queries).
    pub sicr: PerQuery,
}

impl InfoSearchScores {
    /// `Per. = (ideal - actual) / ideal` on the means (lower is better); `None` when ideal is 0.
    pub fn per(&self) -> Option<f64> {
        (self.ideal_wise.mean != 0.0)
            .then(|| (self.ideal_wise.mean - self.wise.mean) / self.ideal_wise.mean)
    }
}

/// WISE, ideal WISE and SICR. Gold documents: relevant under og and under changed; `N` = the
/// number of og-relevant documents of the query. Queries without a gold document are left out.
pub fn infosearch(
    qrels_og: &Qrels,
    qrels_changed: &Qrels,
    runs: [&Run; 3],
    config: WiseConfig,
) -> InfoSearchScores {
    let [run_ori, run_ins, run_rev] = runs;
    let (mut wise, mut ideal, mut sicr) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for (qid, judged) in qrels_og {
        let n = judged.values().filter(|r| **r > 0.0).count();
        let gold: Vec<&str> = judged
            .iter()
            .filter(|(d, r)| **r > 0.0 && relevant(qrels_changed, qid, d))
            .map(|(d, _)| d.as_str())
            .collect();
        if gold.is_empty() {
            continue;
        }
        let (ori, ins, rev) = (run_ori.ranks(qid), run_ins.ranks(qid), run_rev.ranks(qid));
        let (mut w, mut iw, mut s) = (0.0, 0.0, 0.0);
        for d in &gold {
            let ranks = (ori.rank(d), ins.rank(d), rev.rank(d));
            w += wise_doc(ranks.0, ranks.1, ranks.2, n, config);
            iw += wise_doc(ranks.0, 1, ranks.0 + 1, n, config);
            if sicr_doc(ranks, (ori.score(d), ins.score(d), rev.score(d))) {
                s += 1.0;
            }
        }
        let g = gold.len() as f64;
        wise.insert(qid.clone(), w / g);
        ideal.insert(qid.clone(), iw / g);
        sicr.insert(qid.clone(), s / g);
    }
    InfoSearchScores {
        wise: PerQuery::from_map(wise),
        ideal_wise: PerQuery::from_map(ideal),
        sicr: PerQuery::from_map(sicr),
    }
}

/// Robustness@k (InstructIR): for each group of queries sharing a core query, the minimum of a
/// per-query metric (nDCG@k) over the group's instruction variants; then the mean over groups.
/// `group_of` maps a query id to its group (e.g. the core query text).
pub fn robustness(per_query: &BTreeMap<String, f64>, group_of: impl Fn(&str) -> String) -> f64 {
    let mut groups: BTreeMap<String, f64> = BTreeMap::new();
    for (qid, v) in per_query {
        let g = groups.entry(group_of(qid)).or_insert(f64::INFINITY);
        *g = g.min(*v);
    }
    if groups.is_empty() {
        0.0
    } else {
        groups.values().sum::<f64>() / groups.len() as f64
    }
}

/// The FollowIR "score" of one sub-set (§1.5): nDCG@5 for News21, MAP@1000 for Robust04,
/// Core17 and anything else; computed on the og run with the og qrels.
pub fn followir_score_metric(set_name: &str) -> super::Metric {
    use super::{Measure, Metric};
    if set_name.to_ascii_lowercase().contains("news") {
        Metric::at(Measure::Ndcg, 5)
    } else {
        Metric::at(Measure::Map, 1000)
    }
}
