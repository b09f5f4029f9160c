//! The contrastive objectives (seeds-spec §2.5 and §3.4) as tensor code that runs on any burn
//! device, autodiff included.
//!
//! For anchor tuple `i` with pair `iq_i = (I_i, Q_i)` and positive passage `p_i`, with
//! `s(x, y)` the cosine divided by the temperature τ:
//!
//! * block **P**: `s(p_m, iq_i)` for every passage `m` of the batch (hard and in-batch
//!   negatives);
//! * block **I**: `s(p_i, (I_j, Q_i))` for every (sampled) instruction `j` of the batch, always
//!   including those of the tuples that share the anchor's query;
//! * block **IQ**: `s(p_i, iq_k)` for every tuple pair `k` of the batch.
//!
//! Univariate objectives sum one cross-entropy per retained block; multivariate objectives take
//! one cross-entropy over the retained blocks joined. InfoNCE is block P with InfoNCE's
//! temperature (0.02), over instruction-negative records with hard negatives.
//!
//! By default the positive appears exactly once and every other entry equal to it (the same
//! instruction, query and passage texts, e.g. the I block's `(I+, Q+)` re-created by the
//! sibling `(I+, Q-, P2-)`) is masked, and an exact duplicate negative counts once, within a
//! block and across the blocks of a multivariate objective. With
//! `literal`, every block is the paper's full marginal sum instead: the positive counted in
//! each block and duplicates counted as often as they occur (seeds-spec §2.5 worked example:
//! 0.14293, 0.41972, 0.45619, and 1.25890 literal).

use std::fmt;
use std::str::FromStr;

use burn::tensor::activation::log_softmax;
use burn::tensor::{Int, Tensor, TensorData};

use crate::error::{EngineError, Result};
use crate::training::batch::{BareContrast, BatchLayout, ExcludedGroup};

use crate::bert::MASKED;

/// One marginal block of InF-Embed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    /// Other passages against the anchor's (instruction, query).
    P,
    /// Other instructions joined with the anchor's query, against the anchor's passage.
    I,
    /// Other (instruction, query) pairs against the anchor's passage.
    IQ,
}

/// A training objective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Objective {
    /// One cross-entropy per factor, summed (InF-Embed Objective I).
    Univariate(Vec<Factor>),
    /// One cross-entropy over the factors' blocks joined (InF-Embed Objective II).
    Multivariate(Vec<Factor>),
    /// InfoNCE with hard and in-batch negatives (the dual-view paper).
    InfoNce,
}

impl Objective {
    /// Every objective name the command line accepts.
    pub const NAMES: [&'static str; 12] = [
        "uni-p",
        "uni-i",
        "uni-iq",
        "uni-p-i",
        "uni-p-iq",
        "uni-i-iq",
        "uni-p-i-iq",
        "multi-p-i",
        "multi-p-iq",
        "multi-i-iq",
        "multi-p-i-iq",
        "infonce",
    ];

    /// The factors whose blocks this objective reads.
    pub fn factors(&self) -> &[Factor] {
        match self {
            Objective::Univariate(f) | Objective::Multivariate(f) => f,
            Objective::InfoNce => &[Factor::P],
        }
    }

    /// Whether the I block's cross pairs must be encoded.
    pub fn needs_instruction_block(&self) -> bool {
        self.factors().contains(&Factor::I)
    }

    /// The seeds' temperature for this objective: 0.02 for InfoNCE (dual-view paper), 0.05
    /// for the InF-Embed objectives (reference code).
    pub fn default_temperature(&self) -> f64 {
        match self {
            Objective::InfoNce => 0.02,
            _ => 0.05,
        }
    }
}

impl FromStr for Objective {
    type Err = EngineError;

