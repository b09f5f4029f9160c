//! INSTFOL@K (IFIR, seeds-spec §6.4): how much adding the instruction raises the judged
//! instruction satisfaction of the top K, relative to the headroom left by the query alone:
//! `INSTFOL = (S_inst - S_q) / (s_max - S_q)`, per query, then the mean over queries.
//!
//! The judge is pluggable ([`InstructionJudge`]): the offline judges of §6.4 live here (binary
//! and level-graded qrels), the LLM judge over an OpenAI-compatible endpoint lives in the
//! native trainer (it needs HTTP) and only uses [`logprob_weighted_score`] from here.

use std::collections::BTreeMap;

use crate::data::Qrels;
use crate::error::{EngineError, Result};

use super::instruction_following::PerQuery;
use super::run::Run;

/// Scores how well a passage satisfies an instruction, on `[0, max_score()]`.
pub trait InstructionJudge {
    /// The top of the score scale (`s_max`; 3 for IFIR's rubric).
    fn max_score(&self) -> f64;
    /// Score of `doc_id` (text `passage`) for query `qid` with `instruction` and `query`.
    fn score(
        &mut self,
        qid: &str,
        query: &str,
        instruction: &str,
        doc_id: &str,
        passage: &str,
    ) -> Result<f64>;
}

/// The judged level of `doc` for `qid` (0 when unjudged).
fn level(qrels: &Qrels, qid: &str, doc: &str) -> f64 {
    qrels
        .get(qid)
        .and_then(|j| j.get(doc))
        .copied()
        .unwrap_or(0.0)
}

/// The qrels judge: `s_max` when the document is judged relevant (level > 0) under the
/// instruction's qrels, else 0. Then INSTFOL = (P@K_inst - P@K_q) / (1 - P@K_q).
pub struct QrelsJudge<'a> {
    /// Instruction-verified judgments.
    pub qrels: &'a Qrels,
    /// Score given to a relevant document.
    pub s_max: f64,
}

impl InstructionJudge for QrelsJudge<'_> {
    fn max_score(&self) -> f64 {
        self.s_max
    }
    fn score(&mut self, qid: &str, _q: &str, _i: &str, doc_id: &str, _p: &str) -> Result<f64> {
        let rel = level(self.qrels, qid, doc_id);
        Ok(if rel > 0.0 { self.s_max } else { 0.0 })
    }
}

/// The level-graded qrels judge: the judged level itself (clamped to `[0, s_max]`), which
/// mirrors a 0..s_max rubric when the level sets are nested.
pub struct GradedQrelsJudge<'a> {
    /// Graded judgments.
    pub qrels: &'a Qrels,
    /// Highest level.
    pub s_max: f64,
}

impl InstructionJudge for GradedQrelsJudge<'_> {
    fn max_score(&self) -> f64 {
        self.s_max
    }
    fn score(&mut self, qid: &str, _q: &str, _i: &str, doc_id: &str, _p: &str) -> Result<f64> {
        Ok(level(self.qrels, qid, doc_id).clamp(0.0, self.s_max))
    }
}

/// G-Eval's probability-weighted score: `sum_k s_k e^{p_k} / sum_k e^{p_k}` over candidate
/// score tokens `s_k` with log-probabilities `p_k`; `None` when no candidate parses as a score.
pub fn logprob_weighted_score(candidates: &[(String, f64)], s_max: f64) -> Option<f64> {
    let mut num = 0.0;
    let mut den = 0.0;
    for (token, logprob) in candidates {
        let Ok(s) = token.trim().parse::<f64>() else {
            continue;
        };
        if !(0.0..=s_max).contains(&s) {
            continue;
        }
        let w = logprob.exp();
        num += s * w;
        den += w;
    }
    (den > 0.0).then(|| num / den)
}

/// One query's INSTFOL from its two mean scores; 0 when the query alone is already at `s_max`.
pub fn instfol_query(s_q: f64, s_inst: f64, s_max: f64) -> f64 {
    if s_max - s_q <= 0.0 {
        0.0
    } else {
        (s_inst - s_q) / (s_max - s_q)
    }
}

/// INSTFOL@k over the queries the judge scored, and what it could not score.
#[derive(Debug)]
pub struct Instfol {
    /// Per query and mean, over the queries whose every judged passage got a score.
    pub scores: PerQuery,
    /// The judge's answers without a usable score ([`EngineError::NoScore`]); their queries
    /// are left out of `scores`.
    pub unscored: Vec<EngineError>,
}

/// INSTFOL@k of two runs (query alone, query + instruction). `texts` gives, per query id, the
/// query and its instruction; `passage` returns a document's text. Each distinct (query,
/// document) pair is judged once. A judge's answer without a score
/// ([`EngineError::NoScore`]) leaves its query out and is listed; any other error stops.
pub fn instfol(
    run_query: &Run,
    run_instructed: &Run,
    k: usize,
    texts: &BTreeMap<String, (String, String)>,
    passage: impl Fn(&str) -> String,
    judge: &mut dyn InstructionJudge,
) -> Result<Instfol> {
    let s_max = judge.max_score();
    let mut per_query = BTreeMap::new();
    let mut unscored = Vec::new();
    for (qid, (query, instruction)) in texts {
        let mut cache: BTreeMap<String, f64> = BTreeMap::new();
        let mut mean_of = |run: &Run| -> Result<f64> {
            let top: Vec<&str> = run
                .ranked(qid)
                .into_iter()
                .take(k)
                .map(|(d, _)| d)
                .collect();
            if top.is_empty() {
                return Ok(0.0);
            }
            let mut sum = 0.0;
            for d in &top {
                let s = match cache.get(*d) {
                    Some(s) => *s,
                    None => {
                        let s = judge.score(qid, query, instruction, d, &passage(d))?;
                        cache.insert(d.to_string(), s);
                        s
                    }
                };
                sum += s;
            }
            Ok(sum / top.len() as f64)
        };
        match mean_of(run_query).and_then(|s_q| Ok((s_q, mean_of(run_instructed)?))) {
            Ok((s_q, s_inst)) => {
                per_query.insert(qid.clone(), instfol_query(s_q, s_inst, s_max));
            }
            Err(e @ EngineError::NoScore { .. }) => unscored.push(e),
            Err(e) => return Err(e),
        }
    }
    let mean = if per_query.is_empty() {
        0.0
    } else {
        per_query.values().sum::<f64>() / per_query.len() as f64
    };
    Ok(Instfol {
        scores: PerQuery { per_query, mean },
        unscored,
    })
}
