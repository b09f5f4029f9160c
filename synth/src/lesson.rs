//! What a lesson (learn live: the web page's teach mode, `trainer lesson`) trains on and is
//! judged on, made from an evaluation set's own judgments.
//!
//! [`Lesson::from_set`] splits the set's queries: every [`HELD_OUT_EVERY`]-th one is held out,
//! and each other query gives dual-view instruction-negative records (formats.md §3) by
//! [`crate::judged`] with its groups zipped: under the changed instruction a passage relevant to
//! it is the positive and a passage relevant only under the reversed instruction is the
//! instruction negative; the reversed view swaps them. Passages judged off-topic for the bare
//! query are the hard negatives. The held-out queries form a re-ranking set over their judged
//! passages (FollowIR's protocol), small enough to evaluate after every step in a browser. The
//! steps themselves are the engine's (`engine::training::lesson`).

use std::collections::{BTreeMap, BTreeSet};

use engine::data::records::TrainingRecord;
use engine::data::{EvalSet, Mode};
use engine::error::{EngineError, Result};

use crate::judged::{JudgedRecords, JudgedSettings, Positives};

/// Every this-many-th query of the set (the 3rd, 6th, ...) is held out of training (of a set
/// of two queries, the second).
pub const HELD_OUT_EVERY: usize = 3;

/// The records a lesson trains on and the queries it is judged on.
#[derive(Debug, Clone)]
pub struct Lesson {
    /// Dual-view records of the training queries, in query order.
    pub records: Vec<TrainingRecord>,
    /// Ids of the queries the records come from.
    pub training_queries: Vec<String>,
    /// The held-out queries as a re-ranking set: their judged passages are the corpus and
    /// each query's candidates.
    pub held_out: EvalSet,
}

impl Lesson {
    /// Splits `set` (which needs changed and reversed judgments) into training records and a
    /// held-out re-ranking set. A training query without a passage relevant under exactly one
    /// of its two instructions gives no record.
    pub fn from_set(set: &EvalSet) -> Result<Lesson> {
        require_judgments(set)?;
        let held_out = held_out_queries(set);
        let settings = JudgedSettings {
            positives: Positives::Zip,
            replay: 0,
            ..Default::default()
        };
        let made = JudgedRecords::from_set(set, &settings, |q| {
            !held_out.contains(&q.id) && q.instruction_reversed.is_some()
        });
        let made = match made {
            Ok(made) if made.counts.dual_view > 0 && !held_out.is_empty() => made,
            _ => {
                return Err(EngineError::data(
                    &set.root,
                    0,
                    "a lesson needs queries with changed and reversed judgments that disagree on some passage, and at least 2 queries",
                ))
            }
        };
        Ok(Lesson {
            records: made.records,
            training_queries: made.instructed_queries,
            held_out: reranking_subset(set, &held_out),
        })
    }

    /// The records as JSON lines (formats.md §3), what `trainer train --data` reads.
    pub fn records_jsonl(&self) -> String {
        self.records
            .iter()
            .map(|r| {
                let json = match r {
                    TrainingRecord::InstructionNegative(r) => r.to_json(),
                    TrainingRecord::InfIr(r) => r.to_json(),
                };
                format!("{json}\n")
            })
            .collect()
    }
}

/// Every [`HELD_OUT_EVERY`]-th query; in a set of two queries (one topic with two instruction
/// pairs) the second, so that a lesson on one topic is judged too.
fn held_out_queries(set: &EvalSet) -> Vec<String> {
    let every = if set.queries.len() == 2 {
        2
    } else {
        HELD_OUT_EVERY
    };
    set.queries
        .iter()
        .enumerate()
        .filter(|(i, _)| (i + 1) % every == 0)
        .map(|(_, q)| q.id.clone())
        .collect()
}

/// A lesson needs og, changed and reversed judgments; the first one missing is named.
fn require_judgments(set: &EvalSet) -> Result<()> {
    for mode in [Mode::Changed, Mode::Reversed, Mode::Og] {
        if !set.qrels.contains_key(&mode) {
            return Err(EngineError::data(
                &set.root,
                0,
                format!("a lesson needs {} judgments", mode.name()),
            ));
        }
    }
    Ok(())
}

