//! The vector store at scale: a LanceDB table with an IVF-PQ index against the exact search
//! of the same rows, in one run.
//!
//! `cargo run --release -p engine --features lancedb --example store_search -- [ROWS] [DIM]
//! [QUERIES] [CLUSTERS]` (defaults 1,000,000 x 384, 100 queries, 2,000 clusters). Writes unit
//! vectors shaped like a corpus's embeddings into an index file: a sentence encoder's vectors
//! vary along few directions (low intrinsic dimension) and cluster by topic, so each row is a
//! random 384 x 24 projection of a 24-dimensional point drawn around one of the topic centres,
//! plus a little isotropic noise. (Independent noise in all 384 dimensions would be the wrong
//! test: every point is then about equally far from every other, no index can tell the ten
//! nearest apart, and neither can the embeddings of real text.) It maps the file
//! (`MappedIndex`), writes the table from it, trains the IVF-PQ index (LanceDB's defaults:
//! about sqrt(rows) partitions, 8-bit codes over dim/16 sub-vectors), then measures for
//! several probe counts and refine factors: recall@10 against the exact top 10, and the median
//! and p95 latency of one query. Prints one JSON object.

use std::sync::Arc;
use std::time::Instant;

use engine::retrieval::store::{recall_at_k, AnnIndex, StoreSearch, StoreSource, VectorStore};
use engine::retrieval::{IndexHeader, IndexWriter, MappedIndex};
use engine::Embeddings;

mod common;

struct Lcg(u64);

impl Lcg {
    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f32 {
        let u = self.uniform().max(1e-7);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}

/// Latent width of the synthetic embeddings.
const LATENT: usize = 24;

/// The generator: topic centres in the latent space and the projection to `dim`.
struct Corpus {
    centres: Vec<f32>,
    projection: Vec<f32>,
    dim: usize,
}

impl Corpus {
    fn new(clusters: usize, dim: usize, rng: &mut Lcg) -> Self {
        let scale = 1.0 / (LATENT as f32).sqrt();
        Corpus {
            centres: (0..clusters * LATENT).map(|_| rng.normal()).collect(),
            projection: (0..dim * LATENT).map(|_| rng.normal() * scale).collect(),
            dim,
        }
    }

    /// `rows` unit vectors: a topic centre plus latent spread, projected, plus noise.
    fn rows(&self, rows: usize, rng: &mut Lcg) -> Vec<f32> {
        let clusters = self.centres.len() / LATENT;
        let mut out = Vec::with_capacity(rows * self.dim);
        let mut z = [0.0f32; LATENT];
        for _ in 0..rows {
            let c = ((rng.uniform() * clusters as f32) as usize).min(clusters - 1);
            for (k, zk) in z.iter_mut().enumerate() {
                *zk = self.centres[c * LATENT + k] + 0.6 * rng.normal();
            }
            let start = out.len();
            for d in 0..self.dim {
                let p = &self.projection[d * LATENT..(d + 1) * LATENT];
                let v: f32 = p.iter().zip(&z).map(|(a, b)| a * b).sum();
                out.push(v + 0.05 * rng.normal());
            }
            let norm = out[start..].iter().map(|v| v * v).sum::<f32>().sqrt();
            out[start..].iter_mut().for_each(|v| *v /= norm);
        }
        out
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let [rows, dim, nq, clusters] = common::counts([1_000_000, 384, 100, 2_000])?;
    let tmp = std::env::temp_dir().join(format!("ifir-store-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut rng = Lcg(42);
    let corpus = Corpus::new(clusters, dim, &mut rng);

    let ids: Vec<String> = (0..rows).map(|i| format!("doc-{i}")).collect();
    let path = tmp.join("corpus.ifidx");
    let mut writer = IndexWriter::create(&path, IndexHeader::new("synthetic", dim, ids.clone()))?;
    let mut written = 0;
    while written < rows {
        let n = 16_384.min(rows - written);
        writer.append(&corpus.rows(n, &mut rng))?;
        written += n;
    }
    writer.finish()?;
    let queries = Embeddings {
        dim,
        data: corpus.rows(nq, &mut rng),
    };
    let index = Arc::new(MappedIndex::open(&path)?);
    let start = Instant::now();
    let exact = index.search(&queries, 10)?;
    let exact_s = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let db = tmp.join("db");
    let store = VectorStore::create(
        &db,
        "corpus",
        "synthetic",
        StoreSource::Index(index.clone()),
        false,
        Box::new(|_| {}),
    )?;
    let write_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    store.build_index(AnnIndex::IvfPq, None)?;
    let build_s = start.elapsed().as_secs_f64();

    let mut settings = Vec::new();
    for nprobes in [10, 20, 50] {
        for refine_factor in [None, Some(5), Some(20)] {
            let how = StoreSearch {
                nprobes,
                refine_factor,
                exhaustive: false,
            };
            // Warm the index's caches once, then time each query alone.
            store.search(&queries, 10, &how)?;
            let mut hits = Vec::with_capacity(nq);
            let mut latencies = Vec::with_capacity(nq);
            for q in queries.rows() {
                let one = Embeddings {
                    dim,
                    data: q.to_vec(),
                };
                let start = Instant::now();
                hits.extend(store.search(&one, 10, &how)?);
                latencies.push(start.elapsed().as_secs_f64() * 1e3);
            }
            latencies.sort_by(f64::total_cmp);
            settings.push(serde_json::json!({
                "nprobes": nprobes, "refine_factor": refine_factor,
                "recall_at_10": recall_at_k(&hits, &exact, &ids, 10),
                "median_ms": latencies[nq / 2], "p95_ms": latencies[(nq * 95 / 100).min(nq - 1)],
            }));
        }
    }
    let table_bytes = dir_bytes(&db);
    drop(store);
    std::fs::remove_dir_all(&tmp)?;
    println!(
        "{}",
        serde_json::json!({
            "rows": rows, "dim": dim, "queries": nq, "clusters": clusters,
            "exact_search_all_queries_s": exact_s,
            "table_write_s": write_s, "ivf_pq_build_s": build_s, "table_bytes": table_bytes,
            "settings": settings,
        })
    );
    Ok(())
}

/// Bytes under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}
