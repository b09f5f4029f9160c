//! The BERT transformer on burn: embeddings, self-attention layers and masked pooling.
//!
//! Weights come from a Hugging Face `model.safetensors` (names as in `BertModel`, with or
//! without a `bert.` prefix). Every tensor is checked against `config.json` before use, so a
//! mismatched file is reported by name instead of failing deep inside a matmul.

use std::path::Path;

use burn::module::{Module, Param, ParamId};
use burn::nn::{Embedding, LayerNorm, LayerNormConfig, Linear};
use burn::tensor::activation::{gelu_approximate, relu, softmax};
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
            0 => crate::kernels::gelu(h),
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
            weight: named_param(&format!("{name}.weight"), weight),
            bias: Some(named_param(&format!("{name}.bias"), bias)),
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
        norm.gamma = named_param(
            &format!("{name}.weight"),
            self.tensor(&format!("{name}.{w}"), [d])?,
        );
        norm.beta = Some(named_param(
            &format!("{name}.bias"),
            self.tensor(&format!("{name}.{b}"), [d])?,
        ));
        Ok(norm)
    }

    fn embedding(&self, name: &str, n: usize, d: usize) -> Result<Embedding> {
        Ok(Embedding {
            weight: named_param(
                &format!("{name}.weight"),
                self.tensor(&format!("{name}.weight"), [n, d])?,
            ),
        })
    }

    fn has(&self, name: &str) -> bool {
        self.tensors
            .tensor(&format!("{}{}", self.prefix, name))
            .is_ok()
    }
}

/// The parameter id of the tensor named `name` (Hugging Face naming, no `bert.` prefix): a hash
/// of the name, so the same model loaded twice has the same ids. Optimiser states are keyed by
/// these ids, which is what lets a training checkpoint (weights + optimiser state) resume.
pub fn param_id(name: &str) -> ParamId {
    // FNV-1a, 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    ParamId::from(h)
}

