//! The BERT transformer on burn: embeddings, self-attention layers and masked pooling.
//!
//! Weights come from a Hugging Face `model.safetensors` (names as in `BertModel`, with or
//! without a `bert.` prefix). Every tensor is checked against `config.json` before use, so a
//! mismatched file is reported by name instead of failing deep inside a matmul.

use std::path::Path;

use burn::module::{Module, Param};
use burn::nn::{Embedding, LayerNorm, LayerNormConfig, Linear};
use burn::tensor::activation::{gelu, gelu_approximate, relu, softmax};
use burn::tensor::{Device, Int, Tensor, TensorData};
use safetensors::SafeTensors;

use crate::config::{Activation, BertConfig};
use crate::error::{EngineError, Result};

/// Additive attention bias for padded keys. Large enough that `exp` underflows to exactly zero in
/// f32, so padding never changes a real token's state.
const MASKED: f32 = -1.0e9;

/// Token, position and segment embeddings followed by a layer norm.
#[derive(Module, Debug)]
pub struct BertEmbeddings {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    norm: LayerNorm,
}

/// Multi-head self-attention with its output projection and residual layer norm.
#[derive(Module, Debug)]
pub struct BertAttention {
    query: Linear,
    key: Linear,
    value: Linear,
    output: Linear,
    norm: LayerNorm,
    heads: usize,
}

/// One transformer layer: attention, then the feed-forward block.
#[derive(Module, Debug)]
pub struct BertLayer {
    attention: BertAttention,
    intermediate: Linear,
    output: Linear,
    norm: LayerNorm,
}

/// A BERT encoder (no pooler head: sentence encoders pool the token states themselves).
#[derive(Module, Debug)]
pub struct BertModel {
    embeddings: BertEmbeddings,
    layers: Vec<BertLayer>,
    #[module(skip)]
    activation: ActivationKind,
}

/// [`Activation`] as a module constant.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActivationKind(pub u8);

impl From<Activation> for ActivationKind {
    fn from(a: Activation) -> Self {
        ActivationKind(match a {
            Activation::Gelu => 0,
            Activation::GeluTanh => 1,
            Activation::Relu => 2,
        })
    }
}

impl BertModel {
    /// Runs the encoder. `ids` and `mask` are `[batch, seq]` (mask 1 for real tokens, 0 for
    /// padding); returns the last hidden states `[batch, seq, hidden]`.
    pub fn forward(&self, ids: Tensor<2, Int>, mask: Tensor<2>) -> Tensor<3> {
        let [batch, seq] = ids.dims();
        let device = ids.device();
        let positions: Vec<i64> = (0..seq as i64).collect();
        let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [seq]), &device)
            .reshape([1, seq])
            .expand([batch, seq]);
        let types = Tensor::<2, Int>::zeros([batch, seq], &device);
        let e = &self.embeddings;
        let x = e.word.forward(ids) + e.position.forward(positions) + e.token_type.forward(types);
        let mut x = e.norm.forward(x);
        // [batch, 1, 1, seq]: broadcast over heads and query positions.
        let bias = (mask.neg() + 1.0)
            .mul_scalar(MASKED)
            .reshape([batch, 1, 1, seq]);
        for layer in &self.layers {
            x = layer.forward(x, bias.clone(), self.activation);
        }
        x
    }
}

impl BertLayer {
    fn forward(&self, x: Tensor<3>, bias: Tensor<4>, activation: ActivationKind) -> Tensor<3> {
        let x = self.attention.forward(x, bias);
        let h = self.intermediate.forward(x.clone());
        let h = match activation.0 {
            0 => gelu(h),
            1 => gelu_approximate(h),
            _ => relu(h),
        };
        self.norm.forward(self.output.forward(h) + x)
    }
}

impl BertAttention {
    fn forward(&self, x: Tensor<3>, bias: Tensor<4>) -> Tensor<3> {
        let [batch, seq, hidden] = x.dims();
        let head_dim = hidden / self.heads;
        let split = |t: Tensor<3>| {
            t.reshape([batch, seq, self.heads, head_dim])
                .swap_dims(1, 2)
        };
        let q = split(self.query.forward(x.clone()));
        let k = split(self.key.forward(x.clone()));
        let v = split(self.value.forward(x.clone()));
        let scores = q
            .matmul(k.transpose())
            .mul_scalar(1.0 / (head_dim as f64).sqrt())
            + bias;
        let weights = softmax(scores, 3);
        let context = weights
            .matmul(v)
            .swap_dims(1, 2)
            .reshape([batch, seq, hidden]);
        self.norm.forward(self.output.forward(context) + x)
    }
}

/// Reads named tensors out of a safetensors file, checking dtype and shape.
pub(crate) struct WeightReader<'a> {
    tensors: SafeTensors<'a>,
    path: &'a Path,
    prefix: String,
    device: Device,
}

impl<'a> WeightReader<'a> {
    /// Parses the safetensors header. A truncated or corrupt file is reported here.
    pub(crate) fn new(bytes: &'a [u8], path: &'a Path, device: &Device) -> Result<Self> {
        let tensors = SafeTensors::deserialize(bytes)
            .map_err(|e| EngineError::model(path, format!("not a valid safetensors file: {e}")))?;
        let prefix = if tensors
            .names()
            .iter()
            .any(|n| n.starts_with("bert.embeddings."))
        {
            "bert.".to_string()
        } else {
            String::new()
        };
        Ok(WeightReader {
            tensors,
            path,
            prefix,
            device: device.clone(),
        })
    }

