//! From an evaluation set (formats.md §1) and an encoder to runs per mode: which text each mode
//! gives the encoder, and how passages are ranked (over each query's candidates when the set
//! has `candidates.tsv`, else over the whole corpus). Split into pure pieces so that the
//! native trainer (blocking encoder) and the browser (async encoder) share them.

use std::collections::BTreeMap;

use crate::data::{EvalSet, Mode, Passage};
use crate::encoder::{EmbeddingSpace, Embeddings, Encoder};
use crate::error::{EngineError, Result};
use crate::metrics::Run;
use crate::retrieval;

/// Documents kept per query in full-corpus retrieval (MAP@1000 needs 1000).
pub const DEFAULT_RUN_DEPTH: usize = 1000;

/// The `(instruction, query)` pair of every query in `mode`: the mode's instruction, or none
/// when `no_instruction` is set (the baseline). [`Encoder::encode_queries`] joins them.
pub fn query_pairs(set: &EvalSet, mode: Mode, no_instruction: bool) -> Result<Vec<(&str, &str)>> {
    set.queries
        .iter()
        .map(|q| {
            let instruction = mode.instruction(q).ok_or_else(|| {
                EngineError::Invalid(format!(
                    "query '{}' has no instruction for mode {}",
                    q.id,
                    mode.name()
                ))
            })?;
            Ok((
                if no_instruction { "" } else { instruction },
                q.text.as_str(),
            ))
        })
        .collect()
}

/// Ranks the corpus for each query: `queries` and `passages` are L2-normalised embeddings in
/// the order of `set.queries` and `set.corpus`. With candidates, every candidate of a query is
/// scored (unknown ids are an error); without, the best `depth` passages are kept.
pub fn rank(
    set: &EvalSet,
    passages: &Embeddings,
    queries: &Embeddings,
    depth: usize,
) -> Result<Run> {
    let mut run = Run::new();
    match &set.candidates {
        Some(candidates) => {
            let position = set.passage_rows();
            for (qi, q) in set.queries.iter().enumerate() {
                let Some(list) = candidates.get(&q.id) else {
                    run.add_empty_query(&q.id);
                    continue;
                };
                let mut docs = Vec::with_capacity(list.len());
                for doc in list {
                    let &pi = position.get(doc.as_str()).ok_or_else(|| {
                        EngineError::data(
                            set.root.join("candidates.tsv"),
                            0,
                            format!("candidate '{doc}' of query '{}' is not in the corpus", q.id),
                        )
                    })?;
                    docs.push((
                        doc.clone(),
                        retrieval::dot(queries.row(qi), passages.row(pi)) as f64,
                    ));
                }
                run.set_query(&q.id, docs);
            }
        }
        None => {
            let hits = retrieval::search(passages, queries, depth.min(passages.len()));
            for (q, hits) in set.queries.iter().zip(hits) {
                let docs = hits
                    .into_iter()
                    .map(|h| (set.corpus[h.index].id.clone(), h.score as f64))
                    .collect();
                run.set_query(&q.id, docs);
            }
        }
    }
    Ok(run)
}

/// Encodes the passages of a set (title + text), L2-normalised.
pub fn encode_passages(
    encoder: &Encoder,
    set: &EvalSet,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Embeddings> {
    let texts: Vec<String> = set.corpus.iter().map(|p| p.encoder_text()).collect();
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    let mut e = encoder.encode_with_progress(&refs, progress)?;
    e.normalize();
    Ok(e)
}

/// Whether [`encode_passages_cached`] found the embeddings in its cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Read from the cache file.
    Hit,
    /// Encoded, and written to the cache file.
    Miss,
    /// Encoded again because the cache file was unreadable (it was replaced).
    Replaced,
}

/// The key of `corpus`'s embeddings by `encoder`: a hash of the model fingerprint, the
/// maximum sequence length and every passage id and text, so that any change to the model or
/// the corpus gives another key. Native caches and the page's browser cache both use it.
pub fn passage_cache_key(space: &EmbeddingSpace, corpus: &[Passage]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(space.fingerprint.as_bytes());
    field(&(space.max_seq_length as u64).to_le_bytes());
    for p in corpus {
        field(p.id.as_bytes());
        field(p.encoder_text().as_bytes());
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The cache file for `set`'s passages under `encoder`: `passages-<key>.index` in `dir`
/// ([`passage_cache_key`]).
pub fn passage_cache_path(
    encoder: &Encoder,
    set: &EvalSet,
    dir: &std::path::Path,
) -> std::path::PathBuf {
    dir.join(format!(
        "passages-{}.index",
        passage_cache_key(&encoder.space(), &set.corpus)
    ))
}

/// The embeddings of `corpus` in `space` read from an index, or None unless the index holds
/// exactly them (same model, width and ids in order): a cache is never trusted blindly.
pub fn passages_from_index<R: std::io::Read>(
    reader: retrieval::IndexReader<R>,
    space: &EmbeddingSpace,
    corpus: &[Passage],
) -> Option<Embeddings> {
    reader.check_model(&space.fingerprint).ok()?;
    let (header, e) = reader.read_all().ok()?;
    (header.dim == space.dim
        && header.ids.len() == corpus.len()
        && header.ids.iter().zip(corpus).all(|(a, p)| *a == p.id))
    .then_some(e)
}

/// [`encode_passages`] with an on-disk cache in `dir` (the index format of
/// [`retrieval::write_index`]): a set is encoded once per model, and evaluating it again (another
/// template, with and without instructions) only encodes the queries. An unreadable cache file
/// is encoded again and replaced, never trusted.
pub fn encode_passages_cached(
    encoder: &Encoder,
    set: &EvalSet,
    dir: &std::path::Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Embeddings, CacheOutcome)> {
    let path = passage_cache_path(encoder, set, dir);
    let mut outcome = CacheOutcome::Miss;
    if path.exists() {
        let cached = retrieval::IndexReader::open(&path)
            .ok()
            .and_then(|r| passages_from_index(r, &encoder.space(), &set.corpus));
        match cached {
            Some(e) => return Ok((e, CacheOutcome::Hit)),
            None => outcome = CacheOutcome::Replaced,
        }
    }
    let e = encode_passages(encoder, set, progress)?;
    std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e))?;
    let ids: Vec<String> = set.corpus.iter().map(|p| p.id.clone()).collect();
    retrieval::write_index(&path, encoder.fingerprint(), &ids, &e)?;
    Ok((e, outcome))
}

/// Encodes and ranks every mode the set supports: one run per mode. Queries meet their
/// instructions the way the encoder's [`crate::instruction::Interaction`] says.
pub fn runs(
    encoder: &Encoder,
    set: &EvalSet,
    passages: &Embeddings,
    no_instruction: bool,
    depth: usize,
) -> Result<BTreeMap<Mode, Run>> {
    let mut out = BTreeMap::new();
    for mode in set.modes() {
        let pairs = query_pairs(set, mode, no_instruction)?;
        let q = encoder.encode_queries(&pairs)?;
        out.insert(mode, rank(set, passages, &q, depth)?);
    }
    Ok(out)
}
