//! The BERT transformer on burn: embeddings, self-attention layers and masked pooling, in
//! f32 or with the dense layers in 8 bits; its weights' reading and writing are [`weights`].

use std::path::Path;
use std::sync::Arc;

use burn::module::{Module, ModuleMapper, Param, ParamId};
use burn::nn::{Embedding, LayerNorm, LayerNormConfig, Linear};
use burn::tensor::activation::{gelu_approximate, relu};
use burn::tensor::{DType, Device, FloatDType, Int, Tensor, TensorData};
use safetensors::SafeTensors;

use crate::config::{Activation, BertConfig};
use crate::error::{EngineError, Result};
use crate::int8::QuantizedLinear;
use crate::kernels::{attention_weights, layer_norm, linear, matmul};

/// Additive bias of a masked entry (padded keys in attention, masked scores in the
/// objectives, padding in max pooling). Large enough that `exp` underflows to exactly zero in
/// f32, so padding never changes a real token's state.
pub const MASKED: f32 = -1.0e9;

/// The additive bias of a 0/1 mask: 0 where the mask is 1, [`MASKED`] where it is 0.
pub fn mask_bias<const D: usize>(mask: Tensor<D>) -> Tensor<D> {
    (mask.neg() + 1.0).mul_scalar(MASKED)
}

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
    /// The dense layers as int8 matrices, when the model runs in 8 bits
    /// ([`BertModel::quantize_int8`]).
    #[module(skip)]
    int8: Option<Arc<LayerInt8>>,
}

/// A layer's dense matrices in 8 bits (the f32 parameters stay, for every other backend):
/// query, key and value fused into one product.
#[derive(Debug)]
struct LayerInt8 {
    qkv: QuantizedLinear,
    attention_output: QuantizedLinear,
    intermediate: QuantizedLinear,
    output: QuantizedLinear,
}

/// How self-attention is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AttentionKernel {
    /// Scores, mask, softmax and the weighted sum as separate operations: every backend, and
    /// the form training differentiates.
    #[default]
    Decomposed,
    /// burn's attention operation: in a GPU build with autotuning (the engine's
    /// `gpu-autotune` feature) flash attention where it measures faster, elsewhere the same
    /// separate operations.
    Fused,
}

text_names!(AttentionKernel, "attention", { Decomposed => "decomposed", Fused => "fused" });

/// A BERT encoder (no pooler head: sentence encoders pool the token states themselves).
#[derive(Module, Debug)]
pub struct BertModel {
    embeddings: BertEmbeddings,
    layers: Vec<BertLayer>,
    /// The shape it was built with (names its weights in [`weight_table`]).
    #[module(skip)]
    config: BertConfig,
    /// How its self-attention is computed.
    #[module(skip)]
    attention: AttentionKernel,
}

impl BertModel {
    /// The shape it was built with.
    pub fn config(&self) -> &BertConfig {
        &self.config
    }

    /// Runs the encoder. `ids` and `mask` are `[batch, seq]` (mask 1 for real tokens, 0 for
    /// padding); returns the last hidden states `[batch, seq, hidden]`.
    pub fn forward(&self, ids: Tensor<2, Int>, mask: Tensor<2>) -> Tensor<3> {
        self.start(ids, mask).finish()
    }

    /// Runs the dense layers in 8 bits from now on ([`crate::int8`]): their weights quantised
    /// per output row, the activations per row on the fly, query, key and value fused into one
    /// product. For CPU inference only: the caller checks the device
    /// ([`crate::Encoder::set_precision`]); training and other backends keep f32.
    pub fn quantize_int8(&mut self) -> Result<()> {
        for layer in &mut self.layers {
            layer.int8 = Some(Arc::new(layer.quantized()?));
        }
        Ok(())
    }

    /// Whether the dense layers run in 8 bits.
    pub fn is_int8(&self) -> bool {
        self.layers.iter().any(|l| l.int8.is_some())
    }

