//! Exact top-k retrieval by cosine similarity, and the persistent embedding index.
//!
//! Scoring runs on the host over blocks of corpus rows, so a corpus never has to be in memory
//! at once: [`TopK`] keeps a bounded heap per query while blocks stream past, and
//! [`IndexReader`] streams blocks out of an index file. A block is scored for all queries at
//! once by one matrix product, and natively the blocks are shared among threads whose heaps
//! merge at the end. Natively an index file is searched where it lies, mapped into memory
//! ([`MappedIndex`]). The same code runs in wasm32, and no sort or top-k ever runs on a GPU
//! device (WebGPU cannot).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[cfg(not(target_arch = "wasm32"))]
mod mapped;
#[cfg(not(target_arch = "wasm32"))]
pub use mapped::MappedIndex;
mod shards;
pub use shards::{merge_shards, Shard};
#[cfg(not(target_arch = "wasm32"))]
pub mod store;

use crate::atomic::AtomicFile;
use crate::encoder::Embeddings;
use crate::error::{EngineError, Result};

/// One retrieved document: its row in the corpus and its cosine score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Row of the document in the corpus (or index).
    pub index: usize,
    /// Cosine similarity with the query.
    pub score: f32,
}

/// Heap entry ordered so that the *worst* hit is on top: lower score is worse; on equal
/// scores the later row is worse (ties keep corpus order).
#[derive(Debug, Clone, Copy)]
struct Worst(Hit);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .score
            .total_cmp(&self.0.score)
            .then(self.0.index.cmp(&other.0.index))
    }
}

/// Streaming exact top-k for a batch of queries.
///
/// Queries and corpus rows should be L2-normalised, so the dot product is the cosine.
/// Results are sorted by score descending, ties by corpus row ascending.
#[derive(Debug)]
pub struct TopK {
    queries: Embeddings,
    k: usize,
    heaps: Vec<BinaryHeap<Worst>>,
    /// Scratch: the scores of the block being pushed, `[queries x rows]`.
    scores: Vec<f32>,
}

impl TopK {
    /// Prepares a search of `queries` keeping `k` hits each.
    pub fn new(queries: Embeddings, k: usize) -> Self {
        let n = queries.len();
        TopK {
            queries,
            k,
            heaps: (0..n).map(|_| BinaryHeap::with_capacity(k + 1)).collect(),
            scores: Vec::new(),
        }
    }

    /// Scores a block of corpus rows (row-major, the queries' width) whose first row is
    /// corpus row `offset`. Rows must come in ascending order within one `TopK` (blocks may
    /// be scored by several `TopK`s and [merged](TopK::merge)).
    pub fn push_block(&mut self, offset: usize, block: &[f32]) {
        let dim = self.queries.dim;
        if self.k == 0 || dim == 0 {
            return;
        }
        let rows = block.len() / dim;
        score_block(&self.queries, &block[..rows * dim], &mut self.scores);
        for (heap, scores) in self.heaps.iter_mut().zip(self.scores.chunks_exact(rows)) {
            // A row scoring below the heap's worst cannot enter; most rows stop here.
            let mut bar = floor(heap, self.k);
            for (r, &score) in scores.iter().enumerate() {
                if score < bar {
                    continue;
                }
                offer(
                    heap,
                    self.k,
                    Hit {
                        index: offset + r,
                        score,
                    },
                );
                bar = floor(heap, self.k);
            }
        }
    }

    /// Adds the hits another search kept (over other rows of the same corpus).
    pub fn merge(mut self, other: TopK) -> TopK {
        for (heap, theirs) in self.heaps.iter_mut().zip(other.heaps) {
            for hit in theirs {
                offer(heap, self.k, hit.0);
            }
        }
        self
    }

    /// The hits of every query, best first.
    pub fn finish(self) -> Vec<Vec<Hit>> {
        self.heaps
            .into_iter()
            .map(|h| h.into_sorted_vec().into_iter().map(|w| w.0).collect())
            .collect()
    }
}

/// Dot product with four independent accumulators (vectorises well).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let chunks = a.len() / 8;
    for c in 0..chunks {
        let (x, y) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..a.len() {
        sum += a[i] * b[i];
    }
    sum
}

/// Corpus rows scored per block: the block's scores for 16 queries stay in the L2 cache.
const BLOCK_ROWS: usize = 4096;