    fn from_str(s: &str) -> Result<Self> {
        let lower = s.to_ascii_lowercase();
        if lower == "infonce" {
            return Ok(Objective::InfoNce);
        }
        let bad = || {
            EngineError::Invalid(format!(
                "unknown loss '{s}': use one of {}",
                Objective::NAMES.join(", ")
            ))
        };
        let mut parts = lower.split('-');
        let kind = parts.next().ok_or_else(bad)?;
        let mut factors = Vec::new();
        for p in parts {
            let f = match p {
                "p" => Factor::P,
                "i" => Factor::I,
                "iq" => Factor::IQ,
                _ => return Err(bad()),
            };
            if factors.contains(&f) {
                return Err(bad());
            }
            factors.push(f);
        }
        // Canonical order P, I, IQ, as in the names.
        factors.sort_by_key(|f| *f as u8);
        let objective = match kind {
            "uni" if !factors.is_empty() => Objective::Univariate(factors),
            "multi" if factors.len() >= 2 => Objective::Multivariate(factors),
            _ => return Err(bad()),
        };
        if !Objective::NAMES.contains(&objective.to_string().as_str()) {
            return Err(bad());
        }
        Ok(objective)
    }
}

serde_as_text!(Objective);

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, factors) = match self {
            Objective::InfoNce => return f.write_str("infonce"),
            Objective::Univariate(x) => ("uni", x),
            Objective::Multivariate(x) => ("multi", x),
        };
        f.write_str(kind)?;
        for factor in factors {
            f.write_str(match factor {
                Factor::P => "-p",
                Factor::I => "-i",
                Factor::IQ => "-iq",
            })?;
        }
        Ok(())
    }
}

/// An objective with its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Loss {
    /// Which objective.
    pub objective: Objective,
    /// τ: cosines are divided by it.
    pub temperature: f64,
    /// The paper's literal sums (see the module docs) instead of positive-once masking.
    pub literal: bool,
    /// Weight of the exclusion term (0 = none): for every exclusion of the batch ([`BatchLayout::exclusions`]), the
    /// two-way cross-entropy `-log σ(s(p, q) - s(p, (I, q)))` (scores divided by τ, as in the
    /// blocks) that asks a passage the
    /// instruction `I` rules out to score lower with `I` than under the bare query `q`. The
    /// contrastive blocks only rank passages within one query; this term compares one passage
    /// across two queries, which is what an absolute score test needs (InfoSearch's SICR:
    /// `S_rev < S_ori`). The layout must hold the bare queries
    /// ([`BatchLayout::with_bare_queries`]). Exclusions come from the tuples' listed negatives
    /// (instruction-negative records); InF-IR records list none, so they add no term.
    pub exclusion_weight: f64,
    /// Weight of the inclusion term (0 = none), the exclusion term's other half: for every
    /// tuple with an instruction ([`BatchLayout::inclusions`]), `-log σ(s(p, (I, q)) - s(p, q))`
    /// asks its positive to score higher with the instruction than under the bare query
    /// (SICR's `S_ins > S_ori`).
    pub inclusion_weight: f64,
    /// Weight of the excluded-order term (0 = none): for every group of passages that one
    /// instruction rules out ([`BatchLayout::excluded_groups`]: a tuple's instruction
    /// negatives, two or more), KL(p_bare ‖ p_instructed) of the softmax of their scores
    /// under the bare query (held fixed, the target) and under the instruction. Ruling a group
    /// out should push it down as a whole, not reshuffle it: FollowIR's p-MRR charges every
    /// excluded passage that climbs past another one.
    pub excluded_order_weight: f64,
    /// Weight of the demotion term (0 = none): for every demotion of the batch
    /// ([`BatchLayout::demotions`]), `-log σ(s(n, (I, q)) - s(e, (I, q)))` asks a passage `e`
    /// that the instruction rules out to score, under the instruction, below a negative `n`
    /// that does not answer the query (a distractor). The contrastive blocks push both under
    /// the positive but leave their order alone, and the bare query ranks `e` above `n`; an
    /// instruction that rules `e` out should make it the least wanted passage, which is also
    /// the one move that lets FollowIR's p-MRR see `e` drop past the distractors.
    pub demotion_weight: f64,
    /// Hold the distractors' scores fixed in the demotion term (a target, no gradient), so it
    /// can only lower the ruled-out passage. Trained, the distractor side is raised too, and
    /// the encoder learns to rank distractors high under the bare query as well (J18).
    pub demotion_fixed_distractors: bool,
}

