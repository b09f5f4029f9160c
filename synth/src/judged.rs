//! Training records from judgments: the one path from any evaluation-set folder (formats.md §1)
//! to training records (§3), used by `trainer synth judged` and by lessons (the page's learn
//! live and `trainer lesson`).
//!
//! Why one path: a set that judges the same query under an instruction and under its
//! polarity reversal already says which passages each instruction keeps, so it needs no text
//! program to become training data, only a faithful reading. Per query of the set:
//!
//! - **Both polarities** (the query has `instruction_changed`, `instruction_reversed` and
//!   changed and reversed judgments): `C` = relevant under the changed instruction only, `R` =
//!   relevant under the reversed one only. Each record pairs a positive from `C` with an
//!   instruction negative from `R` and carries the reversed instruction, so its reversed view
//!   has them the other way round (the dual view, seeds-spec §3). [`Positives::Every`] makes
//!   as many records as the larger group has passages, cycling through the smaller one, so
//!   every relevant passage of both groups is a positive once; [`Positives::Zip`] pairs the
//!   groups in order (as many records as the smaller group: what a lesson takes).
//! - **One polarity** (changed judgments but no reversal: FollowIR's shape): `C` = relevant
//!   under the changed instruction, `R` = relevant to the query (og) but not under the
//!   instruction; one single-view record per passage of `C`, every passage of `R` an
//!   instruction negative.
//! - **Hard negatives**: passages judged non-relevant for the query under every mode (the
//!   topics' distractors: same words, no answer), then `foreign_negatives` passages judged for
//!   other queries only (seeded draw).
//! - **InF-IR records** (optional): each dual-view pair again as the three InF-IR tuples, the
//!   poisoned query being another query of the set (seeded draw among those with another
//!   text) with one of its own relevant passages as P2-.
//! - **Replay**: `replay` records per distinct query text under its original instruction
//!   (`instruction_og`, "" = the query alone), each with another og-relevant passage, so that
//!   plain retrieval is rehearsed beside the instructions. A set with og judgments only (MS
//!   MARCO) gives replay records alone.
//!
//! Queries are kept or left out by the caller ([`JudgedRecords::from_set`]'s `keep`), so a
//! lesson can hold some out and `trainer synth judged --exclude` can keep evaluation queries
//! out of training.

use std::collections::{BTreeMap, BTreeSet};

use engine::data::records::{InfIrRecord, InstructionNegativeRecord, TrainingRecord};
use engine::data::{EvalSet, Mode, Qrels, Query};
use engine::error::{EngineError, Result};
use engine::rng::SplitMix64;

/// Which relevant passages become positives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Positives {
    /// Every relevant passage of both groups is a positive once: as many records as the
    /// larger group, the smaller one cycled.
    #[default]
    Every,
    /// The two groups paired in order: as many records as the smaller group.
    Zip,
}

impl std::str::FromStr for Positives {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "every" => Ok(Positives::Every),
            "zip" => Ok(Positives::Zip),
            other => Err(EngineError::Invalid(format!(
                "positives must be 'every' or 'zip', not '{other}'"
            ))),
        }
    }
}

/// How judgments become records.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedSettings {
    /// Which relevant passages become positives ([`Positives::Every`]).
    pub positives: Positives,
    /// Passages judged for other queries only, added as hard negatives to each record (0).
    pub foreign_negatives: usize,
    /// Also each dual-view pair as an InF-IR record with a poisoned query (false).
    pub inf_ir: bool,
    /// Plain records per distinct query text under its original instruction (1).
    pub replay: usize,
    /// Each dual-view record lists the whole group its instruction rules out as instruction
    /// negatives (the paired passage first), every other record oriented the other way
    /// round, so that both polarities see whole groups (false: the paired passage alone).
    pub whole_groups: bool,
    /// Seed of the foreign negatives and the poisoned queries (42).
    pub seed: u64,
}

impl Default for JudgedSettings {
    fn default() -> Self {
        JudgedSettings {
            positives: Positives::Every,
            foreign_negatives: 0,
            inf_ir: false,
            replay: 1,
            whole_groups: false,
            seed: 42,
        }
    }
}

