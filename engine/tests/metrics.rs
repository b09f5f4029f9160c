//! Metrics against trusted references: pytrec_eval (trec_cases.json), an independent Python
//! implementation of the FollowIR / InfoSearch reference semantics (instruction_cases.json),
//! scipy (significance_cases.json), and the worked examples of seeds-spec §1 and §5.4.6.
//! Every golden file is made by a script next to it in engine/tests/golden/metrics/.

use std::collections::BTreeMap;
use std::path::Path;

use engine::data::Qrels;
use engine::metrics::instfol::{
    instfol, instfol_query, logprob_weighted_score, InstructionJudge, QrelsJudge,
};
use engine::metrics::instruction_following::{
    infosearch, p_mrr, p_mrr_doc, robustness, sicr_doc, wise_doc, WiseConfig,
};
use engine::metrics::significance::{
    paired_t_test, randomization_test, randomization_test_sampled,
};
use engine::metrics::{evaluate, Metric, QuerySet, Run};
use serde_json::Value;

use crate::common::assert_err;

fn golden(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/metrics")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn qrels(v: &Value) -> Qrels {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(q, docs)| {
            let j = docs
                .as_object()
                .unwrap()
                .iter()
                .map(|(d, r)| (d.clone(), r.as_f64().unwrap()))
                .collect();
            (q.clone(), j)
        })
        .collect()
}

fn run(v: &Value) -> Run {
    let mut run = Run::new();
    for (q, docs) in v.as_object().unwrap() {
        let docs: Vec<(String, f64)> = docs
            .as_object()
            .unwrap()
            .iter()
            .map(|(d, s)| (d.clone(), s.as_f64().unwrap()))
            .collect();
        run.set_query(q, docs);
    }
    run
}

fn metric_of(trec_name: &str) -> Metric {
    let name = match trec_name {
        "map" => "map".to_string(),
        "recip_rank" => "mrr".to_string(),
        n => {
            let (base, k) = n.rsplit_once('_').unwrap();
            let base = match base {
                "ndcg_cut" => "ndcg",
                "map_cut" => "map",
                "recall" => "recall",
                "P" => "p",
                "recip_rank_cut" => "mrr",
                other => panic!("unknown measure {other}"),
            };
            format!("{base}@{k}")
        }
    };
    name.parse().unwrap()
}