    /// Casts every weight to `dtype` (the activations follow: each operation runs in its
    /// inputs' type). For inference on a GPU ([`crate::Encoder::set_precision`]) and for the
    /// f16 copy of mixed-precision training (on an autodiff device the cast is part of the
    /// graph, so gradients flow back to the f32 weights).
    pub fn cast_float(&mut self, dtype: FloatDType) {
        struct Cast(FloatDType);
        impl ModuleMapper for Cast {
            fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
                let dtype = self.0;
                param.map(|t| t.cast(dtype))
            }
        }
        *self = self.clone().map(&mut Cast(dtype));
    }

    /// The encoder's blocks from the bottom: the embeddings, then each transformer layer.
    pub fn block_count(&self) -> usize {
        1 + self.layers.len()
    }

    /// Freezes the lowest `blocks` blocks for fine-tuning: the embeddings first, then the
    /// transformer layers from the bottom (`1` = the embeddings, `1 + k` = the embeddings and
    /// the first `k` layers; [`BertModel::block_count`] at most). Their parameters stop
    /// requiring gradients: the backward pass ends above them and the optimiser, which only
    /// updates parameters that have a gradient, leaves them as they are.
    pub fn freeze_lowest(mut self, blocks: usize) -> Result<Self> {
        if blocks > self.block_count() {
            return Err(EngineError::Invalid(format!(
                "cannot freeze {blocks} blocks: the encoder has {} (the embeddings and {} layers)",
                self.block_count(),
                self.layers.len()
            )));
        }
        if blocks >= 1 {
            self.embeddings = self.embeddings.no_grad();
        }
        let layers = blocks.saturating_sub(1);
        self.layers = self
            .layers
            .into_iter()
            .enumerate()
            .map(|(i, layer)| if i < layers { layer.no_grad() } else { layer })
            .collect();
        Ok(self)
    }

    /// Computes self-attention with `kernel` from now on.
    pub fn set_attention(&mut self, kernel: AttentionKernel) {
        self.attention = kernel;
    }

    /// How self-attention is computed.
    pub fn attention(&self) -> AttentionKernel {
        self.attention
    }

    /// Whether the weights are in a 16-bit float type.
    pub fn is_half(&self) -> bool {
        matches!(
            self.embeddings.word.weight.val().dtype(),
            DType::F16 | DType::BF16
        )
    }

    /// The forward pass one stage at a time, for a caller that gives the thread back between
    /// stages (the page, so that no task runs long): the embeddings now, then one layer per
    /// [`Forward::step`].
    pub fn start(&self, ids: Tensor<2, Int>, mask: Tensor<2>) -> Forward<'_> {
        let [batch, seq] = ids.dims();
        let device = ids.device();
        let positions: Vec<i64> = (0..seq as i64).collect();
        let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [seq]), &device)
            .reshape([1, seq])
            .expand([batch, seq]);
        let types = Tensor::<2, Int>::zeros([batch, seq], &device);
        let e = &self.embeddings;
        let x = e.word.forward(ids) + e.position.forward(positions) + e.token_type.forward(types);
        // [batch, 1, 1, seq]: broadcast over heads and query positions. Made in f32, then in
        // the states' type: in f16 the masked entries become -inf, which softmax still zeroes
        // (every row keeps its real tokens).
        let bias = mask_bias(mask).cast(x.dtype()).reshape([batch, 1, 1, seq]);
        Forward {
            model: self,
            x: Some(layer_norm(x, &e.norm, self.config.layer_norm_eps)),
            bias,
            next: 0,
        }
    }
}

/// A forward pass in progress ([`BertModel::start`]).
pub struct Forward<'a> {
    model: &'a BertModel,
    /// The hidden states so far (taken by each layer: a uniquely held tensor lets the CPU
    /// backend work in place).
    x: Option<Tensor<3>>,
    bias: Tensor<4>,
    next: usize,
}

impl Forward<'_> {
    /// Runs the next layer; false once every layer has run.
    pub fn step(&mut self) -> bool {
        let Some(layer) = self.model.layers.get(self.next) else {
            return false;
        };
        let settings = LayerSettings {
            activation: self.model.config.hidden_act,
            attention: self.model.attention,
            epsilon: self.model.config.layer_norm_eps,
        };
        if let Some(x) = self.x.take() {
            self.x = Some(layer.forward(x, self.bias.clone(), settings));
        }
        self.next += 1;
        true
    }

    /// The last hidden states `[batch, seq, hidden]` (after every remaining layer).
    pub fn finish(mut self) -> Tensor<3> {
        while self.step() {}
        self.x
            .take()
            .expect("a forward pass holds its hidden states until it finishes")
    }
}

/// What a layer's forward pass takes from the model's configuration.
#[derive(Debug, Clone, Copy)]
struct LayerSettings {
    activation: Activation,
    attention: AttentionKernel,
    /// The layer norms' epsilon (the one they were built with).
    epsilon: f64,
}

