//! The vector store (feature `lancedb`): a real LanceDB table on disk, its ANN indexes
//! against the exact search, the model fingerprint, and refusals.

use std::sync::Arc;

use engine::retrieval::store::{recall_at_k, AnnIndex, StoreSearch, StoreSource, VectorStore};
use engine::retrieval::{search, write_index, MappedIndex};
use engine::{Embeddings, EngineError};

use crate::common::{assert_err, doc_ids, tmp_folder};

/// `rows` unit vectors of width `dim` around `clusters` random centres (embeddings of a real
/// corpus are clustered by topic; uniform noise would be the worst case of every ANN index).
fn clustered(rows: usize, dim: usize, clusters: usize, seed: u64) -> Embeddings {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    };
    let centres: Vec<f32> = (0..clusters * dim).map(|_| next()).collect();
    let mut data = Vec::with_capacity(rows * dim);
    for r in 0..rows {
        let c = &centres[(r % clusters) * dim..][..dim];
        data.extend(c.iter().map(|v| v + 0.35 * next()));
    }
    let mut e = Embeddings { dim, data };
    e.normalize();
    e
}

fn memory(ids: &[String], e: &Embeddings) -> StoreSource {
    StoreSource::Memory {
        ids: Arc::new(ids.to_vec()),
        embeddings: Arc::new(e.clone()),
    }
}

const MODEL: &str = "0123456789abcdef";

/// Writes `ids` and `corpus` as the table `corpus` of the store `dir` (made by `MODEL`),
/// replacing the table when `overwrite`, with no progress report.
fn create_corpus(
    dir: &std::path::Path,
    ids: &[String],
    corpus: &Embeddings,
    overwrite: bool,
) -> Result<VectorStore, EngineError> {
    let source = memory(ids, corpus);
    VectorStore::create(dir, "corpus", MODEL, source, overwrite, Box::new(|_| {}))
}

#[test]
fn ann_indexes_find_what_exact_search_finds() {
    let dir = tmp_folder("store-recall");
    let (rows, dim, k) = (3000, 32, 10);
    let corpus = clustered(rows, dim, 24, 1);
    let queries = clustered(40, dim, 24, 2);
    let ids = doc_ids(rows);
    let exact = search(&corpus, &queries, k);
    let store = create_corpus(&dir, &ids, &corpus, false).unwrap();
    assert_eq!(store.len().unwrap(), rows);

    // Without an index (and with the index bypassed) the store is exact: the same ids and
    // scores as the engine's own search.
    let scan = StoreSearch {
        exhaustive: true,
        ..StoreSearch::default()
    };
    let scanned = store.search(&queries, k, &scan).unwrap();
    for (got, want) in scanned.iter().zip(&exact) {
        let got_ids: Vec<&str> = got.iter().map(|h| h.id.as_str()).collect();
        let want_ids: Vec<&str> = want.iter().map(|h| ids[h.index].as_str()).collect();
        assert_eq!(got_ids, want_ids);
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g.score - w.score).abs() < 1e-5,
                "{} vs {}",
                g.score,
                w.score
            );
        }
    }
    assert_eq!(recall_at_k(&scanned, &exact, &ids, k), 1.0);

    // Every partition probed and 20 x k candidates re-scored exactly: what is missed is what
    // the index's coarse scores (product-quantised codes of 16-value sub-vectors for IVF-PQ,
    // only two of them at this width) rank below the 200 candidates.
    let wide = StoreSearch {
        nprobes: 20,
        refine_factor: Some(20),
        exhaustive: false,
    };
    for ann in [AnnIndex::IvfPq, AnnIndex::IvfHnswSq, AnnIndex::IvfFlat] {
        store.build_index(ann, Some(16)).unwrap();
        let refined = store.search(&queries, k, &wide).unwrap();
        let recall = recall_at_k(&refined, &exact, &ids, k);
        assert!(recall >= 0.9, "{}: recall@10 {recall}", ann.name());
        // Refined scores are the exact cosines of the ids found.
        let by_id: std::collections::HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        for (q, hits) in refined.iter().enumerate() {
            assert_eq!(hits.len(), k);
            for h in hits {
                let row = corpus.row(by_id[h.id.as_str()]);
                let cos: f32 = row.iter().zip(queries.row(q)).map(|(a, b)| a * b).sum();
                assert!(
                    (h.score - cos).abs() < 1e-4,
                    "{}: {} vs {cos}",
                    ann.name(),
                    h.score
                );
            }
            assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        }
        // One probed partition of 16 finds less than twenty do: the index is what searches.
        let narrow = StoreSearch {
            nprobes: 1,
            refine_factor: None,
            exhaustive: false,
        };
        let narrow_recall = recall_at_k(
            &store.search(&queries, k, &narrow).unwrap(),
            &exact,
            &ids,
            k,
        );
        assert!(
            narrow_recall < recall,
            "{}: {narrow_recall} vs {recall}",
            ann.name()
        );
    }
}

