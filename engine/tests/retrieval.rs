//! Exact top-k, streaming blocks, and the persistent index file.

use std::borrow::Cow;
use std::path::PathBuf;

use engine::retrieval::{
    merge_shards, search, write_index, IndexHeader, IndexReader, IndexWriter, MappedIndex, Shard,
    TopK,
};
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
        // The product's kernels differ with the block's shape (a one-row block is a matrix-
        // vector product): the same rows, scores equal to the last bits.
        let got = top.finish();
        let rows =
            |h: &[Vec<engine::retrieval::Hit>]| h[0].iter().map(|h| h.index).collect::<Vec<_>>();
        assert_eq!(rows(&got), rows(&whole), "block {block}");
        for (a, b) in got[0].iter().zip(&whole[0]) {
            assert!(
                (a.score - b.score).abs() < 1e-6,
                "block {block}: {a:?} {b:?}"
            );
        }
    }
    let ids: Vec<usize> = whole[0].iter().take(3).map(|h| h.index).collect();
    assert_eq!(ids, vec![10, 20, 30]);
}

#[test]
fn blocks_shared_among_threads_give_the_sequential_top_k_and_keep_ties_in_corpus_order() {
    // Five 4096-row blocks and a part: scored on several threads, merged at the end.
    let mut corpus = random(20_000, 16, 11);
    let row: Vec<f32> = corpus.row(100).to_vec();
    for copy in [9_000, 17_000, 19_999] {
        corpus.data[copy * 16..(copy + 1) * 16].copy_from_slice(&row);
    }
    let mut queries = random(5, 16, 12);
    queries.data[16..32].copy_from_slice(&row);
    let hits = search(&corpus, &queries, 12);
    for (qi, h) in hits.iter().enumerate() {
        let want = brute_force(&corpus, queries.row(qi), 12);
        let got: Vec<usize> = h.iter().map(|h| h.index).collect();
        let want: Vec<usize> = want.iter().map(|w| w.0).collect();
        assert_eq!(got, want, "query {qi}");
    }
    let ties: Vec<usize> = hits[1].iter().take(4).map(|h| h.index).collect();
    assert_eq!(ties, vec![100, 9_000, 17_000, 19_999]);
    let mut one = TopK::new(queries.clone(), 12);
    one.push_block(0, &corpus.data);
    assert_eq!(one.finish(), hits);
}

#[test]
fn k_larger_than_corpus_and_k_zero() {
    let corpus = random(4, 8, 5);
    let q = random(1, 8, 6);
    assert_eq!(search(&corpus, &q, 10)[0].len(), 4);
    assert!(search(&corpus, &q, 0)[0].is_empty());
}

/// A fresh folder `name`, the path of the file `file` in it, and `random(rows, dim, seed)`
/// embeddings with their ids (`doc_ids`).
fn index_case(
    name: &str,
    file: &str,
    (rows, dim, seed): (usize, usize, u64),
) -> (PathBuf, PathBuf, Embeddings, Vec<String>) {
    let dir = crate::common::tmp_folder(name);
    let path = dir.join(file);
    (
        dir,
        path,
        random(rows, dim, seed),
        crate::common::doc_ids(rows),
    )
}

