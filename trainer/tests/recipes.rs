//! The analysis scripts of `recipes/` (Python, standard library only), run on the trainer's
//! own outputs for a small graded set written here: what RESULTS.md reports with them must
//! be what the engine ranks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{model_dir, refused, s, stdout_ok, succeeded, tmp, trainer, write_file};

/// `python3`, or `None` (the caller skips, saying so) where there is none.
fn python() -> Option<&'static str> {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        crate::common::skipped("recipes: no python3 on PATH to run the recipes' scripts");
    }
    found.then_some("python3")
}

fn script(python: &str, name: &str, args: &[&str]) -> Output {
    Command::new(python)
        .arg(crate::common::repo_root().join("recipes").join(name))
        .args(args)
        .output()
        .expect("run python3")
}

/// Two queries, four candidates each, graded 2/1/0 (every grade written out, as
/// `evalsets/case-matching` does); some passages have titles.
fn graded_set(dir: &Path) -> PathBuf {
    let set = dir.join("set");
    std::fs::create_dir_all(set.join("qrels")).unwrap();
    let passages = [
        (
            "p1",
            "Garden",
            "Plant garlic cloves in autumn, a few weeks before the ground freezes.",
        ),
        (
            "p2",
            "",
            "Garlic planted in spring gives smaller bulbs than autumn planting.",
        ),
        (
            "p3",
            "Kitchen",
            "Roast garlic whole in the oven for a sweet, mild spread.",
        ),
        (
            "p4",
            "",
            "Tomatoes need warm soil; plant them after the last frost.",
        ),
        (
            "p5",
            "Money",
            "An index fund spreads savings across hundreds of companies at low cost.",
        ),
        (
            "p6",
            "",
            "Bond funds pay interest and swing less in price than stock funds.",
        ),
        (
            "p7",
            "",
            "A savings account is insured but pays little interest.",
        ),
        (
            "p8",
            "Travel",
            "Trains in Switzerland run on time and connect even small villages.",
        ),
    ];
    let corpus: String = passages
        .iter()
        .map(|(id, title, text)| {
            serde_json::json!({"_id": id, "title": title, "text": text}).to_string() + "\n"
        })
        .collect();
    write_file(&set, "corpus.jsonl", &corpus);
    write_file(
        &set,
        "queries.jsonl",
        "{\"_id\": \"q1\", \"text\": \"when should I plant garlic\"}\n\
         {\"_id\": \"q2\", \"text\": \"where to put my savings for the long term\"}\n",
    );
    let mut candidates = String::from("query-id\tcorpus-id\n");
    let mut qrels = String::from("query-id\tcorpus-id\tscore\n");
    let grades = [
        ("q1", [("p1", 2), ("p2", 1), ("p3", 0), ("p4", 0)]),
        ("q2", [("p5", 2), ("p6", 1), ("p7", 1), ("p8", 0)]),
    ];
    for (query, graded) in grades {
        for (passage, grade) in graded {
            candidates += &format!("{query}\t{passage}\n");
            qrels += &format!("{query}\t{passage}\t{grade}\n");
        }
    }
    write_file(&set, "candidates.tsv", &candidates);
    write_file(&set.join("qrels"), "og.tsv", &qrels);
    set
}

/// The run `trainer eval --save-runs` writes for the set, the query alone.
fn engine_run(set: &Path, dir: &Path) -> PathBuf {
    let runs = dir.join("runs");
    let model = model_dir();
    succeeded(&trainer(&[
        "eval",
        "--set",
        s(set),
        "--no-instruction",
        "--model",
        s(&model),
        "--save-runs",
        s(&runs),
    ]));
    runs.join("og.trec")
}

/// query -> [(passage, score)] in rank order.
fn ranking(run: &str) -> Vec<(String, Vec<(String, f64)>)> {
    let mut queries: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    for line in run.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let entry = (f[2].to_string(), f[4].parse::<f64>().unwrap());
        match queries.last_mut() {
            Some((q, list)) if q == f[0] => list.push(entry),
            _ => queries.push((f[0].to_string(), vec![entry])),
        }
    }
    queries
}

