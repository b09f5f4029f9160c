//! The sentence encoder: tokenizer, transformer, pooling and normalisation, with one code path
//! for every backend. Synchronous methods serve native callers; `*_async` methods serve the
//! browser, where WebGPU can only be read back asynchronously.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use burn::tensor::{Device, FloatDType, Tensor, TensorData};

use crate::bert::BertModel;
use crate::config::{ModelConfig, Pooling};
use crate::error::{EngineError, Result};
use crate::instruction::{CrossAttentionInteraction, Interaction, QueryTemplate};
use crate::model_files::{ModelFiles, TOKENIZER_JSON};
use crate::tokenize::{Batching, Padding, TextTokenizer, TokenBatch};

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

    /// `rows` rows of zeros.
    pub fn zeros(rows: usize, dim: usize) -> Self {
        Embeddings {
            dim,
            data: vec![0.0; rows * dim],
        }
    }

    /// Writes `values` (one row after another) into rows `rows`, L2-normalising each when
    /// `normalize` is set.
    pub fn set_rows(&mut self, rows: &[usize], values: &[f32], normalize: bool) {
        let dim = self.dim;
        for (k, &i) in rows.iter().enumerate() {
            let dst = &mut self.data[i * dim..(i + 1) * dim];
            dst.copy_from_slice(&values[k * dim..(k + 1) * dim]);
            if normalize {
                l2_normalize(dst);
            }
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

/// How an encoder gives the thread back between the stages of a forward pass (the page's
/// `yield_now`): a function returning the future to await.
pub type Pause = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()>>> + Send + Sync>;

/// The arithmetic of the encoder's dense layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// 32-bit floats throughout (every backend; matches sentence-transformers).
    #[default]
    F32,
    /// 8-bit integer products for the dense layers ([`crate::int8`]): weights per output row,
    /// activations per row, on the CPU backend. Faster on x86-64 (AVX-512 VNNI, AVX2); the
    /// embeddings move within the quantisation's error (BENCHMARKS.md: nDCG@10 and cosines).
    Int8,
    /// 16-bit floats for the whole transformer on a GPU backend (weights and activations;
    /// pooling and normalisation stay f32): half the bytes moved and the GPU's half-precision
    /// matrix units. The embeddings move within f16's rounding (BENCHMARKS.md, "GPU").
    F16,
}

text_names!(Precision, "precision", { F32 => "f32", Int8 => "int8", F16 => "f16" });

/// What tells one encoder's embeddings from another's: the fingerprint of its weights and
/// arithmetic, the width, and the longest input it reads. Caches of embeddings are keyed by
/// it, and an encoder held elsewhere (the page's encoding workers) is known by it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EmbeddingSpace {
    /// [`Encoder::fingerprint`].
    pub fingerprint: String,
    /// Width of the embeddings.
    pub dim: usize,
    /// Tokens read at most.
    pub max_seq_length: usize,
}

/// When the encoder reads a batch's embeddings back from the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Readback {
    /// After the next batch's forward pass is queued, so that a GPU computes one batch while
    /// the host queues the next and waits for the one before (on the CPU, where every
    /// operation runs when it is called, the same as [`Readback::EachBatch`]).
    #[default]
    Pipelined,
    /// Each batch's before the next is queued: the device idles while the host queues.
    EachBatch,
}

text_names!(Readback, "readback", { Pipelined => "pipelined", EachBatch => "each-batch" });

/// A loaded sentence encoder: tokenizer, transformer, pooling, normalisation, and how an
/// instruction meets a query ([`Interaction`]).
pub struct Encoder {
    model: BertModel,
    tokenizer: TextTokenizer,
    config: ModelConfig,
    device: Device,
    fingerprint: String,
    interaction: Interaction,
    /// Texts per forward pass (at most, on the CPU: [`crate::tokenize::Batching`]).
    pub batch_size: usize,
    /// How far each batch is padded: to its longest text, or to a few fixed lengths on a GPU
    /// build that tunes kernels per shape ([`Padding::for_device`]).
    pub padding: Padding,
    /// When each batch's embeddings are read back.
    pub readback: Readback,
    /// Awaited after the embeddings and after each layer of every forward pass of the async
    /// methods, when set ([`Encoder::pause_between_layers`]).
    pause: Option<Pause>,
}

