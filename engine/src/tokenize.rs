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

/// How texts sorted by length, longest first, are cut into batches.
///
/// Each batch is padded to its longest text, so a batch that spans long and short texts does
/// work for every padded token of the short ones: a training micro-batch of about 30 passages
/// from 20 to 256 tokens, cut into runs of 32, spent about a third of its encoder time on
/// padding. Fewer, fuller batches save the fixed cost of each forward pass, which a GPU
/// needs (its throughput grows with the batch, and its kernels are tuned per shape), while a
/// CPU pays little per batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batching {
    /// Runs of the batch size (GPUs).
    Fixed,
    /// Runs of at most the batch size, cut where the estimated time of all the batches
    /// ([`batch_cost`]) is least (the CPU).
    Balanced,
}

impl Batching {
    /// [`Batching::Balanced`] on the CPU backend, [`Batching::Fixed`] on the GPU backends.
    pub fn for_device(device: &Device) -> Self {
        if crate::kernels::is_cpu(device) {
            Batching::Balanced
        } else {
            Batching::Fixed
        }
    }

    /// The batch boundaries over `lengths` (the padded lengths of texts sorted longest first):
    /// `[0, .., lengths.len()]`, each batch at most `batch_size` texts. `hidden` is the
    /// encoder's width (the attention's share of the cost grows with length over width).
    pub fn cuts(self, lengths: &[usize], batch_size: usize, hidden: usize) -> Vec<usize> {
        let n = lengths.len();
        let batch_size = batch_size.max(1);
        if self == Batching::Fixed {
            let mut cuts: Vec<usize> = (0..n).step_by(batch_size).collect();
            cuts.push(n);
            return cuts;
        }
        // Least total cost of the first `end` texts, and where its last batch starts.
        let mut best = vec![f64::INFINITY; n + 1];
        let mut start_of = vec![0; n + 1];
        best[0] = 0.0;
        for end in 1..=n {
            for start in end.saturating_sub(batch_size)..end {
                let cost = best[start] + batch_cost(end - start, lengths[start], hidden);
                if cost < best[end] {
                    best[end] = cost;
                    start_of[end] = start;
                }
            }
        }
        let mut cuts = vec![n];
        let mut at = n;
        while at > 0 {
            at = start_of[at];
            cuts.push(at);
        }
        cuts.reverse();
        cuts
    }
}

/// The fixed cost of a batch (a forward pass's per-operation allocations, dispatch and thread
/// hand-offs), in tokens of dense-layer work.
const BATCH_OVERHEAD_TOKENS: f64 = 128.0;

/// The estimated time of a batch of `rows` texts padded to `length` tokens, in tokens of
/// dense-layer work: a layer's dense products cost `12 h²` multiply-adds a token and its
/// attention `2 L h`, so a token costs `1 + L / 6h`, plus [`BATCH_OVERHEAD_TOKENS`].
fn batch_cost(rows: usize, length: usize, hidden: usize) -> f64 {
    let per_token = 1.0 + length as f64 / (6.0 * hidden.max(1) as f64);
    BATCH_OVERHEAD_TOKENS + (rows * length) as f64 * per_token
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

#[cfg(test)]
mod tests {
    use super::Batching;

    /// Long and short texts go to separate batches; texts of one length fill whole batches; no
    /// batch is over the batch size; the fixed cut is runs of the batch size.
    #[test]
    fn balanced_batches_separate_long_from_short_texts() {
        let lengths = [256, 250, 40, 38, 36, 35];
        assert_eq!(Batching::Balanced.cuts(&lengths, 32, 384), vec![0, 2, 6]);
        assert_eq!(Batching::Fixed.cuts(&lengths, 32, 384), vec![0, 6]);
        let even = [100; 70];
        assert_eq!(
            Batching::Balanced.cuts(&even, 32, 384).len(),
            4,
            "3 batches"
        );
        let sorted: Vec<usize> = (0..200).map(|i| 256 - i).collect();
        let cuts = Batching::Balanced.cuts(&sorted, 16, 384);
        assert!(cuts.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 16));
        assert_eq!((cuts[0], *cuts.last().unwrap()), (0, 200));
        assert_eq!(Batching::Fixed.cuts(&[5, 4, 3], 2, 384), vec![0, 2, 3]);
        assert_eq!(Batching::Balanced.cuts(&[], 8, 384), vec![0]);
    }
}
