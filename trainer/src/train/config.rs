//! `trainer train`'s configuration: one struct whose every field is documented with its
//! default ([`TrainConfig`], read from a JSON file with `--config`), and the same fields as
//! command-line overrides ([`TrainOverrides`]), both generated from one list so they cannot
//! drift apart. `trainer train --help` lists every field with its default.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use engine::training::step::Schedule;
use engine::training::{Factor, Objective, TrainingPrecision};
use engine::{BackendKind, DeviceSet, QueryTemplate};

/// How instruction and query meet in training (seeds-spec §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InteractionKind {
    /// One text through the template.
    #[serde(rename = "concat", alias = "concatenation")]
    Concat,
    /// The engine's cross-attention module, trained with the encoder.
    #[serde(rename = "cross-attention", alias = "cross")]
    CrossAttention,
}

impl std::str::FromStr for InteractionKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "concat" | "concatenation" => Ok(InteractionKind::Concat),
            "cross-attention" | "cross" => Ok(InteractionKind::CrossAttention),
            other => Err(format!(
                "unknown interaction '{other}': use concat or cross-attention"
            )),
        }
    }
}

macro_rules! train_config {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr ;)*) => {
        /// Every setting of a training run. Missing fields of a config file take their
        /// defaults; unknown fields are an error (a typo must not be silently ignored).
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
        #[serde(default, deny_unknown_fields)]
        pub struct TrainConfig {
            $( $(#[doc = $doc])* pub $name: $ty, )*
        }

        impl Default for TrainConfig {
            fn default() -> Self {
                TrainConfig { $( $name: $default, )* }
            }
        }

        /// Command-line overrides of [`TrainConfig`]: each flag, when given, replaces the
        /// config file's value (or the default).
        #[derive(Debug, Clone, Default, clap::Args)]
        pub struct TrainOverrides {
            $( $(#[doc = $doc])* #[arg(long, help_heading = "Settings (override --config)")] pub $name: Option<$ty>, )*
        }

        impl TrainConfig {
            /// Applies the flags that were given.
            pub fn apply(&mut self, o: &TrainOverrides) {
                $( if let Some(v) = &o.$name { self.$name = v.clone(); } )*
            }
        }
    };
}

train_config! {
    /// Base model: a Hugging Face style BERT folder.
    model: PathBuf = PathBuf::from("models/all-MiniLM-L6-v2");
    /// Training records (JSONL, formats.md §3: InF-IR and/or instruction-negative records).
    data: PathBuf = PathBuf::new();
    /// Run folder: config.json, checkpoints/, metrics.jsonl, plots/, model/.
    output: PathBuf = PathBuf::from("runs/train");
    /// Compute device: cpu, wgpu, vulkan or cuda.
    device: BackendKind = BackendKind::Cpu;
    /// Arithmetic of the forward and backward passes: f32, or mixed-f16 on a GPU with f16 (f32 master weights, an f16 copy cast in the autodiff graph each step, f32 pooling and loss, dynamic loss scaling: a step whose gradients overflow is skipped and the scale halved).
    precision: TrainingPrecision = TrainingPrecision::F32;
    /// Data-parallel devices, replacing --device: cpu:N (N replicas on the CPU, one thread each), wgpu:0,1, vulkan:0,1 or cuda:0,1,... (one replica per GPU). Each embeds its share of the batch; the loss sees every embedding (global in-batch negatives); gradients are summed before one AdamW step. Empty = one device.
    devices: DeviceSet = DeviceSet::default();
    /// Objective: uni-p, uni-i, uni-iq, uni-p-i, uni-p-iq, uni-i-iq, uni-p-i-iq, multi-p-i, multi-p-iq, multi-i-iq, multi-p-i-iq or infonce.
    loss: Objective = Objective::Multivariate(vec![Factor::P, Factor::I]);
    /// Temperature τ of the cosine scores; 0 takes the objective's own (0.05 InF-Embed, 0.02 InfoNCE).
    temperature: f64 = 0.0;
    /// The paper's literal marginal sums (positive counted in every block, duplicates counted) instead of positive-once masking.
    literal_loss: bool = false;
    /// Share of the batch's other instructions in the I block (the reference code's div_neg_batch = 2 is 0.5).
    instruction_fraction: f64 = 1.0;
    /// Put the query alone (no instruction) into every anchor's I block, so a positive must score higher with its instruction than with the bare query (InfoSearch's SICR condition).
    query_alone_in_block: bool = false;
    /// Weight of the exclusion term (0 = none): a passage that answers the query but that the instruction rules out (an instruction negative, e.g. the original positive under the reversed view) must score lower with the instruction than under the query alone (InfoSearch's SICR: S_rev < S_ori); the contrastive blocks only rank passages within one query.
    exclusion_weight: f64 = 0.0;
    /// Weight of the inclusion term (0 = none), the exclusion term's other half: each positive must score higher with its instruction than under the query alone (SICR's S_ins > S_ori).
    inclusion_weight: f64 = 0.0;
    /// Weight of the excluded-order term (0 = none): the passages one instruction rules out (a record's instruction negatives, two or more: `trainer synth judged --whole-groups`) keep, under the instruction, the order the bare query gives them (KL divergence of the two softmax distributions, the bare one held fixed): ruling a group out pushes it down as a whole instead of reshuffling it, each climb inside it being what FollowIR's p-MRR charges.
    excluded_order_weight: f64 = 0.0;
    /// Weight of the demotion term (0 = none): under its instruction, a passage the instruction rules out must score below the record's negatives that do not answer the query (the topics' distractors): ruled out means least wanted, and the contrastive blocks leave the order of two negatives alone.
    demotion_weight: f64 = 0.0;
    /// Hold the distractors' scores fixed in the demotion term (no gradient through them), so it can only lower the ruled-out passage; trained (false), the term raises the distractors too and the encoder learns to rank them high under the bare query as well (J18, RESULTS.md).
    demotion_fixed_distractors: bool = false;
    /// The encoder's lowest blocks kept as they are (no gradients, no updates): 0 = none, 1 = the token embeddings, 1 + k = the embeddings and the first k transformer layers. Less to forget and a shorter backward pass; a cross-attention module always trains.
    frozen_blocks: usize = 0;
    /// How instruction and query meet: concat (one text through --template) or cross-attention (engine's Interaction II module, trained too).
    interaction: InteractionKind = InteractionKind::Concat;
    /// Template joining instruction and query: instruction-first, query-first, instruct, or a pattern with {instruction} and {query}.
    template: QueryTemplate = QueryTemplate::default();
    /// Records per micro-batch (an InF-IR record gives 3 tuples, a dual-view record 2); siblings and views stay together.
    batch_size: usize = 4;
    /// Micro-batches per optimiser step (gradients summed; in-batch negatives stay within a micro-batch).
    grad_accumulation: usize = 1;
    /// GradCache: if > 0, embed the batch without gradients first, then back-propagate in chunks of this many texts, so large in-batch negative sets fit in memory with the exact same gradient.
    grad_cache_chunk: usize = 0;
    /// Hard negatives kept per tuple of instruction-negative records (instruction negatives first).
    max_hard_negatives: usize = 30;
    /// Token limit of queries and instruction + query texts.
    query_max_length: usize = 256;
    /// Token limit of passages (capped at the model's position embeddings).
    passage_max_length: usize = 512;
    /// Texts per forward pass while embedding a batch (at most, on the CPU: texts sorted by
    /// length are cut where padding would cost more than another pass).
    encode_chunk: usize = 32;
    /// Passes over the data (ignored when max_steps > 0).
    epochs: usize = 2;
    /// Optimiser steps to run; 0 = as many as `epochs` needs.
    max_steps: usize = 0;
    /// Peak learning rate of AdamW.
    lr: f64 = 5e-5;
    /// AdamW's decoupled weight decay.
    weight_decay: f64 = 0.01;
    /// Strength λ of the pull toward the starting model's weights (decoupled L2-SP; 0 = none): after each optimiser step at learning rate lr, every trainable encoder weight moves lr x λ of its distance to its starting value back (AdamW's weight decay pulls toward zero; this pulls toward where fine-tuning began, as a step of its own rather than through Adam's normalisation).
    start_pull: f64 = 0.0;
    /// AdamW's β1.
    beta1: f64 = 0.9;
    /// AdamW's β2.
    beta2: f64 = 0.999;
    /// AdamW's ε.
    adam_epsilon: f64 = 1e-8;
    /// Linear warm-up, as a share of all steps.
    warmup_ratio: f64 = 0.1;
    /// Decay after warm-up: linear, cosine or constant.
    schedule: Schedule = Schedule::Linear;
    /// Clip the global gradient norm to this (0 = no clipping).
    max_grad_norm: f64 = 1.0;
    /// Seed of the data order and of instruction sampling.
    seed: u64 = 42;
    /// Write a checkpoint every N steps (0 = only at the end).
    checkpoint_every: usize = 100;
    /// Checkpoints kept on disk (older ones are deleted).
    keep_checkpoints: usize = 2;
    /// Distillation anchors (learning without forgetting): instruction-negative records (formats.md §3) whose passages, under their instruction and query, the model keeps ranking as the teacher does (KL divergence of the two softmax distributions at --distill-temperature, by default the loss's τ); empty = none. `trainer synth anchors` makes them.
    distill_data: PathBuf = PathBuf::new();
    /// The frozen teacher of the distillation; empty = the run's starting model (`model`).
    distill_teacher: PathBuf = PathBuf::new();
    /// Weight of the distillation term beside the contrastive loss.
    distill_weight: f64 = 1.0;
    /// Distillation anchors per micro-batch (drawn from their own seeded stream).
    distill_batch: usize = 4;
    /// Temperature of the distillation's softmax over each anchor's cosines; 0 = the objective's τ. At τ = 0.05 the teacher's distribution is nearly all on its top passage, so the term keeps the top and lets the rest of the list reorder; a higher temperature spreads it over the whole list (Hinton et al.'s soft targets) and the term keeps every candidate's place. The term's gradient shrinks about as 1/T² (Hinton et al. multiply the term by T²): raise --distill-weight with it.
    distill_temperature: f64 = 0.0;
    /// Weight of the anchors' embedding term (0 = none): each anchor text's 1 - cosine between the model's embedding and the teacher's (its query, plus the mean over its candidates), averaged over the anchors drawn. The divergence holds the order of each anchor's candidates among themselves, so the space around them may still turn; this term holds where the anchor texts lie. Its gradient is 0 while the model embeds as the teacher does.
    distill_embedding_weight: f64 = 0.0;
    /// Share of the starting model's weights in the saved model/ (weight-space ensembling, `trainer interpolate`): 0 = the trained weights; s != 0 saves (1 - s) x trained + s x start in model/ and the trained weights in model-tuned/; s < 0 extrapolates past the trained weights, away from the start (ExPO; -0.25 = 1.25 x trained - 0.25 x start); within [-1, 1] (the evaluations during the run, the last one included, score the trained weights; `trainer eval --model DIR/model` scores the mix).
    start_share: f64 = 0.0;
    /// Evaluation-set folder (formats.md §1) evaluated during training; empty = none.
    eval_set: PathBuf = PathBuf::new();
    /// Evaluate every N steps (0 = before training and at the end only).
    eval_every: usize = 0;
}

impl TrainConfig {
    /// Reads a JSON config file.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}:{}: {}", path.display(), e.line(), e))
    }

    /// Every numeric setting within its range, or an error naming the first flag that is not
    /// (checked before any work, whether the value came from the file or a flag).
    pub fn check_ranges(&self) -> anyhow::Result<()> {
        let checks = self.count_checks().into_iter().chain(self.real_checks());
        match checks.into_iter().find(|(_, ok, _)| !ok) {
            Some((flag, _, wanted)) => anyhow::bail!("{flag} must be {wanted}"),
            None => Ok(()),
        }
    }

    /// The counts' checks: `(flag, within range, the range in words)`.
    fn count_checks(&self) -> [(&'static str, bool, &'static str); 7] {
        let special = "at least 2 ([CLS] and [SEP])";
        [
            ("--batch-size", self.batch_size >= 1, "at least 1"),
            (
                "--grad-accumulation",
                self.grad_accumulation >= 1,
                "at least 1",
            ),
            ("--encode-chunk", self.encode_chunk >= 1, "at least 1"),
            ("--query-max-length", self.query_max_length >= 2, special),
            (
                "--passage-max-length",
                self.passage_max_length >= 2,
                special,
            ),
            ("--distill-batch", self.distill_batch >= 1, "at least 1"),
            (
                "--keep-checkpoints",
                self.keep_checkpoints >= 1,
                "at least 1",
            ),
        ]
    }

    /// The real numbers' checks, as [`TrainConfig::count_checks`].
    fn real_checks(&self) -> [(&'static str, bool, &'static str); 18] {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        let below_one = |x: f64| (0.0..1.0).contains(&x);
        let positive = |x: f64| x > 0.0 && x.is_finite();
        let non_negative = |x: f64| x >= 0.0 && x.is_finite();
        [
            ("--lr", positive(self.lr), "a positive number"),
            (
                "--weight-decay",
                non_negative(self.weight_decay),
                "0 or more",
            ),
            (
                "--start-pull",
                non_negative(self.start_pull),
                "0 (none) or more",
            ),
            ("--beta1", below_one(self.beta1), "in [0, 1)"),
            ("--beta2", below_one(self.beta2), "in [0, 1)"),
            (
                "--adam-epsilon",
                positive(self.adam_epsilon),
                "a positive number",
            ),
            ("--warmup-ratio", below_one(self.warmup_ratio), "in [0, 1)"),
            (
                "--max-grad-norm",
                non_negative(self.max_grad_norm),
                "0 (no clipping) or more",
            ),
            (
                "--temperature",
                non_negative(self.temperature),
                "positive (0: the objective's own)",
            ),
            (
                "--instruction-fraction",
                unit(self.instruction_fraction),
                "in [0, 1]",
            ),
            (
                "--start-share",
                engine::training::interpolate::START_SHARES.contains(&self.start_share),
                "in [-1, 1]",
            ),
            (
                "--distill-weight",
                positive(self.distill_weight),
                "a positive number",
            ),
            (
                "--distill-temperature",
                non_negative(self.distill_temperature),
                "positive (0: the objective's τ)",
            ),
            (
                "--distill-embedding-weight",
                non_negative(self.distill_embedding_weight),
                "0 (none) or more",
            ),
            (
                "--exclusion-weight",
                non_negative(self.exclusion_weight),
                "0 (none) or more",
            ),
            (
                "--inclusion-weight",
                non_negative(self.inclusion_weight),
                "0 (none) or more",
            ),
            (
                "--excluded-order-weight",
                non_negative(self.excluded_order_weight),
                "0 (none) or more",
            ),
            (
                "--demotion-weight",
                non_negative(self.demotion_weight),
                "0 (none) or more",
            ),
        ]
    }

    /// The defaults as `(flag, value)` pairs, for `--help`.
    pub fn default_values() -> Vec<(String, String)> {
        let json = serde_json::to_value(TrainConfig::default()).expect("serialisable");
        json.as_object()
            .expect("a struct")
            .iter()
            .map(|(k, v)| {
                let shown = match v {
                    serde_json::Value::String(s) if s.is_empty() => "(none)".to_string(),
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.replace('_', "-"), shown)
            })
            .collect()
    }
}
