//! Tokenisation with the model's `tokenizer.json`, with its stored padding and truncation
//! replaced by the engine's own: truncate at the model's `max_seq_length` (special tokens
//! included, as sentence-transformers does) and pad each batch only to its longest member.

use std::path::Path;

use burn::tensor::{Device, Int, Tensor, TensorData};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{EngineError, Result};

/// A tokenizer that yields truncated token ids, never padded.
#[derive(Clone)]
pub struct TextTokenizer {
    inner: Tokenizer,
    /// The same tokenizer without truncation, for counting and cutting texts.
    untruncated: Tokenizer,
    max_len: usize,
}

/// A padded batch ready for the transformer.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBatch {
    /// Token ids, `[batch * seq]`, row-major, padded with the pad id.
    pub ids: Vec<i64>,
    /// 1.0 for real tokens, 0.0 for padding, `[batch * seq]`.
    pub mask: Vec<f32>,
    /// Real length of each row.
    pub lens: Vec<usize>,
    /// Padded length.
    pub seq: usize,
}

impl TextTokenizer {
    /// Loads `tokenizer.json` bytes; `path` is used in error messages.
    pub fn from_bytes(bytes: &[u8], path: &Path, max_len: usize) -> Result<Self> {
        // Browsers have no threads for rayon: tokenise on the calling thread.
        #[cfg(target_family = "wasm")]
        tokenizers::utils::parallelism::set_parallelism(false);
        let mut inner = Tokenizer::from_bytes(bytes)
            .map_err(|e| EngineError::model(path, format!("cannot load tokenizer: {e}")))?;
        inner.with_padding(None);
        // tokenizer.json files store their own truncation (MiniLM's: 128 tokens); this copy
        // has none, so counts are true counts.
        let mut untruncated = inner.clone();
        untruncated
            .with_truncation(None)
            .map_err(|e| EngineError::model(path, format!("cannot set truncation: {e}")))?;
        inner
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_len,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|e| EngineError::model(path, format!("cannot set truncation: {e}")))?;
        Ok(TextTokenizer {
            inner,
            untruncated,
            max_len,
        })
    }

    /// Maximum number of tokens per text, special tokens included.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Token ids of each text (with special tokens, truncated).
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let encodings = self
            .inner
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EngineError::Tokenizer(e.to_string()))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// Number of tokens of `text` without truncation, special tokens included when
    /// `with_special` is set.
    pub fn count(&self, text: &str, with_special: bool) -> Result<usize> {
        Ok(self
            .untruncated
            .encode(text, with_special)
            .map_err(|e| EngineError::Tokenizer(e.to_string()))?
            .len())
    }

    /// The longest prefix of `text` with at most `budget` tokens (no special tokens) that ends
    /// where a word ends, right-trimmed: words are never cut in two.
    pub fn prefix_within<'a>(&self, text: &'a str, budget: usize) -> Result<&'a str> {
        let enc = self
            .untruncated
            .encode(text, false)
            .map_err(|e| EngineError::Tokenizer(e.to_string()))?;
        if enc.len() <= budget {
            return Ok(text);
        }
        let words = enc.get_word_ids();
        let mut k = budget;
        while k > 0 && words[k].is_some() && words[k - 1] == words[k] {
            k -= 1;
        }
        Ok(text[..enc.get_offsets()[k].0].trim_end())
    }

    /// The tokens (as strings) of one text, for display and debugging.
    pub fn tokens(&self, text: &str) -> Result<Vec<String>> {
        let enc = self
            .inner
            .encode(text, true)
            .map_err(|e| EngineError::Tokenizer(e.to_string()))?;
        Ok(enc.get_tokens().to_vec())
    }
}

/// How far a batch is padded.
///
/// A CPU does work for every padded token, so it pads to the batch's longest text. A GPU build
/// that tunes and fuses its kernels once per shape would, with every batch at a new length, do
/// that again for each batch, so it pads up to one of a few lengths ([`Padding::Buckets`]). Padding never changes an embedding: padded positions are masked out
/// of attention and pooling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Padding {
    /// To the batch's longest text.
    #[default]
    Longest,
    /// Up to the next multiple of 16 tokens to 128, of 32 to 256, then of 64: 16 lengths up to
    /// 512, at most 15, 31 and 63 padded tokens more than [`Padding::Longest`].
    Buckets,
}

text_names!(Padding, "padding", { Longest => "longest", Buckets => "buckets" });

impl Padding {
    /// [`Padding::Buckets`] on a GPU in a build that tunes or fuses kernels per shape (the
    /// `gpu-autotune` and `gpu-fusion` features), [`Padding::Longest`] everywhere else.
    /// Measured on an H100 (BENCHMARKS.md, "GPU"): with autotuning, buckets keep the steady
    /// rate (1.01x) and cut the first pass's tuning from 108 s to 46 s; without it they only
    /// add padded tokens (0.93x).
    pub fn for_device(device: &Device) -> Self {
        let per_shape = cfg!(any(feature = "gpu-autotune", feature = "gpu-fusion"));
        if per_shape && !crate::kernels::is_cpu(device) {
            Padding::Buckets
        } else {
            Padding::Longest
        }
    }

    /// The padded length of a batch whose longest row has `longest` tokens, never over
    /// `limit` (the model's position table) unless `longest` itself is.
    pub fn length(self, longest: usize, limit: usize) -> usize {
        let longest = longest.max(1);
        let padded = match self {
            Padding::Longest => longest,
            Padding::Buckets => {
                let step = match longest {
                    0..=128 => 16,
                    129..=256 => 32,
                    _ => 64,
                };
                longest.div_ceil(step) * step
            }
        };
        padded.min(limit.max(longest))
    }
}

impl TokenBatch {
    /// Pads `rows` to their longest member with `pad_id`.
    pub fn pad(rows: &[&[u32]], pad_id: u32) -> Self {
        let longest = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        Self::pad_to(rows, pad_id, longest)
    }

    /// Pads `rows` to `seq` tokens (at least their longest member's length) with `pad_id`.
    pub fn pad_to(rows: &[&[u32]], pad_id: u32, seq: usize) -> Self {
        let longest = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let seq = seq.max(longest).max(1);
        let mut ids = vec![pad_id as i64; rows.len() * seq];
        let mut mask = vec![0.0; rows.len() * seq];
        for (i, row) in rows.iter().enumerate() {
            for (j, &t) in row.iter().enumerate() {
                ids[i * seq + j] = t as i64;
                mask[i * seq + j] = 1.0;
            }
        }
        TokenBatch {
            ids,
            mask,
            lens: rows.iter().map(|r| r.len()).collect(),
            seq,
        }
    }

    /// Number of rows.
    pub fn batch(&self) -> usize {
        self.lens.len()
    }

    /// The token ids `[batch, seq]` and the 0/1 mask `[batch, seq]` on `device`.
    pub fn tensors(&self, device: &Device) -> (Tensor<2, Int>, Tensor<2>) {
        let shape = [self.batch(), self.seq];
        let ids = Tensor::<2, Int>::from_data(TensorData::new(self.ids.clone(), shape), device);
        let mask = Tensor::<2>::from_data(TensorData::new(self.mask.clone(), shape), device);
        (ids, mask)
    }
}
