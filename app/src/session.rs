//! A search session: one encoder on one backend, one corpus and its embeddings. The same code
//! runs in the browser and natively (the e2e test compares the two); only how work yields to
//! the page differs, so it is passed in.

use std::future::Future;
use std::path::Path;
use std::rc::Rc;

use engine::data::Passage;
use engine::{Embeddings, Encoder};

use crate::state::Ranking;

/// Most passages encoded in one step (one batch) before the page gets the thread back.
pub const PASSAGES_PER_STEP: usize = 4;

/// The size of one step, in characters of its padded batch (passages x the longest of them):
/// with the encoder pausing after every layer, a layer of such a batch is about 60 ms of
/// single-threaded wasm, under the 100 ms a page may hold the thread without stuttering. A
/// longer passage goes alone.
pub const CHARS_PER_STEP: usize = 1600;

/// The corpus cut into steps, in corpus order: at most [`PASSAGES_PER_STEP`] passages, and
/// their count times the longest's length at most [`CHARS_PER_STEP`] (a batch pads every
/// passage to its longest).
pub fn steps(texts: &[String]) -> Vec<std::ops::Range<usize>> {
    let mut steps = Vec::new();
    let (mut start, mut longest) = (0, 0);
    for (i, text) in texts.iter().enumerate() {
        let chars = text.chars().count();
        let grown = longest.max(chars);
        if i > start && ((i - start + 1) * grown > CHARS_PER_STEP || i - start == PASSAGES_PER_STEP)
        {
            steps.push(start..i);
            (start, longest) = (i, chars);
        } else {
            longest = grown;
        }
    }
    if start < texts.len() {
        steps.push(start..texts.len());
    }
    steps
}

/// An encoder with a corpus.
pub struct Session {
    /// The encoder (shared: the page keeps it to encode another corpus).
    pub encoder: Rc<Encoder>,
    /// The passages.
    pub corpus: Vec<Passage>,
    /// Their L2-normalised embeddings, in corpus order.
    pub passages: Embeddings,
}

impl Session {
    /// Encodes `corpus` in [`steps`], awaiting `yield_now()` between steps
    /// and reporting `progress(done, total)`.
    pub async fn new<F, Fut>(
        encoder: Rc<Encoder>,
        corpus: Vec<Passage>,
        mut progress: impl FnMut(usize, usize),
        yield_now: F,
    ) -> engine::Result<Self>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        let texts: Vec<String> = corpus.iter().map(|p| p.encoder_text()).collect();
        let mut data = Vec::with_capacity(texts.len() * encoder.dim());
        for step in steps(&texts) {
            let refs: Vec<&str> = texts[step.clone()].iter().map(|s| s.as_str()).collect();
            let e = encoder.encode_async(&refs, &mut |_, _| {}).await?;
            data.extend(e.data);
            progress(step.end, texts.len());
            yield_now().await;
        }
        let mut passages = Embeddings {
            dim: encoder.dim(),
            data,
        };
        passages.normalize();
        Ok(Session {
            encoder,
            corpus,
            passages,
        })
    }

    /// A session from the bytes [`Session::embedding_bytes`] stored earlier (the browser
    /// cache), or None unless they hold exactly this corpus's embeddings by this encoder.
    pub fn from_cached(encoder: Rc<Encoder>, corpus: Vec<Passage>, bytes: &[u8]) -> Option<Self> {
        let reader =
            engine::retrieval::IndexReader::from_bytes(Path::new("browser cache"), bytes).ok()?;
        let passages = engine::evaluation::passages_from_index(reader, &encoder, &corpus)?;
        Some(Session {
            encoder,
            corpus,
            passages,
        })
    }

    /// The key under which this corpus's embeddings by this encoder are cached (the engine's
    /// passage cache key).
    pub fn cache_key(encoder: &Encoder, corpus: &[Passage]) -> String {
        engine::evaluation::passage_cache_key(encoder, corpus)
    }

    /// The passage embeddings in the engine's index format (for the cache).
    pub fn embedding_bytes(&self) -> engine::Result<Vec<u8>> {
        let ids: Vec<String> = self.corpus.iter().map(|p| p.id.clone()).collect();
        engine::retrieval::index_bytes(self.encoder.fingerprint(), &ids, &self.passages)
    }

    /// Ranks the whole corpus for each query under each instruction, `(instruction, query)`
    /// pairs joined the encoder's way, best first (cosine; ties by corpus order).
    pub async fn rank(&self, pairs: &[(&str, &str)]) -> engine::Result<Vec<Ranking>> {
        let q = self.encoder.encode_queries_async(pairs).await?;
        let everything = self.passages.len();
        Ok(engine::retrieval::search(&self.passages, &q, everything)
            .into_iter()
            .map(|hits| hits.into_iter().map(|h| (h.index, h.score)).collect())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_cover_the_corpus_in_order_within_both_limits() {
        let texts: Vec<String> = [
            300, 300, 300, 300, 300, 1500, 100, 2000, 350, 350, 350, 350, 350,
        ]
        .iter()
        .map(|&n| "x".repeat(n))
        .collect();
        let got = steps(&texts);
        assert_eq!(got, vec![0..4, 4..5, 5..6, 6..7, 7..8, 8..12, 12..13]);
        for r in &got {
            let longest = texts[r.clone()].iter().map(|t| t.len()).max().unwrap();
            assert!(r.len() <= PASSAGES_PER_STEP);
            assert!(r.len() == 1 || r.len() * longest <= CHARS_PER_STEP, "{r:?}");
        }
        assert!(steps(&[]).is_empty());
    }
}
