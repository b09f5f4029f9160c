//! End-to-end tests of the `trainer` binary: embed (against sentence-transformers on texts the
//! engine's parity test never sees), search with a persistent index, the demo, and bad input.

use std::path::{Path, PathBuf};

use crate::common::{s, trainer};

fn tmp(name: &str) -> PathBuf {
    crate::common::tmp("cli", name)
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[test]
fn embed_matches_sentence_transformers_on_held_out_texts() {
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../engine/tests/golden/heldout_golden.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let records = golden["records"].as_array().unwrap();
    let dir = tmp("embed");
    let input = dir.join("in.jsonl");
    let lines: Vec<String> = records
        .iter()
        .enumerate()
        .map(|(i, r)| serde_json::json!({"_id": format!("t{i}"), "text": r["text"]}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let output = dir.join("out.jsonl");
    let out = trainer(&[
        "embed",
        "--input",
        s(&input),
        "--output",
        s(&output),
        "--batch-size",
        "3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&output).unwrap();
    let rows: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), records.len());
    for (i, (row, want)) in rows.iter().zip(records).enumerate() {
        assert_eq!(row["_id"], format!("t{i}"), "input order kept");
        let got: Vec<f64> = row["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let want: Vec<f64> = want["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let c = cosine(&got, &want);
        assert!(c >= 0.9999, "text {i}: cosine {c}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn embed_rejects_malformed_input_with_file_and_line_and_writes_nothing() {
    let dir = tmp("bad");
    let input = dir.join("bad.jsonl");
    std::fs::write(
        &input,
        "{\"_id\": \"a\", \"text\": \"fine\"}\n{\"_id\": \"b\", \"txt\": \"typo\"}\n",
    )
    .unwrap();
    let output = dir.join("out.jsonl");
    let out = trainer(&["embed", "--input", s(&input), "--output", s(&output)]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.jsonl:2") && err.contains("missing field `text`"),
        "{err}"
    );
    assert!(!output.exists());

    std::fs::write(&input, "").unwrap();
    let out = trainer(&["embed", "--input", s(&input), "--output", s(&output)]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no records"));

    std::fs::write(&input, "{\"_id\": \"a\", \"text\": \"fine\"}\n").unwrap();
    let out = trainer(&[
        "embed",
        "--input",
        s(&input),
        "--output",
        s(&output),
        "--model",
        "/nonexistent/model",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/model"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn search_builds_an_index_reuses_it_and_refuses_another_models_index() {
    let dir = tmp("search");
    let corpus = dir.join("corpus.jsonl");
    std::fs::write(
        &corpus,
        [
            r#"{"_id": "bread", "title": "Sourdough", "text": "Feed the starter, mix flour and water, bake at 250 degrees."}"#,
            r#"{"_id": "car", "text": "Electric cars need a charger at home; battery range depends on the weather."}"#,
            r#"{"_id": "forum", "text": "Posted in r/Breadit: my sourdough came out flat, any beginner tips?"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let index = dir.join("corpus.ifidx");
    let args = [
        "search",
        "--corpus",
        s(&corpus),
        "--index",
        s(&index),
        "--query",
        "how to bake sourdough bread",
        "--top-k",
        "3",
        "--json",
    ];
    let first = trainer(&args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(index.exists());
    let ranked: Vec<serde_json::Value> = String::from_utf8_lossy(&first.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ranked.len(), 3);
    assert_ne!(ranked[0]["_id"], "car");
    assert_eq!(ranked[2]["_id"], "car");

    // Second run reads the index (no corpus needed).
    let second = trainer(&[
        "search",
        "--index",
        s(&index),
        "--query",
        "how to bake sourdough bread",
        "--top-k",
        "3",
        "--json",
    ]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(first.stdout, second.stdout);

    // An index made by another model is refused.
    let (header, embeddings) = engine::retrieval::IndexReader::open(&index)
        .unwrap()
        .read_all()
        .unwrap();
    engine::retrieval::write_index(&index, "0000000000000000", &header.ids, &embeddings).unwrap();
    let third = trainer(&["search", "--index", s(&index), "--query", "bread"]);
    assert!(!third.status.success());
    let err = String::from_utf8_lossy(&third.stderr);
    assert!(
        err.contains("corpus.ifidx") && err.contains("rebuild the index"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn instruction_changes_the_ranking() {
    let dir = tmp("instr");
    let corpus = dir.join("corpus.jsonl");
    std::fs::write(
        &corpus,
        [
            r#"{"_id": "news", "text": "Reuters, 3 May 2019 - Sourdough sales rose 20% as bakeries expanded across Europe."}"#,
            r#"{"_id": "forum", "text": "Posted in a baking forum by breadlover: my sourdough loaf is dense, what am I doing wrong?"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let run = |instruction: &str| -> String {
        let out = trainer(&[
            "search",
            "--corpus",
            s(&corpus),
            "--query",
            "sourdough bread",
            "--instruction",
            instruction,
            "--json",
            "--top-k",
            "1",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap())
                .unwrap();
        v["_id"].as_str().unwrap().to_string()
    };
    assert_eq!(
        run("Only forum posts written by home bakers asking for help."),
        "forum"
    );
    assert_eq!(run("Only news articles reporting market figures."), "news");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn demo_prints_three_rankings_side_by_side() {
    let out = trainer(&["demo", "--top-k", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("query alone")
            && text.contains("+ instruction")
            && text.contains("+ reversed"),
        "{text}"
    );
    assert_eq!(text.matches("] query: ").count(), 3);
}

#[test]
fn embed_and_search_refuse_what_would_be_silently_wrong() {
    let dir = tmp("ambiguous");
    let input = dir.join("texts.jsonl");
    let output = dir.join("out.jsonl");
    // Two rows with one id could not be told apart in the output.
    std::fs::write(
        &input,
        "{\"_id\": \"a\", \"text\": \"one\"}\n{\"_id\": \"a\", \"text\": \"two\"}\n",
    )
    .unwrap();
    let out = trainer(&["embed", "--input", s(&input), "--output", s(&output)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("texts.jsonl:2") && err.contains("duplicate id 'a'"),
        "{err}"
    );
    assert!(!output.exists());
    // A blank line inside the file is legal, and said.
    std::fs::write(
        &input,
        "{\"_id\": \"a\", \"text\": \"one\"}\n\n{\"_id\": \"b\", \"text\": \"two\"}\n",
    )
    .unwrap();
    let out = trainer(&["embed", "--input", s(&input), "--output", s(&output)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: ") && err.contains("texts.jsonl:2"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&output).unwrap().lines().count(), 2);
    // Counts of 0 are refused by the flag's name, not turned into 1 or into nothing.
    let embed = [
        "embed",
        "--batch-size",
        "0",
        "--input",
        s(&input),
        "--output",
        s(&output),
    ];
    let search = [
        "search",
        "--top-k",
        "0",
        "--corpus",
        s(&input),
        "--query",
        "q",
    ];
    let demo = ["demo", "--top-k", "0"];
    for args in [&embed[..], &search[..], &demo[..]] {
        let out = trainer(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(args[1]) && err.contains("at least 1"),
            "{args:?}: {err}"
        );
    }
    // An empty query has nothing to rank by.
    let out = trainer(&["search", "--corpus", s(&input), "--query", "  "]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--query is empty"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `trainer index` of `corpus` into `output`, one shard (`I/N`) or the whole corpus.
fn index(corpus: &Path, output: &Path, shard: Option<&str>) -> std::process::Output {
    let mut args = vec!["index", "--corpus", s(corpus), "--output", s(output)];
    args.extend(shard.map(|part| ["--shard", part]).into_iter().flatten());
    trainer(&args)
}

/// `trainer index-merge` of `shards` into `output`.
fn merge(output: &Path, shards: &[&PathBuf]) -> std::process::Output {
    let mut args = vec!["index-merge", "--output", s(output)];
    args.extend(shards.iter().map(|p| s(p)));
    trainer(&args)
}

/// The run succeeded; its stderr.
fn succeeded(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    err
}

/// The run failed, saying `expected`.
fn refused(out: &std::process::Output, expected: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(expected),
        "{expected}: {err}"
    );
}

#[test]
fn shards_indexed_by_separate_processes_merge_into_the_single_process_index() {
    let dir = tmp("shards");
    let corpus = dir.join("corpus.jsonl");
    let lines: Vec<String> = (0..7)
        .map(|i| serde_json::json!({"_id": format!("p{i}"), "text": format!("passage number {i} about bread and ovens")}).to_string())
        .collect();
    std::fs::write(&corpus, lines.join("\n")).unwrap();
    let whole = dir.join("whole.ifidx");
    succeeded(&index(&corpus, &whole, None));
    // Three processes at once, one per part.
    let parts: Vec<PathBuf> = (0..3)
        .map(|i| dir.join(format!("part-{i}.ifidx")))
        .collect();
    let running: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let (corpus, part) = (corpus.clone(), part.clone());
            std::thread::spawn(move || index(&corpus, &part, Some(&format!("{i}/3"))))
        })
        .collect();
    for r in running {
        assert!(succeeded(&r.join().unwrap()).contains("of 7 passages"));
    }
    let merged = dir.join("merged.ifidx");
    succeeded(&merge(&merged, &[&parts[2], &parts[0], &parts[1]]));
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap(),
        "the merged index is the single-process index, byte for byte"
    );

    // A part missing, a part twice, a whole index among the shards: refused, nothing written.
    let nothing = dir.join("refused.ifidx");
    refused(
        &merge(&nothing, &[&parts[0], &parts[2]]),
        "shard 1/3 missing",
    );
    refused(
        &merge(&nothing, &[&parts[0], &parts[1], &parts[1], &parts[2]]),
        "given twice",
    );
    refused(&merge(&nothing, &[&parts[0], &whole]), "not a shard");
    // A shard cut from another version of the corpus.
    std::fs::write(&corpus, lines[..6].join("\n")).unwrap();
    let other = dir.join("other-0.ifidx");
    succeeded(&index(&corpus, &other, Some("0/3")));
    refused(
        &merge(&nothing, &[&other, &parts[1], &parts[2]]),
        "another cut or another corpus",
    );
    assert!(!nothing.exists());
    // A part outside the count.
    refused(&index(&corpus, &other, Some("3/3")), "--shard");
    std::fs::remove_dir_all(&dir).unwrap();
}
