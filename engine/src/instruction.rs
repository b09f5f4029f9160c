//! How an instruction meets a query (seeds-spec §2.4).
//!
//! * Interaction I, concatenation: the instruction and the query become one text through a
//!   [`QueryTemplate`], encoded in one pass. This is the default and the stronger variant.
//! * Interaction II, cross-attention: instruction tokens attend over query tokens,
//!   `softmax((I W_i)(Q W_q1)^T / sqrt(d)) (Q W_q2)`, then the result is mean-pooled over the
//!   instruction tokens ([`CrossAttentionInteraction`]). The weights are the module's own; the
//!   trainer learns them and stores them in `cross_attention.safetensors` beside the model.

use std::path::Path;
use std::str::FromStr;

use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::activation::softmax;
use burn::tensor::{Device, FloatDType, Tensor, TensorData};

use crate::bert::{BertModel, WeightReader};
use crate::error::{EngineError, Result};
use crate::model_files::{ModelFiles, CROSS_ATTENTION_WEIGHTS};
use crate::tokenize::{TextTokenizer, TokenBatch};

/// Whether `instruction` gives no instruction (empty or blank): then the query is encoded
/// alone, whatever the template or the interaction. The one statement of that rule.
pub fn is_absent(instruction: &str) -> bool {
    instruction.trim().is_empty()
}

/// Joins an instruction and a query into the text the encoder sees.
///
/// The pattern holds `{query}` and usually `{instruction}`. When the instruction is empty the
/// query is used alone, so "no instruction" never leaves stray separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTemplate {
    pattern: String,
}

impl QueryTemplate {
    /// The InF-Embed paper's order, `"{instruction} {query}"` (the default).
    pub fn instruction_first() -> Self {
        QueryTemplate {
            pattern: "{instruction} {query}".into(),
        }
    }

    /// The FollowIR / MTEB / IFIR order, `"{query} {instruction}"`.
    pub fn query_first() -> Self {
        QueryTemplate {
            pattern: "{query} {instruction}".into(),
        }
    }

    /// The E5-instruct style, `"Instruct: {instruction}\nQuery: {query}"`.
    pub fn instruct_query() -> Self {
        QueryTemplate {
            pattern: "Instruct: {instruction}\nQuery: {query}".into(),
        }
    }

    /// The pattern string.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The encoder input for `instruction` and `query` within `tokenizer`'s token limit: the
    /// one query-text rule of the CLI, the evaluation, the training loop and the page.
    ///
    /// When the joined text is longer than the limit, the instruction is cut (at a word
    /// boundary) to the tokens the query and the template leave, whatever the template's
    /// order: the query survives whole, and only a query that alone exceeds the limit is
    /// truncated (then without any instruction). Without this rule, `instruction-first` and a
    /// long instruction push the query out of the encoder's window.
    pub fn fit(&self, tokenizer: &TextTokenizer, instruction: &str, query: &str) -> Result<String> {
        let max = tokenizer.max_len();
        let full = self.apply(instruction, query);
        if is_absent(instruction) || tokenizer.count(&full, true)? <= max {
            return Ok(full);
        }
        let rest = self
            .pattern
            .replace("{instruction}", "")
            .replace("{query}", query);
        let mut budget = max.saturating_sub(tokenizer.count(&rest, true)?);
        loop {
            let cut = tokenizer.prefix_within(instruction, budget)?;
            if is_absent(cut) {
                return Ok(query.to_string());
            }
            let text = self.apply(cut, query);
            if tokenizer.count(&text, true)? <= max {
                return Ok(text);
            }
            budget -= 1;
        }
    }

    /// The text for `instruction` and `query` joined by the pattern, with no token limit
    /// (use [`QueryTemplate::fit`] for encoder inputs).
    pub fn apply(&self, instruction: &str, query: &str) -> String {
        if is_absent(instruction) {
            return query.to_string();
        }
        self.pattern
            .replace("{instruction}", instruction)
            .replace("{query}", query)
    }
}

impl Default for QueryTemplate {
    fn default() -> Self {
        Self::instruction_first()
    }
}

