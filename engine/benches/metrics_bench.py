#!/usr/bin/env python3
"""Times the Python IR-metric libraries ranx and pytrec_eval on the same qrels/run files, as the
reference for the engine's metrics benchmark.

Usage:
    python metrics_bench.py --qrels QRELS.tsv --run RUN.trec --out RESULT.json [--repeats 3]

Input: QRELS.tsv is a BEIR qrels TSV (header `query-id<TAB>corpus-id<TAB>score`; a file without
that header is read the same way), RUN.trec a TREC run (`qid Q0 docid rank score tag`).
make_metrics_bench_data.py writes such a pair.

Environment:
    ~/.cache/ifir/venv/bin/pip install ranx pytrec-eval-terrier numpy
    (measured with ranx 0.3.21, numba 0.68.1, pytrec-eval-terrier 0.5.11, numpy 2.4.6, Python 3.11.7)

What is timed (every phase is the best of --repeats, with time.perf_counter):
  ranx
    load_s      Qrels: the BEIR TSV is parsed by this script into {qid: {docid: int}} (ranx's
                Qrels.from_file(kind='trec') expects 4-column TREC qrels `qid 0 docid rel` and
                cannot read the BEIR TSV), then ranx.Qrels.from_dict. Run: ranx.Run.from_file(path,
                kind='trec') (ranx's own line.split() parser, then Run.from_dict). Both from_dict calls
                build numba typed dicts and sort each query's docs by score.
    evaluate_s  ranx.evaluate(qrels, run, ["ndcg@10", "map@1000", "mrr@10", "recall@100"]) with
                ranx's defaults (numba parallel over all cores, per-query scores saved in the run).
    first_evaluate_s  the first evaluate call in this process: a warm-up, excluded from evaluate_s.
                It includes numba JIT compilation, or, since ranx's kernels are @njit(cache=True),
                loading them from the on-disk cache when an earlier process compiled them (first-ever
                call ~17 s on a 2-core machine; ~2.5 s extra with a warm cache). first_load_s is
                reported for the same reason (the first load is also much slower than the rest).
  pytrec_eval
    load_s      Both files parsed by this script into dicts: qrels {qid: {docid: int}},
                run {qid: {docid: float}}.
    evaluate_s  pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map_cut.1000", "recip_rank",
                "recall.100"}) plus .evaluate(run) (evaluator construction, which copies the qrels
                into C structures, is included; evaluator_init_s reports it alone).
                recip_rank is trec_eval's UNCUT reciprocal rank, so it is not comparable to
                ranx's mrr@10: it can only be larger or equal.
  total_s = load_s + evaluate_s.
  means: per-query mean over the queries each library evaluated (ranx: all queries of the run,
  which must equal the qrels' query set; pytrec_eval: the qids it returned).

Output JSON:
  {"inputs": {...}, "repeats", "cpu_count", "loadavg",
   "ranx": {"version", "numba_version", "numba_threads", "load_s", "first_load_s", "evaluate_s",
            "first_evaluate_s", "total_s", "queries", "means": {metric: value}, "notes"},
   "pytrec_eval": {"version", "load_s", "first_load_s", "evaluate_s", "first_evaluate_s",
                   "evaluator_init_s", "total_s", "queries", "means": {measure: value}, "notes"},
   "comparison": {"ndcg@10": {"ranx", "pytrec_eval", "abs_diff"}, "map@1000": ..., "recall@100": ...,
                  "mrr@10 vs recip_rank (uncut)": ...}}
"""
import argparse
import gc
import json
import os
import time
from collections import defaultdict

RANX_METRICS = ["ndcg@10", "map@1000", "mrr@10", "recall@100"]
PTE_MEASURES = {"ndcg_cut.10", "map_cut.1000", "recip_rank", "recall.100"}
PAIRS = [("ndcg@10", "ndcg_cut_10"), ("map@1000", "map_cut_1000"), ("recall@100", "recall_100"),
         ("mrr@10", "recip_rank")]


def parse_beir_qrels(path):
    qrels = defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split("\t")
            if len(parts) < 3:
                continue
            if parts[0] == "query-id":
                continue
            qrels[parts[0]][parts[1]] = int(parts[2])
    return dict(qrels)


def parse_trec_run(path):
    run = defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run[q][d] = float(s)
    return dict(run)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def timed_loads(load, repeats):
    """`load` timed `repeats` times, each after a garbage collection: the times, the last result."""
    times, out = [], None
    for _ in range(repeats):
        out = None  # the previous result is collected before the next load
        gc.collect()
        t, out = timed(load)
        times.append(t)
    return times, out


