#!/usr/bin/env python3
"""Synthetic qrels + run for the metrics benchmark (see metrics_bench.py).

Usage:
    python make_metrics_bench_data.py OUT_DIR [--queries 10000] [--docs 1000] [--seed 7]
                                      [--pool 100000]

Writes
  OUT_DIR/qrels.tsv  BEIR qrels TSV: header `query-id<TAB>corpus-id<TAB>score`, then one judgment a line.
                     Every query has 1-20 judged docs (uniform), graded 0-3 (P = .35/.30/.20/.15),
                     so some queries have no relevant doc at all. About 80% of the judged docs are
                     taken from the query's run, biased to the top ranks (rank index = floor(docs * u^2));
                     the other ~20% are drawn from the pool and are NOT in the run.
  OUT_DIR/run.trec   TREC run: `qid Q0 docid rank score tag`, exactly --docs distinct docs per query,
                     drawn from a pool of --pool doc ids. Scores are written with 3 decimals and
                     never increase with rank; about 5% of consecutive pairs tie. Inside a tie the
                     lines are ordered by doc id descending in byte order, the order trec_eval uses,
                     so the file's rank column equals trec_eval's rank. Scores stay below ~200, so
                     distinct 3-decimal values stay distinct as float32 (pytrec_eval compares f32).
Ids: queries q0..q{N-1}, docs d0..d{pool-1} (no zero padding, so "d99" > "d100" in byte order).
Every query appears in both files (ranx requires the same query set in qrels and run).

Deterministic for a given (queries, docs, seed, pool). All randomness is numpy.random.default_rng(seed);
lines are built with f-strings and written with one join per chunk of queries (~15 s for 10M lines).
"""
import argparse
import os
import time

import numpy as np

GRADE_P = [0.35, 0.30, 0.20, 0.15]
TIE_P = 0.05
CHUNK_QUERIES = 200


def build_run_chunk(rng, q0, nq, ndocs, pool, str_rank):
    """Returns (doc ids (nq, ndocs) int64 in file order, scores (nq, ndocs) int64 in 1e-3 units)."""
    docs = np.empty((nq, ndocs), dtype=np.int64)
    for i in range(nq):
        docs[i] = rng.choice(pool, size=ndocs, replace=False)
    # Descending integer scores: start + negative cumulative steps; a zero step is a tie.
    steps = rng.geometric(1.0 / 60.0, size=(nq, ndocs))
    steps[rng.random((nq, ndocs)) < TIE_P] = 0
    steps[:, 0] = 0
    start = rng.integers(100_000, 120_000, size=(nq, 1))
    scores = start - np.cumsum(steps, axis=1)
    scores = np.maximum(scores, 0)
    # Order every query by (score desc, doc id string desc): lexsort's last key is primary.
    row = np.repeat(np.arange(nq), ndocs)
    order = np.lexsort((-str_rank[docs].ravel(), -scores.ravel(), row))
    docs = docs.ravel()[order].reshape(nq, ndocs)
    scores = scores.ravel()[order].reshape(nq, ndocs)
    return docs, scores


def run_lines(q0, docs, scores, tag, doc_names, rank_strs):
    """TREC run text for one chunk. Plain f-strings beat numpy string ufuncs here (~0.6 s per 1M lines).
    s / 1000 formatted with 3 decimals reproduces the integer exactly (the float error is far below 5e-4)."""
    parts = []
    for i in range(docs.shape[0]):
        p = f"q{q0 + i} Q0 "
        parts.append("".join([f"{p}{doc_names[d]} {r} {s / 1000:.3f} {tag}\n"
                              for d, r, s in zip(docs[i].tolist(), rank_strs, scores[i].tolist())]))
    return "".join(parts)


def qrels_chunk(rng, q0, docs, pool):
    """Returns the TSV text for one chunk of queries."""
    nq, ndocs = docs.shape
    out = []
    for i in range(nq):
        n_judged = int(rng.integers(1, 21))
        n_out = int(rng.binomial(n_judged, 0.2))
        n_in = n_judged - n_out
        pos = np.unique(np.minimum((ndocs * rng.random(n_in) ** 2).astype(np.int64), ndocs - 1))
        judged = list(docs[i, pos])
        if n_out:
            in_run = set(docs[i].tolist())
            extra = []
            while len(extra) < n_out:
                d = int(rng.integers(0, pool))
                if d not in in_run and d not in extra:
                    extra.append(d)
            judged += extra
        grades = rng.choice(4, size=len(judged), p=GRADE_P)
        qid = f"q{q0 + i}"
        out.extend(f"{qid}\td{d}\t{g}\n" for d, g in zip(judged, grades.tolist()))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pool", type=int, default=100_000)
    ap.add_argument("--tag", default="synthetic")
    args = ap.parse_args()
    assert 1 <= args.docs <= args.pool // 2
    os.makedirs(args.out_dir, exist_ok=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    # Byte-order rank of every pool id string ("d0".."d{pool-1}").
    names = np.array([f"d{i}" for i in range(args.pool)])
    str_rank = np.empty(args.pool, dtype=np.int64)
    str_rank[np.argsort(names, kind="stable")] = np.arange(args.pool)
    doc_names = [f"d{i}" for i in range(args.pool)]
    rank_strs = [str(r) for r in range(1, args.docs + 1)]
    n_run = n_qrels = 0
    with open(os.path.join(args.out_dir, "run.trec"), "w", encoding="ascii", newline="\n") as frun, \
            open(os.path.join(args.out_dir, "qrels.tsv"), "w", encoding="ascii", newline="\n") as fq:
        fq.write("query-id\tcorpus-id\tscore\n")
        for q0 in range(0, args.queries, CHUNK_QUERIES):
            nq = min(CHUNK_QUERIES, args.queries - q0)
            docs, scores = build_run_chunk(rng, q0, nq, args.docs, args.pool, str_rank)
            frun.write(run_lines(q0, docs, scores, args.tag, doc_names, rank_strs))
            text = qrels_chunk(rng, q0, docs, args.pool)
            fq.write(text)
            n_run += nq * args.docs
            n_qrels += text.count("\n")
    print(f"wrote {args.out_dir}/run.trec ({n_run} lines) and {args.out_dir}/qrels.tsv ({n_qrels} judgments) "
          f"in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
