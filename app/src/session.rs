//! A search session: one encoder on one backend, one corpus and its embeddings. The same code
//! runs in the browser and natively (the e2e test compares the two); only how work yields to
//! the page differs, so it is passed in.

use std::future::Future;
use std::rc::Rc;

use engine::data::Passage;
use engine::{Embeddings, Encoder, QueryTemplate};

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
    /// How instruction and query are joined.
    pub template: QueryTemplate,
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
            template: QueryTemplate::default(),
        })
    }

    /// A session from embeddings computed earlier (e.g. cached by the browser); they must have
    /// one row per passage of the encoder's width.
    pub fn from_embeddings(
        encoder: Rc<Encoder>,
        corpus: Vec<Passage>,
        passages: Embeddings,
    ) -> Option<Self> {
        (passages.dim == encoder.dim() && passages.data.len() == corpus.len() * encoder.dim()).then(
            || Session {
                encoder,
                corpus,
                passages,
                template: QueryTemplate::default(),
            },
        )
    }

    /// The key under which this corpus's embeddings by this encoder are cached: a hash of the
    /// model fingerprint and every passage id and text.
    pub fn cache_key(encoder: &Encoder, corpus: &[Passage]) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(encoder.fingerprint().as_bytes());
        for p in corpus {
            h.update((p.id.len() as u64).to_le_bytes());
            h.update(p.id.as_bytes());
            let text = p.encoder_text();
            h.update((text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
        h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The passage embeddings as little-endian f32 bytes (for the cache).
    pub fn embedding_bytes(&self) -> Vec<u8> {
        self.passages
            .data
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect()
    }

    /// Embeddings back from [`Session::embedding_bytes`].
    pub fn embeddings_from_bytes(bytes: &[u8], dim: usize) -> Embeddings {
        Embeddings {
            dim,
            data: bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        }
    }

    /// The encoder input of a query under an instruction: the engine's one query-text rule
    /// (the query alone when the instruction is blank; a long instruction is cut before the
    /// query loses a token).
    pub fn query_text(&self, instruction: &str, query: &str) -> engine::Result<String> {
        self.template
            .fit(self.encoder.tokenizer(), instruction, query)
    }

    /// Ranks the whole corpus for each text, best first (cosine; ties by corpus order).
    pub async fn rank(&self, texts: &[String]) -> engine::Result<Vec<Ranking>> {
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let mut q = self.encoder.encode_async(&refs, &mut |_, _| {}).await?;
        q.normalize();
        Ok((0..texts.len())
            .map(|i| {
                let scores = engine::retrieval::score_all(&self.passages, q.row(i));
                let mut ranking: Ranking = scores.into_iter().enumerate().collect();
                ranking.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                ranking
            })
            .collect())
    }
}
