//! The sentence encoder: tokenizer, transformer, pooling and normalisation, with one code path
//! for every backend. Synchronous methods serve native callers; `*_async` methods serve the
//! browser, where WebGPU can only be read back asynchronously.

use std::path::Path;

use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::bert::BertModel;
use crate::config::{ModelConfig, Pooling};
use crate::error::{EngineError, Result};
use crate::model_files::{ModelFiles, TOKENIZER_JSON, WEIGHTS};
use crate::tokenize::{TextTokenizer, TokenBatch};

/// Default number of texts per forward pass (sentence-transformers' default too).
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// A row-major matrix of embeddings, one row per input text, in input order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Embeddings {
    /// Width of each row.
    pub dim: usize,
    /// `rows * dim` values.
    pub data: Vec<f32>,
}

impl Embeddings {
    /// An empty matrix of width `dim`.
    pub fn new(dim: usize) -> Self {
        Embeddings {
            dim,
            data: Vec::new(),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Iterates over rows.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[f32]> {
        self.data.chunks_exact(self.dim.max(1))
    }

    /// Scales every row to unit L2 norm (rows of norm 0 stay 0).
    pub fn normalize(&mut self) {
        let dim = self.dim.max(1);
        for row in self.data.chunks_exact_mut(dim) {
            l2_normalize(row);
        }
    }
}

/// Scales `v` to unit L2 norm, as `torch.nn.functional.normalize` does (eps 1e-12).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v
        .iter()
        .map(|x| (*x as f64) * (*x as f64))
        .sum::<f64>()
        .sqrt();
    let scale = 1.0 / norm.max(1e-12);
    for x in v {
        *x = (*x as f64 * scale) as f32;
    }
}

/// A loaded sentence encoder.
pub struct Encoder {
    model: BertModel,
    tokenizer: TextTokenizer,
    config: ModelConfig,
    device: Device,
    fingerprint: String,
    /// Texts per forward pass.
    pub batch_size: usize,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("config", &self.config)
            .field("device", &self.device)
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
}

impl Encoder {
    /// Loads a Hugging Face style model folder onto `device`.
    pub fn load(dir: impl AsRef<Path>, device: &Device) -> Result<Self> {
        Self::from_files(&ModelFiles::read_dir(dir)?, device)
    }

    /// Builds the encoder from model files already in memory.
    pub fn from_files(files: &ModelFiles, device: &Device) -> Result<Self> {
        let config = ModelConfig::from_files(files)?;
        let tokenizer = TextTokenizer::from_bytes(
            files.required(TOKENIZER_JSON, "tokenizer")?,
            &files.path_of(TOKENIZER_JSON),
            config.max_seq_length,
        )?;
        let model = BertModel::from_safetensors(
            files.required(WEIGHTS, "weights in safetensors format")?,
            &files.path_of(WEIGHTS),
            &config.bert,
            device,
        )?;
        Ok(Encoder {
            model,
            tokenizer,
            config,
            device: device.clone(),
            fingerprint: files.fingerprint(),
            batch_size: DEFAULT_BATCH_SIZE,
        })
    }

    /// Width of the embeddings.
    pub fn dim(&self) -> usize {
        self.config.bert.hidden_size
    }

    /// The model's settings.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &TextTokenizer {
        &self.tokenizer
    }

    /// The transformer.
    pub fn model(&self) -> &BertModel {
        &self.model
    }

