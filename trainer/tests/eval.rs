//! End-to-end tests of `trainer eval`: every form, JSON shapes, the table, the demo set with the
//! default model (instructions must beat the query alone on the instructed mode), comparisons
//! with significance, and clear errors for bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{demo_set, model_dir, refused, s, stdout_ok as ok, trainer};

fn tmp(name: &str) -> PathBuf {
    crate::common::tmp("eval", name)
}

const QRELS: &str = "query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t2\nq1\tc\t0\nq2\tx\t1\n";
const RUN: &str =
    "q1 Q0 c 1 0.9 t\nq1 Q0 b 2 0.8 t\nq1 Q0 a 3 0.7 t\nq2 Q0 y 1 0.9 t\nq2 Q0 x 2 0.5 t\n";

/// A fresh folder `name` holding `qrels.tsv` (`QRELS`) and `run.trec` (`RUN`).
fn qrels_and_run(name: &str) -> PathBuf {
    let dir = tmp(name);
    std::fs::write(dir.join("qrels.tsv"), QRELS).unwrap();
    std::fs::write(dir.join("run.trec"), RUN).unwrap();
    dir
}

/// `trainer eval --qrels DIR/QRELS --run DIR/RUN EXTRA...`.
fn eval_run(dir: &Path, qrels: &str, run: &str, extra: &[&str]) -> Output {
    let (qrels, run) = (dir.join(qrels), dir.join(run));
    trainer(&[&["eval", "--qrels", s(&qrels), "--run", s(&run)][..], extra].concat())
}

#[test]
fn qrels_and_run_give_json_keyed_by_the_given_names() {
    let dir = qrels_and_run("run");
    let metrics = ["--metrics", "MRR@10,p@2,recall@100", "--json"];
    let out = ok(&eval_run(&dir, "qrels.tsv", "run.trec", &metrics));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3, "{v}");
    // q1: first relevant at rank 2; q2: rank 2 -> MRR 0.5. P@2: q1 1/2, q2 1/2. Recall: 1, 1.
    assert!((v["MRR@10"].as_f64().unwrap() - 0.5).abs() < 1e-12, "{v}");
    assert!((v["p@2"].as_f64().unwrap() - 0.5).abs() < 1e-12, "{v}");
    assert!(
        (v["recall@100"].as_f64().unwrap() - 1.0).abs() < 1e-12,
        "{v}"
    );
    // The default table is x100.
    let table = ok(&eval_run(&dir, "qrels.tsv", "run.trec", &[]));
    assert!(
        table.contains("mrr@10") && table.contains("50.00"),
        "{table}"
    );
}

#[test]
fn bad_inputs_name_the_file_and_line() {
    let dir = tmp("bad");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("bad-qrels.tsv", "query-id\tcorpus-id\tscore\nq1\ta\tx\n");
    write("run.trec", RUN);
    write("qrels.tsv", QRELS);
    write("bad.trec", "q1 Q0 a 1 0.5 t\nq1 Q0 b 2\n");
    // Empty files, duplicate documents and non-numeric scores name the file (and the line).
    write("empty.tsv", "query-id\tcorpus-id\tscore\n");
    write("empty.trec", "\n");
    write("dup.trec", "q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n");
    write("nan.trec", "q1 Q0 a 1 high t\n");
    for (qrels, run, extra, says) in [
        (
            "bad-qrels.tsv",
            "run.trec",
            &[][..],
            &["bad-qrels.tsv:2:"][..],
        ),
        ("qrels.tsv", "bad.trec", &[], &["bad.trec:2:"]),
        (
            "qrels.tsv",
            "run.trec",
            &["--metrics", "ndgc@10"],
            &["ndgc@10"],
        ),
        ("empty.tsv", "run.trec", &[], &["empty.tsv: no judgment"]),
        (
            "qrels.tsv",
            "empty.trec",
            &[],
            &["empty.trec: no result line"],
        ),
        ("qrels.tsv", "dup.trec", &[], &["dup.trec:2:", "twice"]),
        ("qrels.tsv", "nan.trec", &[], &["nan.trec:1:", "high"]),
    ] {
        refused(&eval_run(&dir, qrels, run, extra), says);
    }
    assert!(!trainer(&["eval"]).status.success());
    // A run query without judgments is ignored and a judged query missing from the run scores
    // 0: both are evaluated, with a warning each.
    std::fs::write(
        dir.join("partial.trec"),
        "q1 Q0 b 1 0.9 t\nq9 Q0 z 1 0.9 t\n",
    )
    .unwrap();
    let out = eval_run(
        &dir,
        "qrels.tsv",
        "partial.trec",
        &["--metrics", "mrr@10", "--json"],
    );
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert!(
        err.contains("without judgments") && err.contains("'q9'"),
        "{err}"
    );
    assert!(
        err.contains("missing from the run") && err.contains("'q2'"),
        "{err}"
    );
    // q1: b (relevant) at rank 1 -> 1; q2 absent -> 0; q9 not evaluated.
    assert!((v["mrr@10"].as_f64().unwrap() - 0.5).abs() < 1e-12, "{v}");
}

