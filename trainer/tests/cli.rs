//! End-to-end tests of the `trainer` binary: embed (against sentence-transformers on texts the
//! engine's parity test never sees), search with a persistent index, the demo, and bad input.

use std::path::{Path, PathBuf};

use crate::common::{json_lines, refused, s, succeeded, trainer, write_file};

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
    let lines: Vec<String> = records
        .iter()
        .enumerate()
        .map(|(i, r)| serde_json::json!({"_id": format!("t{i}"), "text": r["text"]}).to_string())
        .collect();
    let input = write_file(&dir, "in.jsonl", &lines.join("\n"));
    let output = dir.join("out.jsonl");
    succeeded(&embed(&input, &output, &["--batch-size", "3"]));
    let rows = crate::common::read_lines(&output);
    assert_eq!(rows.len(), records.len());
    let embedding = |v: &serde_json::Value| -> Vec<f64> {
        v["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    for (i, (row, want)) in rows.iter().zip(records).enumerate() {
        assert_eq!(row["_id"], format!("t{i}"), "input order kept");
        let c = cosine(&embedding(row), &embedding(want));
        assert!(c >= 0.9999, "text {i}: cosine {c}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `trainer embed --input INPUT --output OUTPUT EXTRA...`.
fn embed(input: &Path, output: &Path, extra: &[&str]) -> std::process::Output {
    trainer(
        &[
            &["embed", "--input", s(input), "--output", s(output)][..],
            extra,
        ]
        .concat(),
    )
}

#[test]
fn embed_rejects_malformed_input_with_file_and_line_and_writes_nothing() {
    let dir = tmp("bad");
    let typo = "{\"_id\": \"a\", \"text\": \"fine\"}\n{\"_id\": \"b\", \"txt\": \"typo\"}\n";
    let input = write_file(&dir, "bad.jsonl", typo);
    let output = dir.join("out.jsonl");
    refused(
        &embed(&input, &output, &[]),
        &["bad.jsonl:2", "missing field `text`"],
    );
    assert!(!output.exists());

    std::fs::write(&input, "").unwrap();
    refused(&embed(&input, &output, &[]), &["no records"]);

    std::fs::write(&input, "{\"_id\": \"a\", \"text\": \"fine\"}\n").unwrap();
    let out = embed(&input, &output, &["--model", "/nonexistent/model"]);
    refused(&out, &["/nonexistent/model"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fresh folder `name` holding `corpus.jsonl` with the lines `passages`: `(folder, corpus)`.
fn with_corpus(name: &str, passages: &[&str]) -> (PathBuf, PathBuf) {
    let dir = tmp(name);
    let corpus = write_file(&dir, "corpus.jsonl", &passages.join("\n"));
    (dir, corpus)
}

#[test]
fn search_builds_an_index_reuses_it_and_refuses_another_models_index() {
    let (dir, corpus) = with_corpus(
        "search",
        &[
            r#"{"_id": "bread", "title": "Sourdough", "text": "Feed the starter, mix flour and water, bake at 250 degrees."}"#,
            r#"{"_id": "car", "text": "Electric cars need a charger at home; battery range depends on the weather."}"#,
            r#"{"_id": "forum", "text": "Posted in r/Breadit: my sourdough came out flat, any beginner tips?"}"#,
        ],
    );
    let index = dir.join("corpus.ifidx");
    let query = [
        "--query",
        "how to bake sourdough bread",
        "--top-k",
        "3",
        "--json",
    ];
    let search = |source: &[&str]| trainer(&[&["search"][..], source, &query].concat());
    let first = search(&["--corpus", s(&corpus), "--index", s(&index)]);
    succeeded(&first);
    assert!(index.exists());
    let ranked = json_lines(&String::from_utf8_lossy(&first.stdout));
    assert_eq!(ranked.len(), 3);
    assert_ne!(ranked[0]["_id"], "car");
    assert_eq!(ranked[2]["_id"], "car");

    // Second run reads the index (no corpus needed).
    let second = search(&["--index", s(&index)]);
    succeeded(&second);
    assert_eq!(first.stdout, second.stdout);

    // An index made by another model is refused.
    crate::common::as_another_models_index(&index, &index);
    let third = trainer(&["search", "--index", s(&index), "--query", "bread"]);
    refused(&third, &["corpus.ifidx", "rebuild the index"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn instruction_changes_the_ranking() {
    let (dir, corpus) = with_corpus(
        "instr",
        &[
            r#"{"_id": "news", "text": "Reuters, 3 May 2019 - Sourdough sales rose 20% as bakeries expanded across Europe."}"#,
            r#"{"_id": "forum", "text": "Posted in a baking forum by breadlover: my sourdough loaf is dense, what am I doing wrong?"}"#,
        ],
    );
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
        succeeded(&out);
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
    succeeded(&out);
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
    let output = dir.join("out.jsonl");
    // Two rows with one id could not be told apart in the output.
    let twice = "{\"_id\": \"a\", \"text\": \"one\"}\n{\"_id\": \"a\", \"text\": \"two\"}\n";
    let input = write_file(&dir, "texts.jsonl", twice);
    refused(
        &embed(&input, &output, &[]),
        &["texts.jsonl:2", "duplicate id 'a'"],
    );
    assert!(!output.exists());
    // A blank line inside the file is legal, and said.
    let blank = "{\"_id\": \"a\", \"text\": \"one\"}\n\n{\"_id\": \"b\", \"text\": \"two\"}\n";
    std::fs::write(&input, blank).unwrap();
    let err = succeeded(&embed(&input, &output, &[]));
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
        refused(&trainer(args), &[args[1], "at least 1"]);
    }
    // An empty query has nothing to rank by.
    let out = trainer(&["search", "--corpus", s(&input), "--query", "  "]);
    refused(&out, &["--query is empty"]);
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

#[test]
fn shards_indexed_by_separate_processes_merge_into_the_single_process_index() {
    let dir = tmp("shards");
    let lines: Vec<String> = (0..7)
        .map(|i| serde_json::json!({"_id": format!("p{i}"), "text": format!("passage number {i} about bread and ovens")}).to_string())
        .collect();
    let corpus = write_file(&dir, "corpus.jsonl", &lines.join("\n"));
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
        &["shard 1/3 missing"],
    );
    refused(
        &merge(&nothing, &[&parts[0], &parts[1], &parts[1], &parts[2]]),
        &["given twice"],
    );
    refused(&merge(&nothing, &[&parts[0], &whole]), &["not a shard"]);
    // A shard cut from another version of the corpus.
    std::fs::write(&corpus, lines[..6].join("\n")).unwrap();
    let other = dir.join("other-0.ifidx");
    succeeded(&index(&corpus, &other, Some("0/3")));
    refused(
        &merge(&nothing, &[&other, &parts[1], &parts[2]]),
        &["another cut or another corpus"],
    );
    assert!(!nothing.exists());
    // A part outside the count.
    refused(&index(&corpus, &other, Some("3/3")), &["--shard"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