/// Padded tokens (rows x length) up to which a batch runs its forward pass without pausing:
/// a query of this size is a few milliseconds of work in the page's wasm (about 20 MFLOP a
/// token for all-MiniLM-L6-v2), less than the timer delays seven pauses add.
pub const PAUSE_MIN_TOKENS: usize = 48;

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("config", &self.config)
            .field("device", &self.device)
            .field("fingerprint", &self.fingerprint)
            .field("interaction", &self.interaction.name())
            .finish()
    }
}

impl Encoder {
    /// Loads a Hugging Face style model folder onto `device`.
    pub fn load(dir: impl AsRef<Path>, device: &Device) -> Result<Self> {
        Self::from_files(&ModelFiles::read_dir(dir)?, device)
    }

    /// Builds the encoder from model files already in memory. A folder holding
    /// `cross_attention.safetensors` (a model trained with Interaction II) joins instructions
    /// and queries with that module; any other folder concatenates them with the default
    /// [`QueryTemplate`].
    pub fn from_files(files: &ModelFiles, device: &Device) -> Result<Self> {
        let config = ModelConfig::from_files(files)?;
        let model = BertModel::from_files(files, &config.bert, device)?;
        let interaction = Interaction::from_files(files, config.bert.hidden_size, device)?;
        Self::assemble(
            files,
            config,
            model,
            interaction,
            device,
            files.fingerprint(),
        )
    }

    /// An encoder over `model`, already on `device` (a model being trained, at its current
    /// weights, with no round trip through a weights file, which WebGPU could not read back
    /// synchronously): `files` give the tokenizer and configuration, `interaction` how an
    /// instruction meets a query (the template when `None`), `fingerprint` names the weights.
    pub fn from_model(
        files: &ModelFiles,
        model: BertModel,
        interaction: Option<Interaction>,
        device: &Device,
        fingerprint: String,
    ) -> Result<Self> {
        let config = ModelConfig::from_files(files)?;
        Self::assemble(files, config, model, interaction, device, fingerprint)
    }

    /// The encoder of `model` with `files`' tokenizer (the one place both constructors meet).
    fn assemble(
        files: &ModelFiles,
        config: ModelConfig,
        model: BertModel,
        interaction: Option<Interaction>,
        device: &Device,
        fingerprint: String,
    ) -> Result<Self> {
        let tokenizer = TextTokenizer::from_bytes(
            files.required(TOKENIZER_JSON, "tokenizer")?,
            &files.path_of(TOKENIZER_JSON),
            config.max_seq_length,
        )?;
        Ok(Encoder {
            model,
            tokenizer,
            config,
            device: device.clone(),
            fingerprint,
            interaction: interaction.unwrap_or_default(),
            batch_size: DEFAULT_BATCH_SIZE,
            padding: Padding::for_device(device),
            readback: Readback::default(),
            pause: None,
        })
    }

    /// Runs the dense layers at `precision` from now on. 8 bits need the CPU backend (an
    /// error on any other device); back to f32 means reloading the model.
    pub fn set_precision(&mut self, precision: Precision) -> Result<()> {
        match precision {
            Precision::F32 if self.model.is_int8() || self.model.is_half() => {
                Err(EngineError::Invalid(
                    "the encoder runs in reduced precision; load the model again for f32".into(),
                ))
            }
            Precision::F32 => Ok(()),
            // int8 weights exist only on the CPU, f16 ones only on a GPU: each refusal of the
            // other's device covers converting between the two.
            Precision::F16 if crate::kernels::is_cpu(&self.device) => {
                Err(EngineError::Invalid(format!(
                    "f16 precision runs on a GPU backend only, not on {:?}",
                    self.device
                )))
            }
            Precision::F16 if self.model.is_half() => Ok(()),
            Precision::F16 if !self.device.supports_dtype(FloatDType::F16) => {
                Err(EngineError::Invalid(format!(
                    "this GPU has no 16-bit float arithmetic ({:?}): use f32",
                    self.device
                )))
            }
            Precision::F16 => {
                self.model.cast_float(FloatDType::F16);
                self.fingerprint.push_str("+f16");
                Ok(())
            }
            Precision::Int8 if !crate::kernels::is_cpu_inference(&self.device) => {
                Err(EngineError::Invalid(format!(
                    "int8 precision runs on the CPU backend only, not on {:?}",
                    self.device
                )))
            }
            Precision::Int8 if self.model.is_int8() => Ok(()),
            Precision::Int8 => {
                self.model.quantize_int8()?;
                // Other embeddings: caches and index files keyed by the fingerprint tell them apart.
                self.fingerprint.push_str("+int8");
                Ok(())
            }
        }
    }