def bench_ranx(qrels_path, run_path, repeats):
    import warnings
    from importlib.metadata import version

    import numba
    import ranx

    # ranx's ndcg kernel triggers "unsafe cast from uint64 to int64" at JIT time; harmless here.
    warnings.filterwarnings("ignore", category=numba.core.errors.NumbaTypeSafetyWarning)

    def load():
        q = ranx.Qrels.from_dict(parse_beir_qrels(qrels_path))
        r = ranx.Run.from_file(run_path, kind="trec")
        return q, r

    load_times, (qrels, run) = timed_loads(load, repeats)
    first_eval, res = timed(lambda: ranx.evaluate(qrels, run, RANX_METRICS))
    eval_times = []
    for _ in range(repeats):
        t, res = timed(lambda: ranx.evaluate(qrels, run, RANX_METRICS))
        eval_times.append(t)
    return {
        "version": version("ranx"),
        "numba_version": numba.__version__,
        "numba_threads": numba.get_num_threads(),
        "load_s": min(load_times),
        "first_load_s": load_times[0],
        "evaluate_s": min(eval_times),
        "first_evaluate_s": first_eval,
        "total_s": min(load_times) + min(eval_times),
        "queries": len(run.run),
        "means": {m: float(res[m]) for m in RANX_METRICS},
        "notes": [
            "qrels: BEIR TSV parsed by this script, then ranx.Qrels.from_dict (Qrels.from_file(kind='trec') "
            "expects 4-column TREC qrels); run: ranx.Run.from_file(kind='trec').",
            "first_evaluate_s includes numba JIT compilation (or loading ranx's cache=True on-disk numba cache) "
            "and is excluded from evaluate_s.",
            "ranx sorts each query's docs by score only (numba np.argsort, quicksort, not stable), so tied scores "
            "come out mostly in file order but sometimes swapped; trec_eval uses doc id descending. Metrics that "
            "depend on where a relevant doc sits inside a tie (here map@1000) can differ slightly.",
        ],
    }


def bench_pytrec_eval(qrels_path, run_path, repeats):
    import pytrec_eval

    def load():
        return parse_beir_qrels(qrels_path), parse_trec_run(run_path)

    load_times, (qrels, run) = timed_loads(load, repeats)

    def evaluate():
        t = time.perf_counter()
        ev = pytrec_eval.RelevanceEvaluator(qrels, PTE_MEASURES)
        t_init = time.perf_counter() - t
        return t_init, ev.evaluate(run)

    eval_times, init_times = [], []
    first_eval = None
    for i in range(repeats + 1):  # the first call is reported separately, like ranx's warm-up
        res = None
        gc.collect()
        t, (t_init, res) = timed(evaluate)
        if i == 0:
            first_eval = t
        else:
            eval_times.append(t)
            init_times.append(t_init)
    n = len(res)
    keys = sorted({k for v in res.values() for k in v})
    means = {k: sum(v[k] for v in res.values()) / n for k in keys}
    return {
        "version": getattr(pytrec_eval, "__version__", "?"),
        "load_s": min(load_times),
        "first_load_s": load_times[0],
        "evaluate_s": min(eval_times),
        "first_evaluate_s": first_eval,
        "evaluator_init_s": min(init_times),
        "total_s": min(load_times) + min(eval_times),
        "queries": n,
        "means": means,
        "notes": [
            "load_s: both files parsed into Python dicts by this script.",
            "evaluate_s: RelevanceEvaluator construction + .evaluate(run).",
            "recip_rank is trec_eval's uncut reciprocal rank (not comparable to ranx mrr@10).",
            "trec_eval orders docs by score (compared as float32) descending, then doc id descending.",
        ],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=["ranx", "pytrec_eval"], help="run one library only")
    args = ap.parse_args()
    assert args.repeats >= 1
    out = {
        "inputs": {"qrels": os.path.abspath(args.qrels), "run": os.path.abspath(args.run),
                   "qrels_bytes": os.path.getsize(args.qrels), "run_bytes": os.path.getsize(args.run)},
        "repeats": args.repeats,
        "cpu_count": os.cpu_count(),
    }
    if args.only != "pytrec_eval":
        out["ranx"] = bench_ranx(args.qrels, args.run, args.repeats)
        gc.collect()
    if args.only != "ranx":
        out["pytrec_eval"] = bench_pytrec_eval(args.qrels, args.run, args.repeats)
    if "ranx" in out and "pytrec_eval" in out:
        comp = {}
        for rm, pm in PAIRS:
            a, b = out["ranx"]["means"][rm], out["pytrec_eval"]["means"][pm]
            name = rm if rm != "mrr@10" else "mrr@10 vs recip_rank (uncut)"
            comp[name] = {"ranx": a, "pytrec_eval": b, "abs_diff": abs(a - b)}
        out["comparison"] = comp
    out["loadavg"] = os.getloadavg()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for lib in ("ranx", "pytrec_eval"):
        if lib in out:
            r = out[lib]
            print(f"{lib} {r['version']}: load {r['load_s']:.3f} s, evaluate {r['evaluate_s']:.3f} s "
                  f"(first {r['first_evaluate_s']:.3f} s), total {r['total_s']:.3f} s, {r['queries']} queries")
    for name, c in out.get("comparison", {}).items():
        print(f"  {name:32s} ranx {c['ranx']:.10f}  pytrec_eval {c['pytrec_eval']:.10f}  diff {c['abs_diff']:.2e}")


if __name__ == "__main__":
    main()