/// Keeps `hit` in `heap` if it is among the `k` best so far.
fn offer(heap: &mut BinaryHeap<Worst>, k: usize, hit: Hit) {
    let hit = Worst(hit);
    if heap.len() < k {
        heap.push(hit);
    } else if heap.peek().is_some_and(|top| hit < *top) {
        heap.pop();
        heap.push(hit);
    }
}

/// The score a row must reach to be offered: the worst kept one once the heap is full.
fn floor(heap: &BinaryHeap<Worst>, k: usize) -> f32 {
    match heap.peek() {
        Some(top) if heap.len() >= k => top.0.score,
        _ => f32::NEG_INFINITY,
    }
}

/// `scores[q * rows + r] = queries[q] . block[r]`: one matrix product (natively with the
/// `gemm` crate's SIMD kernels chosen at run time; dot products in wasm32).
pub fn score_block(queries: &Embeddings, block: &[f32], scores: &mut Vec<f32>) {
    let dim = queries.dim;
    let rows = block.len() / dim.max(1);
    let n = queries.len();
    scores.clear();
    scores.resize(n * rows, 0.0);
    if n == 0 || rows == 0 || dim == 0 {
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    // SAFETY: `scores` is `n x rows` row-major, `queries.data` is `n x dim` row-major and
    // `block` holds `rows x dim` row-major values (read as its `dim x rows` transpose); the
    // strides below stay inside those three buffers, which do not overlap.
    unsafe {
        gemm::gemm(
            n,
            rows,
            dim,
            scores.as_mut_ptr(),
            1,
            rows as isize,
            false,
            queries.data.as_ptr(),
            1,
            dim as isize,
            block.as_ptr(),
            dim as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
    #[cfg(target_arch = "wasm32")]
    for (q, out) in scores.chunks_exact_mut(rows).enumerate() {
        let query = queries.row(q);
        for (o, row) in out.iter_mut().zip(block.chunks_exact(dim)) {
            *o = dot(query, row);
        }
    }
}

/// Exact top-k of each query over corpus rows held in memory (row-major, the queries'
/// width, both normalised). Natively the blocks are shared among rayon's threads.
pub fn search_rows(rows: &[f32], queries: &Embeddings, k: usize) -> Vec<Vec<Hit>> {
    let width = BLOCK_ROWS * queries.dim.max(1);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        rows.par_chunks(width)
            .enumerate()
            .fold(
                || TopK::new(queries.clone(), k),
                |mut top, (b, block)| {
                    top.push_block(b * BLOCK_ROWS, block);
                    top
                },
            )
            .reduce(|| TopK::new(queries.clone(), k), TopK::merge)
            .finish()
    }
    #[cfg(target_arch = "wasm32")]
    {
        let mut top = TopK::new(queries.clone(), k);
        for (b, block) in rows.chunks(width).enumerate() {
            top.push_block(b * BLOCK_ROWS, block);
        }
        top.finish()
    }
}

/// Exact top-k of each query over an in-memory corpus (both normalised).
pub fn search(corpus: &Embeddings, queries: &Embeddings, k: usize) -> Vec<Vec<Hit>> {
    search_rows(&corpus.data, queries, k)
}

/// Scores every corpus row against one query (both normalised), in corpus order.
pub fn score_all(corpus: &Embeddings, query: &[f32]) -> Vec<f32> {
    corpus.rows().map(|row| dot(query, row)).collect()
}

const MAGIC: &[u8; 8] = b"IFIRIDX1";
/// Where an index's rows start: a multiple of this many bytes (a cache line).
const DATA_ALIGN: usize = 64;

/// Header of an index file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexHeader {
    /// Fingerprint of the model that made the embeddings.
    pub model: String,
    /// Width of each embedding.
    pub dim: usize,
    /// Document ids, in row order.
    pub ids: Vec<String>,
    /// The part of a corpus this index holds, when it is one shard of several
    /// (`trainer index --shard`); absent for a whole corpus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl IndexHeader {
    /// Fails with [`EngineError::ModelMismatch`] (naming `path`, the index file) unless the
    /// index was made by `model`.
    pub fn check_model(&self, path: &Path, model: &str) -> Result<()> {
        if self.model != model {
            return Err(EngineError::ModelMismatch {
                path: path.to_path_buf(),
                index_model: self.model.clone(),
                current_model: model.to_string(),
            });
        }
        Ok(())
    }

    /// The header of a whole-corpus index.
    pub fn new(model: &str, dim: usize, ids: Vec<String>) -> Self {
        IndexHeader {
            model: model.to_string(),
            dim,
            ids,
            shard: None,
        }
    }
}

/// Writes an index file: magic, header length (u64 LE), JSON header (padded with spaces so the
/// rows start on a 64-byte boundary), then `count x dim` f32 LE values (L2-normalised). The
/// file appears atomically ([`crate::atomic`]).
pub fn write_index(
    path: &Path,
    model: &str,
    ids: &[String],
    embeddings: &Embeddings,
) -> Result<()> {
    let header = IndexHeader::new(model, embeddings.dim, ids.to_vec());
    let mut writer = IndexWriter::create(path, header)?;
    writer.append(&embeddings.data)?;
    writer.finish()
}

/// The bytes of an index file, in memory (the page's embedding cache keeps these).
pub fn index_bytes(model: &str, ids: &[String], embeddings: &Embeddings) -> Result<Vec<u8>> {
    let mut writer = IndexWriter::to_memory(IndexHeader::new(model, embeddings.dim, ids.to_vec()))?;
    writer.append(&embeddings.data)?;
    writer.into_bytes()
}

/// Where an [`IndexWriter`]'s bytes go.
#[derive(Debug)]
enum Sink {
    File(AtomicFile),
    Memory(Vec<u8>),
}

/// Streams rows into a new index file, so a large corpus is never held in memory at once.
/// Nothing appears at `path` until [`IndexWriter::finish`] succeeds.
#[derive(Debug)]
pub struct IndexWriter {
    sink: Sink,
    dim: usize,
    expected_rows: usize,
    rows: usize,
}

impl IndexWriter {
    /// Starts an index file of the rows `header` describes (one per id).
    pub fn create(path: &Path, header: IndexHeader) -> Result<Self> {
        Self::start(Sink::File(AtomicFile::create(path)?), header)
    }

    /// Starts an index held in memory ([`IndexWriter::into_bytes`]).
    pub fn to_memory(header: IndexHeader) -> Result<Self> {
        Self::start(Sink::Memory(Vec::new()), header)
    }

    fn start(sink: Sink, header: IndexHeader) -> Result<Self> {
        let expected_rows = header.ids.len();
        let dim = header.dim;
        let mut header =
            serde_json::to_vec(&header).map_err(|e| EngineError::Invalid(e.to_string()))?;
        // Spaces after the JSON (which a JSON reader skips) start the rows on a 64-byte
        // boundary, so a mapped index is read in place ([`MappedIndex`]).
        let end = MAGIC.len() + 8 + header.len();
        header.resize(
            header.len() + (DATA_ALIGN - end % DATA_ALIGN) % DATA_ALIGN,
            b' ',
        );
        let mut writer = IndexWriter {
            sink,
            dim,
            expected_rows,
            rows: 0,
        };
        writer.write(MAGIC)?;
        writer.write(&(header.len() as u64).to_le_bytes())?;
        writer.write(&header)?;
        Ok(writer)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.sink {
            Sink::File(file) => file.write_bytes(bytes),
            Sink::Memory(buf) => {
                buf.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Appends rows (row-major, `dim` wide); each is L2-normalised on the way.
    pub fn append(&mut self, rows: &[f32]) -> Result<()> {
        let dim = self.dim.max(1);
        if !rows.len().is_multiple_of(dim) || self.rows + rows.len() / dim > self.expected_rows {
            return Err(EngineError::Invalid(format!(
                "index rows do not fit: {} values for width {} with {} of {} rows written",
                rows.len(),
                self.dim,
                self.rows,
                self.expected_rows
            )));
        }
        let mut buf = Vec::with_capacity(rows.len() * 4);
        let mut row = vec![0.0f32; dim];
        for r in rows.chunks_exact(dim) {
            row.copy_from_slice(r);
            crate::encoder::l2_normalize(&mut row);
            for v in &row {
                buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.write(&buf)?;
        self.rows += rows.len() / dim;
        Ok(())
    }

    fn check_complete(&self) -> Result<()> {
        if self.rows != self.expected_rows {
            return Err(EngineError::Invalid(format!(
                "index has {} rows but {} ids",
                self.rows, self.expected_rows
            )));
        }
        Ok(())
    }

    /// Checks the row count and moves the file into place (for a file index).
    pub fn finish(self) -> Result<()> {
        self.check_complete()?;
        match self.sink {
            Sink::File(file) => file.commit(),
            Sink::Memory(_) => Ok(()),
        }
    }

    /// Checks the row count and returns the bytes (for an index in memory; a file index
    /// returns no bytes).
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        self.check_complete()?;
        match self.sink {
            Sink::File(file) => Err(EngineError::Invalid(format!(
                "{}: a file index has no bytes in memory",
                file.path().display()
            ))),
            Sink::Memory(buf) => Ok(buf),
        }
    }
}

/// Streams the rows of an index: from a file ([`IndexReader::open`]) or from bytes
/// ([`IndexReader::from_bytes`]).
#[derive(Debug)]
pub struct IndexReader<R = BufReader<File>> {
    path: PathBuf,
    /// The header.
    pub header: IndexHeader,
    reader: R,
    next_row: usize,
}

impl IndexReader {
    /// Opens an index file and checks that its size matches its header.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| EngineError::io(path, e))?;
        let size = file.metadata().map_err(|e| EngineError::io(path, e))?.len();
        Self::read_header(path, BufReader::new(file), size)
    }
}

impl<'a> IndexReader<&'a [u8]> {
    /// Reads an index held in memory; `name` stands for the file in errors.
    pub fn from_bytes(name: &Path, bytes: &'a [u8]) -> Result<Self> {
        Self::read_header(name, bytes, bytes.len() as u64)
    }
}

impl<R: Read> IndexReader<R> {
    /// Reads and checks the header of an index of `size` bytes.
    fn read_header(path: &Path, mut reader: R, size: u64) -> Result<Self> {
        let bad = |problem: String| EngineError::data(path, 0, problem);
        let mut magic = [0u8; 8];
        reader
            .read_exact(&mut magic)
            .map_err(|_| bad("not an index file (too short)".into()))?;
        if &magic != MAGIC {
            return Err(bad("not an index file (bad magic bytes)".into()));
        }
        let mut len = [0u8; 8];
        reader
            .read_exact(&mut len)
            .map_err(|_| bad("truncated index header".into()))?;
        let len = u64::from_le_bytes(len);
        if len > size {
            return Err(bad("truncated index header".into()));
        }
        let mut header = vec![0u8; len as usize];
        reader
            .read_exact(&mut header)
            .map_err(|_| bad("truncated index header".into()))?;
        let header: IndexHeader = serde_json::from_slice(&header)
            .map_err(|e| bad(format!("corrupt index header: {e}")))?;
        if header.dim == 0 {
            return Err(bad("corrupt index header: embedding width (dim) 0".into()));
        }
        let expected = (header.ids.len() as u64)
            .checked_mul(header.dim as u64)
            .and_then(|values| values.checked_mul(4))
            .and_then(|bytes| bytes.checked_add(16 + len))
            .ok_or_else(|| {
                bad(format!(
                    "corrupt index header: {} rows of width {} do not fit in a file",
                    header.ids.len(),
                    header.dim
                ))
            })?;
        if size != expected {
            return Err(bad(format!(
                "index size {size} bytes does not match its header ({expected} bytes for {} rows of {}); the file is truncated or corrupt",
                header.ids.len(),
                header.dim
            )));
        }
        Ok(IndexReader {
            path: path.to_path_buf(),
            header,
            reader,
            next_row: 0,
        })
    }

    /// Fails with [`EngineError::ModelMismatch`] unless the index was made by `model`.
    pub fn check_model(&self, model: &str) -> Result<()> {
        self.header.check_model(&self.path, model)
    }

    /// Reads the next block of at most `rows` rows: `(first_row, values)`, or None at the end.
    pub fn next_block(&mut self, rows: usize) -> Result<Option<(usize, Vec<f32>)>> {
        let remaining = self.header.ids.len() - self.next_row;
        if remaining == 0 {
            return Ok(None);
        }
        let n = rows.min(remaining);
        let mut bytes = vec![0u8; n * self.header.dim * 4];
        self.reader
            .read_exact(&mut bytes)
            .map_err(|e| EngineError::io(&self.path, e))?;
        let values = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let first = self.next_row;
        self.next_row += n;
        Ok(Some((first, values)))
    }

    /// Reads every row into memory.
    pub fn read_all(mut self) -> Result<(IndexHeader, Embeddings)> {
        let mut data = Vec::with_capacity(self.header.ids.len() * self.header.dim);
        while let Some((_, block)) = self.next_block(65536)? {
            data.extend(block);
        }
        let dim = self.header.dim;
        Ok((self.header, Embeddings { dim, data }))
    }
}
