//! `trainer store` and `trainer search --store` (feature `lancedb`): a real LanceDB table
//! written from an index file, searched through its ANN index, with recall against exact
//! search, and refusals.

use std::path::Path;

use crate::common::{refused, s, succeeded, tmp, trainer, write_file};

/// Runs `trainer ARGS`, asserting that it succeeded.
fn run(args: &[&str]) -> std::process::Output {
    let out = trainer(args);
    succeeded(&out);
    out
}

/// The ids of a `--json` ranking.
fn ranked_ids(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The arguments of `trainer store --index INDEX --store DB EXTRA...`.
fn store<'a>(index: &'a Path, db: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    [&["store", "--index", s(index), "--store", s(db)][..], extra].concat()
}

#[test]
fn a_store_written_from_an_index_ranks_as_the_index_and_reports_recall() {
    let dir = tmp("store", "cli");
    let topics = [
        "bread",
        "bicycles",
        "tax returns",
        "tomato plants",
        "jazz piano",
        "sleep",
    ];
    let lines: Vec<String> = (0..60)
        .map(|i| {
            let topic = topics[i % topics.len()];
            serde_json::json!({"_id": format!("p{i}"), "text": format!("note {i}: something about {topic}, part {}", i / topics.len())}).to_string()
        })
        .collect();
    let corpus = write_file(&dir, "corpus.jsonl", &lines.join("\n"));
    let index = dir.join("corpus.ifidx");
    run(&["index", "--corpus", s(&corpus), "--output", s(&index)]);
    let db = dir.join("db");
    let store_args = store(&index, &db, &["--ann", "ivf-flat", "--partitions", "4"]);
    // Written from inside `dir` to the relative folder `db`: LanceDB reads a URI that starts
    // with "db" as its cloud service, so the store must hand it an absolute path.
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_trainer"))
        .current_dir(&dir)
        .env("IFIR_MODEL", crate::common::model_dir())
        .args(["store", "--index", "corpus.ifidx", "--store", "db"])
        .args(["--ann", "ivf-flat", "--partitions", "4"])
        .output()
        .unwrap();
    let err = succeeded(&made);
    assert!(
        err.contains("wrote 60 rows") && err.contains("built the ivf-flat index"),
        "{err}"
    );

    let query = ["--query", "how to grow tomatoes", "--top-k", "8", "--json"];
    let flat = run(&[&["search", "--index", s(&index)][..], &query].concat());
    // Every partition probed: the ANN search is exact, and the recall says so.
    let probed = ["--index", s(&index), "--nprobes", "4"];
    let stored = run(&[&["search", "--store", s(&db)][..], &probed, &query].concat());
    assert_eq!(ranked_ids(&stored), ranked_ids(&flat));
    let err = String::from_utf8_lossy(&stored.stderr);
    assert!(
        err.contains("recall@8 against exact search") && err.contains(": 1.000"),
        "{err}"
    );
    // Without --index: the ranking alone.
    let alone = run(&[&["search", "--store", s(&db)][..], &query].concat());
    assert_eq!(ranked_ids(&alone), ranked_ids(&flat));

    // The table exists: refused without --overwrite, replaced with it.
    let again = trainer(&store_args);
    assert!(!again.status.success());
    run(&[&store_args[..], &["--overwrite"]].concat());
    // A store made by another model is refused, naming the table.
    let other = dir.join("other.ifidx");
    crate::common::as_another_models_index(&index, &other);
    run(&store(&other, &db, &["--table", "other", "--ann", "none"]));
    let table = ["search", "--store", s(&db), "--table", "other"];
    let other_table = trainer(&[&table[..], &query].concat());
    refused(&other_table, &["other.lance", "rebuild"]);
    // An unknown index kind, and a store that is not there.
    let bad = trainer(&store(&index, &db, &["--ann", "hnsw"]));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("ivf-hnsw-sq"));
    let absent = trainer(&[&["search", "--store", s(&dir.join("absent"))][..], &query].concat());
    assert!(String::from_utf8_lossy(&absent.stderr).contains("no such vector store"));
    std::fs::remove_dir_all(&dir).unwrap();
}
