//! A search session: one encoder on one backend, one corpus and its embeddings. The same code
//! runs in the browser and natively (the e2e test compares the two); only how work yields to
//! the page differs, so it is passed in.

use std::future::Future;
use std::path::Path;
use std::rc::Rc;

use engine::data::Passage;
use engine::{Embeddings, Encoder};

use crate::state::Ranking;

/// Passages encoded per step before the page gets the thread back: small enough that the UI
/// stays responsive on the CPU backend (one step is a few hundred ms on a laptop).
pub const PASSAGES_PER_STEP: usize = 4;

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
    /// Encodes `corpus` in steps of [`PASSAGES_PER_STEP`], awaiting `yield_now()` between steps
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
        for (i, chunk) in texts.chunks(PASSAGES_PER_STEP).enumerate() {
            let refs: Vec<&str> = chunk.iter().map(|s| s.as_str()).collect();
            let e = encoder.encode_async(&refs, &mut |_, _| {}).await?;
            data.extend(e.data);
            progress(
                (i * PASSAGES_PER_STEP + chunk.len()).min(texts.len()),
                texts.len(),
            );
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