#[test]
fn demo_set_with_the_default_model_and_precomputed_runs() {
    let dir = tmp("set");
    let runs = dir.join("runs");
    let base_runs = dir.join("base-runs");
    let report = dir.join("model.json");
    let base = dir.join("base.json");
    let cache = dir.join("cache");
    let model = model_dir();
    let demo = demo_set();
    let model_args = ["--model", s(&model), "--passage-cache", s(&cache)];
    // `trainer eval --set DEMO` with `args`.
    let on_demo = |args: &[&str]| trainer(&[&["eval", "--set", s(&demo)][..], args].concat());
    // The model with instructions; save its runs and its full report; cache the passages.
    let out = ok(&on_demo(
        &[
            &model_args[..],
            &["--save-runs", s(&runs), "--output", s(&report), "--json"],
            &["--instfol", "qrels", "--instfol-k", "10"],
        ]
        .concat(),
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // INSTFOL with the qrels judge is present and in range (its formula is unit-tested in
    // engine/tests/metrics.rs).
    let instfol = v["instfol"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&instfol), "{v}");
    for key in ["og", "changed", "reversed", "p-mrr", "wise", "sicr"] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    for m in [
        "ndcg@10",
        "ndcg@5",
        "map@1000",
        "mrr@10",
        "recall@100",
        "p@10",
    ] {
        let x = v["og"][m].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&x), "{m} {x}");
    }
    // The query-alone baseline, reusing the cached passages.
    let baseline = |expect: &str| {
        let out = on_demo(
            &[
                &model_args[..],
                &["--no-instruction", "--save-runs", s(&base_runs)],
                &["--output", s(&base), "--json"],
            ]
            .concat(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(stderr.contains(expect), "expected '{expect}' in: {stderr}");
        serde_json::from_str::<serde_json::Value>(&ok(&out)).unwrap()
    };
    let b = baseline("passages read from");
    // A damaged cache file is never trusted: encoded again, replaced, same numbers.
    let cached: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    let bytes = std::fs::read(&cached[0]).unwrap();
    std::fs::write(&cached[0], &bytes[..bytes.len() / 2]).unwrap();
    let b2 = baseline("was unreadable");
    assert_eq!(b, b2);
    assert_eq!(std::fs::read(&cached[0]).unwrap(), bytes);
    // Without instructions the og/changed runs are identical, so nothing moves: p-MRR is 0.
    assert!(b["p-mrr"].as_f64().unwrap().abs() < 1e-12, "{b}");
    // The instructions are built to change relevance: using them must help on changed qrels.
    let with = v["changed"]["ndcg@10"].as_f64().unwrap();
    let without = b["changed"]["ndcg@10"].as_f64().unwrap();
    assert!(
        with > without,
        "instructed nDCG@10 {with} <= query-alone {without}"
    );
    // Re-evaluating the saved runs gives the same numbers.
    let run = |mode: &str| format!("{mode}={}", s(&runs.join(format!("{mode}.trec"))));
    let again = ok(&on_demo(&[
        "--run",
        &run("og"),
        "--run",
        &run("changed"),
        "--run",
        &run("reversed"),
        "--json",
    ]));
    let a: serde_json::Value = serde_json::from_str(&again).unwrap();
    for key in ["p-mrr", "wise", "sicr"] {
        assert!(
            (a[key].as_f64().unwrap() - v[key].as_f64().unwrap()).abs() < 1e-6,
            "{key}: {a} vs {v}"
        );
    }
    assert!((a["changed"]["ndcg@10"].as_f64().unwrap() - with).abs() < 1e-6);
    // Only og: standard metrics, no instruction metrics.
    let only_og = ok(&on_demo(&["--run", &run("og"), "--json"]));
    let o: serde_json::Value = serde_json::from_str(&only_og).unwrap();
    assert!(
        o.get("og").is_some() && o.get("p-mrr").is_none() && o.get("wise").is_none(),
        "{o}"
    );
    // Compare the two reports: a table with p-values, and JSON.
    let table = ok(&trainer(&["eval", "--compare", s(&report), s(&base)]));
    assert!(
        table.contains("p(t)") && table.contains("changed ndcg@10"),
        "{table}"
    );
    let cmp = ok(&trainer(&[
        "eval",
        "--compare",
        s(&report),
        s(&base),
        "--json",
    ]));
    let c: serde_json::Value = serde_json::from_str(&cmp).unwrap();
    let row = &c["comparison"]["changed ndcg@10"];
    assert!((row["a"].as_f64().unwrap() - with).abs() < 1e-9, "{c}");
    let p = row["p_randomization"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&p));
    // The output is the engine's serde type, which the recipe's tables read back by its names.
    let typed: engine::metrics::report::Comparison = serde_json::from_str(&cmp).unwrap();
    let label = engine::metrics::report::mode_metric_label("changed", "ndcg@10");
    assert_eq!(typed.comparison[&label].p_randomization, Some(p));
    assert!(typed
        .comparison
        .contains_key(engine::metrics::report::P_MRR));
    // A file that is not a report is refused clearly.
    let out = trainer(&["eval", "--compare", s(&runs.join("og.trec")), s(&base)]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("og.trec"));
}

