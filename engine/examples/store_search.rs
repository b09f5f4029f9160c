//! The vector store at scale: a LanceDB table with an IVF-PQ index against the exact search
//! of the same rows, in one run.
//!
//! `cargo run --release -p engine --features lancedb --example store_search -- [ROWS] [DIM]
//! [QUERIES] [CLUSTERS]` (defaults 1,000,000 x 384, 100 queries, 2,000 clusters). Writes unit
//! vectors drawn around random centres (a corpus's embeddings cluster by topic; uniform noise
//! in 384 dimensions has no near neighbours for any index to find) into an index file, maps it
//! (`MappedIndex`), writes the table from it, trains the IVF-PQ index (LanceDB's defaults:
//! about sqrt(rows) partitions, 8-bit codes over dim/16 sub-vectors), then measures for
//! several probe counts, with and without the exact re-rank (refine factor 5): recall@10
//! against the exact top 10, and the median and p95 latency of one query. Prints one JSON
//! object.

use std::sync::Arc;
use std::time::Instant;

use engine::retrieval::store::{recall_at_k, AnnIndex, StoreSearch, StoreSource, VectorStore};
use engine::retrieval::{IndexHeader, IndexWriter, MappedIndex};
use engine::Embeddings;

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    }
}

/// `rows` unit vectors around the `centres` (row-major), each centre plus uniform noise.
fn clustered(rows: usize, centres: &[f32], dim: usize, rng: &mut Lcg) -> Vec<f32> {
    let clusters = centres.len() / dim;
    let mut out = Vec::with_capacity(rows * dim);
    for _ in 0..rows {
        let c = (rng.next() + 0.5) * clusters as f32;
        let centre = &centres[(c as usize).min(clusters - 1) * dim..][..dim];
        let start = out.len();
        out.extend(centre.iter().map(|v| v + 0.6 * rng.next()));
        let norm = out[start..].iter().map(|v| v * v).sum::<f32>().sqrt();
        out[start..].iter_mut().for_each(|v| *v /= norm);
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let rows = args.first().copied().unwrap_or(1_000_000);
    let dim = args.get(1).copied().unwrap_or(384);
    let nq = args.get(2).copied().unwrap_or(100);
    let clusters = args.get(3).copied().unwrap_or(2_000);
    let tmp = std::env::temp_dir().join(format!("ifir-store-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut rng = Lcg(42);
    let centres: Vec<f32> = (0..clusters * dim).map(|_| rng.next()).collect();

    let ids: Vec<String> = (0..rows).map(|i| format!("doc-{i}")).collect();
    let path = tmp.join("corpus.ifidx");
    let mut writer = IndexWriter::create(&path, IndexHeader::new("synthetic", dim, ids.clone()))?;
    let mut written = 0;
    while written < rows {
        let n = 16_384.min(rows - written);
        writer.append(&clustered(n, &centres, dim, &mut rng))?;
        written += n;
    }
    writer.finish()?;
    let queries = Embeddings {
        dim,
        data: clustered(nq, &centres, dim, &mut rng),
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
        for refine_factor in [None, Some(5)] {
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
