//! Model settings read from `config.json` and the sentence-transformers files: the transformer's
//! shape, the pooling mode, normalisation and the maximum sequence length.

use serde::Deserialize;

use crate::error::{EngineError, Result};
use crate::model_files::{ModelFiles, CONFIG_JSON, SENTENCE_BERT_CONFIG};

/// Activation of the feed-forward block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// Exact GELU (`gelu` in Hugging Face configs).
    Gelu,
    /// tanh-approximated GELU (`gelu_new`, `gelu_pytorch_tanh`).
    GeluTanh,
    /// ReLU.
    Relu,
}

/// Shape and hyper-parameters of a BERT encoder, as in Hugging Face's `config.json`.
#[derive(Debug, Clone, PartialEq)]
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
    /// Number of learned positions.
    pub max_position_embeddings: usize,
    /// Number of token types (segments).
    pub type_vocab_size: usize,
    /// Epsilon of every layer norm.
    pub layer_norm_eps: f64,
    /// Feed-forward activation.
    pub hidden_act: Activation,
    /// Id of the padding token.
    pub pad_token_id: u32,
}

#[derive(Deserialize)]
struct RawBertConfig {
    model_type: Option<String>,
    #[serde(default)]
    architectures: Vec<String>,
    vocab_size: Option<usize>,
    hidden_size: Option<usize>,
    num_hidden_layers: Option<usize>,
    num_attention_heads: Option<usize>,
    intermediate_size: Option<usize>,
    max_position_embeddings: Option<usize>,
    type_vocab_size: Option<usize>,
    layer_norm_eps: Option<f64>,
    hidden_act: Option<String>,
    pad_token_id: Option<u32>,
    position_embedding_type: Option<String>,
}

impl BertConfig {
    /// Parses and validates a Hugging Face `config.json`. `path` is used in error messages.
    pub fn from_json(bytes: &[u8], path: &std::path::Path) -> Result<Self> {
        let raw: RawBertConfig = serde_json::from_slice(bytes)
            .map_err(|e| EngineError::model(path, format!("invalid JSON: {e}")))?;
        let model_type = raw.model_type.clone().unwrap_or_default();
        let bert_architecture = raw.architectures.iter().any(|a| a.starts_with("Bert"));
        let is_bert = (model_type == "bert" && (raw.architectures.is_empty() || bert_architecture))
            || (model_type.is_empty() && bert_architecture);
        if !is_bert {
            let problem = if model_type == "bert" {
                format!(
                    "model_type is \"bert\" but architectures {:?} names no BERT model; the weights would not fit",
                    raw.architectures
                )
            } else {
                let name = if model_type.is_empty() {
                    raw.architectures.join(",")
                } else {
                    model_type
                };
                format!("unknown architecture '{name}': this engine supports BERT-family encoders (model_type \"bert\")")
            };
            return Err(EngineError::model(path, problem));
        }
        if let Some(kind) = &raw.position_embedding_type {
            if kind != "absolute" {
                return Err(EngineError::model(
                    path,
                    format!("position_embedding_type '{kind}' is not supported (only 'absolute')"),
                ));
            }
        }
        let need = |v: Option<usize>, name: &str| -> Result<usize> {
            match v {
                Some(0) => Err(EngineError::model(
                    path,
                    format!("'{name}' must be positive"),
                )),
                Some(v) => Ok(v),
                None => Err(EngineError::model(path, format!("missing field '{name}'"))),
            }
        };
        let hidden_act = match raw.hidden_act.as_deref().unwrap_or("gelu") {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => {
                return Err(EngineError::model(
                    path,
                    format!("hidden_act '{other}' is not supported (gelu, gelu_new, relu)"),
                ))
            }
        };
        let config = BertConfig {
            vocab_size: need(raw.vocab_size, "vocab_size")?,
            hidden_size: need(raw.hidden_size, "hidden_size")?,
            num_hidden_layers: need(raw.num_hidden_layers, "num_hidden_layers")?,
            num_attention_heads: need(raw.num_attention_heads, "num_attention_heads")?,
            intermediate_size: need(raw.intermediate_size, "intermediate_size")?,
            max_position_embeddings: raw.max_position_embeddings.unwrap_or(512),
            type_vocab_size: raw.type_vocab_size.unwrap_or(2),
            layer_norm_eps: raw.layer_norm_eps.unwrap_or(1e-12),
            hidden_act,
            pad_token_id: raw.pad_token_id.unwrap_or(0),
        };
        if !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
        {
            return Err(EngineError::model(
                path,
                format!(
                    "hidden_size {} is not a multiple of num_attention_heads {}",
                    config.hidden_size, config.num_attention_heads
                ),
            ));
        }
        Ok(config)
    }

    /// Serialises this configuration as a Hugging Face `config.json`.
    pub fn to_json(&self) -> String {
        let act = match self.hidden_act {
            Activation::Gelu => "gelu",
            Activation::GeluTanh => "gelu_new",
            Activation::Relu => "relu",
        };
        serde_json::to_string_pretty(&serde_json::json!({
            "architectures": ["BertModel"],
            "model_type": "bert",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "intermediate_size": self.intermediate_size,
            "max_position_embeddings": self.max_position_embeddings,
            "type_vocab_size": self.type_vocab_size,
            "layer_norm_eps": self.layer_norm_eps,
            "hidden_act": act,
            "pad_token_id": self.pad_token_id,
            "position_embedding_type": "absolute",
            "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1,
            "initializer_range": 0.02,
        }))
        .expect("a JSON value always serialises")
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
        let pooling_name = files.pooling_config_name()?;
        let pooling = match files.get(&pooling_name) {
            None => Pooling::Mean,
            Some(bytes) => {
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
                    [one] => *one,
                    [] => return Err(EngineError::model(&path, "no pooling mode is enabled")),
                    _ => return Err(EngineError::model(
                        &path,
                        "several pooling modes at once (concatenated pooling) are not supported",
                    )),
                }
            }
        };
        let max_seq_length = match files.get(SENTENCE_BERT_CONFIG) {
            None => bert.max_position_embeddings,
            Some(bytes) => {
                let raw: RawSentenceBertConfig = serde_json::from_slice(bytes).map_err(|e| {
                    EngineError::model(
                        files.path_of(SENTENCE_BERT_CONFIG),
                        format!("invalid JSON: {e}"),
                    )
                })?;
                raw.max_seq_length.unwrap_or(bert.max_position_embeddings)
            }
        };
        if max_seq_length > bert.max_position_embeddings || max_seq_length < 2 {
            return Err(EngineError::model(
                files.path_of(SENTENCE_BERT_CONFIG),
                format!(
                    "max_seq_length {max_seq_length} must be between 2 and max_position_embeddings {}",
                    bert.max_position_embeddings
                ),
            ));
        }
        Ok(ModelConfig {
            bert,
            pooling,
            normalize,
            max_seq_length,
        })
    }
}