/// A trainable parameter with the stable id of `name` (see [`param_id`]).
pub fn named_param<const D: usize>(name: &str, value: Tensor<D>) -> Param<Tensor<D>> {
    let mut param = Param::from_tensor(value);
    param.id = param_id(name);
    param
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

/// One named tensor in Hugging Face layout: `(name, shape, values)`.
pub type NamedTensor = (String, Vec<usize>, Vec<f32>);

impl BertModel {
    /// Every weight under its Hugging Face name (no `bert.` prefix), linear weights transposed
    /// back to PyTorch's `[out, in]`: the inverse of [`BertModel::from_safetensors`].
    pub fn named_tensors(&self) -> Result<Vec<NamedTensor>> {
        let mut out = Vec::new();
        let e = &self.embeddings;
        push_param(
            &mut out,
            "embeddings.word_embeddings.weight",
            &e.word.weight,
        )?;
        push_param(
            &mut out,
            "embeddings.position_embeddings.weight",
            &e.position.weight,
        )?;
        push_param(
            &mut out,
            "embeddings.token_type_embeddings.weight",
            &e.token_type.weight,
        )?;
        push_norm(&mut out, "embeddings.LayerNorm", &e.norm)?;
        for (i, layer) in self.layers.iter().enumerate() {
            let p = format!("encoder.layer.{i}");
            let a = &layer.attention;
            push_linear(&mut out, &format!("{p}.attention.self.query"), &a.query)?;
            push_linear(&mut out, &format!("{p}.attention.self.key"), &a.key)?;
            push_linear(&mut out, &format!("{p}.attention.self.value"), &a.value)?;
            push_linear(&mut out, &format!("{p}.attention.output.dense"), &a.output)?;
            push_norm(
                &mut out,
                &format!("{p}.attention.output.LayerNorm"),
                &a.norm,
            )?;
            push_linear(
                &mut out,
                &format!("{p}.intermediate.dense"),
                &layer.intermediate,
            )?;
            push_linear(&mut out, &format!("{p}.output.dense"), &layer.output)?;
            push_norm(&mut out, &format!("{p}.output.LayerNorm"), &layer.norm)?;
        }
        Ok(out)
    }

    /// The weights as a `model.safetensors` file. Tensors of `base` (the file the model was
    /// loaded from) that the engine does not use, such as BERT's pooler, are copied unchanged,
    /// so other tools load the result exactly like the original.
    pub fn to_safetensors(&self, base: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut tensors = self.named_tensors()?;
        if let Some(base) = base {
            let original = SafeTensors::deserialize(base)
                .map_err(|e| EngineError::Invalid(format!("base weights: {e}")))?;
            let prefix = if original
                .names()
                .iter()
                .any(|n| n.starts_with("bert.embeddings."))
            {
                "bert."
            } else {
                ""
            };
            let ours: std::collections::BTreeSet<String> =
                tensors.iter().map(|(n, _, _)| n.clone()).collect();
            for name in original.names() {
                let bare = name.strip_prefix(prefix).unwrap_or(name);
                if ours.contains(bare) {
                    continue;
                }
                let view = original
                    .tensor(name)
                    .map_err(|e| EngineError::Invalid(format!("base tensor '{name}': {e}")))?;
                // Integer buffers (e.g. position_ids) are not weights; dropping them is what
                // transformers itself does on save.
                if let Some(values) = decode_f32(view.dtype(), view.data()) {
                    tensors.push((bare.to_string(), view.shape().to_vec(), values));
                }
            }
        }
        crate::safetensors_io::write_f32(&tensors)
    }

    /// A freshly initialised model of shape `config` (BERT's initialisation: normal weights with
    /// standard deviation 0.02, zero biases, unit layer norms), deterministic in `seed`.
    pub fn random(config: &BertConfig, seed: u64, device: &Device) -> Result<Self> {
        let bytes = random_safetensors(config, seed)?;
        Self::from_safetensors(&bytes, Path::new("<random>"), config, device)
    }
}

/// The `model.safetensors` bytes of [`BertModel::random`].
pub fn random_safetensors(config: &BertConfig, seed: u64) -> Result<Vec<u8>> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let d = config.hidden_size;
    let mut tensors: Vec<NamedTensor> = Vec::new();
    let normal = |name: String, shape: Vec<usize>, rng: &mut crate::rng::SplitMix64| {
        let n = shape.iter().product();
        let values = (0..n).map(|_| rng.normal() as f32 * 0.02).collect();
        (name, shape, values)
    };
    let constant = |name: String, shape: Vec<usize>, v: f32| {
        let n: usize = shape.iter().product();
        (name, shape, vec![v; n])
    };
    tensors.push(normal(
        "embeddings.word_embeddings.weight".into(),
        vec![config.vocab_size, d],
        &mut rng,
    ));
    tensors.push(normal(
        "embeddings.position_embeddings.weight".into(),
        vec![config.max_position_embeddings, d],
        &mut rng,
    ));
    tensors.push(normal(
        "embeddings.token_type_embeddings.weight".into(),
        vec![config.type_vocab_size, d],
        &mut rng,
    ));
    let norms = |name: &str, tensors: &mut Vec<NamedTensor>| {
        tensors.push(constant(format!("{name}.weight"), vec![d], 1.0));
        tensors.push(constant(format!("{name}.bias"), vec![d], 0.0));
    };
    norms("embeddings.LayerNorm", &mut tensors);
    let ff = config.intermediate_size;
    for i in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{i}");
        for (name, d_out, d_in) in [
            (format!("{p}.attention.self.query"), d, d),
            (format!("{p}.attention.self.key"), d, d),
            (format!("{p}.attention.self.value"), d, d),
            (format!("{p}.attention.output.dense"), d, d),
            (format!("{p}.intermediate.dense"), ff, d),
            (format!("{p}.output.dense"), d, ff),
        ] {
            tensors.push(normal(
                format!("{name}.weight"),
                vec![d_out, d_in],
                &mut rng,
            ));
            tensors.push(constant(format!("{name}.bias"), vec![d_out], 0.0));
        }
        norms(&format!("{p}.attention.output.LayerNorm"), &mut tensors);
        norms(&format!("{p}.output.LayerNorm"), &mut tensors);
    }
    crate::safetensors_io::write_f32(&tensors)
}

fn param_values<const D: usize>(param: &Param<Tensor<D>>) -> Result<(Vec<usize>, Vec<f32>)> {
    let t = param.val();
    let shape = t.dims().to_vec();
    let values = t
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| EngineError::Invalid(format!("reading weights back: {e:?}")))?;
    Ok((shape, values))
}

fn push_param<const D: usize>(
    out: &mut Vec<NamedTensor>,
    name: &str,
    param: &Param<Tensor<D>>,
) -> Result<()> {
    let (shape, values) = param_values(param)?;
    out.push((name.to_string(), shape, values));
    Ok(())
}

fn push_linear(out: &mut Vec<NamedTensor>, name: &str, linear: &Linear) -> Result<()> {
    // burn stores [in, out]; PyTorch [out, in].
    let (shape, values) = param_values(&linear.weight)?;
    let (d_in, d_out) = (shape[0], shape[1]);
    let mut t = vec![0.0f32; values.len()];
    for i in 0..d_in {
        for o in 0..d_out {
            t[o * d_in + i] = values[i * d_out + o];
        }
    }
    out.push((format!("{name}.weight"), vec![d_out, d_in], t));
    if let Some(bias) = &linear.bias {
        push_param(out, &format!("{name}.bias"), bias)?;
    }
    Ok(())
}

fn push_norm(out: &mut Vec<NamedTensor>, name: &str, norm: &LayerNorm) -> Result<()> {
    push_param(out, &format!("{name}.weight"), &norm.gamma)?;
    if let Some(beta) = &norm.beta {
        push_param(out, &format!("{name}.bias"), beta)?;
    }
    Ok(())
}
