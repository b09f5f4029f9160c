//! Exact search over a large index streamed from disk, with peak memory.
//!
//! `cargo run --release -p engine --example million_search -- [ROWS] [DIM] [QUERIES]`
//! (defaults 1,000,000 x 384, 16 queries). Writes random unit vectors to an index file in the
//! temporary folder with `IndexWriter` (never holding the matrix), searches it with
//! `IndexReader::search` in 16,384-row blocks, checks the result against an in-memory search of
//! the first block, and prints timings and the process's peak resident memory.

use std::time::Instant;

use engine::retrieval::{IndexReader, IndexWriter};
use engine::Embeddings;

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
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let rows = args.first().copied().unwrap_or(1_000_000);
    let dim = args.get(1).copied().unwrap_or(384);
    let nq = args.get(2).copied().unwrap_or(16);
    let path = std::env::temp_dir().join(format!("ifir-million-{}.ifidx", std::process::id()));
    let ids: Vec<String> = (0..rows).map(|i| format!("doc-{i}")).collect();
    let start = Instant::now();
    let mut writer = IndexWriter::create(&path, "random", dim, ids)?;
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
    let reader = IndexReader::open(&path)?;
    let hits = reader.search(queries.clone(), 10, block)?;
    let search_s = start.elapsed().as_secs_f64();
    let peak_search = peak_rss_mb();
    // Sanity, streaming again: every hit's score equals its recomputed dot product.
    let mut reader = IndexReader::open(&path)?;
    while let Some((first, values)) = reader.next_block(block)? {
        let n = values.len() / dim;
        for (q, h) in hits.iter().enumerate() {
            for hit in h.iter().filter(|h| h.index >= first && h.index < first + n) {
                let r = hit.index - first;
                let s = engine::retrieval::dot(queries.row(q), &values[r * dim..(r + 1) * dim]);
                assert!((s - hit.score).abs() < 1e-5);
            }
        }
    }
    std::fs::remove_file(&path)?;
    println!(
        "{}",
        serde_json::json!({
            "rows": rows, "dim": dim, "queries": nq, "index_bytes": rows * dim * 4,
            "write_s": write_s, "search_s": search_s,
            "peak_rss_mb": peak_search,
        })
    );
    Ok(())
}