    /// Computes self-attention with `kernel` from now on (the same embeddings; a lever of
    /// BENCHMARKS.md's GPU table).
    pub fn set_attention(&mut self, kernel: crate::bert::AttentionKernel) {
        self.model.set_attention(kernel);
    }

    /// Gives the thread back (awaits `pause()`) after the embeddings and after each layer of
    /// every forward pass of the `*_async` methods, so that no single task runs a whole pass:
    /// on a single-threaded CPU backend (the page's wasm) a pass over a batch of passages is
    /// hundreds of milliseconds, one layer a sixth of it. Batches of at most
    /// [`PAUSE_MIN_TOKENS`] padded tokens run without pauses.
    pub fn pause_between_layers(&mut self, pause: Pause) {
        self.pause = Some(pause);
    }

    async fn pause(&self) {
        if let Some(pause) = &self.pause {
            pause().await;
        }
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

    /// What tells this encoder's embeddings from another's ([`EmbeddingSpace`]).
    pub fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            fingerprint: self.fingerprint.clone(),
            dim: self.dim(),
            max_seq_length: self.config.max_seq_length,
        }
    }

    /// How this encoder joins an instruction and a query.
    pub fn interaction(&self) -> &Interaction {
        &self.interaction
    }

    /// Replaces how instructions meet queries.
    pub fn set_interaction(&mut self, interaction: Interaction) {
        self.interaction = interaction;
    }

    /// Uses `template` to join instructions and queries. A model with a cross-attention
    /// module keeps it (the template does not apply); returns whether the template is used.
    pub fn use_template(&mut self, template: QueryTemplate) -> bool {
        match &mut self.interaction {
            Interaction::Concat(t) => {
                *t = template;
                true
            }
            Interaction::CrossAttention(_) => false,
        }
    }

    /// Embeds `texts` (native: waits for the device).
    pub fn encode(&self, texts: &[&str]) -> Result<Embeddings> {
        self.encode_with_progress(texts, &mut |_, _| {})
    }

    /// Embeds `texts`, calling `progress(done, total)` after each batch (native: waits for the
    /// device).
    pub fn encode_with_progress(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Embeddings> {
        self.wait(self.encode_async(texts, progress))
    }

    /// Embeds `texts` with asynchronous readback (required on WebGPU): the one encoding path,
    /// which the synchronous methods wait for.
    pub async fn encode_async(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Embeddings> {
        let plan = Plan::new(&self.tokenizer, texts, self.batch_size)?
            .padded(self.padding, self.config.bert.max_position_embeddings)
            .cut(
                Batching::for_device(&self.device),
                self.config.bert.hidden_size,
            );
        let mut out = Embeddings::zeros(texts.len(), self.dim());
        let mut done = 0;
        // Batches queued on the device and not yet read back: at most one more than the
        // readback's lag, all of them after the last batch.
        let lag = usize::from(self.readback == Readback::Pipelined);
        let mut queued = std::collections::VecDeque::new();
        for (i, rows) in plan.batches.iter().enumerate() {
            queued.push_back((rows, self.queue_batch(&plan, rows).await));
            let last = i + 1 == plan.batches.len();
            while queued.len() > lag || (last && !queued.is_empty()) {
                let (rows, pooled) = queued.pop_front().expect("checked non-empty");
                done += self.write_back(rows, pooled, &mut out).await?;
                progress(done, texts.len());
            }
        }
        Ok(out)
    }

    /// Queues the forward pass and pooling of batch `rows` of `plan` on the device (on the
    /// CPU: runs them), pausing between layers when the batch is long.
    async fn queue_batch(&self, plan: &Plan, rows: &[usize]) -> Tensor<2> {
        let batch = plan.batch(rows, self.config.bert.pad_token_id);
        let (ids, mask) = batch.tensors(&self.device);
        let mut pass = self.model.start(ids, mask);
        // A short batch (one query, say) runs its whole pass in one task: well under a
        // long task's 50 ms, and each pause costs the page a timer's delay.
        let pausing = batch.ids.len() > PAUSE_MIN_TOKENS;
        if pausing {
            self.pause().await;
        }
        while pass.step() {
            if pausing {
                self.pause().await;
            }
        }
        pool(pass.finish(), &batch, self.config.pooling, &self.device)
    }

    /// Reads `pooled` back into rows `rows` of `out`; returns the number of rows.
    async fn write_back(
        &self,
        rows: &[usize],
        pooled: Tensor<2>,
        out: &mut Embeddings,
    ) -> Result<usize> {
        let values = self.read_back(pooled).await?;
        out.set_rows(rows, &values, self.config.normalize);
        Ok(rows.len())
    }

    /// Embeds queries under their instructions, `(instruction, query)` pairs, the way this
    /// encoder's [`Interaction`] joins them; rows are L2-normalised (cosine scores). A pair
    /// with an empty instruction is the query alone.
    pub fn encode_queries(&self, pairs: &[(&str, &str)]) -> Result<Embeddings> {
        self.wait(self.encode_queries_async(pairs))
    }

    /// [`Encoder::encode_queries`] with asynchronous readback (the page).
    pub async fn encode_queries_async(&self, pairs: &[(&str, &str)]) -> Result<Embeddings> {
        let mut out = match &self.interaction {
            Interaction::Concat(template) => {
                let texts = pairs
                    .iter()
                    .map(|(instruction, query)| template.fit(&self.tokenizer, instruction, query))
                    .collect::<Result<Vec<String>>>()?;
                let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
                self.encode_async(&refs, &mut |_, _| {}).await?
            }
            Interaction::CrossAttention(module) => {
                self.cross_attention_async(module, pairs).await?
            }
        };
        out.normalize();
        Ok(out)
    }

    /// Interaction II: the pairs with an instruction through `module`, in batches; the others
    /// as plain queries.
    async fn cross_attention_async(
        &self,
        module: &CrossAttentionInteraction,
        pairs: &[(&str, &str)],
    ) -> Result<Embeddings> {
        let (plain, mixed): (Vec<usize>, Vec<usize>) =
            (0..pairs.len()).partition(|&i| crate::instruction::is_absent(pairs[i].0));
        let mut out = Embeddings::zeros(pairs.len(), self.dim());
        let queries: Vec<&str> = plain.iter().map(|&i| pairs[i].1).collect();
        let alone = self.encode_async(&queries, &mut |_, _| {}).await?;
        out.set_rows(&plain, &alone.data, false);
        for rows in mixed.chunks(self.batch_size.max(1)) {
            let chunk: Vec<(&str, &str)> = rows.iter().map(|&i| pairs[i]).collect();
            let pooled = module.embed(
                &self.model,
                &self.tokenizer,
                self.config.bert.pad_token_id,
                &chunk,
            )?;
            let values = self.read_back(pooled).await?;
            out.set_rows(rows, &values, false);
        }
        Ok(out)
    }

    /// Token-level hidden states of one padded batch, `[batch, seq, hidden]`, with its mask
    /// `[batch, seq]`.
    pub fn hidden_states(&self, batch: &TokenBatch) -> (Tensor<3>, Tensor<2>) {
        let (ids, mask) = batch.tensors(&self.device);
        (self.model.forward(ids, mask.clone()), mask)
    }

    /// Pools hidden states `[batch, seq, hidden]` into `[batch, hidden]` with the model's pooling.
    pub fn pool(&self, hidden: Tensor<3>, batch: &TokenBatch) -> Tensor<2> {
        pool(hidden, batch, self.config.pooling, &self.device)
    }

    async fn read_back(&self, pooled: Tensor<2>) -> Result<Vec<f32>> {
        pooled
            .into_data_async()
            .await
            .map_err(|e| {
                backend_error(&self.device, format!("reading results back failed: {e:?}"))
            })?
            .try_to_vec::<f32>()
            .map_err(|e| EngineError::Invalid(format!("unexpected output data: {e:?}")))
    }

    /// Waits for one of the async methods natively (on wasm only a device that answers at once,
    /// the CPU, can be waited for; WebGPU must use the async methods).
    pub(crate) fn wait<T>(&self, work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        burn::tensor::try_read_sync(work).unwrap_or_else(|| {
            Err(backend_error(
                &self.device,
                "this device cannot be waited for here: use the *_async methods".into(),
            ))
        })
    }
}

/// Texts tokenised once and grouped into batches of similar length (longest first, so each
/// batch pads little); outputs go back to input order by row index.
pub(crate) struct Plan {
    tokens: Vec<Vec<u32>>,
    /// Row indices of each batch.
    pub batches: Vec<Vec<usize>>,
    /// The most texts a batch holds.
    batch_size: usize,
    padding: Padding,
    /// The model's longest input (its position table).
    limit: usize,
}

impl Plan {
    /// Tokenises `texts` with `tokenizer` (its limit truncates) into batches of `batch_size`.
    pub fn new(tokenizer: &TextTokenizer, texts: &[&str], batch_size: usize) -> Result<Self> {
        let tokens = tokenizer.encode(texts)?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(tokens[i].len()));
        let batches = order
            .chunks(batch_size.max(1))
            .map(|c| c.to_vec())
            .collect();
        Ok(Plan {
            tokens,
            batches,
            batch_size: batch_size.max(1),
            padding: Padding::Longest,
            limit: usize::MAX,
        })
    }

    /// The same texts cut into batches by `batching` (for an encoder `hidden` wide), from their
    /// padded lengths, longest first as before.
    pub fn cut(self, batching: Batching, hidden: usize) -> Self {
        let order: Vec<usize> = self.batches.concat();
        let lengths: Vec<usize> = order
            .iter()
            .map(|&i| self.padding.length(self.tokens[i].len(), self.limit))
            .collect();
        let cuts = batching.cuts(&lengths, self.batch_size, hidden);
        let batches = cuts
            .windows(2)
            .map(|w| order[w[0]..w[1]].to_vec())
            .collect();
        Plan { batches, ..self }
    }

    /// The same plan with its batches padded by `padding`, never past `limit` tokens.
    pub fn padded(self, padding: Padding, limit: usize) -> Self {
        Plan {
            padding,
            limit,
            ..self
        }
    }

    /// The padded token batch of rows `rows`.
    pub fn batch(&self, rows: &[usize], pad_id: u32) -> TokenBatch {
        let rows: Vec<&[u32]> = rows.iter().map(|&i| self.tokens[i].as_slice()).collect();
        let longest = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        TokenBatch::pad_to(&rows, pad_id, self.padding.length(longest, self.limit))
    }
}

