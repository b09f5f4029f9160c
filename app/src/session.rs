//! A search session: one encoder on one backend, one corpus and its embeddings. The same code
//! runs in the browser and natively (the e2e test compares the two); only how work yields to
//! the page differs, so it is passed in, and where the queries are encoded: an encoder on
//! this thread, or one held elsewhere (the page's encoding workers), behind [`QueryEncoder`].

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::Path;
use std::rc::Rc;

use engine::data::Passage;
use engine::{EmbeddingSpace, Embeddings, Encoder};

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

/// Query embeddings kept by a session: the page's three columns share the query, and a key
/// typed in one box changes one text, so only texts not seen lately are encoded.
const QUERY_CACHE: usize = 64;

/// Embeddings of (instruction, query) pairs, the oldest forgotten first.
#[derive(Default)]
struct QueryCache {
    rows: HashMap<(String, String), Vec<f32>>,
    order: VecDeque<(String, String)>,
}

impl QueryCache {
    fn insert(&mut self, key: (String, String), row: Vec<f32>) {
        if self.rows.insert(key.clone(), row).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > QUERY_CACHE {
            if let Some(old) = self.order.pop_front() {
                self.rows.remove(&old);
            }
        }
    }
}

/// What a session needs of an encoder: which embeddings it makes, and the queries' (the
/// page's encoding workers answer both without a model on the page's thread).
#[allow(async_fn_in_trait)] // single-threaded: the page's futures are never sent
pub trait QueryEncoder {
    /// The encoder's [`EmbeddingSpace`] (cache keys; a cached index must match it).
    fn space(&self) -> EmbeddingSpace;
    /// `(instruction, query)` pairs embedded as [`Encoder::encode_queries`] does.
    async fn encode_queries(&self, pairs: &[(&str, &str)]) -> engine::Result<Embeddings>;
}

impl QueryEncoder for Encoder {
    fn space(&self) -> EmbeddingSpace {
        Encoder::space(self)
    }

    async fn encode_queries(&self, pairs: &[(&str, &str)]) -> engine::Result<Embeddings> {
        self.encode_queries_async(pairs).await
    }
}

/// An encoder with a corpus.
pub struct Session<E = Encoder> {
    /// The encoder (shared: the page keeps it to encode another corpus).
    pub encoder: Rc<E>,
    /// The passages.
    pub corpus: Vec<Passage>,
    /// Their L2-normalised embeddings, in corpus order.
    pub passages: Embeddings,
    queries: RefCell<QueryCache>,
}

/// What a ranking cost: the texts encoded for it (the others were known).
pub type Encoded = usize;

impl<E> Session<E> {
    /// Encodes `corpus` with `page_encoder` (this thread's) in [`steps`], awaiting
    /// `yield_now()` between steps and reporting `progress(done, total)`; the session ranks
    /// with `encoder` (the same model, or the page encoder itself).
    pub async fn new<F, Fut>(
        encoder: Rc<E>,
        page_encoder: &Encoder,
        corpus: Vec<Passage>,
        mut progress: impl FnMut(usize, usize),
        yield_now: F,
    ) -> engine::Result<Self>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        let texts: Vec<String> = corpus.iter().map(|p| p.encoder_text()).collect();
        let mut data = Vec::with_capacity(texts.len() * page_encoder.dim());
        for step in steps(&texts) {
            let refs: Vec<&str> = texts[step.clone()].iter().map(|s| s.as_str()).collect();
            let e = page_encoder.encode_async(&refs, &mut |_, _| {}).await?;
            data.extend(e.data);
            progress(step.end, texts.len());
            yield_now().await;
        }
        let mut passages = Embeddings {
            dim: page_encoder.dim(),
            data,
        };
        passages.normalize();
        Ok(Session {
            encoder,
            corpus,
            passages,
            queries: RefCell::default(),
        })
    }

    /// A session from passage embeddings computed elsewhere (the encoding worker), in corpus
    /// order; normalised here.
    pub fn from_embeddings(encoder: Rc<E>, corpus: Vec<Passage>, mut passages: Embeddings) -> Self {
        passages.normalize();
        Session {
            encoder,
            corpus,
            passages,
            queries: RefCell::default(),
        }
    }
}