impl BertLayer {
    fn forward(&self, x: Tensor<3>, bias: Tensor<4>, settings: LayerSettings) -> Tensor<3> {
        let int8 = self.int8.as_deref();
        let x = self.attention.forward(x, bias, int8, settings);
        let h = match int8 {
            Some(q) => dense_int8(x.clone(), &q.intermediate),
            None => linear(x.clone(), &self.intermediate),
        };
        let h = match settings.activation {
            Activation::Gelu => crate::kernels::gelu(h),
            Activation::GeluTanh => gelu_approximate(h),
            Activation::Relu => relu(h),
        };
        let out = match int8 {
            Some(q) => dense_int8(h, &q.output),
            None => linear(h, &self.output),
        };
        layer_norm(out + x, &self.norm, settings.epsilon)
    }

    /// The int8 form of this layer's dense matrices (query, key and value stacked).
    fn quantized(&self) -> Result<LayerInt8> {
        let a = &self.attention;
        Ok(LayerInt8 {
            qkv: quantize_linears(&[&a.query, &a.key, &a.value])?,
            attention_output: quantize_linears(&[&a.output])?,
            intermediate: quantize_linears(&[&self.intermediate])?,
            output: quantize_linears(&[&self.output])?,
        })
    }
}

/// One int8 matrix from the f32 `linears` (same input width), their outputs side by side.
fn quantize_linears(linears: &[&Linear]) -> Result<QuantizedLinear> {
    let mut weights = Vec::new();
    let mut biases = Vec::new();
    let mut d_in = 0;
    for linear in linears {
        let [rows, cols] = linear.weight.dims();
        d_in = rows;
        // burn's [in, out] back to one row per output.
        weights.extend(f32_values(linear.weight.val().transpose())?);
        match &linear.bias {
            Some(b) => biases.extend(f32_values(b.val())?),
            None => biases.extend(std::iter::repeat_n(0.0, cols)),
        }
    }
    let d_out = biases.len();
    Ok(QuantizedLinear::from_f32(
        &weights,
        d_out,
        d_in,
        Some(&biases),
    ))
}

/// The values of a tensor, row-major.
fn f32_values<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| EngineError::Invalid(format!("reading a weight back: {e:?}")))
}

/// `x Wᵀ + b` through the int8 kernels ([`crate::int8`]): the activations leave the tensor
/// for the kernel and the result comes back as a new one (CPU only: the caller checked).
fn dense_int8(x: Tensor<3>, q: &QuantizedLinear) -> Tensor<3> {
    let [batch, seq, _] = x.dims();
    let device = x.device();
    let values = f32_values(x).expect("an f32 activation tensor on the CPU");
    let y = q.forward(&values, batch * seq);
    Tensor::from_data(TensorData::new(y, [batch, seq, q.d_out()]), &device)
}

impl BertAttention {
    fn forward(
        &self,
        x: Tensor<3>,
        bias: Tensor<4>,
        int8: Option<&LayerInt8>,
        settings: LayerSettings,
    ) -> Tensor<3> {
        let [batch, seq, hidden] = x.dims();
        let head_dim = hidden / self.heads;
        let split = |t: Tensor<3>| {
            t.reshape([batch, seq, self.heads, head_dim])
                .swap_dims(1, 2)
        };
        let (q, k, v) = match int8 {
            Some(int8) => {
                let qkv = dense_int8(x.clone(), &int8.qkv);
                (
                    qkv.clone().narrow(2, 0, hidden),
                    qkv.clone().narrow(2, hidden, hidden),
                    qkv.narrow(2, 2 * hidden, hidden),
                )
            }
            None => (
                linear(x.clone(), &self.query),
                linear(x.clone(), &self.key),
                linear(x.clone(), &self.value),
            ),
        };
        let (q, k, v) = (split(q), split(k), split(v));
        let context = match settings.attention {
            AttentionKernel::Decomposed => {
                let scale = 1.0 / (head_dim as f64).sqrt();
                matmul(attention_weights(matmul(q, k.transpose()), scale, bias), v)
            }
            AttentionKernel::Fused => {
                // True where a key is padding, for every head and query position; the
                // operation scales by 1/sqrt(head_dim) itself.
                let masked = bias.lower_elem(-1.0).expand([batch, self.heads, seq, seq]);
                burn::tensor::module::attention(q, k, v, Some(masked), None, Default::default())
            }
        };
        let context = context.swap_dims(1, 2).reshape([batch, seq, hidden]);
        let out = match int8 {
            Some(q) => dense_int8(context, &q.attention_output),
            None => linear(context, &self.output),
        };
        layer_norm(out + x, &self.norm, settings.epsilon)
    }
}

pub mod weights;

pub(crate) use weights::WeightReader;
pub use weights::{named_param, param_id, random_safetensors, NamedTensor};