/// How many records of each kind were made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct JudgedCounts {
    /// Dual-view records (both polarities).
    pub dual_view: usize,
    /// Single-view records (changed judgments only).
    pub single_view: usize,
    /// InF-IR records.
    pub inf_ir: usize,
    /// Replay records (the original instruction or the query alone).
    pub replay: usize,
    /// Kept queries that gave no record of any kind.
    pub without_records: usize,
}

/// Records made from a set's judgments.
#[derive(Debug, Clone)]
pub struct JudgedRecords {
    /// The records, query by query in the set's order.
    pub records: Vec<TrainingRecord>,
    /// Ids of the queries that gave an instruction record (dual view, single view or InF-IR).
    pub instructed_queries: Vec<String>,
    /// Counts by kind.
    pub counts: JudgedCounts,
}

/// The judgments and texts every query's records are read from.
struct Judgments<'a> {
    set: &'a EvalSet,
    texts: BTreeMap<&'a str, String>,
    og: Option<&'a Qrels>,
    changed: Option<&'a Qrels>,
    reversed: Option<&'a Qrels>,
}

impl<'a> Judgments<'a> {
    fn new(set: &'a EvalSet) -> Self {
        Judgments {
            set,
            texts: set
                .corpus
                .iter()
                .map(|p| (p.id.as_str(), p.encoder_text()))
                .collect(),
            og: set.qrels.get(&Mode::Og),
            changed: set.qrels.get(&Mode::Changed),
            reversed: set.qrels.get(&Mode::Reversed),
        }
    }

    /// Passages relevant (level > 0) to `query` in `qrels`, in id order, present in the corpus.
    fn relevant(&self, qrels: Option<&Qrels>, query: &str) -> Vec<&'a str> {
        let Some(docs) = qrels.and_then(|q| q.get(query)) else {
            return Vec::new();
        };
        docs.iter()
            .filter(|(_, &level)| level > 0.0)
            .filter_map(|(d, _)| self.texts.get_key_value(d.as_str()).map(|(k, _)| *k))
            .collect()
    }

    /// Every passage judged for `query` under any mode.
    fn judged(&self, query: &str) -> BTreeSet<&str> {
        [self.og, self.changed, self.reversed]
            .into_iter()
            .flatten()
            .filter_map(|q| q.get(query))
            .flat_map(|docs| docs.keys().map(|d| d.as_str()))
            .collect()
    }

    /// Passages judged for `query` and relevant under none of its modes: its hard negatives.
    fn off_topic(&self, query: &str) -> Vec<String> {
        let relevant: BTreeSet<&str> = [self.og, self.changed, self.reversed]
            .into_iter()
            .flat_map(|q| self.relevant(q, query))
            .collect();
        self.judged(query)
            .into_iter()
            .filter(|d| !relevant.contains(d))
            .filter_map(|d| self.texts.get(d).cloned())
            .collect()
    }

    fn text(&self, id: &str) -> String {
        self.texts[id].clone()
    }
}

/// The two groups an instruction pair splits a query's relevant passages into, and whether
/// the reversed instruction gives the dual view.
struct Split<'a> {
    kept: Vec<&'a str>,
    excluded: Vec<&'a str>,
    reversed: Option<String>,
}

fn split<'a>(j: &Judgments<'a>, query: &Query) -> Option<Split<'a>> {
    query.instruction_changed.as_ref()?;
    let changed = j.relevant(j.changed, &query.id);
    let reversed_instruction = query
        .instruction_reversed
        .clone()
        .filter(|r| !r.trim().is_empty());
    let reversed = j.relevant(j.reversed, &query.id);
    let split = if reversed_instruction.is_some() && !reversed.is_empty() {
        Split {
            kept: changed
                .iter()
                .copied()
                .filter(|d| !reversed.contains(d))
                .collect(),
            excluded: reversed
                .iter()
                .copied()
                .filter(|d| !changed.contains(d))
                .collect(),
            reversed: reversed_instruction,
        }
    } else {
        Split {
            excluded: j
                .relevant(j.og, &query.id)
                .into_iter()
                .filter(|d| !changed.contains(d))
                .collect(),
            kept: changed,
            reversed: None,
        }
    };
    (!split.kept.is_empty() && !split.excluded.is_empty()).then_some(split)
}