#[test]
fn standard_metrics_match_pytrec_eval() {
    let g = golden("trec_cases.json");
    let names: Vec<String> = g["measures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let metrics: Vec<Metric> = names.iter().map(|n| metric_of(n)).collect();
    let mut checked = 0;
    for case in g["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (qrels, run) = (qrels(&case["qrels"]), run(&case["run"]));
        let eval = evaluate(&qrels, &run, &metrics, QuerySet::JudgedAndRun);
        let evaluated: Vec<&str> = case["evaluated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q.as_str().unwrap())
            .collect();
        let ours: Vec<&str> = eval.per_query.keys().map(|s| s.as_str()).collect();
        assert_eq!(ours, evaluated, "{name}: evaluated queries");
        for (qid, expected) in case["per_query"].as_object().unwrap() {
            for (i, n) in names.iter().enumerate() {
                let want = expected[n].as_f64().unwrap();
                let got = eval.per_query[qid][i];
                assert!(
                    (got - want).abs() < 1e-9,
                    "{name} {qid} {n}: ours {got}, pytrec_eval {want}"
                );
                checked += 1;
            }
        }
        // With -c semantics every judged query counts; a query missing from the run scores 0.
        let complete = evaluate(&qrels, &run, &metrics, QuerySet::Judged);
        for (qid, values) in &complete.per_query {
            if run.docs(qid).is_none() {
                assert!(
                    values.iter().all(|v| *v == 0.0),
                    "{name} {qid}: absent query must score 0"
                );
            }
        }
    }
    assert!(checked > 1000, "only {checked} values checked");
}

#[test]
fn standard_metrics_reproduce_the_spec_examples() {
    // One query ranking d0, d1, ... with the relevance `rels`, and the relevant passage
    // `unranked` outside the ranking.
    let one_query = |rels: &[f64], unranked: &str| -> (Qrels, Run) {
        let mut run = Run::new();
        let mut q = BTreeMap::new();
        for (i, rel) in rels.iter().enumerate() {
            run.insert("q", &format!("d{i}"), 10.0 - i as f64);
            q.insert(format!("d{i}"), *rel);
        }
        q.insert(unranked.into(), 1.0);
        ([("q".to_string(), q)].into(), run)
    };
    // §1.1: R N R N R with |R| = 4 -> AP 0.5667.
    let (qrels, run) = one_query(&[1.0, 0.0, 1.0, 0.0, 1.0], "missing");
    let e = evaluate(
        &qrels,
        &run,
        &["map@1000".parse().unwrap(), "mrr@10".parse().unwrap()],
        QuerySet::Judged,
    );
    assert!((e.mean[0] - (1.0 + 2.0 / 3.0 + 0.6) / 4.0).abs() < 1e-12);
    assert_eq!(e.mean[1], 1.0);
    // §1.2: [1,0,1,0,0] with 3 relevant -> nDCG@5 0.7039.
    let (qrels, run) = one_query(&[1.0, 0.0, 1.0, 0.0, 0.0], "other");
    let e = evaluate(&qrels, &run, &["ndcg@5".parse().unwrap()], QuerySet::Judged);
    assert!((e.mean[0] - 0.7039).abs() < 1e-4, "{}", e.mean[0]);
}

#[test]
fn fractional_levels_are_gains_and_count_as_relevant() {
    // Levels 0.5, 0, 0.25 ranked in that order; a 1.0 document is not retrieved.
    let mut run = Run::new();
    let mut q = BTreeMap::new();
    for (i, rel) in [0.5, 0.0, 0.25].iter().enumerate() {
        run.insert("q", &format!("d{i}"), 10.0 - i as f64);
        q.insert(format!("d{i}"), *rel);
    }
    q.insert("top".into(), 1.0);
    let qrels: Qrels = [("q".to_string(), q)].into();
    let metrics = Metric::parse_list("ndcg@3,map@1000,mrr@10,recall@100,p@3").unwrap();
    let e = evaluate(&qrels, &run, &metrics, QuerySet::Judged);
    let dcg = 0.5 + 0.25 / 4f64.log2();
    let idcg = 1.0 + 0.5 / 3f64.log2() + 0.25 / 4f64.log2();
    assert!((e.mean[0] - dcg / idcg).abs() < 1e-12, "{}", e.mean[0]);
    assert!((e.mean[1] - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-12);
    assert_eq!(e.mean[2], 1.0);
    assert!((e.mean[3] - 2.0 / 3.0).abs() < 1e-12);
    assert!((e.mean[4] - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn metric_names_parse_and_reject_nonsense() {
    let m = Metric::parse_list("ndcg@10, MAP@1000,mrr@10,recall@100,P@10,map").unwrap();
    let shown: Vec<String> = m.iter().map(|m| m.to_string()).collect();
    assert_eq!(
        shown,
        ["ndcg@10", "map@1000", "mrr@10", "recall@100", "p@10", "map"]
    );
    for bad in ["ndcg@10,,map", "ndcg@10,", ",map"] {
        let err = Metric::parse_list(bad).unwrap_err().to_string();
        assert!(err.contains("empty item"), "{err}");
    }
    for bad in ["ndgc@10", "ndcg@0", "ndcg@ten", "map@-1"] {
        let err = bad.parse::<Metric>().unwrap_err().to_string();
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn trec_run_files_parse_with_clear_errors() {
    let p = Path::new("runs/x.trec");
    let run =
        Run::parse_trec("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.9 t\n\nq2 Q0 d1 1 -3 t\n", p).unwrap();
    assert_eq!(
        run.ranked("q1").iter().map(|d| d.0).collect::<Vec<_>>(),
        ["d2", "d1"]
    );
    assert_eq!(run.len(), 2);
    for (text, prefix, says) in [
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d1\n", "runs/x.trec:2:", &[][..]),
        ("q1 Q0 d1 1 abc t\n", "runs/x.trec:1:", &["abc"]),
        (
            "q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n",
            "runs/x.trec:3:",
            &["twice"],
        ),
        ("q1 Q0 d1 1 NaN t\n", "", &["not finite"]),
    ] {
        assert_err(Run::parse_trec(text, p), prefix, says);
    }
    // Round trip through the writer.
    let mut out = Vec::new();
    run.write_trec(&mut out, "sys").unwrap();
    let back = Run::parse_trec(std::str::from_utf8(&out).unwrap(), p).unwrap();
    assert_eq!(back.ranked("q1"), run.ranked("q1"));
}

#[test]
fn large_runs_parse_in_parallel_pieces_exactly_like_small_ones() {
    // Over 1 MB: parsed in pieces on several threads when the machine has several cores.
    let p = Path::new("big.trec");
    let mut lines = Vec::new();
    let mut expected: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for q in 0..60 {
        for d in 0..1000 {
            let score = ((q * 7919 + d * 104729) % 100_000) as f64 / 1000.0;
            lines.push(format!("q{q} Q0 doc{d} {} {score} tag", d + 1));
            expected
                .entry(format!("q{q}"))
                .or_default()
                .push((format!("doc{d}"), score));
        }
    }
    // q0 comes back at the very end (not contiguous): its documents are kept in file order.
    lines.push("q0 Q0 late 1001 -1 tag".into());
    expected
        .get_mut("q0")
        .unwrap()
        .push(("late".to_string(), -1.0));
    let text = lines.join("\n") + "\n";
    assert!(text.len() > 1 << 20);
    let run = Run::parse_trec(&text, p).unwrap();
    let mut reference = Run::new();
    for (q, docs) in expected {
        reference.set_query(&q, docs);
    }
    assert!(
        run == reference,
        "parallel parse differs from the expected run"
    );
    // Errors name the line of the whole file, whichever piece it falls in.
    let parse = |lines: &[String]| Run::parse_trec(&(lines.join("\n") + "\n"), p);
    for bad_line in [1, 30_001, 45_000, 60_001] {
        let mut broken = lines.clone();
        broken[bad_line - 1] = "q1 Q0 broken 1 not-a-score tag".into();
        let prefix = format!("big.trec:{bad_line}:");
        assert_err(parse(&broken), &prefix, &["not-a-score"]);
    }
    let mut dup = lines.clone();
    dup.push("q7 Q0 doc123 9 0.5 tag".into());
    let twice = "'doc123' appears twice for query 'q7'";
    assert_err(parse(&dup), "big.trec:60002:", &[twice]);
}

#[test]
fn explanations_add_up_to_the_metrics_on_random_cases() {
    use engine::metrics::explain;
    use engine::metrics::instruction_following::{infosearch, p_mrr, WiseConfig};
    let mut seed = 12345u64;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut checked = 0;
    for case in 0..300 {
        let docs: Vec<String> = (0..(3 + next(20))).map(|d| format!("d{d}")).collect();
        let mut runs = [Run::new(), Run::new(), Run::new()];
        for run in runs.iter_mut() {
            run.add_empty_query("q");
            for d in &docs {
                if next(5) > 0 {
                    run.insert("q", d, next(8) as f64 / 4.0);
                }
            }
        }
        let mut judged = [BTreeMap::new(), BTreeMap::new(), BTreeMap::new()];
        for j in judged.iter_mut() {
            for d in &docs {
                if next(3) > 0 {
                    let level = [0.0, 1.0, 2.0, 0.5][next(4) as usize];
                    j.insert(d.clone(), level);
                }
            }
        }
        let qrels: Vec<Qrels> = judged
            .iter()
            .map(|j| [("q".to_string(), j.clone())].into())
            .collect();
        let k = [1, 3, 5, 10, 1000][case % 5];
        let metrics = Metric::parse_list(&format!("ndcg@{k},map@{k},mrr@{k}")).unwrap();
        let e = evaluate(&qrels[1], &runs[1], &metrics, QuerySet::Judged);
        if e.per_query.contains_key("q") {
            let v = &e.per_query["q"];
            let n = explain::ndcg(&runs[1], "q", &judged[1], k);
            assert!(close(n.value, v[0]), "ndcg {} vs {}", n.value, v[0]);
            assert!(close(
                n.terms.iter().map(|t| t.value).sum::<f64>(),
                n.value * ideal_dcg(&judged[1], k)
            ));
            let ap = explain::average_precision(&runs[1], "q", &judged[1], k);
            assert!(close(ap.value, v[1]), "ap {} vs {}", ap.value, v[1]);
            let rr = explain::reciprocal_rank(&runs[1], "q", &judged[1], k);
            assert!(close(rr.value, v[2]), "rr {} vs {}", rr.value, v[2]);
            checked += 3;
        }
        let pm = p_mrr(&qrels[0], &qrels[1], &runs[0], &runs[1]);
        let ex = explain::p_mrr(&runs[0], &runs[1], "q", &judged[0], &judged[1]);
        assert_eq!(pm.per_query.contains_key("q"), ex.is_some());
        if let Some(ex) = ex {
            assert!(close(ex.value, pm.per_query["q"]));
            assert!(close(
                ex.terms.iter().map(|t| t.value).sum::<f64>() / ex.terms.len() as f64,
                ex.value
            ));
            checked += 1;
        }
        let config = WiseConfig::default();
        let is = infosearch(&qrels[0], &qrels[1], [&runs[0], &runs[1], &runs[2]], config);
        let w = explain::wise(
            [&runs[0], &runs[1], &runs[2]],
            "q",
            &judged[0],
            &judged[1],
            config,
        );
        let s = explain::sicr([&runs[0], &runs[1], &runs[2]], "q", &judged[0], &judged[1]);
        assert_eq!(is.wise.per_query.contains_key("q"), w.is_some());
        if let (Some(w), Some(s)) = (w, s) {
            assert!(close(w.value, is.wise.per_query["q"]));
            assert!(close(s.value, is.sicr.per_query["q"]));
            checked += 2;
        }
    }
    assert!(checked > 500, "only {checked} values checked");
}

fn ideal_dcg(judged: &BTreeMap<String, f64>, k: usize) -> f64 {
    let mut g: Vec<f64> = judged.values().copied().filter(|g| *g > 0.0).collect();
    g.sort_by(|a, b| b.total_cmp(a));
    g.iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / ((i + 2) as f64).log2())
        .sum()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn check_per_query(name: &str, what: &str, got: &engine::metrics::PerQuery, want: &Value) {
    let want_pq = want["per_query"].as_object().unwrap();
    assert_eq!(
        got.per_query.len(),
        want_pq.len(),
        "{name} {what}: query count"
    );
    for (q, v) in want_pq {
        let g = got.per_query[q];
        assert!(
            close(g, v.as_f64().unwrap()),
            "{name} {what} {q}: ours {g}, reference {v}"
        );
    }
    assert!(
        close(got.mean, want["mean"].as_f64().unwrap()),
        "{name} {what} mean"
    );
}

#[test]
fn instruction_metrics_match_the_reference_implementation() {
    let g = golden("instruction_cases.json");
    let cases = g["cases"].as_array().unwrap();
    assert!(cases.len() >= 30);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (qo, qc) = (qrels(&case["qrels_og"]), qrels(&case["qrels_changed"]));
        let (ro, rc) = (run(&case["run_og"]), run(&case["run_changed"]));
        let exp = &case["expected"];
        let p = p_mrr(&qo, &qc, &ro, &rc);
        match exp.get("p_mrr") {
            Some(want) => check_per_query(name, "p-mrr", &p, want),
            None => assert!(p.is_empty(), "{name}: no query should qualify for p-MRR"),
        }
        let Some(rr) = case.get("run_reversed").map(run) else {
            continue;
        };
        for (strict, key, ideal_key) in [
            (false, "wise", "ideal_wise"),
            (true, "wise_strict", "ideal_wise_strict"),
        ] {
            let s = infosearch(
                &qo,
                &qc,
                [&ro, &rc, &rr],
                WiseConfig {
                    k: 20,
                    strict_n: strict,
                },
            );
            match exp.get(key) {
                Some(want) => {
                    check_per_query(name, key, &s.wise, want);
                    check_per_query(name, ideal_key, &s.ideal_wise, &exp[ideal_key]);
                    check_per_query(name, "sicr", &s.sicr, &exp["sicr"]);
                    let per_key = if strict { "per_strict" } else { "per" };
                    if let (Some(ours), Some(want)) = (s.per(), exp[per_key]["mean"].as_f64()) {
                        assert!(close(ours, want), "{name} {per_key}");
                    }
                }
                None => assert!(s.wise.is_empty(), "{name}: no gold document expected"),
            }
        }
    }
}

#[test]
fn instruction_metrics_reproduce_the_spec_examples() {
    // §1.4: q1 = (0.75 - 0.40) / 2, q2 = 0 -> p-MRR 0.0875.
    let q1 = (p_mrr_doc(2, 8) + p_mrr_doc(5, 3)) / 2.0;
    assert!(close(q1, 0.175));
    assert!(close((q1 + p_mrr_doc(10, 10)) / 2.0, 0.0875));
    assert!(close(p_mrr_doc(10, 5), -0.5) && close(p_mrr_doc(100, 50), -0.5));
    // §5.4.6 cases A-H (K = 20, N = 3) -> WISE -0.0680.
    let c = WiseConfig::default();
    let cases = [
        (5, 2, 9),
        (2, 1, 4),
        (25, 3, 30),
        (4, 6, 10),
        (6, 3, 2),
        (5, 8, 3),
        (5, 2, 4),
        (5, 3, 5),
    ];
    let want = [0.6459, 1.0, 0.01, -0.3333, -0.6667, -1.0, -0.2, 0.0];
    let mut sum = 0.0;
    for ((ro, ri, rr), w) in cases.iter().zip(want) {
        let f = wise_doc(*ro, *ri, *rr, 3, c);
        assert!((f - w).abs() < 1e-4, "{ro},{ri},{rr}: {f} vs {w}");
        sum += f;
    }
    assert!((sum / 8.0 - -0.0680).abs() < 1e-4);
    // Heatmap cells and the N switch.
    assert!((wise_doc(14, 7, 15, 1, c) - 0.328).abs() < 1e-3);
    assert!((wise_doc(20, 19, 21, 1, c) - 0.218).abs() < 1e-3);
    assert_eq!(wise_doc(3, 1, 4, 3, c), 1.0);
    let strict = WiseConfig {
        k: 20,
        strict_n: true,
    };
    assert!((wise_doc(3, 1, 4, 3, strict) - 0.929).abs() < 1e-3);
    // SICR for case A.
    assert!(sicr_doc((5, 2, 9), (0.80, 0.85, 0.70)));
    assert!(!sicr_doc((5, 2, 9), (0.80, 0.78, 0.70)));
    // The R_ori = 1 rule: a perfect retriever complies.
    assert!(sicr_doc((1, 1, 2), (0.9, 0.9, 0.5)));
}

#[test]
fn robustness_takes_the_worst_variant_per_core_query() {
    let per_query: BTreeMap<String, f64> = [("a1", 0.9), ("a2", 0.3), ("b1", 0.5)]
        .iter()
        .map(|(q, v)| (q.to_string(), *v))
        .collect();
    let r = robustness(&per_query, |q| q[..1].to_string());
    assert!(close(r, (0.3 + 0.5) / 2.0));
}

#[test]
fn instfol_follows_the_worked_example_and_the_qrels_judge() {
    // §6.4: a judge distribution 0.1/0.2/0.6/0.1 over 0..3 gives 1.7.
    let cands: Vec<(String, f64)> = [("0", 0.1), ("1", 0.2), ("2", 0.6), ("3", 0.1)]
        .iter()
        .map(|(t, p)| (t.to_string(), f64::ln(*p)))
        .collect();
    assert!(close(logprob_weighted_score(&cands, 3.0).unwrap(), 1.7));
    assert_eq!(logprob_weighted_score(&[("x".into(), 0.0)], 3.0), None);
    // S_q = 1.2, S_inst = 2.1667 -> 0.537.
    assert!((instfol_query(1.2, (2.5 + 1.8 + 2.2) / 3.0, 3.0) - 0.537).abs() < 1e-3);
    assert_eq!(instfol_query(3.0, 3.0, 3.0), 0.0);
    // The qrels judge: INSTFOL = (P@K_inst - P@K_q) / (1 - P@K_q).
    let mut qrels = Qrels::new();
    qrels.insert(
        "q".into(),
        [("a".to_string(), 1.0), ("b".to_string(), 1.0)].into(),
    );
    let mut alone = Run::new();
    let mut inst = Run::new();
    for (i, d) in ["x", "a", "y", "z"].iter().enumerate() {
        alone.insert("q", d, -(i as f64));
    }
    for (i, d) in ["a", "b", "x", "z"].iter().enumerate() {
        inst.insert("q", d, -(i as f64));
    }
    let texts: BTreeMap<String, (String, String)> =
        [("q".to_string(), ("query".to_string(), "instr".to_string()))].into();
    let mut judge = QrelsJudge {
        qrels: &qrels,
        s_max: 3.0,
    };
    let r = instfol(&alone, &inst, 4, &texts, |_| String::new(), &mut judge).unwrap();
    let (pq, pi) = (0.25, 0.5);
    assert!(
        close(r.scores.mean, (pi - pq) / (1.0 - pq)),
        "{}",
        r.scores.mean
    );
    assert!(r.unscored.is_empty());

    // A judge that cannot score one passage of one query: that query is left out and listed,
    // the others are scored; any other error stops.
    struct Picky<'a>(QrelsJudge<'a>, bool);
    impl InstructionJudge for Picky<'_> {
        fn max_score(&self) -> f64 {
            self.0.max_score()
        }
        fn score(&mut self, qid: &str, q: &str, i: &str, d: &str, p: &str) -> engine::Result<f64> {
            match (qid, d) {
                ("q2", "b") if self.1 => Err(engine::EngineError::Invalid("network down".into())),
                ("q2", "b") => Err(engine::EngineError::NoScore {
                    query: qid.into(),
                    document: d.into(),
                    answer: "I think it is fine".into(),
                }),
                _ => self.0.score(qid, q, i, d, p),
            }
        }
    }
    let mut two = texts.clone();
    two.insert("q2".into(), ("query".into(), "instr".into()));
    for (i, d) in ["x", "a", "y", "z"].iter().enumerate() {
        alone.insert("q2", d, -(i as f64));
    }
    for (i, d) in ["a", "b", "x", "z"].iter().enumerate() {
        inst.insert("q2", d, -(i as f64));
    }
    let mut picky = Picky(
        QrelsJudge {
            qrels: &qrels,
            s_max: 3.0,
        },
        false,
    );
    let r = instfol(&alone, &inst, 4, &two, |_| String::new(), &mut picky).unwrap();
    assert_eq!(r.scores.per_query.keys().collect::<Vec<_>>(), ["q"]);
    assert!(close(r.scores.mean, (pi - pq) / (1.0 - pq)));
    assert_eq!(r.unscored.len(), 1);
    assert!(
        r.unscored[0].to_string().contains("query q2, document b"),
        "{}",
        r.unscored[0]
    );
    let mut failing = Picky(
        QrelsJudge {
            qrels: &qrels,
            s_max: 3.0,
        },
        true,
    );
    assert!(instfol(&alone, &inst, 4, &two, |_| String::new(), &mut failing).is_err());
}

#[test]
fn significance_matches_scipy() {
    let g = golden("significance_cases.json");
    for case in g["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let f = |k: &str| -> Vec<f64> {
            case[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let (a, b) = (f("a"), f("b"));
        let t = paired_t_test(&a, &b);
        match case["ttest_rel_p"].as_f64() {
            Some(p) => {
                let ours = t.p_value.unwrap_or_else(|| panic!("{name}: no p-value"));
                assert!(
                    (ours - p).abs() < 1e-9 * p.max(1e-3) + 1e-12,
                    "{name}: t-test p {ours} vs scipy {p}"
                );
                match case["t_statistic"].as_f64() {
                    Some(ts) => assert!(
                        (t.statistic - ts).abs() < 1e-9 * ts.abs().max(1.0),
                        "{name}: t"
                    ),
                    None => assert!(
                        t.statistic.is_infinite(),
                        "{name}: t {} should be infinite",
                        t.statistic
                    ),
                }
            }
            None => assert!(
                t.p_value.is_none(),
                "{name}: scipy gives no p-value, we gave {:?}",
                t.p_value
            ),
        }
        if let Some(exact) = case["exact_randomization_p"].as_f64() {
            let ours = randomization_test(&a, &b, 1 << 16, 1).p_value.unwrap();
            assert!(
                (ours - exact).abs() < 1e-12,
                "{name}: exact randomization p {ours} vs {exact}"
            );
            // The sampled path estimates the exact value.
            let sampled = randomization_test_sampled(&a, &b, 20_000, 7)
                .p_value
                .unwrap();
            assert!(
                (sampled - exact).abs() < 0.015,
                "{name}: sampled {sampled} vs exact {exact}"
            );
        }
    }
}

#[test]
fn trec_run_lines_need_exactly_six_fields() {
    for (line, found) in [("q1 Q0 d1 1 0.5\n", 5), ("q1 Q0 d1 1 0.5 tag extra\n", 7)] {
        let found = format!("found {found}");
        assert_err(
            Run::parse_trec(line, Path::new("run.trec")),
            "run.trec:1:",
            &[&found],
        );
    }
    assert!(Run::parse_trec("q1 Q0 d1 1 0.5 tag\n", Path::new("run.trec")).is_ok());
}

#[test]
fn mteb_result_files_name_metrics_as_mteb_and_pick_its_main_score() {
    use engine::metrics::report::{MtebTask, Report, Values};
    let values = |mean: f64| Values {
        mean,
        per_query: BTreeMap::from([("q1".to_string(), mean)]),
    };
    let metrics = vec![
        "ndcg@10".to_string(),
        "p@10".to_string(),
        "map@1000".to_string(),
    ];
    let og: BTreeMap<String, Values> = [("ndcg@10", 0.5), ("p@10", 0.2), ("map@1000", 0.4)]
        .map(|(k, v)| (k.to_string(), values(v)))
        .into();
    let plain = Report {
        system: "m".into(),
        metrics: metrics.clone(),
        modes: BTreeMap::from([("og".to_string(), og.clone())]),
        following: BTreeMap::new(),
    };
    let task = MtebTask {
        name: "SciFact".into(),
        revision: "abc".into(),
        split: "test".into(),
        seconds: 1.5,
    };
    let json = plain.to_mteb(&task);
    let entry = &json["scores"]["test"][0];
    assert_eq!(json["task_name"], "SciFact");
    assert_eq!(json["dataset_revision"], "abc");
    assert_eq!(entry["ndcg_at_10"], 0.5);
    assert_eq!(entry["precision_at_10"], 0.2);
    assert_eq!(entry["map_at_1000"], 0.4);
    assert_eq!(
        entry["main_score"], 0.5,
        "a plain set's main score is its first metric"
    );
    assert_eq!(entry["hf_subset"], "default");
    assert!(entry["languages"].is_array());

    let mut instructed = plain.clone();
    instructed.modes.insert("changed".into(), og);
    instructed.following.insert("p-mrr".into(), values(-0.25));
    let json = instructed.to_mteb(&task);
    let entry = &json["scores"]["test"][0];
    assert_eq!(
        entry["main_score"], -0.25,
        "an instruction set's main score is p-MRR"
    );
    assert_eq!(entry["p-MRR"], -0.25);
    assert_eq!(entry["og"]["ndcg_at_10"], 0.5);
    assert_eq!(entry["changed"]["precision_at_10"], 0.2);
}