impl std::fmt::Display for QueryTemplate {
    /// The preset's name, or the pattern with newlines written `\n` (what `FromStr` reads).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let presets = [
            ("instruction-first", Self::instruction_first()),
            ("query-first", Self::query_first()),
            ("instruct", Self::instruct_query()),
        ];
        match presets.iter().find(|(_, t)| t == self) {
            Some((name, _)) => f.write_str(name),
            None => f.write_str(&self.pattern.replace('\n', "\\n")),
        }
    }
}

serde_as_text!(QueryTemplate);

impl FromStr for QueryTemplate {
    type Err = EngineError;

    /// Accepts a preset name (`instruction-first`, `query-first`, `instruct`) or a pattern with
    /// `{query}` (and optionally `{instruction}`); `\n` in a pattern is a newline.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "instruction-first" | "default" => return Ok(Self::instruction_first()),
            "query-first" => return Ok(Self::query_first()),
            "instruct" => return Ok(Self::instruct_query()),
            _ => {}
        }
        if !s.contains("{query}") {
            return Err(EngineError::Invalid(format!(
                "template '{s}' must contain {{query}} (or be one of: instruction-first, query-first, instruct)"
            )));
        }
        Ok(QueryTemplate {
            pattern: s.replace("\\n", "\n"),
        })
    }
}

/// How an encoder joins an instruction and a query.
#[derive(Debug)]
pub enum Interaction {
    /// Interaction I: one text through a template (the default).
    Concat(QueryTemplate),
    /// Interaction II: the trained cross-attention module.
    CrossAttention(Box<CrossAttentionInteraction>),
}

impl Default for Interaction {
    fn default() -> Self {
        Interaction::Concat(QueryTemplate::default())
    }
}

impl Interaction {
    /// The module a model folder carries (`cross_attention.safetensors`), if any.
    pub fn from_files(files: &ModelFiles, dim: usize, device: &Device) -> Result<Option<Self>> {
        files
            .get(CROSS_ATTENTION_WEIGHTS)
            .map(|bytes| {
                CrossAttentionInteraction::from_safetensors(
                    bytes,
                    &files.path_of(CROSS_ATTENTION_WEIGHTS),
                    dim,
                    device,
                )
                .map(|module| Interaction::CrossAttention(Box::new(module)))
            })
            .transpose()
    }

    /// `concat` or `cross-attention`.
    pub fn name(&self) -> &'static str {
        match self {
            Interaction::Concat(_) => "concat",
            Interaction::CrossAttention(_) => "cross-attention",
        }
    }
}

/// Token-level cross-attention from instruction tokens to query tokens (Interaction II).
#[derive(Module, Debug)]
pub struct CrossAttentionInteraction {
    w_i: Linear,
    w_q1: Linear,
    w_q2: Linear,
}

const CROSS_NAMES: [&str; 3] = ["w_i", "w_q1", "w_q2"];

/// The name behind a stable parameter id (see [`crate::bert::param_id`]), so optimiser state
/// survives a reload.
fn cross_param_name(name: &str) -> String {
    format!("cross_attention.{name}.weight")
}

impl CrossAttentionInteraction {
    /// A module whose three projections are the identity: before training, the output is a
    /// similarity-weighted mixture of the query's token states.
    pub fn identity(dim: usize, device: &Device) -> Self {
        let eye = |name: &str| {
            let mut v = vec![0.0f32; dim * dim];
            for i in 0..dim {
                v[i * dim + i] = 1.0;
            }
            Linear {
                weight: crate::bert::named_param(
                    &cross_param_name(name),
                    Tensor::from_data(TensorData::new(v, [dim, dim]), device),
                ),
                bias: None,
            }
        };
        CrossAttentionInteraction {
            w_i: eye(CROSS_NAMES[0]),
            w_q1: eye(CROSS_NAMES[1]),
            w_q2: eye(CROSS_NAMES[2]),
        }
    }