    /// A tensor of rank `D` with exactly `shape`, converted to f32.
    pub(crate) fn tensor<const D: usize>(
        &self,
        name: &str,
        shape: [usize; D],
    ) -> Result<Tensor<D>> {
        let full = format!("{}{}", self.prefix, name);
        let view = self
            .tensors
            .tensor(&full)
            .map_err(|_| EngineError::model(self.path, format!("tensor '{full}' is missing")))?;
        if view.shape() != shape {
            return Err(EngineError::model(
                self.path,
                format!(
                    "tensor '{full}' has shape {:?}, expected {:?} from config.json",
                    view.shape(),
                    shape
                ),
            ));
        }
        let values = decode_f32(view.dtype(), view.data()).ok_or_else(|| {
            EngineError::model(
                self.path,
                format!(
                    "tensor '{full}' has dtype {:?}; supported: F32, F16, BF16",
                    view.dtype()
                ),
            )
        })?;
        Ok(Tensor::from_data(
            TensorData::new(values, shape),
            &self.device,
        ))
    }

    fn linear(&self, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
        // Hugging Face stores [out, in]; burn's row layout is [in, out].
        let weight = self
            .tensor(&format!("{name}.weight"), [d_out, d_in])?
            .transpose();
        let bias = self.tensor(&format!("{name}.bias"), [d_out])?;
        Ok(Linear {
            weight: Param::from_tensor(weight),
            bias: Some(Param::from_tensor(bias)),
        })
    }

    fn layer_norm(&self, name: &str, d: usize, eps: f64) -> Result<LayerNorm> {
        let mut norm = LayerNormConfig::new(d).with_epsilon(eps).init(&self.device);
        // Older checkpoints name the parameters gamma/beta.
        let (w, b) = if self.has(&format!("{name}.weight")) {
            ("weight", "bias")
        } else {
            ("gamma", "beta")
        };
        norm.gamma = Param::from_tensor(self.tensor(&format!("{name}.{w}"), [d])?);
        norm.beta = Some(Param::from_tensor(
            self.tensor(&format!("{name}.{b}"), [d])?,
        ));
        Ok(norm)
    }

    fn embedding(&self, name: &str, n: usize, d: usize) -> Result<Embedding> {
        Ok(Embedding {
            weight: Param::from_tensor(self.tensor(&format!("{name}.weight"), [n, d])?),
        })
    }

    fn has(&self, name: &str) -> bool {
        self.tensors
            .tensor(&format!("{}{}", self.prefix, name))
            .is_ok()
    }
}

/// Converts little-endian raw tensor bytes to f32.
pub(crate) fn decode_f32(dtype: safetensors::Dtype, data: &[u8]) -> Option<Vec<f32>> {
    use safetensors::Dtype;
    Some(match dtype {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16))
            .collect(),
        _ => return None,
    })
}

/// IEEE 754 half to single precision.
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut f = f;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((f & 0x3ff) << 13)
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 127 - 15) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

impl BertModel {
    /// Builds the model from safetensors bytes, checking every tensor against `config`.
    pub fn from_safetensors(
        bytes: &[u8],
        path: &Path,
        config: &BertConfig,
        device: &Device,
    ) -> Result<Self> {
        let r = WeightReader::new(bytes, path, device)?;
        let d = config.hidden_size;
        let eps = config.layer_norm_eps;
        let embeddings = BertEmbeddings {
            word: r.embedding("embeddings.word_embeddings", config.vocab_size, d)?,
            position: r.embedding(
                "embeddings.position_embeddings",
                config.max_position_embeddings,
                d,
            )?,
            token_type: r.embedding(
                "embeddings.token_type_embeddings",
                config.type_vocab_size,
                d,
            )?,
            norm: r.layer_norm("embeddings.LayerNorm", d, eps)?,
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            layers.push(BertLayer {
                attention: BertAttention {
                    query: r.linear(&format!("{p}.attention.self.query"), d, d)?,
                    key: r.linear(&format!("{p}.attention.self.key"), d, d)?,
                    value: r.linear(&format!("{p}.attention.self.value"), d, d)?,
                    output: r.linear(&format!("{p}.attention.output.dense"), d, d)?,
                    norm: r.layer_norm(&format!("{p}.attention.output.LayerNorm"), d, eps)?,
                    heads: config.num_attention_heads,
                },
                intermediate: r.linear(
                    &format!("{p}.intermediate.dense"),
                    d,
                    config.intermediate_size,
                )?,
                output: r.linear(&format!("{p}.output.dense"), config.intermediate_size, d)?,
                norm: r.layer_norm(&format!("{p}.output.LayerNorm"), d, eps)?,
            });
        }
        if r.has(&format!(
            "encoder.layer.{}.attention.self.query.weight",
            config.num_hidden_layers
        )) {
            return Err(EngineError::model(
                path,
                format!(
                    "the file has more than the {} layers config.json declares",
                    config.num_hidden_layers
                ),
            ));
        }
        Ok(BertModel {
            embeddings,
            layers,
            activation: config.hidden_act.into(),
        })
    }
}
