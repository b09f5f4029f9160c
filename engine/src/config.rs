//! Model settings read from `config.json` and the sentence-transformers files: the transformer's
//! shape, the pooling mode, normalisation and the maximum sequence length.

use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::model_files::{ModelFiles, CONFIG_JSON, SENTENCE_BERT_CONFIG};

/// Activation of the feed-forward block (`hidden_act` in `config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activation {
    /// Exact GELU (`gelu`).
    #[default]
    Gelu,
    /// tanh-approximated GELU (`gelu_new`, `gelu_pytorch_tanh`, `gelu_fast`).
    GeluTanh,
    /// ReLU.
    Relu,
}

impl Activation {
    /// The name written into `config.json`.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Gelu => "gelu",
            Activation::GeluTanh => "gelu_new",
            Activation::Relu => "relu",
        }
    }
}

impl Serialize for Activation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Activation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "gelu" => Ok(Activation::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Activation::GeluTanh),
            "relu" => Ok(Activation::Relu),
            other => Err(serde::de::Error::custom(format!(
                "hidden_act '{other}' is not supported (gelu, gelu_new, relu)"
            ))),
        }
    }
}

/// Shape and hyper-parameters of a BERT encoder: the fields of Hugging Face's `config.json`
/// the engine reads (one serde struct; defaults as transformers' `BertConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BertConfig {
    /// Number of tokens in the vocabulary.
    pub vocab_size: usize,
    /// Width of the hidden states.
    pub hidden_size: usize,
    /// Number of transformer layers.
    pub num_hidden_layers: usize,
    /// Number of attention heads per layer.
    pub num_attention_heads: usize,
    /// Width of the feed-forward block.
    pub intermediate_size: usize,
    /// Number of learned positions (default 512).
    #[serde(default = "default_positions")]
    pub max_position_embeddings: usize,
    /// Number of token types (segments; default 2).
    #[serde(default = "default_token_types")]
    pub type_vocab_size: usize,
    /// Epsilon of every layer norm (default 1e-12).
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    /// Feed-forward activation (default gelu).
    #[serde(default)]
    pub hidden_act: Activation,
    /// Id of the padding token (default 0).
    #[serde(default)]
    pub pad_token_id: u32,
}

fn default_positions() -> usize {
    512
}

fn default_token_types() -> usize {
    2
}

fn default_eps() -> f64 {
    1e-12
}

/// What a `config.json` says the model is, checked before its shape is read.
#[derive(Deserialize)]
struct Architecture {
    #[serde(default)]
    model_type: String,
    #[serde(default)]
    architectures: Vec<String>,
    position_embedding_type: Option<String>,
}

impl Architecture {
    /// Refuses anything but a BERT encoder with absolute positions.
    fn check(&self) -> std::result::Result<(), String> {
        let bert_architecture = self.architectures.iter().any(|a| a.starts_with("Bert"));
        let is_bert = (self.model_type == "bert"
            && (self.architectures.is_empty() || bert_architecture))
            || (self.model_type.is_empty() && bert_architecture);
        if !is_bert {
            return Err(if self.model_type == "bert" {
                format!(
                    "model_type is \"bert\" but architectures {:?} names no BERT model; the weights would not fit",
                    self.architectures
                )
            } else {
                let name = if self.model_type.is_empty() {
                    self.architectures.join(",")
                } else {
                    self.model_type.clone()
                };
                format!("unknown architecture '{name}': this engine supports BERT-family encoders (model_type \"bert\")")
            });
        }
        match self.position_embedding_type.as_deref() {
            None | Some("absolute") => Ok(()),
            Some(kind) => Err(format!(
                "position_embedding_type '{kind}' is not supported (only 'absolute')"
            )),
        }
    }
}

impl BertConfig {
    /// Parses and validates a Hugging Face `config.json`. `path` is used in error messages.
    pub fn from_json(bytes: &[u8], path: &std::path::Path) -> Result<Self> {
        let invalid = |e: serde_json::Error| EngineError::model(path, format!("invalid JSON: {e}"));
        let architecture: Architecture = serde_json::from_slice(bytes).map_err(invalid)?;
        architecture
            .check()
            .map_err(|problem| EngineError::model(path, problem))?;
        let config: BertConfig =
            serde_json::from_slice(bytes).map_err(|e| EngineError::model(path, e.to_string()))?;
        config
            .check()
            .map_err(|problem| EngineError::model(path, problem))?;
        Ok(config)
    }

    fn check(&self) -> std::result::Result<(), String> {
        for (name, value) in [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
        ] {
            if value == 0 {
                return Err(format!("'{name}' must be positive"));
            }
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        Ok(())
    }

    /// Serialises this configuration as a Hugging Face `config.json` (with the fields other
    /// tools expect beside the engine's: architecture, dropout, initialisation range).
    pub fn to_json(&self) -> String {
        let mut v = serde_json::to_value(self).expect("a config always serialises");
        let extra = serde_json::json!({
            "architectures": ["BertModel"],
            "model_type": "bert",
            "position_embedding_type": "absolute",
            "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1,
            "initializer_range": 0.02,
        });
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        serde_json::to_string_pretty(&v).expect("a JSON value always serialises")
    }
}

/// How token states become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// Mean over the non-padding tokens.
    Mean,
    /// The first (`[CLS]`) token.
    Cls,
    /// The last non-padding token (decoder-style models).
    LastToken,
    /// Sum over non-padding tokens divided by the square root of their count.
    MeanSqrtLen,
    /// Element-wise maximum over non-padding tokens.
    Max,
}