    /// Loads `cross_attention.safetensors` (tensors `w_i.weight`, `w_q1.weight`, `w_q2.weight`,
    /// each `[dim, dim]` in PyTorch's `[out, in]` layout).
    pub fn from_safetensors(
        bytes: &[u8],
        path: &Path,
        dim: usize,
        device: &Device,
    ) -> Result<Self> {
        let r = WeightReader::new(bytes, path, device)?;
        let load = |name: &str| -> Result<Linear> {
            let w = r.tensor(&format!("{name}.weight"), [dim, dim])?.transpose();
            Ok(Linear {
                weight: crate::bert::named_param(&cross_param_name(name), w),
                bias: None,
            })
        };
        Ok(CrossAttentionInteraction {
            w_i: load(CROSS_NAMES[0])?,
            w_q1: load(CROSS_NAMES[1])?,
            w_q2: load(CROSS_NAMES[2])?,
        })
    }

    /// Serialises the weights in the layout [`Self::from_safetensors`] reads.
    pub fn to_safetensors(&self) -> Result<Vec<u8>> {
        let mut tensors = Vec::new();
        for (name, linear) in CROSS_NAMES.iter().zip([&self.w_i, &self.w_q1, &self.w_q2]) {
            let w = linear.weight.val().transpose();
            let [rows, cols] = w.dims();
            let values: Vec<f32> = w
                .into_data()
                .try_to_vec::<f32>()
                .map_err(|e| EngineError::Invalid(format!("{e:?}")))?;
            tensors.push((format!("{name}.weight"), vec![rows, cols], values));
        }
        crate::safetensors_io::write_f32(&tensors)
    }

    /// The pooled vectors `[pairs, d]` of `(instruction, query)` pairs, every instruction
    /// non-empty, not normalised: both texts through `model` (truncated by `tokenizer`), then
    /// [`Self::forward`]. Gradients flow into `model` and the module on an autodiff device;
    /// the encoder reads the result back, the training loop differentiates it.
    pub fn embed(
        &self,
        model: &BertModel,
        tokenizer: &TextTokenizer,
        pad_id: u32,
        pairs: &[(&str, &str)],
    ) -> Result<Tensor<2>> {
        let device = self.w_i.weight.val().device();
        let states = |texts: Vec<&str>| -> Result<(Tensor<3>, Tensor<2>)> {
            let tokens = tokenizer.encode(&texts)?;
            let rows: Vec<&[u32]> = tokens.iter().map(|t| t.as_slice()).collect();
            let (ids, mask) = TokenBatch::pad(&rows, pad_id).tensors(&device);
            // f32 states whatever the transformer ran in: this module's weights are f32.
            let states = model.forward(ids, mask.clone()).cast(FloatDType::F32);
            Ok((states, mask))
        };
        let (hi, mi) = states(pairs.iter().map(|p| p.0).collect())?;
        let (hq, mq) = states(pairs.iter().map(|p| p.1).collect())?;
        Ok(self.forward(hi, mi, hq, mq))
    }

    /// `instruction`: `[b, li, d]` with mask `[b, li]`; `query`: `[b, lq, d]` with mask
    /// `[b, lq]`. Returns the pooled instruction-aware query vectors `[b, d]`.
    pub fn forward(
        &self,
        instruction: Tensor<3>,
        instruction_mask: Tensor<2>,
        query: Tensor<3>,
        query_mask: Tensor<2>,
    ) -> Tensor<2> {
        let [b, li, d] = instruction.dims();
        let [_, lq, _] = query.dims();
        let q = self.w_i.forward(instruction);
        let k = self.w_q1.forward(query.clone());
        let v = self.w_q2.forward(query);
        let bias = crate::bert::mask_bias(query_mask).reshape([b, 1, lq]);
        let scores = q.matmul(k.transpose()).mul_scalar(1.0 / (d as f64).sqrt()) + bias;
        let mixed = softmax(scores, 2).matmul(v);
        let len = instruction_mask
            .clone()
            .sum_dim(1)
            .clamp_min(1.0)
            .reshape([b, 1]);
        let weights = instruction_mask.reshape([b, li, 1]);
        (mixed * weights).sum_dim(1).reshape([b, d]) / len
    }
}