impl JudgedRecords {
    /// Records from the judgments of `set`'s queries for which `keep` is true.
    pub fn from_set(
        set: &EvalSet,
        settings: &JudgedSettings,
        keep: impl Fn(&Query) -> bool,
    ) -> Result<JudgedRecords> {
        let j = Judgments::new(set);
        let kept: Vec<&Query> = set.queries.iter().filter(|q| keep(q)).collect();
        let mut maker = Maker {
            j: &j,
            settings,
            rng: SplitMix64::new(settings.seed),
            others: kept
                .iter()
                .filter(|q| !j.relevant(j.og, &q.id).is_empty())
                .copied()
                .collect(),
            out: JudgedRecords {
                records: Vec::new(),
                instructed_queries: Vec::new(),
                counts: JudgedCounts::default(),
            },
            replayed: BTreeMap::new(),
        };
        for query in &kept {
            maker.query(query);
        }
        if maker.out.records.is_empty() {
            return Err(EngineError::data(
                &set.root,
                0,
                "no training record could be made: no kept query has a passage relevant under its instruction and one it excludes, or an og-relevant passage to replay",
            ));
        }
        Ok(maker.out)
    }
}

/// `group` with `paired` moved to the front.
fn paired_first<'a>(paired: &'a str, group: &[&'a str]) -> Vec<&'a str> {
    std::iter::once(paired)
        .chain(group.iter().copied().filter(|&d| d != paired))
        .collect()
}

/// Makes one query's records at a time.
struct Maker<'a, 's> {
    j: &'s Judgments<'a>,
    settings: &'s JudgedSettings,
    rng: SplitMix64,
    /// Kept queries with og-relevant passages: the poisoned queries' pool.
    others: Vec<&'a Query>,
    out: JudgedRecords,
    /// Replay records made so far per query text (and instruction_og).
    replayed: BTreeMap<(String, String), usize>,
}

impl<'a> Maker<'a, '_> {
    fn query(&mut self, query: &'a Query) {
        let before = self.out.records.len();
        if let Some(split) = split(self.j, query) {
            self.instructed(query, &split);
            self.out.instructed_queries.push(query.id.clone());
        }
        self.replay(query);
        if self.out.records.len() == before {
            self.out.counts.without_records += 1;
        }
    }

    fn instructed(&mut self, query: &'a Query, split: &Split<'a>) {
        let instruction = query.instruction_changed.clone().unwrap_or_default();
        let off_topic = self.j.off_topic(&query.id);
        let Some(reversed) = &split.reversed else {
            for positive in &split.kept {
                let negatives = self.negatives(query, &off_topic);
                self.push_single(query, &instruction, positive, &split.excluded, negatives);
            }
            return;
        };
        let (k, r) = (split.kept.len(), split.excluded.len());
        let n = match self.settings.positives {
            Positives::Every => k.max(r),
            Positives::Zip => k.min(r),
        };
        for i in 0..n {
            let (positive, negative) = (split.kept[i % k], split.excluded[i % r]);
            let negatives = self.negatives(query, &off_topic);
            let record = match (self.settings.whole_groups, i % 2) {
                (false, _) => {
                    self.dual_view(query, [&instruction, reversed], positive, &[negative])
                }
                (true, 0) => {
                    let group = paired_first(negative, &split.excluded);
                    self.dual_view(query, [&instruction, reversed], positive, &group)
                }
                (true, _) => {
                    let group = paired_first(positive, &split.kept);
                    self.dual_view(query, [reversed, &instruction], negative, &group)
                }
            };
            self.out.records.push(TrainingRecord::InstructionNegative(
                InstructionNegativeRecord {
                    negatives,
                    ..record
                },
            ));
            self.out.counts.dual_view += 1;
            if self.settings.inf_ir {
                self.inf_ir(query, &instruction, reversed, positive, negative);
            }
        }
    }

    /// A dual-view record: `positive` wanted under `instructions[0]`, `excluded` (the paired
    /// passage first) under `instructions[1]`; no hard negatives yet.
    fn dual_view(
        &self,
        query: &Query,
        instructions: [&str; 2],
        positive: &str,
        excluded: &[&str],
    ) -> InstructionNegativeRecord {
        InstructionNegativeRecord {
            query: query.text.clone(),
            instruction: instructions[0].to_string(),
            positive: self.j.text(positive),
            negatives: Vec::new(),
            instruction_negatives: excluded.iter().map(|d| self.j.text(d)).collect(),
            instruction_reversed: Some(instructions[1].to_string()),
        }
    }

    fn push_single(
        &mut self,
        query: &Query,
        instruction: &str,
        positive: &str,
        excluded: &[&str],
        negatives: Vec<String>,
    ) {
        self.out.records.push(TrainingRecord::InstructionNegative(
            InstructionNegativeRecord {
                query: query.text.clone(),
                instruction: instruction.to_string(),
                positive: self.j.text(positive),
                negatives,
                instruction_negatives: excluded.iter().map(|d| self.j.text(d)).collect(),
                instruction_reversed: None,
            },
        ));
        self.out.counts.single_view += 1;
    }

    /// The off-topic passages, then the drawn foreign ones.
    fn negatives(&mut self, query: &Query, off_topic: &[String]) -> Vec<String> {
        let mut out = off_topic.to_vec();
        let wanted = self.settings.foreign_negatives;
        if wanted == 0 {
            return out;
        }
        let judged = self.j.judged(&query.id);
        let corpus = &self.j.set.corpus;
        // Bounded tries: a tiny corpus may not have enough passages judged elsewhere.
        for _ in 0..wanted * 8 {
            if out.len() >= off_topic.len() + wanted {
                break;
            }
            let p = &corpus[self.rng.below(corpus.len())];
            let text = p.encoder_text();
            if !judged.contains(p.id.as_str()) && !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }

    /// The InF-IR record of one dual-view pair: (I+, Q+, P+), (I-, Q+, P1-) and (I+, Q-, P2-)
    /// with Q- another query's text and P2- one of its relevant passages.
    fn inf_ir(
        &mut self,
        query: &Query,
        instruction: &str,
        reversed: &str,
        positive: &str,
        negative: &str,
    ) {
        let candidates: Vec<&Query> = self
            .others
            .iter()
            .copied()
            .filter(|o| o.text != query.text)
            .collect();
        if candidates.is_empty() {
            return;
        }
        let other = candidates[self.rng.below(candidates.len())];
        let relevant = self.j.relevant(self.j.og, &other.id);
        let p2 = relevant[self.rng.below(relevant.len())];
        self.out.records.push(TrainingRecord::InfIr(InfIrRecord {
            query_positive: query.text.clone(),
            instruction_positive: instruction.to_string(),
            document_positive: self.j.text(positive),
            instruction_negative: reversed.to_string(),
            hard_negative_document_1: self.j.text(negative),
            query_negative: other.text.clone(),
            hard_negative_document_2: self.j.text(p2),
        }));
        self.out.counts.inf_ir += 1;
    }

    /// Up to `replay` plain records for the query's text (counted across queries that share
    /// it), each with the next og-relevant passage.
    fn replay(&mut self, query: &Query) {
        let relevant = self.j.relevant(self.j.og, &query.id);
        if relevant.is_empty() || self.settings.replay == 0 {
            return;
        }
        let key = (query.text.clone(), query.instruction_og.clone());
        let done = *self.replayed.get(&key).unwrap_or(&0);
        let off_topic = self.j.off_topic(&query.id);
        let mut made = done;
        while made < self.settings.replay && made < relevant.len() {
            let negatives = self.negatives(query, &off_topic);
            self.out.records.push(TrainingRecord::InstructionNegative(
                InstructionNegativeRecord {
                    query: query.text.clone(),
                    instruction: query.instruction_og.clone(),
                    positive: self.j.text(relevant[made]),
                    negatives,
                    instruction_negatives: Vec::new(),
                    instruction_reversed: None,
                },
            ));
            self.out.counts.replay += 1;
            made += 1;
        }
        self.replayed.insert(key, made);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::data::Passage;

    fn passage(id: &str) -> Passage {
        Passage {
            id: id.into(),
            title: String::new(),
            text: format!("text of {id}"),
        }
    }

    fn qrels(rows: &[(&str, &str, f64)]) -> Qrels {
        let mut q = Qrels::new();
        for (query, doc, level) in rows {
            q.entry(query.to_string())
                .or_default()
                .insert(doc.to_string(), *level);
        }
        q
    }

    fn query(id: &str, text: &str, changed: Option<&str>, reversed: Option<&str>) -> Query {
        Query {
            id: id.into(),
            text: text.into(),
            instruction_og: String::new(),
            instruction_changed: changed.map(String::from),
            instruction_reversed: reversed.map(String::from),
            constraint: None,
        }
    }

    /// One topic: passages a, b, c answer the query; a is kept by the instruction, b and c by
    /// its reversal; d is a distractor. A second topic t2 with one relevant passage.
    fn topic_set() -> EvalSet {
        let og = qrels(&[
            ("t1-i1", "a", 1.0),
            ("t1-i1", "b", 1.0),
            ("t1-i1", "c", 1.0),
            ("t1-i1", "d", 0.0),
            ("t2", "e", 1.0),
        ]);
        let changed = qrels(&[
            ("t1-i1", "a", 1.0),
            ("t1-i1", "b", 0.0),
            ("t1-i1", "c", 0.0),
            ("t1-i1", "d", 0.0),
        ]);
        let reversed = qrels(&[
            ("t1-i1", "a", 0.0),
            ("t1-i1", "b", 1.0),
            ("t1-i1", "c", 1.0),
            ("t1-i1", "d", 0.0),
        ]);
        EvalSet {
            root: "topics".into(),
            corpus: ["a", "b", "c", "d", "e"].map(passage).to_vec(),
            queries: vec![
                query("t1-i1", "query one", Some("only a"), Some("not a")),
                query("t2", "query two", None, None),
            ],
            qrels: [
                (Mode::Og, og),
                (Mode::Changed, changed),
                (Mode::Reversed, reversed),
            ]
            .into_iter()
            .collect(),
            candidates: None,
        }
    }

    fn dual(record: &TrainingRecord) -> &InstructionNegativeRecord {
        match record {
            TrainingRecord::InstructionNegative(r) => r,
            other => panic!("expected an instruction-negative record, got {other:?}"),
        }
    }

    #[test]
    fn every_relevant_passage_of_both_polarities_is_a_positive_once() {
        let set = topic_set();
        let made = JudgedRecords::from_set(&set, &JudgedSettings::default(), |_| true).unwrap();
        let views: Vec<_> = made
            .records
            .iter()
            .map(dual)
            .filter(|r| r.instruction_reversed.is_some())
            .collect();
        assert_eq!(views.len(), 2, "max(|C| = 1, |R| = 2) records");
        let reversed_positives: BTreeSet<&str> = views
            .iter()
            .map(|r| r.instruction_negatives[0].as_str())
            .collect();
        assert_eq!(
            reversed_positives,
            ["text of b", "text of c"].into_iter().collect()
        );
        for r in &views {
            assert_eq!(r.positive, "text of a");
            assert_eq!(r.instruction, "only a");
            assert_eq!(r.instruction_reversed.as_deref(), Some("not a"));
            assert_eq!(r.negatives, vec!["text of d".to_string()]);
        }
        assert_eq!(made.counts.dual_view, 2);
        assert_eq!(made.counts.replay, 2, "one replay per query text");
        assert_eq!(made.instructed_queries, vec!["t1-i1".to_string()]);
    }

    #[test]
    fn zip_pairs_the_groups_in_order() {
        let set = topic_set();
        let settings = JudgedSettings {
            positives: Positives::Zip,
            replay: 0,
            ..Default::default()
        };
        let made = JudgedRecords::from_set(&set, &settings, |_| true).unwrap();
        assert_eq!(made.records.len(), 1);
        assert_eq!(
            dual(&made.records[0]).instruction_negatives,
            vec!["text of b"]
        );
    }

    #[test]
    fn whole_groups_list_every_excluded_passage_in_both_polarities() {
        let set = topic_set();
        let settings = JudgedSettings {
            whole_groups: true,
            replay: 0,
            ..Default::default()
        };
        let made = JudgedRecords::from_set(&set, &settings, |_| true).unwrap();
        let views: Vec<_> = made.records.iter().map(dual).collect();
        assert_eq!(views.len(), 2);
        // Record 0 as the changed instruction sees it: its whole excluded group, the paired
        // passage first.
        assert_eq!(
            (views[0].instruction.as_str(), views[0].positive.as_str()),
            ("only a", "text of a")
        );
        assert_eq!(
            views[0].instruction_negatives,
            vec!["text of b", "text of c"]
        );
        // Record 1 the other way round: the reversal wants c and rules out all of {a}.
        assert_eq!(
            (views[1].instruction.as_str(), views[1].positive.as_str()),
            ("not a", "text of c")
        );
        assert_eq!(views[1].instruction_negatives, vec!["text of a"]);
        assert_eq!(views[1].instruction_reversed.as_deref(), Some("only a"));
        assert_eq!(views[1].negatives, vec!["text of d".to_string()]);
        // The tuples: instruction negatives counted; the reversed view of record 0 leaves out c,
        // which the reversal asks for.
        let tuples = made.records[0].tuples(30);
        assert_eq!(tuples[0].excluded, 2);
        assert_eq!(
            tuples[0].negatives,
            vec!["text of b", "text of c", "text of d"]
        );
        assert_eq!(
            (tuples[1].positive.as_str(), tuples[1].excluded),
            ("text of b", 1)
        );
        assert_eq!(tuples[1].negatives, vec!["text of a", "text of d"]);
    }

    #[test]
    fn without_a_reversal_the_og_relevant_passages_the_instruction_drops_are_its_negatives() {
        let mut set = topic_set();
        set.qrels.remove(&Mode::Reversed);
        set.queries[0].instruction_reversed = None;
        let settings = JudgedSettings {
            replay: 0,
            ..Default::default()
        };
        let made = JudgedRecords::from_set(&set, &settings, |_| true).unwrap();
        assert_eq!(made.counts.single_view, 1);
        let r = dual(&made.records[0]);
        assert_eq!(r.positive, "text of a");
        assert_eq!(r.instruction_negatives, vec!["text of b", "text of c"]);
        assert!(r.instruction_reversed.is_none());
    }

    #[test]
    fn inf_ir_records_poison_the_query_with_another_topic_and_its_passage() {
        let set = topic_set();
        let settings = JudgedSettings {
            inf_ir: true,
            replay: 0,
            ..Default::default()
        };
        let made = JudgedRecords::from_set(&set, &settings, |_| true).unwrap();
        let inf: Vec<_> = made
            .records
            .iter()
            .filter_map(|r| match r {
                TrainingRecord::InfIr(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(inf.len(), 2);
        assert_eq!(inf[0].query_negative, "query two");
        assert_eq!(inf[0].hard_negative_document_2, "text of e");
        assert_eq!(inf[0].instruction_negative, "not a");
    }

    #[test]
    fn foreign_negatives_come_from_passages_judged_for_other_queries_only() {
        let set = topic_set();
        let settings = JudgedSettings {
            foreign_negatives: 1,
            replay: 0,
            ..Default::default()
        };
        let made = JudgedRecords::from_set(&set, &settings, |_| true).unwrap();
        for r in made.records.iter().map(dual) {
            assert_eq!(r.negatives, vec!["text of d", "text of e"]);
        }
    }

    #[test]
    fn a_set_with_og_judgments_only_gives_replay_and_left_out_queries_give_nothing() {
        let mut set = topic_set();
        set.qrels.retain(|m, _| *m == Mode::Og);
        let made =
            JudgedRecords::from_set(&set, &JudgedSettings::default(), |q| q.id == "t2").unwrap();
        assert_eq!(made.records.len(), 1);
        let r = dual(&made.records[0]);
        assert_eq!(
            (r.query.as_str(), r.instruction.as_str()),
            ("query two", "")
        );
        assert!(made.instructed_queries.is_empty());
        let none = JudgedRecords::from_set(&set, &JudgedSettings::default(), |_| false);
        assert!(none.unwrap_err().to_string().contains("no training record"));
    }
}