#[test]
fn crossing_a_model_with_itself_ranks_as_the_engine_does() {
    let Some(python) = python() else { return };
    let dir = tmp("recipes", "mixed-towers");
    let set = graded_set(&dir);
    let texts = dir.join("texts");
    let out = script(python, "mixed_towers.py", &["texts", s(&set), s(&texts)]);
    succeeded(&out);
    let model = model_dir();
    for side in ["queries", "passages"] {
        succeeded(&trainer(&[
            "embed",
            "--model",
            s(&model),
            "--input",
            s(&texts.join(format!("{side}.jsonl"))),
            "--output",
            s(&dir.join(format!("{side}.emb.jsonl"))),
        ]));
    }
    let candidates = set.join("candidates.tsv");
    let mixed = stdout_ok(&script(
        python,
        "mixed_towers.py",
        &[
            "rank",
            s(&dir.join("queries.emb.jsonl")),
            s(&dir.join("passages.emb.jsonl")),
            s(&candidates),
        ],
    ));
    let engine = std::fs::read_to_string(engine_run(&set, &dir)).unwrap();
    let (mixed, engine) = (ranking(&mixed), ranking(&engine));
    assert_eq!((mixed.len(), engine.len()), (2, 2));
    for ((q, ours), (q2, theirs)) in mixed.iter().zip(&engine) {
        assert_eq!(q, q2);
        let order = |r: &[(String, f64)]| r.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(order(ours), order(theirs), "query {q}");
        for ((p, a), (_, b)) in ours.iter().zip(theirs) {
            assert!(
                (a - b).abs() < 1e-4,
                "{q} {p}: {a} against the engine's {b}"
            );
        }
    }
    // Titles are joined as the engine joins them: the engine's score for p1 ("Garden ...")
    // was matched above. Bad embeddings are refused, naming the file (and line).
    let queries_file = dir.join("queries.emb.jsonl");
    let rank_with = |query_file: &Path, passage_file: &Path| {
        script(
            python,
            "mixed_towers.py",
            &["rank", s(query_file), s(passage_file), s(&candidates)],
        )
    };
    let one = serde_json::json!({"_id": "p1", "embedding": vec![1.0; 384]}).to_string();
    let one = write_file(&dir, "one.emb.jsonl", &(one + "\n"));
    refused(
        &rank_with(&queries_file, &one),
        &["one.emb.jsonl", "no embedding for passage 'p2'"],
    );
    let narrow = write_file(
        &dir,
        "narrow.emb.jsonl",
        "{\"_id\": \"p1\", \"embedding\": [1.0, 0.0]}\n",
    );
    refused(
        &rank_with(&queries_file, &narrow),
        &[
            "queries.emb.jsonl has 384 values a line",
            "narrow.emb.jsonl 2",
        ],
    );
    let ragged = write_file(
        &dir,
        "ragged.emb.jsonl",
        "{\"_id\": \"p1\", \"embedding\": [1.0, 0.0]}\n{\"_id\": \"p2\", \"embedding\": [1.0]}\n",
    );
    refused(
        &rank_with(&queries_file, &ragged),
        &["ragged.emb.jsonl:2:", "1 values, the lines before 2"],
    );
    let bad = write_file(&dir, "bad.emb.jsonl", "{\"_id\": \"q1\"}\n");
    refused(
        &rank_with(&bad, &dir.join("passages.emb.jsonl")),
        &["bad.emb.jsonl:1:", "not an embedding line"],
    );
}

#[test]
fn ordering_errors_counts_the_wrongly_ordered_pairs_by_grade() {
    let Some(python) = python() else { return };
    let dir = tmp("recipes", "ordering-errors");
    let set = graded_set(&dir);
    let qrels = set.join("qrels/og.tsv");
    let one_swap = write_file(
        &dir,
        "one_swap.trec",
        "q1 Q0 p1 1 4 t\nq1 Q0 p2 2 3 t\nq1 Q0 p3 3 2 t\nq1 Q0 p4 4 1 t\n\
         q2 Q0 p7 1 4 t\nq2 Q0 p5 2 3 t\nq2 Q0 p6 3 2 t\nq2 Q0 p8 4 1 t\n",
    );
    // Every candidate in the reverse order: each grade-0 one above every on-topic one
    // (4 pairs for q1, 3 for q2), and grade 1 above grade 2 twice (p2 over p1, p6 over p5).
    let reversed = write_file(
        &dir,
        "reversed.trec",
        "q1 Q0 p4 1 4 t\nq1 Q0 p3 2 3 t\nq1 Q0 p2 3 2 t\nq1 Q0 p1 4 1 t\n\
         q2 Q0 p8 1 4 t\nq2 Q0 p6 2 3 t\nq2 Q0 p5 3 2 t\nq2 Q0 p7 4 1 t\n",
    );
    let said = stdout_ok(&script(
        python,
        "ordering_errors.py",
        &[s(&qrels), s(&one_swap), s(&reversed)],
    ));
    let lines: Vec<&str> = said.lines().collect();
    assert!(
        lines[0].contains("grade 0 above 1-2 in 0 of 7 pairs; 1 above 2 in 1 of 3"),
        "{said}"
    );
    assert!(
        lines[0].contains("first-ranked grades {1: 1, 2: 1}"),
        "{said}"
    );
    assert!(
        lines[1].contains("grade 0 above 1-2 in 7 of 7 pairs; 1 above 2 in 2 of 3"),
        "{said}"
    );
    assert!(
        lines[1].contains("+3.50 grade-0-above pairs a query"),
        "{said}"
    );
    let bad = write_file(&dir, "bad.trec", "q1 Q0 p1 1 4 t\nq1 Q0 p2 2 high t\n");
    refused(
        &script(python, "ordering_errors.py", &[s(&qrels), s(&bad)]),
        &["bad.trec:2:", "'high' is not a number"],
    );
}
