//! An index file mapped into memory, for exact search at the speed of memory.
//!
//! Streaming an index through `read` copies every byte once more and decodes it row by row;
//! for a corpus that fits the page cache that copy, not the arithmetic, sets the pace. A
//! mapped index is scored where the kernel keeps it: the rows are the file's own bytes, seen
//! as `f32`s when the data starts on a 4-byte boundary (every index this version writes pads
//! its header to 64 bytes) and decoded once otherwise (indexes written before the padding).
//! The mapping is populated when opened, so the page faults are paid once, not per search.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::{Mmap, MmapOptions};

use super::{search_rows, Hit, IndexHeader, IndexReader};
use crate::encoder::Embeddings;
use crate::error::{EngineError, Result};

/// An index file mapped read-only, opened once and searched many times.
#[derive(Debug)]
pub struct MappedIndex {
    path: PathBuf,
    /// The header.
    pub header: IndexHeader,
    map: Mmap,
    /// Byte offset of the first row.
    data: usize,
}

impl MappedIndex {
    /// Maps the index at `path` and checks its header and size, as [`IndexReader::open`].
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| EngineError::io(path, e))?;
        // SAFETY: the map is read-only and private to this process; an index is written once
        // to a temporary name and renamed into place, never modified where it lies, so the
        // bytes cannot change under the map while it lives.
        let map = unsafe { MmapOptions::new().populate().map(&file) }
            .map_err(|e| EngineError::io(path, e))?;
        let reader = IndexReader::from_bytes(path, &map[..])?;
        let header = reader.header;
        let data = map.len() - header.ids.len() * header.dim * 4;
        Ok(MappedIndex {
            path: path.to_path_buf(),
            header,
            map,
            data,
        })
    }

    /// Fails with [`EngineError::ModelMismatch`] unless the index was made by `model`.
    pub fn check_model(&self, model: &str) -> Result<()> {
        self.header.check_model(&self.path, model)
    }

    /// Every row, row-major: the mapped bytes themselves when aligned on a little-endian
    /// machine, else a decoded copy.
    pub fn rows(&self) -> Cow<'_, [f32]> {
        self.block(0..self.header.ids.len())
    }

    /// Rows `rows` (a range of row numbers, within the index), as [`MappedIndex::rows`].
    pub fn block(&self, rows: std::ops::Range<usize>) -> Cow<'_, [f32]> {
        let width = self.header.dim * 4;
        let bytes = &self.map[self.data + rows.start * width..self.data + rows.end * width];
        // SAFETY: any four bytes are a valid f32; `align_to` only yields the aligned middle.
        let (head, rows, tail) = unsafe { bytes.align_to::<f32>() };
        if cfg!(target_endian = "little") && head.is_empty() && tail.is_empty() {
            return Cow::Borrowed(rows);
        }
        Cow::Owned(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    /// Exact top-k of `queries` (normalised) over the whole index.
    pub fn search(&self, queries: &Embeddings, k: usize) -> Result<Vec<Vec<Hit>>> {
        if queries.dim != self.header.dim {
            return Err(EngineError::Invalid(format!(
                "{}: query width {} does not match the index width {}",
                self.path.display(),
                queries.dim,
                self.header.dim
            )));
        }
        Ok(search_rows(&self.rows(), queries, k))
    }
}