impl Pooling {
    /// Name as written in sentence-transformers' pooling config (without the `pooling_mode_` prefix).
    pub fn name(self) -> &'static str {
        match self {
            Pooling::Mean => "mean_tokens",
            Pooling::Cls => "cls_token",
            Pooling::LastToken => "lasttoken",
            Pooling::MeanSqrtLen => "mean_sqrt_len_tokens",
            Pooling::Max => "max_tokens",
        }
    }
}

/// Everything the encoder needs besides the weights.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// The transformer.
    pub bert: BertConfig,
    /// Pooling mode.
    pub pooling: Pooling,
    /// L2-normalise the pooled vector (a `Normalize` module in modules.json).
    pub normalize: bool,
    /// Inputs are truncated to this many tokens, special tokens included.
    pub max_seq_length: usize,
}

#[derive(Deserialize, Default)]
struct RawPooling {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
}

#[derive(Deserialize)]
struct RawSentenceBertConfig {
    max_seq_length: Option<usize>,
}

impl ModelConfig {
    /// Reads the configuration of a model folder. Without sentence-transformers files the
    /// defaults are sentence-transformers' own for a plain transformer: mean pooling, no
    /// normalisation, max length = the model's position limit.
    pub fn from_files(files: &ModelFiles) -> Result<Self> {
        let config_path = files.path_of(CONFIG_JSON);
        let bert = BertConfig::from_json(
            files.required(CONFIG_JSON, "transformer configuration")?,
            &config_path,
        )?;
        let modules = files.modules()?;
        if let Some(m) = &modules {
            if let Some(kind) = m.unsupported.first() {
                return Err(EngineError::model(
                    files.path_of(crate::model_files::MODULES_JSON),
                    format!("sentence-transformers module '{kind}' is not supported (Transformer, Pooling and Normalize are)"),
                ));
            }
        }
        let normalize = modules.as_ref().map(|m| m.normalize).unwrap_or(false);
        let pooling = Self::pooling(files)?;
        let max_seq_length = Self::max_seq_length(files, bert.max_position_embeddings)?;
        Ok(ModelConfig {
            bert,
            pooling,
            normalize,
            max_seq_length,
        })
    }

    /// The pooling module's mode (mean without one); one mode exactly.
    fn pooling(files: &ModelFiles) -> Result<Pooling> {
        let pooling_name = files.pooling_config_name()?;
        let Some(bytes) = files.get(&pooling_name) else {
            return Ok(Pooling::Mean);
        };
        let path = files.path_of(&pooling_name);
        let raw: RawPooling = serde_json::from_slice(bytes)
            .map_err(|e| EngineError::model(&path, format!("invalid JSON: {e}")))?;
        let modes = [
            (raw.pooling_mode_cls_token, Pooling::Cls),
            (raw.pooling_mode_mean_tokens, Pooling::Mean),
            (raw.pooling_mode_max_tokens, Pooling::Max),
            (raw.pooling_mode_mean_sqrt_len_tokens, Pooling::MeanSqrtLen),
            (raw.pooling_mode_lasttoken, Pooling::LastToken),
        ];
        if raw.pooling_mode_weightedmean_tokens {
            return Err(EngineError::model(
                &path,
                "weighted-mean pooling is not supported",
            ));
        }
        let chosen: Vec<Pooling> = modes.iter().filter(|m| m.0).map(|m| m.1).collect();
        match chosen.as_slice() {
            [one] => Ok(*one),
            [] => Err(EngineError::model(&path, "no pooling mode is enabled")),
            _ => Err(EngineError::model(
                &path,
                "several pooling modes at once (concatenated pooling) are not supported",
            )),
        }
    }

    /// The longest input (sentence-transformers' setting, else the position limit), between
    /// 2 and `positions`.
    fn max_seq_length(files: &ModelFiles, positions: usize) -> Result<usize> {
        let max_seq_length = match files.get(SENTENCE_BERT_CONFIG) {
            None => positions,
            Some(bytes) => {
                let raw: RawSentenceBertConfig = serde_json::from_slice(bytes).map_err(|e| {
                    EngineError::model(
                        files.path_of(SENTENCE_BERT_CONFIG),
                        format!("invalid JSON: {e}"),
                    )
                })?;
                raw.max_seq_length.unwrap_or(positions)
            }
        };
        if max_seq_length > positions || max_seq_length < 2 {
            return Err(EngineError::model(
                files.path_of(SENTENCE_BERT_CONFIG),
                format!(
                    "max_seq_length {max_seq_length} must be between 2 and max_position_embeddings {positions}"
                ),
            ));
        }
        Ok(max_seq_length)
    }
}