/// Rows of the score matrix `[pairs, passages]` as logits `[rows.len(), width]`: row `r` holds
/// the scores of pair `rows[r].0` with the passages `rows[r].1`, in that order, divided by
/// `temperature`; shorter rows are padded with [`MASKED`] (nothing after a softmax).
pub(crate) fn row_logits(
    scores: Tensor<2>,
    rows: &[(usize, &[usize])],
    temperature: f64,
) -> Tensor<2> {
    let device = scores.device();
    let [n_pairs, n_passages] = scores.dims();
    let n = rows.len();
    let width = rows.iter().map(|(_, p)| p.len()).max().unwrap_or(1).max(1);
    let mut index = vec![0i64; n * width];
    let mut bias = vec![MASKED; n * width];
    for (r, (pair, passages)) in rows.iter().enumerate() {
        for (c, &passage) in passages.iter().enumerate() {
            index[r * width + c] = (pair * n_passages + passage) as i64;
            bias[r * width + c] = 0.0;
        }
    }
    let index = Tensor::<1, Int>::from_data(TensorData::new(index, [n * width]), &device);
    let bias = Tensor::<2>::from_data(TensorData::new(bias, [n, width]), &device);
    scores
        .reshape([n_pairs * n_passages])
        .select(0, index)
        .reshape([n, width])
        .mul_scalar(1.0 / temperature)
        + bias
}

/// Two scores of the score matrix, each `(pair, passage)`, the first asked to be the higher.
struct Duel {
    winner: (usize, usize),
    loser: (usize, usize),
}

/// One logit entry: a flat index into the score matrix and an additive bias.
type Entry = (usize, f32);

impl Loss {
    /// An objective at its default temperature, masking duplicates.
    pub fn new(objective: Objective) -> Self {
        let temperature = objective.default_temperature();
        Loss {
            objective,
            temperature,
            literal: false,
            exclusion_weight: 0.0,
            inclusion_weight: 0.0,
            excluded_order_weight: 0.0,
            demotion_weight: 0.0,
            demotion_fixed_distractors: false,
        }
    }

    /// The mean loss over the batch's anchors, a one-element tensor. `scores` are the cosines
    /// `[layout.pairs.len(), layout.passages.len()]` (pair embeddings times passage embeddings,
    /// both L2-normalised).
    pub fn forward(&self, scores: Tensor<2>, layout: &BatchLayout) -> Tensor<1> {
        let mut total = self.per_anchor(scores.clone(), layout).mean();
        if let Some(term) = self.exclusion(scores.clone(), layout) {
            total = total + term.mul_scalar(self.exclusion_weight);
        }
        if let Some(term) = self.inclusion(scores.clone(), layout) {
            total = total + term.mul_scalar(self.inclusion_weight);
        }
        if let Some(term) = self.excluded_order(scores.clone(), layout) {
            total = total + term.mul_scalar(self.excluded_order_weight);
        }
        if let Some(term) = self.demotion(scores, layout) {
            total = total + term.mul_scalar(self.demotion_weight);
        }
        total
    }

    /// Whether a term compares scores under the bare query (the layout must hold the bare
    /// queries, [`BatchLayout::with_bare_queries`]).
    pub fn needs_bare_queries(&self) -> bool {
        self.exclusion_weight > 0.0
            || self.inclusion_weight > 0.0
            || self.excluded_order_weight > 0.0
    }

    /// The excluded-order term's mean over the batch's excluded groups, unweighted; `None`
    /// when the weight is 0 or the batch has none.
    pub fn excluded_order(&self, scores: Tensor<2>, layout: &BatchLayout) -> Option<Tensor<1>> {
        if self.excluded_order_weight <= 0.0 {
            return None;
        }
        let groups = layout.excluded_groups();
        if groups.is_empty() {
            return None;
        }
        Some(self.order_divergence(scores, &groups).mean())
    }

    /// KL(p_bare ‖ p_instructed) of each group, `[groups.len()]`, the bare distribution
    /// detached (a target, not a score to move).
    fn order_divergence(&self, scores: Tensor<2>, groups: &[ExcludedGroup]) -> Tensor<1> {
        let rows = |pair_of: fn(&ExcludedGroup) -> usize| -> Vec<(usize, &[usize])> {
            groups
                .iter()
                .map(|g| (pair_of(g), &g.passages[..]))
                .collect()
        };
        let bare = row_logits(scores.clone(), &rows(|g| g.bare), self.temperature);
        let instructed = row_logits(scores, &rows(|g| g.instructed), self.temperature);
        let bare = log_softmax(bare.detach(), 1);
        let instructed = log_softmax(instructed, 1);
        // Padding: p = 0 there, and exp(bare) * (bare - instructed) is 0 * finite.
        let target = bare.clone().exp();
        (target * (bare - instructed))
            .sum_dim(1)
            .reshape([groups.len()])
    }

