//! Embeddings in a LanceDB table, searched through its approximate (ANN) index.
//!
//! The flat index file ([`super::MappedIndex`]) is exact and needs no training, but every
//! search reads every row. A corpus that outgrows memory, or that other tools must open, goes
//! into a vector store instead. LanceDB is embedded (no server), keeps its tables as Lance
//! files on local disk or object storage, and the same table opens as it is in LanceDB's Python
//! and TypeScript libraries and on its servers.
//!
//! A table written here has two columns, `id` (utf8) and `vector` (fixed-size list of f32,
//! L2-normalised), and carries the model fingerprint in its schema metadata under
//! [`MODEL_KEY`], so a search with another model is refused as it is for an index file. The
//! ANN index is trained on the table's vectors with the dot product (the cosine, since rows
//! are normalised); a search can re-rank its candidates with their exact vectors
//! ([`StoreSearch::refine_factor`]), and [`recall_at_k`] measures what it misses against the
//! exact search.
//!
//! LanceDB's API is async; a [`VectorStore`] owns a small runtime and blocks on it, so the
//! engine's callers stay synchronous.

use std::collections::HashSet;

use super::Hit;
use crate::error::{EngineError, Result};

#[cfg(feature = "lancedb")]
mod lance;
#[cfg(feature = "lancedb")]
pub use lance::{StoreSource, VectorStore};

/// Schema metadata key holding the fingerprint of the model that made the vectors.
pub const MODEL_KEY: &str = "ifir.model";
/// The id column.
pub const ID_COLUMN: &str = "id";
/// The vector column.
pub const VECTOR_COLUMN: &str = "vector";

/// The ANN index a table gets. All use the dot product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnIndex {
    /// Inverted file (k-means partitions) with product-quantised codes: compact, the
    /// default for large corpora; pair it with a refine factor for exact final scores.
    IvfPq,
    /// Inverted file with an HNSW graph per partition over 8-bit scalar-quantised vectors.
    IvfHnswSq,
    /// Inverted file with full vectors in each partition (exact within the probed ones).
    IvfFlat,
    /// No index: every search scans the table (exact, for small tables).
    None,
}

impl AnnIndex {
    /// Every index, in the order of [`AnnIndex::NAMES`].
    pub const ALL: [AnnIndex; 4] = [
        AnnIndex::IvfPq,
        AnnIndex::IvfHnswSq,
        AnnIndex::IvfFlat,
        AnnIndex::None,
    ];
    /// The names the command line takes.
    pub const NAMES: [&'static str; 4] = ["ivf-pq", "ivf-hnsw-sq", "ivf-flat", "none"];

    /// The index's name on the command line.
    pub fn name(self) -> &'static str {
        let i = AnnIndex::ALL.iter().position(|a| *a == self);
        AnnIndex::NAMES[i.expect("ALL lists every index")]
    }

    /// Parses a name of [`AnnIndex::NAMES`].
    pub fn parse(name: &str) -> Result<Self> {
        AnnIndex::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                EngineError::Invalid(format!(
                    "unknown ANN index {name:?}; use one of {}",
                    AnnIndex::NAMES.join(", ")
                ))
            })
    }
}

/// How a search uses the ANN index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoreSearch {
    /// IVF partitions probed per query (more: higher recall, slower). Default 20.
    pub nprobes: usize,
    /// Re-rank `k x refine_factor` candidates with their exact vectors (`None`: the index's
    /// own, possibly quantised, scores). Default 20: product-quantised scores of 384-wide
    /// embeddings order the near neighbours loosely (BENCHMARKS.md).
    pub refine_factor: Option<u32>,
    /// Scan every row instead of using the index (exact; for checks).
    pub exhaustive: bool,
}

impl Default for StoreSearch {
    fn default() -> Self {
        StoreSearch {
            nprobes: 20,
            refine_factor: Some(20),
            exhaustive: false,
        }
    }
}

/// One hit of a store search: the document id and its cosine score.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreHit {
    /// The document id.
    pub id: String,
    /// Cosine similarity with the query (as the ANN index or the refine step computed it).
    pub score: f32,
}

/// Recall@k of approximate hits against the exact ones (`exact` indexes into `ids`): the
/// share of each query's exact top `k` that the approximate top `k` found, averaged over the
/// queries.
pub fn recall_at_k(
    approximate: &[Vec<StoreHit>],
    exact: &[Vec<Hit>],
    ids: &[String],
    k: usize,
) -> f64 {
    if approximate.is_empty() || k == 0 {
        return 0.0;
    }
    let total: f64 = approximate
        .iter()
        .zip(exact)
        .map(|(a, e)| {
            let found: HashSet<&str> = a.iter().take(k).map(|h| h.id.as_str()).collect();
            let wanted = e.len().min(k);
            if wanted == 0 {
                return 1.0;
            }
            let hit = e
                .iter()
                .take(k)
                .filter(|h| found.contains(ids[h.index].as_str()))
                .count();
            hit as f64 / wanted as f64
        })
        .sum();
    total / approximate.len() as f64
}