/// The queries `ids` of `set` with their judged passages as corpus and candidates.
fn reranking_subset(set: &EvalSet, ids: &[String]) -> EvalSet {
    let chosen: BTreeSet<&str> = ids.iter().map(|s| s.as_str()).collect();
    let judged = |q: &str| -> BTreeSet<String> {
        set.qrels
            .values()
            .filter_map(|qrels| qrels.get(q))
            .flat_map(|docs| docs.keys().cloned())
            .collect()
    };
    let pools: BTreeMap<String, BTreeSet<String>> =
        ids.iter().map(|q| (q.clone(), judged(q))).collect();
    let in_pool: BTreeSet<&str> = pools.values().flatten().map(|s| s.as_str()).collect();
    let corpus: Vec<_> = set
        .corpus
        .iter()
        .filter(|p| in_pool.contains(p.id.as_str()))
        .cloned()
        .collect();
    let candidates = pools
        .iter()
        .map(|(q, docs)| {
            let in_corpus_order = corpus
                .iter()
                .filter(|p| docs.contains(&p.id))
                .map(|p| p.id.clone())
                .collect();
            (q.clone(), in_corpus_order)
        })
        .collect();
    EvalSet {
        root: set.root.join("held-out"),
        corpus,
        queries: set
            .queries
            .iter()
            .filter(|q| chosen.contains(q.id.as_str()))
            .cloned()
            .collect(),
        qrels: set
            .qrels
            .iter()
            .map(|(mode, qrels)| {
                let kept = qrels
                    .iter()
                    .filter(|(q, _)| chosen.contains(q.as_str()))
                    .map(|(q, d)| (q.clone(), d.clone()))
                    .collect();
                (*mode, kept)
            })
            .collect(),
        candidates: Some(candidates),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_lesson_trains_on_two_thirds_of_the_queries_and_never_sees_the_held_out_passages() {
        let set = engine::demo::demo_set().unwrap();
        let lesson = Lesson::from_set(&set).unwrap();
        let held: Vec<&str> = lesson
            .held_out
            .queries
            .iter()
            .map(|q| q.id.as_str())
            .collect();
        let every_third: Vec<&str> = set
            .queries
            .iter()
            .skip(HELD_OUT_EVERY - 1)
            .step_by(HELD_OUT_EVERY)
            .map(|q| q.id.as_str())
            .collect();
        assert_eq!(held, every_third);
        assert!(lesson
            .training_queries
            .iter()
            .all(|q| !held.contains(&q.as_str())));
        assert!(lesson.training_queries.len() >= set.queries.len() / 2);
        // Held-out passages appear in no record, under any role.
        let held_texts: BTreeSet<String> = lesson
            .held_out
            .corpus
            .iter()
            .map(|p| p.encoder_text())
            .collect();
        for record in &lesson.records {
            let TrainingRecord::InstructionNegative(r) = record else {
                panic!("a lesson writes dual-view instruction-negative records");
            };
            assert!(r.instruction_reversed.is_some());
            assert_eq!(r.instruction_negatives.len(), 1);
            for text in std::iter::once(&r.positive)
                .chain(&r.negatives)
                .chain(&r.instruction_negatives)
            {
                assert!(
                    !held_texts.contains(text),
                    "held-out passage in training: {text}"
                );
            }
            assert_ne!(r.positive, r.instruction_negatives[0]);
        }
        // Each held-out query re-ranks exactly its judged passages.
        let candidates = lesson.held_out.candidates.as_ref().unwrap();
        for q in &held {
            let judged: BTreeSet<&String> = set.qrels[&Mode::Og][*q].keys().collect();
            let pool: BTreeSet<&String> = candidates[*q].iter().collect();
            assert_eq!(pool, judged, "{q}");
        }
        // The records parse back as the trainer reads them.
        let jsonl = lesson.records_jsonl();
        let lines: Vec<&str> = jsonl.lines().collect();
        assert_eq!(lines.len(), lesson.records.len());
        assert_eq!(TrainingRecord::parse(lines[0]).unwrap(), lesson.records[0]);
    }

    #[test]
    fn a_set_without_changed_judgments_is_refused_by_name() {
        let mut set = engine::demo::demo_set().unwrap();
        set.qrels.remove(&Mode::Changed);
        let err = Lesson::from_set(&set).unwrap_err().to_string();
        assert!(err.contains("changed"), "{err}");
    }
}
