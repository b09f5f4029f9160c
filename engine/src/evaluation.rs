//! From an evaluation set (formats.md §1) and an encoder to runs per mode: which text each mode
//! gives the encoder, and how passages are ranked (over each query's candidates when the set
//! has `candidates.tsv`, else over the whole corpus). Split into pure pieces so that the
//! native trainer (blocking encoder) and the browser (async encoder) share them.

use std::collections::{BTreeMap, HashMap};

use crate::data::{EvalSet, Mode};
use crate::encoder::{Embeddings, Encoder};
use crate::error::{EngineError, Result};
use crate::instruction::QueryTemplate;
use crate::metrics::Run;
use crate::retrieval;

/// Documents kept per query in full-corpus retrieval (MAP@1000 needs 1000).
pub const DEFAULT_RUN_DEPTH: usize = 1000;

/// The encoder input of every query in `mode`: the template applied to the mode's instruction
/// and the query, or the query alone when `no_instruction` is set (the baseline) or the
/// instruction is empty.
pub fn query_texts(
    set: &EvalSet,
    mode: Mode,
    template: &QueryTemplate,
    no_instruction: bool,
) -> Result<Vec<String>> {
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
            Ok(if no_instruction || instruction.trim().is_empty() {
                q.text.clone()
            } else {
                template.apply(instruction, &q.text)
            })
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
            let position: HashMap<&str, usize> = set
                .corpus
                .iter()
                .enumerate()
                .map(|(i, p)| (p.id.as_str(), i))
                .collect();
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

/// Encodes and ranks every mode the set supports: one run per mode.
pub fn runs(
    encoder: &Encoder,
    set: &EvalSet,
    passages: &Embeddings,
    template: &QueryTemplate,
    no_instruction: bool,
    depth: usize,
) -> Result<BTreeMap<Mode, Run>> {
    let mut out = BTreeMap::new();
    for mode in set.modes() {
        let texts = query_texts(set, mode, template, no_instruction)?;
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let mut q = encoder.encode(&refs)?;
        q.normalize();
        out.insert(mode, rank(set, passages, &q, depth)?);
    }
    Ok(out)
}
