//! Evaluation speed: parse a qrels file and a TREC run, evaluate nDCG@10, MAP@1000, MRR@10 and
//! Recall@100, print one JSON line with the timings and the means. `cargo xtask bench-eval`
//! runs it beside ranx and pytrec_eval on the same files.
//!
//! `cargo run --release -p engine --example eval_throughput -- QRELS RUN [REPEATS]`

use std::path::PathBuf;
use std::time::Instant;

use engine::metrics::{evaluate, Metric, QuerySet, Run};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: eval_throughput QRELS RUN [REPEATS]");
        std::process::exit(2);
    }
    let (qrels_path, run_path) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let repeats: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let metrics = Metric::parse_list("ndcg@10,map@1000,mrr@10,recall@100").unwrap();
    let (mut best_load, mut best_eval, mut best_total) = (f64::MAX, f64::MAX, f64::MAX);
    let mut means = Vec::new();
    let mut queries = 0;
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let qrels = engine::data::read_qrels(&qrels_path).unwrap_or_else(|e| fail(e));
        let run = Run::read_trec(&run_path).unwrap_or_else(|e| fail(e));
        let loaded = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let eval = evaluate(&qrels, &run, &metrics, QuerySet::JudgedAndRun);
        let evaluated = t1.elapsed().as_secs_f64();
        best_load = best_load.min(loaded);
        best_eval = best_eval.min(evaluated);
        best_total = best_total.min(loaded + evaluated);
        means = eval.mean.clone();
        queries = eval.per_query.len();
    }
    let means: serde_json::Map<String, serde_json::Value> = metrics
        .iter()
        .zip(&means)
        .map(|(m, v)| (m.to_string(), serde_json::json!(v)))
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "load_s": best_load, "evaluate_s": best_eval, "total_s": best_total,
            "queries": queries, "threads": engine::metrics::run::threads(), "means": means,
        })
    );
}

fn fail(e: engine::EngineError) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1)
}