    /// The demotion term's mean over the batch's demotions, unweighted; `None` when the
    /// weight is 0 or the batch has none.
    pub fn demotion(&self, scores: Tensor<2>, layout: &BatchLayout) -> Option<Tensor<1>> {
        if self.demotion_weight <= 0.0 {
            return None;
        }
        let duels: Vec<Duel> = layout
            .demotions()
            .iter()
            .map(|d| Duel {
                winner: (d.instructed, d.unanswering),
                loser: (d.instructed, d.ruled_out),
            })
            .collect();
        self.duels(scores, &duels, self.demotion_fixed_distractors)
    }

    /// The exclusion term's mean over the batch's exclusions, unweighted; `None` when the
    /// weight is 0 or the batch has none.
    pub fn exclusion(&self, scores: Tensor<2>, layout: &BatchLayout) -> Option<Tensor<1>> {
        if self.exclusion_weight <= 0.0 {
            return None;
        }
        self.bare_contrast(scores, &layout.exclusions(), false)
    }

    /// The inclusion term's mean over the batch's inclusions, unweighted; `None` when the
    /// weight is 0 or the batch has none.
    pub fn inclusion(&self, scores: Tensor<2>, layout: &BatchLayout) -> Option<Tensor<1>> {
        if self.inclusion_weight <= 0.0 {
            return None;
        }
        self.bare_contrast(scores, &layout.inclusions(), true)
    }

    /// The mean two-way cross-entropy between each contrast's instructed and bare-query
    /// scores, the instructed one the target when `instructed_wins`, else the bare one.
    fn bare_contrast(
        &self,
        scores: Tensor<2>,
        contrasts: &[BareContrast],
        instructed_wins: bool,
    ) -> Option<Tensor<1>> {
        let duels: Vec<Duel> = contrasts
            .iter()
            .map(|c| {
                let (instructed, bare) = ((c.instructed, c.passage), (c.bare, c.passage));
                match instructed_wins {
                    true => Duel {
                        winner: instructed,
                        loser: bare,
                    },
                    false => Duel {
                        winner: bare,
                        loser: instructed,
                    },
                }
            })
            .collect();
        self.duels(scores, &duels, false)
    }

    /// The mean of `-log σ((s_winner - s_loser) / τ)` over `duels`, the winners' scores
    /// detached when `winner_fixed`; `None` when there are none.
    fn duels(&self, scores: Tensor<2>, duels: &[Duel], winner_fixed: bool) -> Option<Tensor<1>> {
        if duels.is_empty() {
            return None;
        }
        let device = scores.device();
        let [n_pairs, n_passages] = scores.dims();
        let flat = scores.reshape([n_pairs * n_passages]);
        let gather = |from: Tensor<1>, side: fn(&Duel) -> (usize, usize)| {
            let index: Vec<i64> = duels
                .iter()
                .map(|d| {
                    let (pair, passage) = side(d);
                    (pair * n_passages + passage) as i64
                })
                .collect();
            let index = Tensor::<1, Int>::from_data(TensorData::new(index, [duels.len()]), &device);
            from.select(0, index)
        };
        let loser = gather(flat.clone(), |d| d.loser);
        let winner = gather(if winner_fixed { flat.detach() } else { flat }, |d| {
            d.winner
        });
        let gap = (winner - loser).mul_scalar(1.0 / self.temperature);
        // -log σ(g) = softplus(-g) = max(-g, 0) + log(1 + e^{-|g|}), stable for any g.
        let softplus =
            gap.clone().neg().clamp_min(0.0) + gap.abs().neg().exp().add_scalar(1.0).log();
        Some(softplus.mean())
    }

