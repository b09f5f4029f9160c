//! Per-document breakdowns of the metrics of one query, for teaching: every number the web
//! demo shows opens into its formula and the terms that make it up, and the terms give back
//! exactly the number the metric functions compute (the tests check that on random cases, so
//! the explanation can never drift from the implementation).

use std::collections::BTreeMap;

use super::instruction_following::{p_mrr_doc, sicr_doc, wise_doc, WiseConfig};
use super::run::Run;

/// One document's part in a metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// Document id.
    pub doc: String,
    /// The numbers that produce the term, in words (e.g. `gain 2 / log2(3 + 1)`).
    pub detail: String,
    /// The term's value.
    pub value: f64,
}

/// A metric of one query, its formula and its terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Breakdown {
    /// Metric name as shown (e.g. `nDCG@10`).
    pub metric: String,
    /// The formula in plain text.
    pub formula: &'static str,
    /// The terms, in rank order (or judgment order for the instruction metrics).
    pub terms: Vec<Term>,
    /// How the terms combine into the value, with the numbers (e.g. `DCG 1.63 / IDCG 2.13`).
    pub combination: String,
    /// The value.
    pub value: f64,
}

/// A query's judgments: document id to relevance level.
type Judgments = BTreeMap<String, f64>;

fn gain(judgments: &Judgments, doc: &str) -> f64 {
    judgments.get(doc).copied().unwrap_or(0.0).max(0.0)
}

/// The relevant documents (gain > 0) in the top `k` of the query's ranking, in rank order:
/// `(rank index from 0, document, gain)`.
fn relevant_in_top<'a>(
    run: &'a Run,
    qid: &str,
    judgments: &Judgments,
    k: usize,
) -> Vec<(usize, &'a str, f64)> {
    run.ranked(qid)
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(i, (doc, _))| (i, doc, gain(judgments, doc)))
        .filter(|(_, _, g)| *g > 0.0)
        .collect()
}

/// nDCG@k: DCG of the ranking over DCG of the ideal ranking (linear gain, log2 discount).
pub fn ndcg(run: &Run, qid: &str, judgments: &Judgments, k: usize) -> Breakdown {
    let mut dcg = 0.0;
    let terms: Vec<Term> = relevant_in_top(run, qid, judgments, k)
        .into_iter()
        .map(|(i, doc, g)| {
            let value = g / ((i + 2) as f64).log2();
            dcg += value;
            Term {
                doc: doc.to_string(),
                detail: format!("rank {}: gain {g} / log2({} + 1)", i + 1, i + 1),
                value,
            }
        })
        .collect();
    let mut ideal: Vec<f64> = judgments.values().copied().filter(|g| *g > 0.0).collect();
    ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / ((i + 2) as f64).log2())
        .sum();
    let value = if idcg > 0.0 { dcg / idcg } else { 0.0 };
    Breakdown {
        metric: format!("nDCG@{k}"),
        formula: "nDCG@k = DCG@k / IDCG@k, DCG@k = sum over ranks i <= k of gain(d_i) / log2(i + 1); IDCG@k is the DCG of the best possible order of the judged documents",
        terms,
        combination: format!("DCG {dcg:.4} / IDCG {idcg:.4}"),
        value,
    }
}

/// Average precision to depth `k`: precision at each relevant document, summed, over the number
/// of relevant documents (retrieved or not).
pub fn average_precision(run: &Run, qid: &str, judgments: &Judgments, k: usize) -> Breakdown {
    let relevant = judgments.values().filter(|g| **g > 0.0).count();
    let mut sum = 0.0;
    let terms: Vec<Term> = relevant_in_top(run, qid, judgments, k)
        .into_iter()
        .enumerate()
        .map(|(hit, (i, doc, _))| {
            let hits = hit + 1;
            let p = hits as f64 / (i + 1) as f64;
            sum += p;
            Term {
                doc: doc.to_string(),
                detail: format!("rank {}: precision {hits}/{}", i + 1, i + 1),
                value: p,
            }
        })
        .collect();
    let value = if relevant == 0 {
        0.0
    } else {
        sum / relevant as f64
    };
    let metric = if k >= 1000 {
        "MAP".to_string()
    } else {
        format!("MAP@{k}")
    };
    Breakdown {
        metric,
        formula: "AP = (sum of precision@i at the rank i of each relevant document) / (number of relevant documents); MAP is its mean over queries",
        terms,
        combination: format!("{sum:.4} / {relevant} relevant"),
        value,
    }
}

/// Reciprocal rank at depth `k`: one over the rank of the first relevant document.
pub fn reciprocal_rank(run: &Run, qid: &str, judgments: &Judgments, k: usize) -> Breakdown {
    let (terms, value, combination) = match relevant_in_top(run, qid, judgments, k).first() {
        Some(&(i, doc, _)) => (
            vec![Term {
                doc: doc.to_string(),
                detail: format!("first relevant document, rank {}", i + 1),
                value: 1.0 / (i + 1) as f64,
            }],
            1.0 / (i + 1) as f64,
            format!("1 / {}", i + 1),
        ),
        None => (
            Vec::new(),
            0.0,
            format!("no relevant document in the top {k}"),
        ),
    };
    Breakdown {
        metric: format!("MRR@{k}"),
        formula: "RR@k = 1 / rank of the first relevant document (0 when none is in the top k); MRR is its mean over queries",
        terms,
        combination,
        value,
    }
}