impl<E: QueryEncoder> Session<E> {
    /// A session from the bytes [`Session::embedding_bytes`] stored earlier (the browser
    /// cache), or None unless they hold exactly this corpus's embeddings by this encoder.
    pub fn from_cached(encoder: Rc<E>, corpus: Vec<Passage>, bytes: &[u8]) -> Option<Self> {
        let reader =
            engine::retrieval::IndexReader::from_bytes(Path::new("browser cache"), bytes).ok()?;
        let passages = engine::evaluation::passages_from_index(reader, &encoder.space(), &corpus)?;
        Some(Session {
            encoder,
            corpus,
            passages,
            queries: RefCell::default(),
        })
    }

    /// The key under which this corpus's embeddings by this encoder are cached (the engine's
    /// passage cache key).
    pub fn cache_key(encoder: &E, corpus: &[Passage]) -> String {
        engine::evaluation::passage_cache_key(&encoder.space(), corpus)
    }

    /// The passage embeddings in the engine's index format (for the cache).
    pub fn embedding_bytes(&self) -> engine::Result<Vec<u8>> {
        let ids: Vec<String> = self.corpus.iter().map(|p| p.id.clone()).collect();
        engine::retrieval::index_bytes(&self.encoder.space().fingerprint, &ids, &self.passages)
    }

    /// Ranks the whole corpus for each query under each instruction, `(instruction, query)`
    /// pairs joined the encoder's way, best first (cosine; ties by corpus order). Only pairs
    /// not ranked lately are encoded (each once, in one batch); how many is returned too.
    pub async fn rank(&self, pairs: &[(&str, &str)]) -> engine::Result<(Vec<Ranking>, Encoded)> {
        let key = |(i, q): &(&str, &str)| (i.to_string(), q.to_string());
        let mut missing: Vec<(&str, &str)> = Vec::new();
        {
            let known = self.queries.borrow();
            for pair in pairs {
                if !known.rows.contains_key(&key(pair)) && !missing.contains(pair) {
                    missing.push(*pair);
                }
            }
        }
        if !missing.is_empty() {
            let fresh = self.encoder.encode_queries(&missing).await?;
            let mut known = self.queries.borrow_mut();
            for (pair, row) in missing.iter().zip(fresh.rows()) {
                known.insert(key(pair), row.to_vec());
            }
        }
        let known = self.queries.borrow();
        let mut q = Embeddings::new(self.passages.dim);
        for pair in pairs {
            q.data.extend_from_slice(&known.rows[&key(pair)]);
        }
        Ok((self.search(&q), missing.len()))
    }

    /// Every passage ranked for each row of `q` (normalised query embeddings).
    fn search(&self, q: &Embeddings) -> Vec<Ranking> {
        let everything = self.passages.len();
        engine::retrieval::search(&self.passages, q, everything)
            .into_iter()
            .map(|hits| hits.into_iter().map(|h| (h.index, h.score)).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a future that needs no waking (the CPU backend answers at once).
    fn block_on<T>(work: impl Future<Output = T>) -> T {
        let mut work = std::pin::pin!(work);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(v) = work.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    /// The default model's folder (`IFIR_MODEL` overrides).
    fn model_dir() -> std::path::PathBuf {
        std::env::var("IFIR_MODEL")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2")
            })
    }

    /// The default model on the CPU, or None (the test skips, saying so) without it.
    fn test_encoder() -> Option<Encoder> {
        let dir = model_dir();
        if !dir.join("model.safetensors").is_file() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED: no model at {}", dir.display());
            return None;
        }
        Some(Encoder::load(&dir, &engine::Device::flex()).unwrap())
    }

