//! Exact search over a large index file, against the memory-bandwidth bound in the same run.
//!
//! `cargo run --release -p engine --example million_search -- [ROWS] [DIM] [QUERIES]`
//! (defaults 1,000,000 x 384, 16 queries). Writes random unit vectors to an index file in the
//! temporary folder with `IndexWriter` (never holding the matrix), maps it (`MappedIndex`),
//! then times, best of five: the search of all queries at once, the search of one query, and
//! the bound, one pass over the same mapped rows (a sum on every thread). Every hit is checked
//! against its recomputed dot product and against a plain sort of all scores for one query.
//! Prints the timings, the share of the bound one query reaches, and the peak resident memory
//! (the mapped file's pages are counted there; they are the page cache's, shared, not the
//! process's own).

use std::time::Instant;

use engine::retrieval::{IndexHeader, IndexWriter, MappedIndex};
use engine::Embeddings;

mod common;

fn random_rows(rows: usize, dim: usize, state: &mut u64) -> Vec<f32> {
    (0..rows * dim)
        .map(|_| {
            *state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect()
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<f64>().ok())
            })
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let [rows, dim, nq] = common::counts([1_000_000, 384, 16])?;
    let path = std::env::temp_dir().join(format!("ifir-million-{}.ifidx", std::process::id()));
    let ids: Vec<String> = (0..rows).map(|i| format!("doc-{i}")).collect();
    let start = Instant::now();
    let mut writer = IndexWriter::create(&path, IndexHeader::new("random", dim, ids))?;
    let mut state = 42u64;
    let block = 16_384;
    let mut written = 0;
    while written < rows {
        let n = block.min(rows - written);
        writer.append(&random_rows(n, dim, &mut state))?;
        written += n;
    }
    writer.finish()?;
    let write_s = start.elapsed().as_secs_f64();
    let mut queries = Embeddings {
        dim,
        data: random_rows(nq, dim, &mut state),
    };
    queries.normalize();
    let start = Instant::now();
    let index = MappedIndex::open(&path)?;
    let open_s = start.elapsed().as_secs_f64();
    let rows_view = index.rows();
    let one = Embeddings {
        dim,
        data: queries.row(0).to_vec(),
    };
    let hits = index.search(&queries, 10)?;
    let search_s = best_of(5, || index.search(&queries, 10).map(|_| ()))?;
    let one_s = best_of(5, || index.search(&one, 10).map(|_| ()))?;
    let mut total = 0.0f32;
    let bound_s = best_of(5, || {
        total = one_pass(&rows_view);
        Ok(())
    })?;
    check(&rows_view, &queries, &hits);
    let peak = peak_rss_mb();
    drop(rows_view);
    drop(index);
    std::fs::remove_file(&path)?;
    let bytes = rows * dim * 4;
    println!(
        "{}",
        serde_json::json!({
            "rows": rows, "dim": dim, "queries": nq, "index_bytes": bytes,
            "threads": rayon::current_num_threads(),
            "write_s": write_s, "open_s": open_s,
            "search_s": search_s, "one_query_s": one_s, "one_pass_bound_s": bound_s,
            "bound_gb_per_s": bytes as f64 / bound_s / 1e9,
            "one_query_share_of_bound": bound_s / one_s,
            "peak_rss_mb": peak, "checksum": total,
        })
    );
    Ok(())
}

/// The best of `n` timings of `f`, in seconds.
fn best_of(
    n: usize,
    mut f: impl FnMut() -> engine::Result<()>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut best = f64::INFINITY;
    for _ in 0..n {
        let start = Instant::now();
        f()?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// One read of every value, split among rayon's threads: what any exact search must at least
/// pay.
fn one_pass(rows: &[f32]) -> f32 {
    use rayon::prelude::*;
    rows.par_chunks(1 << 20)
        .map(|c| {
            let mut acc = [0.0f32; 16];
            for v in c.chunks_exact(16) {
                for i in 0..16 {
                    acc[i] += v[i];
                }
            }
            acc.iter().sum::<f32>()
        })
        .sum()
}

/// Every hit's score is its dot product, and for query 0 the hits are a plain sort's top 10.
fn check(rows: &[f32], queries: &Embeddings, hits: &[Vec<engine::retrieval::Hit>]) {
    let dim = queries.dim;
    for (q, h) in hits.iter().enumerate() {
        for hit in h {
            let row = &rows[hit.index * dim..(hit.index + 1) * dim];
            let s = engine::retrieval::dot(queries.row(q), row);
            assert!((s - hit.score).abs() < 1e-5, "query {q} row {}", hit.index);
        }
    }
    let mut all: Vec<(f32, usize)> = rows
        .chunks_exact(dim)
        .enumerate()
        .map(|(i, r)| (engine::retrieval::dot(queries.row(0), r), i))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let expected: Vec<usize> = all.iter().take(10).map(|x| x.1).collect();
    let got: Vec<usize> = hits[0].iter().map(|h| h.index).collect();
    assert_eq!(
        got, expected,
        "query 0: the search's top 10 differ from a plain sort's"
    );
}
