//! The field's data sets as published on the Hugging Face hub, read as they lie: fixtures in
//! the exact shapes, written by the hub's own library (`fixtures/published/make_fixtures.py`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use engine::data::published::{parquet_to_jsonl, training_parquet_files};
use engine::training::{RecordFile, TrainingRecord};
use engine::{EvalSet, Mode};

use crate::common::assert_err;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/published")
        .join(name)
}

/// The judgments of the fixtures (make_fixtures.py `QRELS`).
fn expected(mode: Mode) -> BTreeMap<String, BTreeMap<String, f64>> {
    // "query passage level" judgments.
    let rows = match mode {
        Mode::Og => "q1 d1 1, q1 d2 1, q1 d5 0, q2 d3 2, q2 d4 1",
        Mode::Changed => "q1 d1 0, q1 d2 1, q1 d5 0, q2 d3 2, q2 d4 0",
        Mode::Reversed => "q1 d1 1, q1 d2 0, q2 d3 0, q2 d4 1",
    };
    let mut qrels: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for row in rows.split(", ") {
        let fields: Vec<&str> = row.split(' ').collect();
        qrels
            .entry(fields[0].to_string())
            .or_default()
            .insert(fields[1].to_string(), fields[2].parse().unwrap());
    }
    qrels
}

fn check_corpus(set: &EvalSet) {
    let ids: Vec<&str> = set.corpus.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["d1", "d2", "d3", "d4", "d5"]);
    assert_eq!(set.corpus[1].title, "Starter forum thread");
    assert!(
        set.corpus[3].title.is_empty() && set.corpus[3].text.starts_with("Heat pump subsidies")
    );
}

#[test]
fn mteb_retrieval_sets_read_as_plain_retrieval_in_jsonl_and_parquet() {
    for name in ["mteb-jsonl", "mteb-parquet"] {
        let set = EvalSet::load(&fixture(name)).unwrap();
        check_corpus(&set);
        assert_eq!(set.queries.len(), 2, "{name}");
        assert!(set
            .queries
            .iter()
            .all(|q| q.instruction_og.is_empty() && q.instruction_changed.is_none()));
        assert_eq!(
            set.qrels.keys().copied().collect::<Vec<_>>(),
            [Mode::Og],
            "{name}"
        );
        assert_eq!(set.qrels[&Mode::Og], expected(Mode::Og), "{name}");
        assert!(set.candidates.is_none());
    }
    // Another split by name; a split that is not there is named with those that are.
    let train = EvalSet::load_split(&fixture("mteb-jsonl"), Some("train")).unwrap();
    assert_eq!(train.qrels[&Mode::Og]["q1"].len(), 2);
    let dev = EvalSet::load_split(&fixture("mteb-jsonl"), Some("dev"));
    assert_err(dev, "", &["no split `dev`", "test, train"]);
}

#[test]
fn followir_and_infosearch_sets_keep_their_instructions_qrels_and_pools() {
    let followir = EvalSet::load(&fixture("followir-jsonl")).unwrap();
    check_corpus(&followir);
    assert_eq!(
        followir.queries[0].instruction_changed.as_deref(),
        Some("Only posts written by home bakers in a forum are relevant.")
    );
    assert_eq!(followir.modes(), [Mode::Og, Mode::Changed]);
    for mode in [Mode::Og, Mode::Changed] {
        assert_eq!(followir.qrels[&mode], expected(mode));
    }
    let pools = followir.candidates.as_ref().unwrap();
    assert_eq!(pools["q1"], ["d1", "d2", "d5"]);

    let infosearch = EvalSet::load(&fixture("infosearch")).unwrap();
    assert_eq!(infosearch.modes(), Mode::ALL);
    for mode in Mode::ALL {
        assert_eq!(infosearch.qrels[&mode], expected(mode), "{mode:?}");
    }
    assert_eq!(
        infosearch.queries[1].instruction_reversed.as_deref(),
        Some("Only documents about subsidies or prices are relevant.")
    );
}

#[test]
fn followir_in_mteb_folds_each_topics_og_and_changed_queries_into_one() {
    let set = EvalSet::load(&fixture("followir-mteb")).unwrap();
    check_corpus(&set);
    let ids: Vec<&str> = set.queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["q1", "q2"]);
    let q1 = &set.queries[0];
    assert_eq!(q1.text, "how to keep a sourdough starter alive");
    assert_eq!(
        q1.instruction_og,
        "Documents that answer the question are relevant."
    );
    assert_eq!(
        q1.instruction_changed.as_deref(),
        Some("Documents that answer the question are relevant. Only posts written by home bakers in a forum are relevant.")
    );
    assert_eq!(set.modes(), [Mode::Og, Mode::Changed]);
    for mode in [Mode::Og, Mode::Changed] {
        assert_eq!(set.qrels[&mode], expected(mode), "{mode:?}");
    }
    assert_eq!(set.candidates.as_ref().unwrap()["q2"], ["d3", "d4", "d5"]);
}

