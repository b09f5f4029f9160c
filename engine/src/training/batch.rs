//! From records to what one training step encodes: tuples, the epoch order, and the
//! [`BatchLayout`] that every objective reads.
//!
//! Records are flattened into tuples `(instruction, query, positive, negatives)`: an InF-IR
//! record gives its three sibling tuples (I+,Q+,P+), (I-,Q+,P1-), (I+,Q-,P2-); an
//! instruction-negative record gives its original view and, with `instruction_reversed`, the
//! reversed view (the first instruction negative becomes the positive, the original positive a
//! negative). Batches are whole records, so siblings and both views always share a batch.
//!
//! The layout deduplicates texts: each distinct instruction, query, passage and (instruction,
//! query) pair is encoded once and remembers how many tuples use it. Deduplication is what the
//! seeds' masking rule needs (an entry equal to the positive is the positive), and the counts
//! give back the paper's literal sums where a flag asks for them.

use std::collections::HashMap;

use crate::data::records::TrainingTuple;
use crate::rng::SplitMix64;

/// The record order of one epoch: a seeded shuffle, a pure function of `(seed, epoch)` so a
/// resumed run replays exactly the batches an uninterrupted one would.
pub fn epoch_order(records: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..records).collect();
    SplitMix64::for_stream(seed, epoch).shuffle(&mut order);
    order
}

/// Indices of one tuple into the layout's deduplicated lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TupleIndex {
    /// Into [`BatchLayout::instructions`].
    pub instruction: usize,
    /// Into [`BatchLayout::queries`].
    pub query: usize,
    /// Into [`BatchLayout::pairs`]: the tuple's own (instruction, query).
    pub pair: usize,
    /// Into [`BatchLayout::passages`].
    pub positive: usize,
    /// Into [`BatchLayout::passages`].
    pub negatives: Vec<usize>,
    /// How many of the leading `negatives` are instruction negatives (passages that answer the
    /// query but that the instruction rules out).
    pub excluded: usize,
}

/// Passages one instruction rules out, all answering its query: their scores under the
/// (instruction, query) and under the query alone, for the excluded-order term
/// ([`crate::training::Loss::excluded_order_weight`]). Indices into the layout's lists.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExcludedGroup {
    /// Into [`BatchLayout::pairs`]: the (instruction, query).
    pub instructed: usize,
    /// Into [`BatchLayout::pairs`]: the same query with the empty instruction.
    pub bare: usize,
    /// Into [`BatchLayout::passages`]: at least two, distinct, in index order.
    pub passages: Vec<usize>,
}

/// One passage scored under an (instruction, query) pair and under the same query alone, the
/// two scores the exclusion and inclusion terms compare (InfoSearch's SICR asks
/// `S_ins > S_ori` of a passage the instruction asks for and `S_rev < S_ori` of one it rules
/// out). Indices into the layout's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct BareContrast {
    /// Into [`BatchLayout::pairs`]: the (instruction, query).
    pub instructed: usize,
    /// Into [`BatchLayout::pairs`]: the same query with the empty instruction.
    pub bare: usize,
    /// Into [`BatchLayout::passages`].
    pub passage: usize,
}

/// A passage an instruction rules out and a negative that does not answer the query, both
/// scored under that (instruction, query), for the demotion term
/// ([`crate::training::Loss::demotion_weight`]). Indices into the layout's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Demotion {
    /// Into [`BatchLayout::pairs`]: the (instruction, query).
    pub instructed: usize,
    /// Into [`BatchLayout::passages`]: answers the query, ruled out by the instruction.
    pub ruled_out: usize,
    /// Into [`BatchLayout::passages`]: does not answer the query.
    pub unanswering: usize,
}

/// Everything one step encodes, deduplicated, and how the tuples refer to it.
#[derive(Debug, Clone, Default)]
pub struct BatchLayout {
    /// Distinct instructions.
    pub instructions: Vec<String>,
    /// Distinct queries.
    pub queries: Vec<String>,
    /// Distinct passages (positives and negatives).
    pub passages: Vec<String>,
    /// Distinct (instruction, query) pairs to encode. The first [`BatchLayout::tuple_pairs`]
    /// are the tuples' own pairs; the rest are the cross pairs of the I block and the bare
    /// queries ([`BatchLayout::with_query_alone`], [`BatchLayout::with_bare_queries`]).
    pub pairs: Vec<(usize, usize)>,
    /// How many of `pairs` are tuple pairs.
    pub tuple_pairs: usize,
    /// The tuples.
    pub tuples: Vec<TupleIndex>,
    /// How many tuples use each passage (as positive or negative).
    pub passage_count: Vec<u32>,
    /// How many tuples use each instruction.
    pub instruction_count: Vec<u32>,
    /// How many tuples use each tuple pair.
    pub pair_count: Vec<u32>,
    /// The sampled instructions of the I block (every one at fraction 1). Each anchor's block
    /// adds the instructions of the tuples that share its query, so its own positive and its
    /// hardest instruction negatives (the poisoned sibling, the reversed view) are always in.
    pub instruction_block: Vec<usize>,
    pair_of: HashMap<(usize, usize), usize>,
}