    /// Three short passages.
    fn test_corpus() -> Vec<Passage> {
        [
            "Sourdough needs a lively starter.",
            "Electric cars and home chargers.",
            "A forum thread about flat loaves.",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| Passage {
            id: format!("p{i}"),
            title: String::new(),
            text: t.to_string(),
        })
        .collect()
    }

    #[test]
    fn only_texts_not_ranked_lately_are_encoded_and_rankings_do_not_change() {
        let Some(encoder) = test_encoder() else {
            return;
        };
        let encoder = Rc::new(encoder);
        let corpus = test_corpus();
        let session = block_on(Session::new(
            encoder.clone(),
            &encoder,
            corpus,
            |_, _| {},
            || async {},
        ))
        .unwrap();
        let q = "how to bake bread";
        let (first, encoded) =
            block_on(session.rank(&[("", q), ("Only forum posts.", q), ("", q)])).unwrap();
        assert_eq!(encoded, 2, "the same pair twice is encoded once");
        assert_eq!(first[0], first[2]);
        // One box changed: one text encoded; the unchanged columns rank exactly as before.
        let (second, encoded) =
            block_on(session.rank(&[("", q), ("No forum posts.", q), ("", q)])).unwrap();
        assert_eq!(encoded, 1);
        assert_eq!(second[0], first[0]);
        // A cached ranking equals a fresh encoder's.
        let fresh = encoder.encode_queries(&[("Only forum posts.", q)]).unwrap();
        let again = block_on(session.rank(&[("Only forum posts.", q)])).unwrap();
        assert_eq!(again, (vec![session.search(&fresh)[0].clone()], 0));
        assert_eq!(again.0[0], first[1]);
    }

    /// An encoder held elsewhere (as the page's encoding workers hold theirs): the session
    /// sees only [`QueryEncoder`].
    struct Elsewhere(Encoder, std::cell::Cell<usize>);

    impl QueryEncoder for Elsewhere {
        fn space(&self) -> EmbeddingSpace {
            self.0.space()
        }

        async fn encode_queries(&self, pairs: &[(&str, &str)]) -> engine::Result<Embeddings> {
            self.1.set(self.1.get() + pairs.len());
            self.0.encode_queries_async(pairs).await
        }
    }

    #[test]
    fn a_session_over_an_encoder_held_elsewhere_ranks_and_caches_as_the_page_encoder() {
        let Some(encoder) = test_encoder() else {
            return;
        };
        let corpus = test_corpus();
        let page = block_on(Session::new(
            Rc::new(Encoder::load(model_dir(), &engine::Device::flex()).unwrap()),
            &encoder,
            corpus.clone(),
            |_, _| {},
            || async {},
        ))
        .unwrap();
        let elsewhere = Rc::new(Elsewhere(encoder, Default::default()));
        let bytes = page.embedding_bytes().unwrap();
        let remote = Session::from_cached(elsewhere.clone(), corpus.clone(), &bytes)
            .expect("the page encoder's cached embeddings are in the same space");
        assert_eq!(
            Session::cache_key(&*elsewhere, &corpus),
            Session::<Encoder>::cache_key(&page.encoder, &corpus)
        );
        let pairs = [
            ("", "how to bake bread"),
            ("Only forum posts.", "how to bake bread"),
        ];
        assert_eq!(
            block_on(remote.rank(&pairs)).unwrap(),
            block_on(page.rank(&pairs)).unwrap()
        );
        assert_eq!(
            elsewhere.1.get(),
            2,
            "both texts encoded by the held encoder"
        );
        // Another text: another cache key; other ids: the cached embeddings are refused.
        let mut other = corpus.clone();
        other[0].text.push_str(" Changed.");
        assert_ne!(
            Session::cache_key(&*elsewhere, &other),
            Session::cache_key(&*elsewhere, &corpus)
        );
        other[0].id.push('x');
        assert!(Session::from_cached(elsewhere, other, &bytes).is_none());
    }

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