#[test]
fn a_table_keeps_its_model_and_opens_again_from_an_index_file() {
    let dir = tmp_folder("store-model");
    let corpus = clustered(300, 16, 5, 3);
    let ids = doc_ids(300);
    let index_path = dir.join("corpus.ifidx");
    write_index(&index_path, MODEL, &ids, &corpus).unwrap();
    let index = Arc::new(MappedIndex::open(&index_path).unwrap());
    let db = dir.join("db");
    let mut seen = Vec::new();
    let (tx, rx) = std::sync::mpsc::channel();
    VectorStore::create(
        &db,
        "corpus",
        MODEL,
        StoreSource::Index(index.clone()),
        false,
        Box::new(move |done| tx.send(done).unwrap()),
    )
    .unwrap();
    seen.extend(rx.try_iter());
    assert_eq!(
        seen.last(),
        Some(&300),
        "progress reaches every row: {seen:?}"
    );

    let store = VectorStore::open(&db, "corpus").unwrap();
    assert_eq!((store.model.as_str(), store.dim), (MODEL, 16));
    store.check_model(MODEL).unwrap();
    match store.check_model("fedcba9876543210") {
        Err(EngineError::ModelMismatch {
            path, index_model, ..
        }) => {
            assert!(path.ends_with("corpus.lance"), "{}", path.display());
            assert_eq!(index_model, MODEL);
        }
        other => panic!("expected a model mismatch, got {other:?}"),
    }
    // The table holds the index file's rows: searching it equals searching the file.
    let queries = clustered(5, 16, 5, 4);
    let exact = index.search(&queries, 7).unwrap();
    let scan = StoreSearch {
        exhaustive: true,
        ..StoreSearch::default()
    };
    let found = store.search(&queries, 7, &scan).unwrap();
    assert_eq!(recall_at_k(&found, &exact, &ids, 7), 1.0);
}

#[test]
fn a_store_refuses_what_would_be_silently_wrong() {
    let dir = tmp_folder("store-refusals");
    let corpus = clustered(50, 8, 2, 5);
    let ids = doc_ids(50);
    let store = create_corpus(&dir, &ids, &corpus, false).unwrap();
    // The table exists: writing it again needs --overwrite.
    assert_err(create_corpus(&dir, &ids, &corpus, false), "", &["corpus"]);
    create_corpus(&dir, &ids, &corpus, true).unwrap();
    // A query of another width.
    let wide = clustered(1, 16, 1, 6);
    let narrow = store.search(&wide, 3, &StoreSearch::default());
    assert_err(narrow, "", &["width 16", "width 8"]);
    // Nothing to write.
    let empty = StoreSource::Memory {
        ids: Arc::new(Vec::new()),
        embeddings: Arc::new(Embeddings::new(8)),
    };
    let nothing = VectorStore::create(&dir, "empty", MODEL, empty, false, Box::new(|_| {}));
    assert_err(nothing, "", &["no rows"]);
    // A store or table that is not there.
    let absent = VectorStore::open(&dir.join("absent"), "corpus");
    assert_err(absent, "", &["absent", "no such vector store"]);
    assert_err(VectorStore::open(&dir, "other"), "", &["\"other\""]);
    assert_eq!(AnnIndex::parse("ivf-pq").unwrap(), AnnIndex::IvfPq);
    assert!(AnnIndex::parse("hnsw")
        .unwrap_err()
        .to_string()
        .contains("ivf-hnsw-sq"));
}