#[test]
fn inf_ir_training_tuples_in_parquet_become_training_records() {
    let files = training_parquet_files(&fixture("inf-ir"));
    assert_eq!(files.len(), 1, "found through the data/ folder");
    let dir = crate::common::tmp_folder("published-train");
    let jsonl = dir.join("train.jsonl");
    assert_eq!(parquet_to_jsonl(&files, &jsonl).unwrap(), 2);
    let mut records = RecordFile::open(&jsonl, false, &mut |_, _| {}).unwrap();
    assert_eq!(records.len(), 2);
    match records.read(1).unwrap() {
        TrainingRecord::InfIr(r) => {
            assert_eq!(r.query_positive, "how does a heat pump work in winter");
            assert!(r
                .document_positive
                .starts_with("A heat pump is like a fridge"));
            assert_eq!(r.query_negative, "why do fridges hum");
        }
        other => panic!("expected an InF-IR record, got {other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn broken_published_files_are_refused_naming_the_file_and_row() {
    let dir = crate::common::tmp_folder("published-broken");
    let copy = |from: &str, to: &Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture(from), to).unwrap();
    };
    // A corpus that is not Parquet at all.
    let set = dir.join("set");
    copy(
        "mteb-parquet/queries/test-00000-of-00001.parquet",
        &set.join("queries/test-00000-of-00001.parquet"),
    );
    copy(
        "mteb-parquet/qrels/test-00000-of-00001.parquet",
        &set.join("qrels/test-00000-of-00001.parquet"),
    );
    let corpus = set.join("corpus/test-00000-of-00001.parquet");
    std::fs::create_dir_all(corpus.parent().unwrap()).unwrap();
    std::fs::write(&corpus, b"PAR1 this is not a parquet file").unwrap();
    let unreadable = "not a readable Parquet file";
    let says = ["test-00000-of-00001.parquet", unreadable];
    assert_err(EvalSet::load(&set), "", &says);
    // An empty (zero-byte) queries shard.
    copy("mteb-parquet/corpus/test-00000-of-00001.parquet", &corpus);
    EvalSet::load(&set).unwrap();
    let queries = set.join("queries/test-00000-of-00001.parquet");
    std::fs::write(&queries, b"").unwrap();
    let prefix = queries.display().to_string();
    assert_err(EvalSet::load(&set), &prefix, &[unreadable]);
    // A JSONL qrels line without a score, named by line.
    let jsonl = dir.join("jsonl");
    for f in ["corpus.jsonl", "queries.jsonl"] {
        copy(&format!("mteb-jsonl/{f}"), &jsonl.join(f));
    }
    std::fs::create_dir_all(jsonl.join("qrels")).unwrap();
    std::fs::write(jsonl.join("qrels/test.jsonl"), "{\"query-id\":\"q1\",\"corpus-id\":\"d1\",\"score\":1}\n{\"query-id\":\"q1\",\"corpus-id\":\"d2\"}\n").unwrap();
    assert_err(
        EvalSet::load(&jsonl),
        "",
        &["qrels/test.jsonl:2", "'score'"],
    );
    // Two splits and neither is `test`.
    std::fs::rename(
        jsonl.join("qrels/test.jsonl"),
        jsonl.join("qrels/dev.jsonl"),
    )
    .unwrap();
    std::fs::write(jsonl.join("qrels/train.jsonl"), "").unwrap();
    let says = ["several splits (dev, train)", "--split"];
    assert_err(EvalSet::load(&jsonl), "", &says);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ifir_instructions_become_queries_with_their_level_and_relevant_candidates() {
    let set = EvalSet::load(&fixture("ifir/fiqa")).unwrap();
    check_corpus(&set);
    let ids: Vec<&str> = set.queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["0-0", "0-1", "1-0"]);
    let q = &set.queries[1];
    assert_eq!(q.text, "how to keep a sourdough starter alive");
    assert_eq!(
        q.instruction_og,
        "I want to hear from other home bakers, not from recipes."
    );
    assert_eq!(q.constraint.as_deref(), Some("level 2"));
    let og = &set.qrels[&Mode::Og];
    assert_eq!(
        og["0-1"],
        BTreeMap::from([("d1".into(), 0.0), ("d2".into(), 1.0), ("d5".into(), 0.0)])
    );
    assert_eq!(
        og["1-0"],
        BTreeMap::from([("d3".into(), 0.0), ("d4".into(), 1.0)])
    );
    let mut level3 = set.clone();
    assert_eq!(level3.keep_constraint("level 3"), 1);
}