fn intern(list: &mut Vec<String>, map: &mut HashMap<String, usize>, text: &str) -> usize {
    if let Some(&i) = map.get(text) {
        return i;
    }
    list.push(text.to_string());
    map.insert(text.to_string(), list.len() - 1);
    list.len() - 1
}

impl BatchLayout {
    /// Lays out `tuples`. With `instruction_block`, the I block's cross pairs (every sampled
    /// instruction joined with every query) are added; `instruction_fraction` < 1 samples that
    /// share of the instructions (the reference code's `div_neg_batch`) with `rng`.
    pub fn new(
        tuples: &[TrainingTuple],
        instruction_block: bool,
        instruction_fraction: f64,
        rng: &mut SplitMix64,
    ) -> Self {
        let mut l = BatchLayout::default();
        let (mut im, mut qm, mut pm) = (HashMap::new(), HashMap::new(), HashMap::new());
        for t in tuples {
            let instruction = intern(&mut l.instructions, &mut im, &t.instruction);
            let query = intern(&mut l.queries, &mut qm, &t.query);
            let positive = intern(&mut l.passages, &mut pm, &t.positive);
            let negatives = t
                .negatives
                .iter()
                .map(|n| intern(&mut l.passages, &mut pm, n))
                .collect();
            let next = l.pairs.len();
            let pair = *l.pair_of.entry((instruction, query)).or_insert(next);
            if pair == next {
                l.pairs.push((instruction, query));
            }
            l.tuples.push(TupleIndex {
                instruction,
                query,
                pair,
                positive,
                negatives,
                excluded: t.excluded.min(t.negatives.len()),
            });
        }
        l.tuple_pairs = l.pairs.len();
        l.passage_count = vec![0; l.passages.len()];
        l.instruction_count = vec![0; l.instructions.len()];
        l.pair_count = vec![0; l.tuple_pairs];
        for t in &l.tuples {
            l.passage_count[t.positive] += 1;
            for &n in &t.negatives {
                l.passage_count[n] += 1;
            }
            l.instruction_count[t.instruction] += 1;
            l.pair_count[t.pair] += 1;
        }
        if instruction_block {
            l.instruction_block = (0..l.instructions.len())
                .filter(|_| instruction_fraction >= 1.0 || rng.uniform() < instruction_fraction)
                .collect();
            for &j in &l.instruction_block.clone() {
                for q in 0..l.queries.len() {
                    let next = l.pairs.len();
                    if *l.pair_of.entry((j, q)).or_insert(next) == next {
                        l.pairs.push((j, q));
                    }
                }
            }
        }
        l
    }

    /// Puts the query alone (the empty instruction) into every anchor's I block: a positive
    /// must then score higher with its instruction than with its bare query, which is what
    /// InfoSearch's SICR asks of an instructed query (`S_ins > S_ori`). Only for objectives
    /// with an I block (the pairs it adds are encoded).
    pub fn with_query_alone(mut self) -> Self {
        let empty = self.add_bare_queries();
        if !self.instruction_block.contains(&empty) {
            self.instruction_block.push(empty);
        }
        self
    }

    /// Lays out every query alone (the empty instruction joined with it) as an extra pair, for
    /// the exclusion term ([`BatchLayout::exclusions`]); the I block is unchanged.
    pub fn with_bare_queries(mut self) -> Self {
        self.add_bare_queries();
        self
    }

    /// The index of the instruction that gives none (empty or blank), if the batch has one:
    /// blank instructions are interned as their own text, but the template encodes each as
    /// the query alone, so the first stands for all.
    fn bare_instruction(&self) -> Option<usize> {
        self.instructions
            .iter()
            .position(|i| crate::instruction::is_absent(i))
    }

    /// Adds the (empty instruction, query) pairs; returns the empty instruction's index.
    fn add_bare_queries(&mut self) -> usize {
        let empty = match self.bare_instruction() {
            Some(i) => i,
            None => {
                self.instructions.push(String::new());
                self.instruction_count.push(0);
                self.instructions.len() - 1
            }
        };
        for q in 0..self.queries.len() {
            let next = self.pairs.len();
            if *self.pair_of.entry((empty, q)).or_insert(next) == next {
                self.pairs.push((empty, q));
            }
        }
        empty
    }