    /// The loss of each anchor tuple, `[layout.tuples.len()]`.
    pub fn per_anchor(&self, scores: Tensor<2>, layout: &BatchLayout) -> Tensor<1> {
        let [n_pairs, n_passages] = scores.dims();
        let flat = scores.reshape([n_pairs * n_passages]);
        let at = |pair: usize, passage: usize| pair * n_passages + passage;
        let targets: Vec<usize> = layout
            .tuples
            .iter()
            .map(|t| at(t.pair, t.positive))
            .collect();
        match &self.objective {
            Objective::Univariate(factors) => {
                let mut total: Option<Tensor<1>> = None;
                for &factor in factors {
                    let rows = (0..layout.tuples.len())
                        .map(|i| self.block(factor, i, layout, true, &at))
                        .collect();
                    let ce = self.cross_entropy(flat.clone(), rows, &targets);
                    total = Some(match total {
                        Some(t) => t + ce,
                        None => ce,
                    });
                }
                total.expect("an objective has at least one factor")
            }
            Objective::Multivariate(factors) => {
                let rows = (0..layout.tuples.len())
                    .map(|i| {
                        let entries = factors
                            .iter()
                            .enumerate()
                            .flat_map(|(b, &factor)| self.block(factor, i, layout, b == 0, &at));
                        if self.literal {
                            entries.collect()
                        } else {
                            // An entry that two blocks share (the I block's (I-, Q+) vs P+ is
                            // also in the IQ block) counts once, like any duplicate.
                            let mut seen = std::collections::HashSet::new();
                            entries.filter(|(index, _)| seen.insert(*index)).collect()
                        }
                    })
                    .collect();
                self.cross_entropy(flat, rows, &targets)
            }
            Objective::InfoNce => {
                let rows = (0..layout.tuples.len())
                    .map(|i| self.block(Factor::P, i, layout, true, &at))
                    .collect();
                self.cross_entropy(flat, rows, &targets)
            }
        }
    }

    /// The entries of one block for anchor `i`. `keep_positive`: whether this block holds the
    /// row's one positive (otherwise its copy is masked, unless literal).
    fn block(
        &self,
        factor: Factor,
        i: usize,
        l: &BatchLayout,
        keep_positive: bool,
        at: &dyn Fn(usize, usize) -> usize,
    ) -> Vec<Entry> {
        let t = &l.tuples[i];
        // (flat index, how many tuples it stands for, is it the positive)
        let raw: Vec<(usize, u32, bool)> = match factor {
            Factor::P => (0..l.passages.len())
                .map(|m| (at(t.pair, m), l.passage_count[m], m == t.positive))
                .collect(),
            Factor::I => l
                .instruction_block_for(i)
                .into_iter()
                .map(|j| {
                    let pair = l
                        .pair(j, t.query)
                        .expect("the layout holds every I-block pair");
                    (
                        at(pair, t.positive),
                        l.instruction_count[j],
                        j == t.instruction,
                    )
                })
                .collect(),
            Factor::IQ => (0..l.tuple_pairs)
                .map(|k| (at(k, t.positive), l.pair_count[k], k == t.pair))
                .collect(),
        };
        raw.into_iter()
            .map(|(index, count, positive)| {
                let bias = if self.literal {
                    (count.max(1) as f32).ln()
                } else if positive && !keep_positive {
                    MASKED
                } else {
                    0.0
                };
                (index, bias)
            })
            .collect()
    }

    /// Mean over rows of `logsumexp(row / τ + bias) - target / τ`, one value per row.
    fn cross_entropy(
        &self,
        flat: Tensor<1>,
        rows: Vec<Vec<Entry>>,
        targets: &[usize],
    ) -> Tensor<1> {
        let device = flat.device();
        let n = rows.len();
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(1).max(1);
        let mut index = vec![0i64; n * width];
        let mut bias = vec![MASKED; n * width];
        for (r, row) in rows.iter().enumerate() {
            for (c, &(i, b)) in row.iter().enumerate() {
                index[r * width + c] = i as i64;
                bias[r * width + c] = b;
            }
        }
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [n * width]), &device);
        let bias = Tensor::<2>::from_data(TensorData::new(bias, [n, width]), &device);
        let target_index = Tensor::<1, Int>::from_data(
            TensorData::new(targets.iter().map(|&t| t as i64).collect(), [n]),
            &device,
        );
        let scale = 1.0 / self.temperature;
        let logits = flat
            .clone()
            .select(0, index)
            .reshape([n, width])
            .mul_scalar(scale)
            + bias;
        let max = logits.clone().max_dim(1).detach();
        let lse = (logits - max.clone()).exp().sum_dim(1).log() + max;
        let target = flat.select(0, target_index).mul_scalar(scale);
        lse.reshape([n]) - target
    }
}