/// The documents relevant under `og` (level > 0) and not under `changed`: p-MRR's documents.
fn og_only<'a>(og: &'a Judgments, changed: &Judgments) -> Vec<&'a str> {
    og.iter()
        .filter(|(d, r)| **r > 0.0 && gain(changed, d) <= 0.0)
        .map(|(d, _)| d.as_str())
        .collect()
}

/// One term per document of `docs`, `term` giving its detail and value (`None` when there is
/// no document).
fn doc_terms(docs: Vec<&str>, term: impl Fn(&str) -> (String, f64)) -> Option<Vec<Term>> {
    if docs.is_empty() {
        return None;
    }
    let terms = docs.into_iter().map(|d| {
        let (detail, value) = term(d);
        Term {
            doc: d.to_string(),
            detail,
            value,
        }
    });
    Some(terms.collect())
}

/// The breakdown of a metric that is the mean of its `terms`; `combination` says it from the
/// terms' sum and count.
fn mean_of(
    metric: &str,
    formula: &'static str,
    terms: Vec<Term>,
    combination: impl FnOnce(f64, usize) -> String,
) -> Breakdown {
    let sum: f64 = terms.iter().map(|t| t.value).sum();
    Breakdown {
        metric: metric.into(),
        formula,
        combination: combination(sum, terms.len()),
        value: sum / terms.len() as f64,
        terms,
    }
}

/// p-MRR of one query: the mean change score of the documents the changed instruction made
/// non-relevant (`None` when there is no such document).
pub fn p_mrr(
    run_og: &Run,
    run_changed: &Run,
    qid: &str,
    og: &Judgments,
    changed: &Judgments,
) -> Option<Breakdown> {
    let (r_og, r_new) = (run_og.ranks(qid), run_changed.ranks(qid));
    let terms = doc_terms(og_only(og, changed), |d| {
        let (a, b) = (r_og.rank(d), r_new.rank(d));
        let score = if a >= b {
            format!("{b}/{a} - 1")
        } else {
            format!("1 - {a}/{b}")
        };
        (format!("rank {a} -> {b}: {score}"), p_mrr_doc(a, b))
    })?;
    Some(mean_of(
        "p-MRR",
        "for each document relevant under the original instruction but not under the changed one: r_og >= r_new ? r_new/r_og - 1 : 1 - r_og/r_new; mean over those documents (positive when they moved down, as the instruction asks)",
        terms,
        |sum, n| format!("{sum:.4} / {n} documents"),
    ))
}

/// The gold documents of WISE and SICR: relevant under og and under changed.
fn gold<'a>(og: &'a Judgments, changed: &Judgments) -> Vec<&'a str> {
    og.iter()
        .filter(|(d, r)| **r > 0.0 && gain(changed, d) > 0.0)
        .map(|(d, _)| d.as_str())
        .collect()
}

/// WISE of one query over its gold documents (`None` when it has none).
pub fn wise(
    runs: [&Run; 3],
    qid: &str,
    og: &Judgments,
    changed: &Judgments,
    config: WiseConfig,
) -> Option<Breakdown> {
    let n = og.values().filter(|r| **r > 0.0).count();
    let ranks = runs.map(|r| r.ranks(qid));
    let terms = doc_terms(gold(og, changed), |d| {
        let (o, i, r) = (ranks[0].rank(d), ranks[1].rank(d), ranks[2].rank(d));
        let detail = format!("ranks: query alone {o}, instructed {i}, reversed {r}");
        (detail, wise_doc(o, i, r, n, config))
    })?;
    Some(mean_of(
        "WISE",
        "per gold document (relevant with and without the instruction), from its ranks R_ori (query alone), R_ins (instructed), R_rev (reversed): rewarded when R_ins <= R_ori < R_rev (1 at rank 1 within N, else (1 - sqrt(R_ori - R_ins)/K) / sqrt(R_ins) within K = 20, else 0.01); -1 when R_rev < R_ori < R_ins; otherwise the relative move; mean over gold documents",
        terms,
        |sum, docs| format!("{sum:.4} / {docs} gold documents (N = {n})"),
    ))
}

/// SICR of one query: the share of gold documents that moved up with the instruction and down
/// with the reversed one, scores included (`None` when it has no gold document).
pub fn sicr(runs: [&Run; 3], qid: &str, og: &Judgments, changed: &Judgments) -> Option<Breakdown> {
    let ranks = runs.map(|r| r.ranks(qid));
    let terms = doc_terms(gold(og, changed), |d| {
        let r = (ranks[0].rank(d), ranks[1].rank(d), ranks[2].rank(d));
        let s = (ranks[0].score(d), ranks[1].score(d), ranks[2].score(d));
        let ok = sicr_doc(r, s);
        let detail = format!(
            "ranks {} / {} / {}, scores {:.3} / {:.3} / {:.3}: {}",
            r.0,
            r.1,
            r.2,
            s.0,
            s.1,
            s.2,
            if ok { "complies" } else { "does not comply" }
        );
        (detail, if ok { 1.0 } else { 0.0 })
    })?;
    Some(mean_of(
        "SICR",
        "share of gold documents with R_ins < R_ori < R_rev and S_ins > S_ori > S_rev (at R_ori = 1: R_ins = 1, R_rev > 1, S_ins >= S_ori > S_rev)",
        terms,
        |sum, n| format!("{sum} / {n} gold documents comply"),
    ))
}