/// The transformer and pooling over one padded batch: `[batch, hidden]`, not normalised. The
/// encoder's and the training loop's one forward pass (gradients flow when `model` lives on an
/// autodiff device).
pub(crate) fn forward_pooled(
    model: &BertModel,
    batch: &TokenBatch,
    pooling: Pooling,
    device: &Device,
) -> Tensor<2> {
    let (ids, mask) = batch.tensors(device);
    pool(model.forward(ids, mask), batch, pooling, device)
}

/// Pools token states with `pooling`, honouring the padding mask of `batch`.
///
/// Every mode except max is a weighted sum over tokens, with weights computed on the host from
/// the real lengths: mean (1/len), CLS (first token), last token (position len-1), mean-sqrt-len.
pub fn pool(hidden: Tensor<3>, batch: &TokenBatch, pooling: Pooling, device: &Device) -> Tensor<2> {
    // Pooled in f32 whatever the transformer ran in (a no-op for f32 states).
    let hidden = hidden.cast(FloatDType::F32);
    let [b, s, d] = hidden.dims();
    if pooling == Pooling::Max {
        let mask = Tensor::<2>::from_data(TensorData::new(batch.mask.clone(), [b, s]), device);
        let bias = crate::bert::mask_bias(mask).reshape([b, s, 1]);
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

fn backend_error(device: &Device, problem: String) -> EngineError {
    EngineError::Backend {
        backend: format!("{device:?}"),
        problem,
    }
}
