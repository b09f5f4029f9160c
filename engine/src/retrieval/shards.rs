//! Sharded indexing: a corpus cut into `n` contiguous parts, each encoded by its own process
//! or machine (`trainer index --shard i/n`), then merged into one index (`trainer
//! index-merge`).
//!
//! A shard names its part and the corpus it was cut from (row count and a digest of every id
//! in order), so the merge can prove what it was given: one model, one width, one corpus,
//! every part exactly once. The merged file is an ordinary index, byte-identical to the one a
//! single `trainer index` writes with the same model.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{IndexHeader, IndexReader, IndexWriter};
use crate::error::{EngineError, Result};

/// Which part of a corpus an index holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This part, from 0.
    pub index: usize,
    /// How many parts the corpus was cut into.
    pub count: usize,
    /// Passages in the whole corpus.
    pub corpus_rows: usize,
    /// sha256 of every id of the whole corpus, in order (length-prefixed).
    pub corpus_ids: String,
}

impl Shard {
    /// Part `index` of `count` of the corpus whose ids are `ids`.
    pub fn new(index: usize, count: usize, ids: &[String]) -> Result<Self> {
        if count == 0 || index >= count {
            return Err(EngineError::Invalid(format!(
                "shard {index}/{count}: the part must be below the count (parts count from 0: 0/{count} .. {}/{count})",
                count.saturating_sub(1)
            )));
        }
        Ok(Shard {
            index,
            count,
            corpus_rows: ids.len(),
            corpus_ids: ids_digest(ids),
        })
    }

    /// The corpus rows this part holds: the `index`-th of `count` near-equal contiguous runs.
    pub fn rows(&self) -> std::ops::Range<usize> {
        let cut = |i: usize| i * self.corpus_rows / self.count;
        cut(self.index)..cut(self.index + 1)
    }
}

/// sha256 over the ids in order, each preceded by its byte length (so no two lists collide
/// by where they split).
fn ids_digest<S: AsRef<str>>(ids: &[S]) -> String {
    let mut hash = Sha256::new();
    for id in ids {
        let id = id.as_ref().as_bytes();
        hash.update((id.len() as u64).to_le_bytes());
        hash.update(id);
    }
    format!("{:x}", hash.finalize())
}

/// Merges shard index files into one index at `output`, after checking that they hold one
/// model's embeddings of one corpus and cover it exactly once. Returns the merged header.
pub fn merge_shards(shards: &[PathBuf], output: &Path) -> Result<IndexHeader> {
    let parts = read_parts(shards)?;
    let (first_path, first) = &parts[0];
    let ids: Vec<String> = parts
        .iter()
        .flat_map(|(_, h)| h.ids.iter().cloned())
        .collect();
    let shard = first.shard.as_ref().expect("read_parts keeps shards only");
    if ids_digest(&ids) != shard.corpus_ids {
        return Err(EngineError::data(
            first_path,
            0,
            "the shards' ids, in shard order, are not the corpus they name (a shard was cut from an edited corpus?)",
        ));
    }
    let header = IndexHeader::new(&first.model, first.dim, ids);
    let mut writer = IndexWriter::create(output, header.clone())?;
    for (path, _) in &parts {
        let mut reader = IndexReader::open(path)?;
        while let Some((_, block)) = reader.next_block(16_384)? {
            writer.append(&block)?;
        }
    }
    writer.finish()?;
    Ok(header)
}

/// Whether the shard at `path` (`header`, `shard`) belongs with the `first` one read: the same
/// model, width and cut of the same corpus, and as many rows as its part.
fn check_belongs(
    path: &std::path::Path,
    header: &IndexHeader,
    shard: &Shard,
    (first_path, first, first_shard): (&std::path::Path, &IndexHeader, &Shard),
) -> Result<()> {
    let bad = |problem: String| EngineError::data(path, 0, problem);
    if header.model != first.model {
        return Err(EngineError::ModelMismatch {
            path: path.to_path_buf(),
            index_model: header.model.clone(),
            current_model: format!("{} (the model of {})", first.model, first_path.display()),
        });
    }
    if header.dim != first.dim
        || shard.count != first_shard.count
        || shard.corpus_rows != first_shard.corpus_rows
        || shard.corpus_ids != first_shard.corpus_ids
    {
        return Err(bad(format!(
            "shard {}/{} of a corpus of {} passages (width {}) does not belong with {}: shard {}/{} of {} passages (width {}), another cut or another corpus",
            shard.index, shard.count, shard.corpus_rows, header.dim,
            first_path.display(), first_shard.index, first_shard.count, first_shard.corpus_rows, first.dim
        )));
    }
    if header.ids.len() != shard.rows().len() {
        return Err(bad(format!(
            "shard {}/{} holds {} rows, but its part of the corpus has {}",
            shard.index,
            shard.count,
            header.ids.len(),
            shard.rows().len()
        )));
    }
    Ok(())
}

/// The shards' headers in part order, each checked against the first and against its part.
fn read_parts(paths: &[PathBuf]) -> Result<Vec<(PathBuf, IndexHeader)>> {
    let Some(first_path) = paths.first() else {
        return Err(EngineError::Invalid("no shard to merge".into()));
    };
    let mut parts: Vec<Option<(PathBuf, IndexHeader)>> = Vec::new();
    let mut reference: Option<(IndexHeader, Shard)> = None;
    for path in paths {
        let header = IndexReader::open(path)?.header;
        let bad = |problem: String| EngineError::data(path, 0, problem);
        let Some(shard) = header.shard.clone() else {
            return Err(bad(
                "a whole-corpus index, not a shard (made without --shard)".into(),
            ));
        };
        let (first, first_shard) = reference.get_or_insert_with(|| (header.clone(), shard.clone()));
        check_belongs(path, &header, &shard, (first_path, first, first_shard))?;
        parts.resize_with(shard.count, || None);
        if let Some((other, _)) = &parts[shard.index] {
            return Err(bad(format!(
                "shard {}/{} is given twice (also {})",
                shard.index,
                shard.count,
                other.display()
            )));
        }
        parts[shard.index] = Some((path.clone(), header));
    }
    let missing: Vec<String> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_none())
        .map(|(i, _)| format!("{i}/{}", parts.len()))
        .collect();
    if !missing.is_empty() {
        return Err(EngineError::Invalid(format!(
            "the shards do not cover the corpus: shard {} missing",
            missing.join(", ")
        )));
    }
    Ok(parts.into_iter().flatten().collect())
}