#[test]
fn a_reader_that_goes_away_ends_the_output_without_a_panic() {
    let dir = qrels_and_run("pipe");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["eval", "--qrels", s(&dir.join("qrels.tsv")), "--run"])
        .arg(dir.join("run.trec"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader closes its end before the table is written (`trainer eval ... | head -0`).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn comparisons_need_a_query_in_common_and_permutations() {
    let dir = qrels_and_run("disjoint");
    let report = |system: &str, query: &str| {
        serde_json::json!({
            "system": system,
            "metrics": ["ndcg@10"],
            "modes": {"run": {"ndcg@10": {"mean": 0.5, "per_query": {query: 0.5}}}},
            "following": {}
        })
        .to_string()
    };
    std::fs::write(dir.join("a.json"), report("A", "q1")).unwrap();
    std::fs::write(dir.join("b.json"), report("B", "q2")).unwrap();
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let out = trainer(&["eval", "--compare", s(&a), s(&b)]);
    refused(&out, &["share no query"]);
    let out = trainer(&["eval", "--compare", s(&a), s(&a), "--permutations", "0"]);
    refused(&out, &["--permutations"]);
    // An empty item in --metrics is a typo, not a shorter list.
    let out = eval_run(
        &dir,
        "qrels.tsv",
        "run.trec",
        &["--metrics", "ndcg@10,,map"],
    );
    refused(&out, &["empty item"]);
}

/// `--constraint PREFIX` evaluates one family of the hand-written set: only its queries, with
/// the per-query values they have in the whole set (the corpus stays whole).
#[test]
fn one_family_of_instructions_is_evaluated_on_its_own() {
    let dir = tmp("family");
    let set = crate::common::repo_root().join("evalsets/instructions-heldout");
    let cache = dir.join("cache");
    let model = model_dir();
    let on_set = ["eval", "--set", s(&set), "--model", s(&model)];
    let report = |extra: &[&str], name: &str| -> serde_json::Value {
        let path = dir.join(name);
        let output = ["--passage-cache", s(&cache), "--output", s(&path)];
        ok(&trainer(&[&on_set[..], &output, extra].concat()));
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let whole = report(&[], "whole.json");
    let content = report(&["--constraint", "content"], "content.json");
    let per_query = |r: &serde_json::Value, metric: &str| -> BTreeMap<String, f64> {
        r["following"][metric]["per_query"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(q, v)| (q.clone(), v.as_f64().unwrap()))
            .collect()
    };
    for metric in ["p-mrr", "wise", "sicr"] {
        let part = per_query(&content, metric);
        assert_eq!(part.len(), 16, "{metric}: {part:?}");
        assert!(part.keys().all(|q| q.starts_with('c')), "{part:?}");
        let all = per_query(&whole, metric);
        assert_eq!(all.len(), 32);
        for (q, v) in &part {
            assert!((all[q] - v).abs() < 1e-9, "{metric} {q}: {} vs {v}", all[q]);
        }
    }
    let none = trainer(&[&on_set[..], &["--constraint", "no-such-family"]].concat());
    refused(&none, &["queries.jsonl", "no-such-family"]);
}

/// The case-matching set as `build.py` writes it: every case re-ranks its own eight trials,
/// judged 2, 2, 2, 1, 1, 0, 0, 0, with the task objective as its og instruction; the query-alone
/// mode encodes the case without it.
#[test]
fn the_case_matching_set_grades_eight_trials_for_every_case() {
    let root = crate::common::repo_root().join("evalsets/case-matching");
    let set = engine::EvalSet::load(&root).unwrap();
    assert_eq!((set.queries.len(), set.corpus.len()), (80, 640));
    let og = &set.qrels[&engine::Mode::Og];
    let candidates = set.candidates.as_ref().unwrap();
    for q in &set.queries {
        assert!(q.instruction_og.contains("clinical trials"), "{}", q.id);
        let pool = &candidates[&q.id];
        assert_eq!(pool.len(), 8, "{}", q.id);
        assert!(pool.iter().all(|d| d.starts_with(&format!("{}-t", q.id))));
        let mut grades: Vec<f64> = pool.iter().map(|d| og[&q.id][d]).collect();
        grades.sort_by(f64::total_cmp);
        assert_eq!(grades, [0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 2.0], "{}", q.id);
    }
}

#[test]
fn published_sets_evaluate_as_their_conversion_to_the_project_layout() {
    let dir = tmp("published");
    let model = model_dir();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/published");
    for name in ["followir-mteb", "infosearch", "mteb-parquet"] {
        let hub = fixtures.join(name);
        let native = dir.join(name);
        engine::EvalSet::load(&hub).unwrap().write(&native).unwrap();
        let report = |set: &std::path::Path| -> serde_json::Value {
            let args = ["eval", "--set", s(set), "--model", s(&model), "--json"];
            serde_json::from_str(&ok(&trainer(&args))).unwrap()
        };
        let published = report(&hub);
        assert_eq!(published, report(&native), "{name}");
        if name != "mteb-parquet" {
            assert!(published["p-mrr"].is_number(), "{name}: {published}");
        }
    }
    let mteb = fixtures.join("mteb-jsonl");
    let dev = ["--split", "dev", "--model", s(&model)];
    let err = trainer(&[&["eval", "--set", s(&mteb)][..], &dev].concat());
    refused(&err, &["no split `dev`"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