    /// The batch's exclusions: `(excluding pair, bare-query pair, passage)` for every tuple
    /// with an instruction and every negative of it that answers the query but that this
    /// instruction rules out: its instruction negatives, and any negative that is the
    /// positive of another tuple with the same query (such as the original positive under the
    /// reversed view). Sorted, without repeats; only those whose bare query is laid out
    /// ([`BatchLayout::with_bare_queries`]).
    pub fn exclusions(&self) -> Vec<BareContrast> {
        let Some(empty) = self.bare_instruction() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for u in self.instructed_tuples() {
            let Some(bare) = self.pair(empty, u.query) else {
                continue;
            };
            for (k, &n) in u.negatives.iter().enumerate() {
                if self.rules_out(u, k) {
                    out.push(BareContrast {
                        instructed: u.pair,
                        bare,
                        passage: n,
                    });
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The batch's demotions: for every tuple with an instruction, each passage it rules out
    /// (as in [`BatchLayout::exclusions`]) with each of its negatives that does not answer the
    /// query (the topics' distractors, foreign passages). Sorted, without repeats; needs no
    /// bare query.
    pub fn demotions(&self) -> Vec<Demotion> {
        let mut out = Vec::new();
        for u in self.instructed_tuples() {
            let (ruled_out, unanswering): (Vec<usize>, Vec<usize>) =
                (0..u.negatives.len()).partition(|&k| self.rules_out(u, k));
            for &e in &ruled_out {
                for &n in &unanswering {
                    if u.negatives[e] != u.negatives[n] {
                        out.push(Demotion {
                            instructed: u.pair,
                            ruled_out: u.negatives[e],
                            unanswering: u.negatives[n],
                        });
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The tuples that carry an instruction.
    fn instructed_tuples(&self) -> impl Iterator<Item = &TupleIndex> {
        self.tuples
            .iter()
            .filter(|t| !crate::instruction::is_absent(&self.instructions[t.instruction]))
    }

    /// Whether negative `k` of tuple `u` answers the query but is ruled out by `u`'s
    /// instruction: one of its instruction negatives, or the positive of another tuple with
    /// the same query and another instruction (the original positive under the reversed view).
    fn rules_out(&self, u: &TupleIndex, k: usize) -> bool {
        let n = u.negatives[k];
        k < u.excluded
            || self
                .tuples
                .iter()
                .any(|t| t.query == u.query && t.positive == n && t.instruction != u.instruction)
    }

    /// The batch's excluded groups: for every tuple with an instruction and at least two
    /// distinct instruction negatives, those passages with the tuple's pair and its bare
    /// query's. Sorted, without repeats; only those whose bare query is laid out
    /// ([`BatchLayout::with_bare_queries`]).
    pub fn excluded_groups(&self) -> Vec<ExcludedGroup> {
        let Some(empty) = self.bare_instruction() else {
            return Vec::new();
        };
        let mut out: Vec<ExcludedGroup> = self
            .instructed_tuples()
            .filter_map(|t| {
                let mut passages = t.negatives[..t.excluded].to_vec();
                passages.sort_unstable();
                passages.dedup();
                if passages.len() < 2 {
                    return None;
                }
                Some(ExcludedGroup {
                    instructed: t.pair,
                    bare: self.pair(empty, t.query)?,
                    passages,
                })
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The batch's inclusions: `(the tuple's pair, bare-query pair, its positive)` for every
    /// tuple with an instruction, sorted, without repeats; only those whose bare query is laid
    /// out ([`BatchLayout::with_bare_queries`]).
    pub fn inclusions(&self) -> Vec<BareContrast> {
        let Some(empty) = self.bare_instruction() else {
            return Vec::new();
        };
        let mut out: Vec<BareContrast> = self
            .instructed_tuples()
            .filter_map(|t| {
                Some(BareContrast {
                    instructed: t.pair,
                    bare: self.pair(empty, t.query)?,
                    passage: t.positive,
                })
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The I block of anchor tuple `i`: the sampled instructions plus those of every tuple
    /// with the same query, without repeats, in index order.
    pub fn instruction_block_for(&self, i: usize) -> Vec<usize> {
        let q = self.tuples[i].query;
        let mut block: Vec<usize> = self
            .instruction_block
            .iter()
            .copied()
            .chain(
                self.tuples
                    .iter()
                    .filter(|t| t.query == q)
                    .map(|t| t.instruction),
            )
            .collect();
        block.sort_unstable();
        block.dedup();
        block
    }

    /// The pair index of (instruction `j`, query `q`), if laid out.
    pub fn pair(&self, j: usize, q: usize) -> Option<usize> {
        self.pair_of.get(&(j, q)).copied()
    }

    /// The encoder input of every pair, through `join(instruction, query)`.
    pub fn pair_texts(&self, join: impl Fn(&str, &str) -> String) -> Vec<String> {
        self.pairs
            .iter()
            .map(|&(i, q)| join(&self.instructions[i], &self.queries[q]))
            .collect()
    }
}