#[test]
fn index_round_trip_streams_and_refuses_another_model() {
    let (dir, path, corpus, ids) = index_case("index", "corpus.ifidx", (1000, 32, 7));
    write_index(&path, "model-a", &ids, &corpus).unwrap();

    let reader = IndexReader::open(&path).unwrap();
    reader.check_model("model-a").unwrap();
    let err = reader.check_model("model-b").unwrap_err();
    assert!(matches!(err, EngineError::ModelMismatch { .. }));
    assert!(err.to_string().contains("corpus.ifidx") && err.to_string().contains("model-a"));

    let queries = random(3, 32, 8);
    let mapped = MappedIndex::open(&path).unwrap();
    mapped.check_model("model-a").unwrap();
    assert!(
        matches!(mapped.rows(), Cow::Borrowed(_)),
        "rows start aligned: read in place"
    );
    let found = mapped.search(&queries, 10).unwrap();
    assert_eq!(found, search(&corpus, &queries, 10));
    assert_eq!(found[0].len(), 10);
    let narrow = mapped.search(&random(1, 8, 9), 3);
    crate::common::assert_err(narrow, "", &["corpus.ifidx", "width 8"]);
    drop(mapped);

    let (header, all) = IndexReader::open(&path).unwrap().read_all().unwrap();
    assert_eq!(header.ids, ids);
    assert_eq!(all.len(), 1000);

    // Truncated file.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    crate::common::assert_err(IndexReader::open(&path), "", &["truncated or corrupt"]);
    // Headers that promise no data, or more than a file can hold.
    for (ids, dim) in [(3usize, 0usize), (4, 1usize << 62)] {
        let header = serde_json::json!({"model": "m", "dim": dim, "ids": (0..ids).map(|i| i.to_string()).collect::<Vec<_>>()})
            .to_string();
        let mut bytes = bytes[..8].to_vec();
        bytes.extend((header.len() as u64).to_le_bytes());
        bytes.extend(header.as_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let prefix = path.display().to_string();
        crate::common::assert_err(IndexReader::open(&path), &prefix, &["corrupt index header"]);
    }
    // Not an index.
    std::fs::write(&path, b"plain text, not an index").unwrap();
    crate::common::assert_err(IndexReader::open(&path), "", &["bad magic"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_index_without_header_padding_is_still_searched_from_a_decoded_copy() {
    // Indexes written before the rows were aligned: header JSON right before the rows, here
    // of a length that leaves them off a 4-byte boundary.
    let (dir, path, corpus, ids) = index_case("index-unpadded", "old.ifidx", (300, 8, 21));
    let mut header = serde_json::json!({"model": "old", "dim": 8, "ids": ids})
        .to_string()
        .into_bytes();
    while (16 + header.len()).is_multiple_of(4) {
        header.push(b' ');
    }
    let mut bytes = b"IFIRIDX1".to_vec();
    bytes.extend((header.len() as u64).to_le_bytes());
    bytes.extend(&header);
    for v in &corpus.data {
        bytes.extend(v.to_le_bytes());
    }
    std::fs::write(&path, &bytes).unwrap();
    let mapped = MappedIndex::open(&path).unwrap();
    assert!(
        matches!(mapped.rows(), Cow::Owned(_)),
        "unaligned rows are decoded"
    );
    let queries = random(2, 8, 22);
    assert_eq!(
        mapped.search(&queries, 7).unwrap(),
        search(&corpus, &queries, 7)
    );
    let (_, all) = IndexReader::open(&path).unwrap().read_all().unwrap();
    assert_eq!(all.data, corpus.data);
    drop(mapped);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shards_merge_only_when_one_model_made_them_and_the_rows_fit_their_part() {
    let dir = crate::common::tmp_folder("index-shards");
    let corpus = random(10, 4, 31);
    let ids: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
    let write_shard = |i: usize, model: &str, rows: std::ops::Range<usize>| {
        let shard = Shard::new(i, 3, &ids).unwrap();
        let path = dir.join(format!("{model}-{i}-{}.ifidx", rows.len()));
        let mut header = IndexHeader::new(model, 4, ids[rows.clone()].to_vec());
        header.shard = Some(shard);
        let mut writer = IndexWriter::create(&path, header).unwrap();
        writer
            .append(&corpus.data[rows.start * 4..rows.end * 4])
            .unwrap();
        writer.finish().unwrap();
        path
    };
    let parts: Vec<_> = (0..3)
        .map(|i| write_shard(i, "m", Shard::new(i, 3, &ids).unwrap().rows()))
        .collect();
    assert_eq!(Shard::new(1, 3, &ids).unwrap().rows(), 3..6);
    let merged = dir.join("merged.ifidx");
    let header = merge_shards(&parts, &merged).unwrap();
    assert_eq!(header.ids, ids);
    let whole = dir.join("whole.ifidx");
    write_index(&whole, "m", &ids, &corpus).unwrap();
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );

    let other_model = write_shard(1, "other", 3..6);
    let err = merge_shards(&[parts[0].clone(), other_model, parts[2].clone()], &merged);
    assert!(
        matches!(err, Err(EngineError::ModelMismatch { .. })),
        "{err:?}"
    );
    let wrong_rows = write_shard(2, "m", 6..9);
    let msg = merge_shards(&[parts[0].clone(), parts[1].clone(), wrong_rows], &merged)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("holds 3 rows, but its part of the corpus has 4"),
        "{msg}"
    );
    assert!(Shard::new(3, 3, &ids).is_err() && Shard::new(0, 0, &ids).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