    /// The device the model lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Identifier of the model files (see [`ModelFiles::fingerprint`]).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Embeds `texts` (native: synchronous readback).
    pub fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
        self.encode_with_progress(texts, &mut |_, _| {})
    }

    /// Embeds `texts`, calling `progress(done, total)` after each batch.
    pub fn encode_with_progress(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Embeddings> {
        let plan = self.plan(texts)?;
        let mut out = Embeddings {
            dim: self.dim(),
            data: vec![0.0; texts.len() * self.dim()],
        };
        let mut done = 0;
        for chunk in &plan.batches {
            let pooled = self.forward_pooled(&plan, chunk);
            let data = pooled
                .try_into_data()
                .map_err(|e| backend_error(&self.device, e))?;
            self.scatter(&mut out, chunk, &data)?;
            done += chunk.len();
            progress(done, texts.len());
        }
        Ok(out)
    }

    /// Embeds `texts` with asynchronous readback (required on WebGPU).
    pub async fn encode_async(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Embeddings> {
        let plan = self.plan(texts)?;
        let mut out = Embeddings {
            dim: self.dim(),
            data: vec![0.0; texts.len() * self.dim()],
        };
        let mut done = 0;
        for chunk in &plan.batches {
            let pooled = self.forward_pooled(&plan, chunk);
            let data = pooled
                .into_data_async()
                .await
                .map_err(|e| backend_error(&self.device, e))?;
            self.scatter(&mut out, chunk, &data)?;
            done += chunk.len();
            progress(done, texts.len());
        }
        Ok(out)
    }

    /// Token-level hidden states of one padded batch, `[batch, seq, hidden]`, with its mask
    /// `[batch, seq]`. Used by the cross-attention interaction and by training.
    pub fn hidden_states(&self, batch: &TokenBatch) -> (Tensor<3>, Tensor<2>) {
        let (ids, mask) = self.batch_tensors(batch);
        (self.model.forward(ids, mask.clone()), mask)
    }

    /// Pools hidden states `[batch, seq, hidden]` into `[batch, hidden]` with the model's pooling.
    pub fn pool(&self, hidden: Tensor<3>, batch: &TokenBatch) -> Tensor<2> {
        pool(hidden, batch, self.config.pooling, &self.device)
    }

    fn batch_tensors(&self, batch: &TokenBatch) -> (Tensor<2, Int>, Tensor<2>) {
        let shape = [batch.batch(), batch.seq];
        let ids =
            Tensor::<2, Int>::from_data(TensorData::new(batch.ids.clone(), shape), &self.device);
        let mask = Tensor::<2>::from_data(TensorData::new(batch.mask.clone(), shape), &self.device);
        (ids, mask)
    }

    fn plan(&self, texts: &[&str]) -> Result<Plan> {
        let tokens = self.tokenizer.encode(texts)?;
        // Longest first, so each batch pads little; the order is restored on output.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(tokens[i].len()));
        let batches = order
            .chunks(self.batch_size.max(1))
            .map(|c| c.to_vec())
            .collect();
        Ok(Plan { tokens, batches })
    }

    fn forward_pooled(&self, plan: &Plan, chunk: &[usize]) -> Tensor<2> {
        let rows: Vec<&[u32]> = chunk.iter().map(|&i| plan.tokens[i].as_slice()).collect();
        let batch = TokenBatch::pad(&rows, self.config.bert.pad_token_id);
        let (hidden, _) = self.hidden_states(&batch);
        self.pool(hidden, &batch)
    }

    fn scatter(&self, out: &mut Embeddings, chunk: &[usize], data: &TensorData) -> Result<()> {
        let values: Vec<f32> = data
            .try_to_vec::<f32>()
            .map_err(|e| EngineError::Invalid(format!("unexpected output data: {e:?}")))?;
        let dim = self.dim();
        for (row, &i) in chunk.iter().enumerate() {
            let dst = &mut out.data[i * dim..(i + 1) * dim];
            dst.copy_from_slice(&values[row * dim..(row + 1) * dim]);
            if self.config.normalize {
                l2_normalize(dst);
            }
        }
        Ok(())
    }
}

struct Plan {
    tokens: Vec<Vec<u32>>,
    batches: Vec<Vec<usize>>,
}

/// Pools token states with `pooling`, honouring the padding mask of `batch`.
///
/// Every mode except max is a weighted sum over tokens, with weights computed on the host from
/// the real lengths: mean (1/len), CLS (first token), last token (position len-1), mean-sqrt-len.
pub fn pool(hidden: Tensor<3>, batch: &TokenBatch, pooling: Pooling, device: &Device) -> Tensor<2> {
    let [b, s, d] = hidden.dims();
    if pooling == Pooling::Max {
        let mask = Tensor::<2>::from_data(TensorData::new(batch.mask.clone(), [b, s]), device);
        let bias = (mask.neg() + 1.0).mul_scalar(-1.0e9).reshape([b, s, 1]);
        return (hidden + bias).max_dim(1).reshape([b, d]);
    }
    let mut weights = vec![0.0f32; b * s];
    for (i, &len) in batch.lens.iter().enumerate() {
        let row = &mut weights[i * s..(i + 1) * s];
        match pooling {
            Pooling::Mean => row[..len]
                .iter_mut()
                .for_each(|w| *w = 1.0 / len.max(1) as f32),
            Pooling::MeanSqrtLen => row[..len]
                .iter_mut()
                .for_each(|w| *w = 1.0 / (len.max(1) as f32).sqrt()),
            Pooling::Cls => row[0] = 1.0,
            Pooling::LastToken => row[len.max(1) - 1] = 1.0,
            Pooling::Max => unreachable!("handled above"),
        }
    }
    let weights = Tensor::<3>::from_data(TensorData::new(weights, [b, s, 1]), device);
    (hidden * weights).sum_dim(1).reshape([b, d])
}

fn backend_error(device: &Device, e: impl std::fmt::Debug) -> EngineError {
    EngineError::Backend {
        backend: format!("{device:?}"),
        problem: format!("reading results back failed: {e:?}"),
    }
}
