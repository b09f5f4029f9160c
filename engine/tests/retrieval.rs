//! Exact top-k, streaming blocks, and the persistent index file.

use engine::retrieval::{search, write_index, IndexReader, TopK};
use engine::{Embeddings, EngineError};

fn random(rows: usize, dim: usize, seed: u64) -> Embeddings {
    let mut s = seed;
    let mut data = Vec::with_capacity(rows * dim);
    for _ in 0..rows * dim {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        data.push(((s >> 33) as f32 / (1u64 << 31) as f32) - 0.5);
    }
    let mut e = Embeddings { dim, data };
    e.normalize();
    e
}

fn brute_force(corpus: &Embeddings, q: &[f32], k: usize) -> Vec<(usize, f32)> {
    let mut all: Vec<(usize, f32)> = corpus
        .rows()
        .enumerate()
        .map(|(i, r)| {
            (
                i,
                r.iter()
                    .zip(q)
                    .map(|(a, b)| *a as f64 * *b as f64)
                    .sum::<f64>() as f32,
            )
        })
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

#[test]
fn top_k_equals_brute_force_for_every_query() {
    let corpus = random(3000, 48, 1);
    let queries = random(7, 48, 2);
    let hits = search(&corpus, &queries, 25);
    for (qi, h) in hits.iter().enumerate() {
        let want = brute_force(&corpus, queries.row(qi), 25);
        assert_eq!(h.len(), 25);
        for (got, want) in h.iter().zip(&want) {
            assert_eq!(got.index, want.0, "query {qi}");
            assert!((got.score - want.1).abs() < 1e-5);
        }
    }
}

#[test]
fn block_size_does_not_change_results_and_ties_keep_corpus_order() {
    let mut corpus = random(500, 16, 3);
    // Rows 10, 20 and 30 are identical: equal scores must come out in corpus order.
    let row: Vec<f32> = corpus.row(10).to_vec();
    corpus.data[20 * 16..21 * 16].copy_from_slice(&row);
    corpus.data[30 * 16..31 * 16].copy_from_slice(&row);
    let query = Embeddings {
        dim: 16,
        data: row.clone(),
    };
    let whole = search(&corpus, &query, 5);
    for block in [1, 7, 64, 499, 1000] {
        let mut top = TopK::new(query.clone(), 5);
        for (b, chunk) in corpus.data.chunks(block * 16).enumerate() {
            top.push_block(b * block, chunk);
        }
        assert_eq!(top.finish(), whole, "block {block}");
    }
    let ids: Vec<usize> = whole[0].iter().take(3).map(|h| h.index).collect();
    assert_eq!(ids, vec![10, 20, 30]);
}

#[test]
fn k_larger_than_corpus_and_k_zero() {
    let corpus = random(4, 8, 5);
    let q = random(1, 8, 6);
    assert_eq!(search(&corpus, &q, 10)[0].len(), 4);
    assert!(search(&corpus, &q, 0)[0].is_empty());
}

#[test]
fn index_round_trip_streams_and_refuses_another_model() {
    let dir = crate::common::tmp_folder("index");
    let path = dir.join("corpus.ifidx");
    let corpus = random(1000, 32, 7);
    let ids: Vec<String> = (0..1000).map(|i| format!("doc-{i}")).collect();
    write_index(&path, "model-a", &ids, &corpus).unwrap();

    let reader = IndexReader::open(&path).unwrap();
    reader.check_model("model-a").unwrap();
    let err = reader.check_model("model-b").unwrap_err();
    assert!(matches!(err, EngineError::ModelMismatch { .. }));
    assert!(err.to_string().contains("corpus.ifidx") && err.to_string().contains("model-a"));

    let queries = random(3, 32, 8);
    let streamed = IndexReader::open(&path)
        .unwrap()
        .search(queries.clone(), 10, 33)
        .unwrap();
    assert_eq!(streamed, search(&corpus, &queries, 10));

    let (header, all) = IndexReader::open(&path).unwrap().read_all().unwrap();
    assert_eq!(header.ids, ids);
    assert_eq!(all.len(), 1000);

    // Truncated file.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let msg = IndexReader::open(&path).unwrap_err().to_string();
    assert!(msg.contains("truncated or corrupt"), "{msg}");
    // Headers that promise no data, or more than a file can hold.
    for (ids, dim) in [(3usize, 0usize), (4, 1usize << 62)] {
        let header = serde_json::json!({"model": "m", "dim": dim, "ids": (0..ids).map(|i| i.to_string()).collect::<Vec<_>>()})
            .to_string();
        let mut bytes = bytes[..8].to_vec();
        bytes.extend((header.len() as u64).to_le_bytes());
        bytes.extend(header.as_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let msg = IndexReader::open(&path).unwrap_err().to_string();
        assert!(
            msg.starts_with(&path.display().to_string()) && msg.contains("corrupt index header"),
            "{msg}"
        );
    }
    // Not an index.
    std::fs::write(&path, b"plain text, not an index").unwrap();
    let msg = IndexReader::open(&path).unwrap_err().to_string();
    assert!(msg.contains("bad magic"), "{msg}");
    std::fs::remove_dir_all(&dir).unwrap();
}
