#!/usr/bin/env python3
"""Writes the golden reference files for the engine's retrieval and instruction-following metrics.

Usage:
    python make_metrics_golden.py OUT_DIR

Environment (what produced the committed files):
    python3 -m venv ~/.cache/ifir/venv
    ~/.cache/ifir/venv/bin/pip install pytrec-eval-terrier numpy   # pytrec-eval-terrier 0.5.11, numpy 2.4.6
    ~/.cache/ifir/venv/bin/python make_metrics_golden.py engine/tests/golden/metrics
(Python 3.11.7. `pytrec_eval` (0.5) from PyPI works as a fallback; numpy is only needed by pytrec_eval itself.)

The output is deterministic: every random case comes from random.Random(fixed seed), and
json is written with sorted qids.

Two files are written into OUT_DIR:

1. trec_cases.json: standard IR measures computed by pytrec_eval (trec_eval 9.x bindings).
   {"generator", "pytrec_eval_version", "measures", "notes",
    "cases": [{"name", "description", "qrels": {qid: {docid: int}}, "run": {qid: {docid: float}},
               "per_query": {qid: {measure: float}}, "evaluated": [qid, ...]}]}
   Measures: ndcg_cut_5/10/20, map_cut_10/100/1000, map, recall_10/100, P_5, P_10, recip_rank,
   plus recip_rank_cut_10 and recip_rank_cut_1, which pytrec_eval does not have: they are pytrec_eval's
   recip_rank evaluated on the run truncated to its first 10 / 1 documents in trec_eval's order.
   trec_eval's order (observed, see TREC_ORDER below): score descending, where scores are compared
   after conversion to 32-bit float (trec_eval stores `sim` as a C float), then doc id descending
   by strcmp (byte order, "reverse strcmp").
   "evaluated" is exactly the set of qids pytrec_eval returned. Observed with 0.5.11: a qid is evaluated
   iff it has at least one judgment in qrels AND it is a key of the run (an empty run dict {} counts;
   it then gets 0 for every measure). A qrels qid with an empty judgment dict {} is NOT evaluated,
   a qid with judgments but no relevant doc IS evaluated (all measures 0), a run qid absent from
   qrels is NOT evaluated.
   Every per-query value is cross-checked against an independent re-implementation in this file
   (`own_trec_measures`) to 1e-12.

2. instruction_cases.json: p-MRR (FollowIR), WISE, WISE-strict, ideal WISE, Per. and SICR (InfoSearch),
   computed by the independent reference implementation in this file (seeds-spec §1.4, §5.4).
   See INSTRUCTION_CONVENTIONS below for the exact rules; values are fractions (not x100).
   The worked examples of seeds-spec §1.4 (p-MRR 8.75) and §5.4.6 (cases A-H, WISE -6.80, SICR
   examples) and several WISE heatmap cells of §5.4.2 are asserted inside this script.
"""
import json
import math
import os
import random
import struct
import sys

try:
    import pytrec_eval
except ImportError:  # pragma: no cover
    sys.exit("pytrec_eval missing: pip install pytrec-eval-terrier (or pytrec_eval)")

GENERATOR = "engine/tests/golden/metrics/make_metrics_golden.py"

PYTREC_MEASURES = [
    "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20",
    "map_cut_10", "map_cut_100", "map_cut_1000", "map",
    "recall_10", "recall_100", "P_5", "P_10", "recip_rank",
]
RR_CUTS = [10, 1]
ALL_MEASURES = PYTREC_MEASURES + [f"recip_rank_cut_{k}" for k in RR_CUTS]


# ------------------------------------------------------------------------------------------------
# trec_eval ordering
# ------------------------------------------------------------------------------------------------

def f32(x):
    """Round a Python float (f64) to the nearest IEEE single, as trec_eval does when it stores `sim`."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def trec_order(run_q):
    """Doc ids of one query's run in trec_eval's order.

    trec_eval (form_res_rels.c, comp_sim_docno) sorts by sim descending, and on equal sim by
    strcmp(docno2, docno1), i.e. doc id DESCENDING in byte order ("reverse strcmp"). pytrec_eval
    hands the scores to trec_eval as 32-bit floats: two scores that differ in f64 but round to the
    same f32 are a tie (verified empirically; see case `f32_score_ties`). Python str comparison on
    these ASCII ids is byte order, same as strcmp.
    """
    return [d for d, _ in sorted(run_q.items(), key=lambda kv: (f32(kv[1]), kv[0]), reverse=True)]


def truncate_run(run, k):
    return {q: {d: docs[d] for d in trec_order(docs)[:k]} for q, docs in run.items()}


# ------------------------------------------------------------------------------------------------
# Independent re-implementation of the trec measures (cross-check only)
# ------------------------------------------------------------------------------------------------

def own_trec_measures(qrels_q, run_q):
    order = trec_order(run_q)
    rel = [qrels_q.get(d, 0) for d in order]
    is_rel = [r >= 1 for r in rel]  # trec_eval relevance_level = 1
    num_rel = sum(1 for v in qrels_q.values() if v >= 1)
    out = {}

    def prec_at(k):
        return sum(is_rel[:k]) / k

    def ap(k):
        if num_rel == 0:
            return 0.0
        s, hits = 0.0, 0
        for i, r in enumerate(is_rel[:k]):
            if r:
                hits += 1
                s += hits / (i + 1)
        return s / num_rel

    def ndcg(k):
        gains = [max(r, 0) for r in rel[:k]]  # negative levels give gain 0
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
        ideal = sorted((v for v in qrels_q.values() if v > 0), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        return dcg / idcg if idcg > 0 else 0.0

    def rr(k):
        for i, r in enumerate(is_rel[:k]):
            if r:
                return 1.0 / (i + 1)
        return 0.0

    for k in (5, 10, 20):
        out[f"ndcg_cut_{k}"] = ndcg(k)
    for k in (10, 100, 1000):
        out[f"map_cut_{k}"] = ap(k)
    out["map"] = ap(len(order))
    for k in (10, 100):
        out[f"recall_{k}"] = (sum(is_rel[:k]) / num_rel) if num_rel else 0.0
    for k in (5, 10):
        out[f"P_{k}"] = prec_at(k)
    out["recip_rank"] = rr(len(order))
    for k in RR_CUTS:
        out[f"recip_rank_cut_{k}"] = rr(k)
    return out


def evaluate_trec(qrels, run):
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES))
    res = ev.evaluate(run)
    evaluated = sorted(res)
    per_query = {q: {m: res[q][m] for m in PYTREC_MEASURES} for q in evaluated}
    for k in RR_CUTS:
        ev_rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
        res_k = ev_rr.evaluate(truncate_run(run, k))
        assert sorted(res_k) == evaluated, (sorted(res_k), evaluated)
        for q in evaluated:
            per_query[q][f"recip_rank_cut_{k}"] = res_k[q]["recip_rank"]
    # cross-check against the independent implementation
    for q in evaluated:
        own = own_trec_measures(qrels[q], run[q])
        for m in ALL_MEASURES:
            assert abs(own[m] - per_query[q][m]) < 1e-12, (q, m, own[m], per_query[q][m])
    # observed evaluation rule
    expect = sorted(q for q in run if q in qrels and len(qrels[q]) > 0)
    assert expect == evaluated, (expect, evaluated)
    return per_query, evaluated


# ------------------------------------------------------------------------------------------------
# trec cases
# ------------------------------------------------------------------------------------------------

def descending(docs, start=1.0, step=0.1):
    """{doc: score} with strictly decreasing scores in list order."""
    return {d: round(start - i * step, 6) for i, d in enumerate(docs)}


def hand_trec_cases():
    cases = []

    def add(name, description, qrels, run):
        cases.append({"name": name, "description": description, "qrels": qrels, "run": run})

    # §1.1: R N R N R, |R| = 4 -> AP 0.5667
    add("spec_1_1_map_example",
        "seeds-spec §1.1: ranking R,N,R,N,R with 4 relevant docs (one never retrieved); AP = 0.5667.",
        {"q1": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "n1": 0, "n2": 0}},
        {"q1": descending(["r1", "n1", "r2", "n2", "r3"], 0.9)})
    # §1.2: top5 [1,0,1,0,0], 3 relevant -> nDCG@5 0.7039 (third relevant doc retrieved at rank 7)
    add("spec_1_2_ndcg_example",
        "seeds-spec §1.2: binary top-5 [1,0,1,0,0], 3 relevant (third at rank 7); nDCG@5 = 0.7039.",
        {"q1": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 0, "g": 1}},
        {"q1": descending(["a", "b", "c", "d", "e", "f", "g", "h"], 0.9)})
    # §1.3: first relevant at 3, beyond 10, at 1 -> MRR@10 0.4444
    add("spec_1_3_mrr_example",
        "seeds-spec §1.3: first relevant doc at rank 3 / 12 / 1; mean recip_rank_cut_10 = 0.4444.",
        {"q1": {"d3": 1}, "q2": {"d12": 1, "d1": 0}, "q3": {"d1": 1, "d2": 1}},
        {"q1": descending([f"d{i}" for i in range(1, 11)], 0.99, 0.01),
         "q2": descending([f"d{i}" for i in range(1, 16)], 0.99, 0.01),
         "q3": descending([f"d{i}" for i in range(1, 6)], 0.99, 0.01)})
    # ties straddling cut-off 5: ranks 3..8 all 0.5; doc-id-desc order inside the tie: z,y,x,c,b,a
    add("tie_straddles_cut_5",
        "Six docs tie at 0.5 over ranks 3-8; inside the tie trec_eval orders doc ids descending "
        "(z,y,x,c,b,a), so relevant 'y' is in the top 5 and relevant 'b','a' are not.",
        {"q1": {"top1": 1, "top2": 0, "a": 1, "b": 2, "y": 1, "c": 0, "x": 0, "z": 0, "tail": 1}},
        {"q1": {"a": 0.5, "b": 0.5, "c": 0.5, "top1": 0.9, "x": 0.5, "y": 0.5, "z": 0.5,
                "top2": 0.8, "tail": 0.1}})
    add("tie_straddles_cut_1_and_10",
        "Three docs tie for the top score (relevant one has the smallest id, so it is 3rd); another "
        "tie spans ranks 9-12 across the cut-off 10.",
        {"q1": {"m": 1, "k9": 1, "k12": 0, "k10": 0, "k11": 1}},
        {"q1": {"m": 2.0, "n": 2.0, "o": 2.0, "p1": 1.5, "p2": 1.4, "p3": 1.3, "p4": 1.2, "p5": 1.1,
                "k9": 1.0, "k10": 1.0, "k11": 1.0, "k12": 1.0, "t": 0.5}})
    add("numeric_docids_string_order",
        "All scores equal; doc ids are numeric strings of different lengths, so the order is by "
        "string (9 > 20 > 2 > 11 > 1000 > 100 > 10), not by number.",
        {"q1": {"100": 1, "2": 1, "9": 0, "1000": 2}},
        {"q1": {"9": 0.3, "10": 0.3, "100": 0.3, "1000": 0.3, "2": 0.3, "20": 0.3, "11": 0.3}})
    add("mixed_case_and_prefix_docids",
        "All scores equal; byte order puts uppercase before lowercase and a prefix before its "
        "extensions (descending: b > ab > a1 > a > B > A).",
        {"q1": {"A": 1, "a1": 1, "b": 0, "B": 1}},
        {"q1": {"a": 1.0, "A": 1.0, "b": 1.0, "B": 1.0, "ab": 1.0, "a1": 1.0}})
    add("graded_relevance_0_3",
        "Graded qrels 0-3 (linear gain in nDCG; any level >= 1 is relevant for MAP/P/recall/RR).",
        {"q1": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 2, "d7": 1, "d8": 0}},
        {"q1": descending(["d3", "d4", "d1", "d8", "x1", "d2", "d7", "x2", "d6", "x3", "x4", "d5"])})
    add("unjudged_docs_in_run",
        "Most retrieved docs are absent from qrels (unjudged = non-relevant).",
        {"q1": {"j1": 1, "j2": 1, "j3": 0}},
        {"q1": descending(["u1", "u2", "j3", "u3", "j1", "u4", "u5", "u6", "u7", "u8", "u9", "j2"])})
    add("judged_nonrelevant_zero",
        "Judged docs with relevance 0 behave as non-relevant; they are not counted in |R|.",
        {"q1": {"a": 0, "b": 0, "c": 1, "d": 0, "e": 0, "f": 0}},
        {"q1": descending(["a", "b", "c", "d", "e", "f"])})
    add("negative_relevance",
        "Negative relevance levels are accepted by pytrec_eval; they are non-relevant and give gain "
        "0 in nDCG (not negative gain) and are excluded from the ideal DCG.",
        {"q1": {"d1": -1, "d2": 2, "d3": 1, "d4": -2}, "q2": {"a": -1, "b": 1}},
        {"q1": {"d1": 3.0, "d3": 2.0, "d2": 1.0, "d4": 0.5}, "q2": {"a": 0.9, "b": 0.1}})
    add("no_relevant_docs",
        "q1 has judgments but none relevant: evaluated, every measure 0. q2 is a normal query.",
        {"q1": {"a": 0, "b": 0}, "q2": {"a": 1}},
        {"q1": descending(["a", "b", "c"]), "q2": descending(["b", "a"])})
    add("qrels_query_absent_from_run",
        "q2 is in qrels but not a key of the run: pytrec_eval does not evaluate it.",
        {"q1": {"a": 1}, "q2": {"a": 1, "b": 1}},
        {"q1": descending(["b", "a"])})
    add("empty_run_for_query",
        "q2 is a key of the run with an empty dict: pytrec_eval evaluates it with every measure 0.",
        {"q1": {"a": 1}, "q2": {"a": 1}},
        {"q1": descending(["a"]), "q2": {}})
    add("run_query_absent_from_qrels",
        "q9 is in the run but not in qrels: not evaluated.",
        {"q1": {"a": 1}},
        {"q1": descending(["x", "a"]), "q9": descending(["a", "b"])})
    add("qrels_query_with_empty_judgments",
        "q2 is a key of qrels with an empty judgment dict: pytrec_eval treats it as absent.",
        {"q1": {"a": 1}, "q2": {}},
        {"q1": descending(["a"]), "q2": descending(["a", "b"])})
    add("negative_and_equal_scores",
        "Negative scores, zero, -0.0 and equal scores (0.0 == -0.0 is a tie).",
        {"q1": {"n1": 1, "n2": 0, "z1": 1, "z2": 0, "e1": 1, "e2": 0}},
        {"q1": {"n1": -0.5, "n2": -0.5, "z1": 0.0, "z2": -0.0, "e1": -2.25, "e2": -2.25,
                "p": 0.25, "m": -10.0}})
    add("all_scores_equal_30_docs",
        "30 docs with identical scores: the whole ranking is doc id descending.",
        {"q1": {f"doc{i}": (1 if i % 4 == 0 else 0) for i in range(30)}},
        {"q1": {f"doc{i}": 0.7 for i in range(30)}})
    add("f32_score_ties",
        "Scores that differ as f64 but round to the same f32 are TIES for pytrec_eval (then doc id "
        "descending): in q1 'a' (0.30000000000000004) and 'b' (0.3) tie, so 'b' ranks first; in q2 "
        "1.0 and 1.0+1e-9 tie; in q3 1.0 and 1.0+1e-6 differ in f32 and 'a' ranks first.",
        {"q1": {"a": 1, "b": 0}, "q2": {"a": 1, "b": 0}, "q3": {"a": 1, "b": 0}},
        {"q1": {"a": 0.1 + 0.2, "b": 0.3}, "q2": {"a": 1.0 + 1e-9, "b": 1.0},
         "q3": {"a": 1.0 + 1e-6, "b": 1.0}})
    docs200 = [f"{i:03d}" for i in range(200)]
    add("long_run_200_docs",
        "200 retrieved docs with relevant ones at ranks 1, 50, 101, 150, 200 and one never "
        "retrieved: separates map_cut_100 / map_cut_1000 / map and recall_100.",
        {"q1": {docs200[0]: 1, docs200[49]: 2, docs200[100]: 1, docs200[149]: 3, docs200[199]: 1,
                "missing": 1, docs200[10]: 0}},
        {"q1": {d: round(1.0 - i * 0.004, 6) for i, d in enumerate(docs200)}})
    add("empty_run_all",
        "The run has no query at all: nothing is evaluated.",
        {"q1": {"a": 1}},
        {})
    add("single_doc_run",
        "One retrieved doc, relevant: P_5 = 0.2, P_10 = 0.1.",
        {"q1": {"a": 1, "b": 1}},
        {"q1": {"a": 0.42}})
    add("perfect_ranking",
        "All relevant docs retrieved first in ideal graded order.",
        {"q1": {"a": 3, "b": 2, "c": 1, "d": 0}},
        {"q1": descending(["a", "b", "c", "d", "e"])})
    add("mixed_situations",
        "Many qids in one case: normal, empty run, absent from run, run-only, no relevant, "
        "empty judgments, all ties.",
        {"q01": {"a": 1, "b": 2, "c": 0}, "q02": {"a": 1}, "q03": {"a": 1}, "q05": {"a": 0},
         "q06": {}, "q07": {"1": 1, "10": 1, "2": 0}},
        {"q01": descending(["c", "b", "x", "a"]), "q02": {}, "q04": descending(["a"]),
         "q05": descending(["a", "b"]), "q06": descending(["a"]),
         "q07": {"1": 0.5, "10": 0.5, "2": 0.5, "3": 0.5}})
    return cases


def random_docid(rng):
    kind = rng.random()
    if kind < 0.7:  # numeric strings of different lengths
        return str(rng.randint(0, 10 ** rng.randint(1, 5)))
    if kind < 0.85:
        return "doc" + str(rng.randint(0, 999))
    return "D" + str(rng.randint(0, 99))


def random_trec_case(seed):
    rng = random.Random(seed)
    nq = rng.randint(1, 30)
    qrels, run = {}, {}
    for qi in range(nq):
        qid = str(rng.randint(1, 999)) if rng.random() < 0.5 else f"q{qi}"
        while qid in qrels or qid in run:
            qid += "x"
        npool = int(200 * rng.random() ** 2)
        pool = []
        seen = set()
        while len(pool) < npool:
            d = random_docid(rng)
            if d not in seen:
                seen.add(d)
                pool.append(d)
        situation = rng.random()
        # scores rounded to 1 decimal -> heavy ties
        run_q = {}
        for d in pool:
            if rng.random() < 0.8:
                run_q[d] = round(rng.gauss(0.0, 1.0) if rng.random() < 0.5 else rng.uniform(-1, 1), 1)
        qrels_q = {}
        judged = [d for d in pool if rng.random() < 0.35]
        judged += [f"nr{j}" for j in range(rng.randint(0, 3))]  # judged but never retrieved
        levels = [0, 0, 0, 1, 1, 2, 3] if rng.random() < 0.5 else [0, 1]
        for d in judged:
            qrels_q[d] = rng.choice(levels)
        if situation < 0.05:
            qrels[qid] = qrels_q  # absent from run
        elif situation < 0.10:
            qrels[qid] = qrels_q
            run[qid] = {}  # empty run
        elif situation < 0.15:
            run[qid] = run_q  # absent from qrels
        elif situation < 0.20:
            qrels[qid] = {d: 0 for d in qrels_q} or {"nothing": 0}  # no relevant doc
            run[qid] = run_q
        else:
            qrels[qid] = qrels_q
            run[qid] = run_q
        if qid in qrels and not qrels[qid] and rng.random() < 0.5:
            qrels[qid] = {"only": 1}
    return {"name": f"random_{seed:02d}",
            "description": f"random.Random({seed}): {nq} qids, graded/binary qrels, scores rounded "
                           f"to 1 decimal (heavy ties), numeric-string doc ids.",
            "qrels": qrels, "run": run}


def sort_nested(d):
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in sorted(d.items())}


def build_trec_cases():
    cases = hand_trec_cases() + [random_trec_case(s) for s in range(18)]
    out = []
    for c in cases:
        per_query, evaluated = evaluate_trec(c["qrels"], c["run"])
        out.append({"name": c["name"], "description": c["description"],
                    "qrels": sort_nested(c["qrels"]), "run": sort_nested(c["run"]),
                    "per_query": per_query, "evaluated": evaluated})
    by = {c["name"]: c for c in out}
    # worked examples of seeds-spec §1.1-1.3
    pq = by["spec_1_1_map_example"]["per_query"]["q1"]
    assert abs(pq["map"] - 0.5667) < 5e-5 and abs(pq["map_cut_10"] - 0.5667) < 5e-5
    pq = by["spec_1_2_ndcg_example"]["per_query"]["q1"]
    assert abs(pq["ndcg_cut_5"] - 0.7039) < 5e-5
    pq = by["spec_1_3_mrr_example"]["per_query"]
    assert abs(sum(pq[q]["recip_rank_cut_10"] for q in pq) / 3 - 0.4444) < 5e-5
    assert pq["q2"]["recip_rank"] == 1 / 12 and pq["q2"]["recip_rank_cut_10"] == 0.0
    # observed pytrec_eval behaviour documented in README
    assert by["qrels_query_absent_from_run"]["evaluated"] == ["q1"]
    assert by["empty_run_for_query"]["evaluated"] == ["q1", "q2"]
    assert all(v == 0.0 for v in by["empty_run_for_query"]["per_query"]["q2"].values())
    assert by["run_query_absent_from_qrels"]["evaluated"] == ["q1"]
    assert by["qrels_query_with_empty_judgments"]["evaluated"] == ["q1"]
    assert by["empty_run_all"]["evaluated"] == []
    assert all(v == 0.0 for v in by["no_relevant_docs"]["per_query"]["q1"].values())
    assert by["f32_score_ties"]["per_query"]["q1"]["recip_rank"] == 0.5
    assert by["f32_score_ties"]["per_query"]["q2"]["recip_rank"] == 0.5
    assert by["f32_score_ties"]["per_query"]["q3"]["recip_rank"] == 1.0
    assert by["numeric_docids_string_order"]["per_query"]["q1"]["recip_rank"] == 1 / 3
    return out


# ------------------------------------------------------------------------------------------------
# Instruction-following metrics: independent reference implementation
# ------------------------------------------------------------------------------------------------

K_WISE = 20

INSTRUCTION_CONVENTIONS = [
    "All values are fractions (multiply by 100 for the papers' numbers).",
    "Rank: 1-based position in the run sorted by score descending (compared as f64), ties broken by "
    "doc id descending (byte order). Only the hand-written case 'tie_rule_score_then_docid_desc' has "
    "tied scores; every other run has distinct scores.",
    "A doc missing from a run has rank |run|+1 and score 0.0. Every qid of qrels_og is a key of every "
    "run in these cases.",
    "Relevant means relevance level > 0; a doc absent from a qrels table is not relevant there.",
    "p-MRR: changed docs of qid q = docs with qrels_og > 0 and NOT (qrels_changed > 0) (absent from "
    "qrels_changed counts as not relevant; og 2 -> changed 1 is NOT a changed doc). Per doc: "
    "r_og = rank in run_og, r_new = rank in run_changed; s = r_new/r_og - 1 if r_og >= r_new else "
    "1 - r_og/r_new. Mean over the changed docs of q, then mean over the qids with >= 1 changed doc.",
    "Gold docs of q (WISE, SICR) = docs relevant in qrels_og AND in qrels_changed. N = number of docs "
    "relevant in qrels_og. R_ori/R_ins/R_rev and S_ori/S_ins/S_rev come from run_og/run_changed/"
    "run_reversed. qrels_reversed is not used by any metric here (it is data for the reversed "
    "mode's standard metrics).",
    "WISE (K=20): F = reward if R_ins <= R_ori < R_rev else penalty. reward = 1 if R_ori <= N and "
    "R_ins == 1; else (1 - sqrt(R_ori - R_ins)/K) / sqrt(R_ins) if R_ori <= K; else 0.01. "
    "penalty, first match: -1 if R_rev < R_ori < R_ins; (R_ori - R_ins)/R_ins if R_ori <= R_ins; "
    "(R_rev - R_ori)/R_ori if R_rev <= R_ori. 'wise_strict' is identical except R_ori < N instead "
    "of R_ori <= N (the authors' code).",
    "ideal_wise: F with R_ins := 1 and R_rev := R_ori + 1 (the model's own R_ori); ideal_wise_strict "
    "uses R_ori < N. per = (ideal_wise.mean - wise.mean) / ideal_wise.mean and per_strict likewise "
    "with the strict variants; computed from the means (not per query).",
    "SICR: I = 1 if R_ins < R_ori and S_ins > S_ori and R_ori < R_rev and S_ori > S_rev; when "
    "R_ori == 1 instead I = 1 iff R_ins == 1 and R_rev > 1 and S_ins >= S_ori and S_ori > S_rev. "
    "Else 0.",
    "WISE, ideal WISE and SICR: mean over the gold docs of a qid, then mean over the qids that have "
    ">= 1 gold doc. Means are plain sums over qids in sorted order divided by the count.",
    "A metric key is omitted from 'expected' when no qid qualifies (no changed doc for p_mrr, no "
    "gold doc for the WISE/SICR family) or when run_reversed is absent (WISE/SICR family).",
    "'details' (informative) gives the per-doc ranks/scores/values behind each per-query number.",
]


def ranks_of(run_q):
    order = sorted(run_q.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return {d: i + 1 for i, (d, _) in enumerate(order)}


def rank_and_score(run_q, ranks, d):
    if d in ranks:
        return ranks[d], run_q[d]
    return len(run_q) + 1, 0.0


def pmrr_doc(r_og, r_new):
    if r_og >= r_new:
        return (1 / r_og) / (1 / r_new) - 1
    return 1 - (1 / r_new) / (1 / r_og)


def wise_reward(r_ori, r_ins, n, strict, k=K_WISE):
    top = (r_ori < n) if strict else (r_ori <= n)
    if top and r_ins == 1:
        return 1.0
    if r_ori <= k:
        return (1 - math.sqrt(r_ori - r_ins) / k) * (1 / math.sqrt(r_ins))
    return 0.01


def wise_f(r_ori, r_ins, r_rev, n, strict=False):
    if r_ins <= r_ori < r_rev:
        return wise_reward(r_ori, r_ins, n, strict)
    if r_rev < r_ori < r_ins:
        return -1.0
    if r_ori <= r_ins:
        return (r_ori - r_ins) / r_ins
    if r_rev <= r_ori:
        return (r_rev - r_ori) / r_ori
    raise AssertionError("unreachable")


def sicr_i(r_ori, r_ins, r_rev, s_ori, s_ins, s_rev):
    if r_ori == 1:
        return 1 if (r_ins == 1 and r_rev > 1 and s_ins >= s_ori and s_ori > s_rev) else 0
    return 1 if (r_ins < r_ori and s_ins > s_ori and r_ori < r_rev and s_ori > s_rev) else 0


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def relevant(qrels, q, d):
    return qrels.get(q, {}).get(d, 0) > 0


def instruction_metrics(c):
    og, ch = c["qrels_og"], c["qrels_changed"]
    run_og, run_ch, run_rev = c["run_og"], c["run_changed"], c.get("run_reversed")
    exp, details = {}, {"p_mrr": {}, "gold": {}}
    pm = {}
    fam = {m: {} for m in ("wise", "wise_strict", "ideal_wise", "ideal_wise_strict", "sicr")}
    for q in sorted(og):
        ro, rn = run_og.get(q, {}), run_ch.get(q, {})
        rk_o, rk_n = ranks_of(ro), ranks_of(rn)
        changed_docs = sorted(d for d in og[q] if relevant(og, q, d) and not relevant(ch, q, d))
        if changed_docs:
            per_doc = {}
            for d in changed_docs:
                r_og, _ = rank_and_score(ro, rk_o, d)
                r_new, _ = rank_and_score(rn, rk_n, d)
                per_doc[d] = {"r_og": r_og, "r_new": r_new, "s": pmrr_doc(r_og, r_new)}
            pm[q] = mean(v["s"] for v in per_doc.values())
            details["p_mrr"][q] = per_doc
        if run_rev is None:
            continue
        rr = run_rev.get(q, {})
        rk_r = ranks_of(rr)
        gold = sorted(d for d in og[q] if relevant(og, q, d) and relevant(ch, q, d))
        n = sum(1 for d in og[q] if relevant(og, q, d))
        if not gold:
            continue
        per_doc = {}
        for d in gold:
            r_ori, s_ori = rank_and_score(ro, rk_o, d)
            r_ins, s_ins = rank_and_score(rn, rk_n, d)
            r_rev, s_rev = rank_and_score(rr, rk_r, d)
            per_doc[d] = {
                "N": n, "R_ori": r_ori, "R_ins": r_ins, "R_rev": r_rev,
                "S_ori": s_ori, "S_ins": s_ins, "S_rev": s_rev,
                "wise": wise_f(r_ori, r_ins, r_rev, n),
                "wise_strict": wise_f(r_ori, r_ins, r_rev, n, strict=True),
                "ideal_wise": wise_f(r_ori, 1, r_ori + 1, n),
                "ideal_wise_strict": wise_f(r_ori, 1, r_ori + 1, n, strict=True),
                "sicr": sicr_i(r_ori, r_ins, r_rev, s_ori, s_ins, s_rev),
            }
        for m in fam:
            fam[m][q] = mean(float(v[m]) for v in per_doc.values())
        details["gold"][q] = per_doc
    if pm:
        exp["p_mrr"] = {"per_query": pm, "mean": mean(pm[q] for q in sorted(pm))}
    if fam["wise"]:
        for m in fam:
            exp[m] = {"per_query": fam[m], "mean": mean(fam[m][q] for q in sorted(fam[m]))}
        exp["per"] = {"mean": (exp["ideal_wise"]["mean"] - exp["wise"]["mean"]) / exp["ideal_wise"]["mean"]}
        exp["per_strict"] = {"mean": (exp["ideal_wise_strict"]["mean"] - exp["wise_strict"]["mean"])
                             / exp["ideal_wise_strict"]["mean"]}
    exp["details"] = details
    return exp


# ------------------------------------------------------------------------------------------------
# Run construction helpers for hand-written instruction cases
# ------------------------------------------------------------------------------------------------

def make_run(length, placed, fillers, pins=None):
    """A run of `length` docs: `placed` = {doc: rank}, other ranks filled from `fillers` in order.
    Scores strictly decrease with rank; `pins` = {doc: score} fixes some scores (others are
    linearly interpolated between pins)."""
    pins = pins or {}
    order = [None] * length
    for d, r in placed.items():
        assert order[r - 1] is None
        order[r - 1] = d
    it = iter(fillers)
    for i in range(length):
        if order[i] is None:
            order[i] = next(it)
    anchors = sorted((order.index(d), s) for d, s in pins.items())
    hi = (max(s for _, s in anchors) if anchors else 0.9) + 0.1
    lo = (min(s for _, s in anchors) if anchors else 0.1) - 0.5
    anchors = [(-1, hi)] + anchors + [(length, lo)]
    scores = []
    for i in range(length):
        for (p0, s0), (p1, s1) in zip(anchors, anchors[1:]):
            if p0 <= i <= p1:
                scores.append(round(s0 + (s1 - s0) * (i - p0) / (p1 - p0), 6))
                break
    assert all(a > b for a, b in zip(scores, scores[1:])), scores
    return dict(zip(order, scores))


def condition_qrels(gold, negatives, judged_zero=()):
    og = {d: 1 for d in [*gold, *negatives]}
    ch = {**{d: 1 for d in gold}, **{d: 0 for d in negatives}}
    rv = {**{d: 0 for d in gold}, **{d: 1 for d in negatives}}
    for d in judged_zero:
        og[d] = ch[d] = rv[d] = 0
    return og, ch, rv


WISE_TABLE = {  # seeds-spec §5.4.6: case -> (R_ori, R_ins, R_rev, F)
    "A": (5, 2, 9, 0.6459), "B": (2, 1, 4, 1.0), "C": (25, 3, 30, 0.01), "D": (4, 6, 10, -0.3333),
    "E": (6, 3, 2, -0.6667), "F": (5, 8, 3, -1.0), "G": (5, 2, 4, -0.2), "H": (5, 3, 5, 0.0),
}


def spec_wise_case(name, description, s_ins_a):
    qrels_og, qrels_ch, qrels_rv = {}, {}, {}
    run_og, run_ch, run_rv = {}, {}, {}
    length = 40
    for q, (r_ori, r_ins, r_rev, _) in WISE_TABLE.items():
        g, n1, n2 = f"{q}-gold", f"{q}-neg1", f"{q}-neg2"
        qrels_og[q], qrels_ch[q], qrels_rv[q] = condition_qrels([g], [n1, n2], [f"{q}-x01"])
        fill = [f"{q}-x{i:02d}" for i in range(1, 60)]

        def free(taken, start):
            r = start
            while r in taken:
                r += 1
            return r

        # negatives: og ranks right after/before gold; instructed: pushed down; reversed: pulled up
        pins_o = {g: 0.80} if q == "A" else {}
        pins_i = {g: s_ins_a} if q == "A" else {}
        pins_r = {g: 0.70} if q == "A" else {}
        taken = {r_ori}
        a = free(taken, 1); taken.add(a); b = free(taken, 3); taken.add(b)
        run_og[q] = make_run(length, {g: r_ori, n1: a, n2: b}, fill, pins_o)
        taken = {r_ins}
        a = free(taken, 7); taken.add(a); b = free(taken, 15); taken.add(b)
        run_ch[q] = make_run(length, {g: r_ins, n1: a, n2: b}, fill, pins_i)
        taken = {r_rev}
        a = free(taken, 1); taken.add(a); b = free(taken, 2); taken.add(b)
        run_rv[q] = make_run(length, {g: r_rev, n1: a, n2: b}, fill, pins_r)
    return {"name": name, "description": description,
            "qrels_og": qrels_og, "qrels_changed": qrels_ch, "qrels_reversed": qrels_rv,
            "run_og": run_og, "run_changed": run_ch, "run_reversed": run_rv}


def hand_instruction_cases():
    cases = []
    # §1.4 p-MRR example
    fill = [f"x{i:02d}" for i in range(1, 40)]
    cases.append({
        "name": "spec_1_4_pmrr_example",
        "description": "seeds-spec §1.4: q1 d1 2->8, d2 5->3; q2 d3 10->10. p-MRR = 0.0875 (8.75). "
                       "No gold docs and no reversed run, so only p_mrr is defined.",
        "qrels_og": {"q1": {"d1": 1, "d2": 1, "x01": 0}, "q2": {"d3": 1}},
        "qrels_changed": {"q1": {"d1": 0, "d2": 0, "x01": 0}, "q2": {"d3": 0}},
        "run_og": {"q1": make_run(12, {"d1": 2, "d2": 5}, fill), "q2": make_run(12, {"d3": 10}, fill)},
        "run_changed": {"q1": make_run(12, {"d1": 8, "d2": 3}, fill), "q2": make_run(12, {"d3": 10}, fill)},
    })
    cases.append(spec_wise_case(
        "spec_5_4_6_wise_examples",
        "seeds-spec §5.4.6 cases A-H as qids A..H (N = 3: one gold doc, two instruction negatives). "
        "WISE = -0.0680 (-6.80). Case A has S_ori 0.80, S_ins 0.85, S_rev 0.70, so its SICR is 1.",
        0.85))
    cases.append(spec_wise_case(
        "spec_5_4_6_sicr_variant",
        "Same as spec_5_4_6_wise_examples but case A has S_ins = 0.78 < S_ori: rank improved only "
        "because other docs fell, so SICR of A is 0 (WISE unchanged).",
        0.78))
    # tie rule
    cases.append({
        "name": "tie_rule_score_then_docid_desc",
        "description": "Tied scores. Tie rule used: score descending, then doc id descending (byte "
                       "order). t1 og: 'x10' 0.7 first, then the 0.5 tie ordered x9 > n1 > g > 2 > 10, "
                       "so g is rank 4. t2 uses numeric-string ids ('9' > '20' > '100').",
        "qrels_og": {"t1": {"g": 1, "n1": 1}, "t2": {"100": 1, "9": 1, "20": 1}},
        "qrels_changed": {"t1": {"g": 1, "n1": 0}, "t2": {"100": 1, "9": 0, "20": 0}},
        "qrels_reversed": {"t1": {"g": 0, "n1": 1}, "t2": {"100": 0, "9": 1, "20": 1}},
        "run_og": {"t1": {"g": 0.5, "n1": 0.5, "x9": 0.5, "x10": 0.7, "2": 0.5, "10": 0.5, "z": 0.1},
                   "t2": {"100": 0.2, "9": 0.2, "20": 0.2, "5": 0.9}},
        "run_changed": {"t1": {"g": 0.6, "n1": 0.5, "x9": 0.6, "x10": 0.7, "2": 0.6, "10": 0.1},
                        "t2": {"100": 0.3, "9": 0.3, "20": 0.1, "5": 0.3}},
        "run_reversed": {"t1": {"g": 0.1, "n1": 0.8, "x9": 0.1, "x10": 0.7, "2": 0.1, "10": 0.1},
                         "t2": {"100": 0.1, "9": 0.1, "20": 0.1, "5": 0.1}},
    })
    # qrels edge cases: graded, absent from changed, relevant only in changed, judged-zero
    cases.append({
        "name": "qrels_graded_absent_and_changed_only",
        "description": "q1: 'a' og 2 -> changed 1 stays relevant (gold, NOT a p-MRR changed doc); "
                       "'c' is absent from qrels_changed (not relevant there: changed doc); 'e' "
                       "relevant only in changed (neither gold nor counted in N); 'z' judged 0 "
                       "everywhere. N = 3 (a, b, c).",
        "qrels_og": {"q1": {"a": 2, "b": 1, "c": 1, "z": 0}},
        "qrels_changed": {"q1": {"a": 1, "b": 0, "e": 1, "z": 0}},
        "qrels_reversed": {"q1": {"a": 0, "b": 1, "c": 1}},
        "run_og": {"q1": make_run(10, {"a": 3, "b": 1, "c": 2, "e": 6}, fill)},
        "run_changed": {"q1": make_run(10, {"a": 1, "b": 4, "c": 9, "e": 2}, fill)},
        "run_reversed": {"q1": make_run(10, {"a": 8, "b": 1, "c": 2, "e": 5}, fill)},
    })
    # SICR R_ori = 1 rule
    og, ch, rv = condition_qrels(["g"], ["n"])
    cases.append({
        "name": "sicr_rori_1_rule",
        "description": "R_ori = 1 in every qid. s1: R_ins 1, S_ins == S_ori, S_rev lower, R_rev 3 -> "
                       "I = 1. s2: S_ins < S_ori -> 0. s3: R_ins 2 -> 0. s4: R_rev 2 but S_rev == "
                       "S_ori (not strictly lower) -> 0. s5: R_ins 1, "
                       "S_ins > S_ori, R_rev 4 -> 1. Also WISE: R_ori 1 <= N -> reward 1.",
        "qrels_og": {q: dict(og) for q in ("s1", "s2", "s3", "s4", "s5")},
        "qrels_changed": {q: dict(ch) for q in ("s1", "s2", "s3", "s4", "s5")},
        "qrels_reversed": {q: dict(rv) for q in ("s1", "s2", "s3", "s4", "s5")},
        "run_og": {
            "s1": make_run(8, {"g": 1, "n": 2}, fill, {"g": 0.9}),
            "s2": make_run(8, {"g": 1, "n": 2}, fill, {"g": 0.9}),
            "s3": make_run(8, {"g": 1, "n": 2}, fill, {"g": 0.9}),
            "s4": make_run(8, {"g": 1, "n": 2}, fill, {"g": 0.9}),
            "s5": make_run(8, {"g": 1, "n": 2}, fill, {"g": 0.5}),
        },
        "run_changed": {
            "s1": make_run(8, {"g": 1, "n": 5}, fill, {"g": 0.9}),
            "s2": make_run(8, {"g": 1, "n": 5}, fill, {"g": 0.85}),
            "s3": make_run(8, {"g": 2, "n": 5}, fill, {"g": 0.95}),
            "s4": make_run(8, {"g": 1, "n": 5}, fill, {"g": 0.95}),
            "s5": make_run(8, {"g": 1, "n": 5}, fill, {"g": 0.6}),
        },
        "run_reversed": {
            "s1": make_run(8, {"g": 3, "n": 1}, fill, {"g": 0.7}),
            "s2": make_run(8, {"g": 3, "n": 1}, fill, {"g": 0.7}),
            "s3": make_run(8, {"g": 3, "n": 1}, fill, {"g": 0.7}),
            "s4": make_run(8, {"g": 2, "n": 1}, fill, {"g": 0.9}),
            "s5": make_run(8, {"g": 4, "n": 1}, fill, {"g": 0.2}),
        },
    })
    # WISE boundaries
    og3, ch3, rv3 = condition_qrels(["g"], ["n1", "n2"])
    bq = {  # qid: (R_ori, R_ins, R_rev)
        "w_rori_eq_N": (3, 1, 5),        # paper 1, strict 0.9293
        "w_rori_lt_N": (2, 1, 5),        # 1 in both
        "w_equal_ins_ori": (4, 4, 6),    # reward branch: 1/sqrt(4) = 0.5
        "w_equal_top": (1, 1, 2),        # 1
        "w_equal_beyond_K": (22, 22, 30),  # 0.01
        "w_rori_eq_K": (20, 1, 21),      # 1 - sqrt(19)/20
        "w_rori_K_plus_1": (21, 1, 22),  # 0.01
        "w_equal_rev_le_ori": (5, 5, 3),  # penalty (R_ori <= R_ins) -> 0
        "w_rev_eq_ori_worse_ins": (5, 7, 5),  # penalty: not -1 (R_rev == R_ori), (5-7)/7
        "w_all_wrong": (10, 30, 2),      # -1
    }
    fill40 = [f"y{i:02d}" for i in range(1, 60)]

    def place(r_g, avoid):
        out, r = [], 1
        while len(out) < 2:
            if r != r_g and r not in avoid:
                out.append(r)
            r += 1
        return out
    ro, rc, rr = {}, {}, {}
    for q, (a, b, c) in bq.items():
        p = place(a, ())
        ro[q] = make_run(35, {"g": a, "n1": p[0], "n2": p[1]}, fill40)
        p = place(b, range(1, 10))
        rc[q] = make_run(35, {"g": b, "n1": p[0], "n2": p[1]}, fill40)
        p = place(c, ())
        rr[q] = make_run(35, {"g": c, "n1": p[0], "n2": p[1]}, fill40)
    cases.append({
        "name": "wise_boundaries",
        "description": "N = 3. Boundary ranks: R_ori == N vs < N (paper vs strict), R_ins == R_ori "
                       "(reward branch), R_ori == K and K+1, R_rev == R_ori, all three wrong (-1).",
        "qrels_og": {q: dict(og3) for q in bq}, "qrels_changed": {q: dict(ch3) for q in bq},
        "qrels_reversed": {q: dict(rv3) for q in bq},
        "run_og": ro, "run_changed": rc, "run_reversed": rr,
    })
    # missing gold docs, negative scores, multiple gold docs, inclusion rules
    cases.append({
        "name": "missing_docs_negative_scores_multi_gold",
        "description": "m1: gold missing from run_og (R_ori = |run|+1 = 7, S_ori = 0) with negative "
                       "scores elsewhere. m2: gold missing from run_changed and run_reversed. m3: two "
                       "gold docs (mean over them). m4: no gold doc (all condition docs become "
                       "non-relevant): in p-MRR only. m5: no changed doc (changed == og): in WISE/"
                       "SICR only. A changed doc missing from both runs has r_og = r_new = |run|+1 "
                       "(m2's n, runs of equal length).",
        "qrels_og": {"m1": {"g": 1, "n": 1}, "m2": {"g": 1, "n": 1}, "m3": {"g1": 1, "g2": 1, "n": 1},
                     "m4": {"a": 1, "b": 1}, "m5": {"g": 1}},
        "qrels_changed": {"m1": {"g": 1, "n": 0}, "m2": {"g": 1, "n": 0},
                          "m3": {"g1": 1, "g2": 1, "n": 0}, "m4": {"a": 0, "b": 0}, "m5": {"g": 1}},
        "qrels_reversed": {"m1": {"g": 0, "n": 1}, "m2": {"g": 0, "n": 1},
                           "m3": {"g1": 0, "g2": 0, "n": 1}, "m4": {"a": 1, "b": 1}, "m5": {"g": 0}},
        "run_og": {"m1": {"n": -0.1, "u1": -0.2, "u2": -0.3, "u3": -0.4, "u4": -0.5, "u5": -0.6},
                   "m2": {"g": 0.4, "u1": 0.9, "u2": 0.3, "u3": 0.2, "u4": 0.1, "u5": 0.05},
                   "m3": make_run(12, {"g1": 4, "g2": 9, "n": 2}, fill),
                   "m4": make_run(10, {"a": 3, "b": 6}, fill),
                   "m5": make_run(10, {"g": 7}, fill)},
        "run_changed": {"m1": {"g": 0.5, "n": -0.9, "u1": -0.2, "u2": -0.3, "u3": -0.4, "u4": -0.5},
                        "m2": {"u1": 0.9, "u2": 0.3, "u3": 0.2, "u4": 0.1, "u5": 0.05, "u6": 0.01},
                        "m3": make_run(12, {"g1": 1, "g2": 12, "n": 8}, fill),
                        "m4": make_run(10, {"a": 9}, fill),
                        "m5": make_run(10, {"g": 2}, fill)},
        "run_reversed": {"m1": {"g": -0.7, "n": 0.9, "u1": 0.8, "u2": 0.7, "u3": 0.6, "u4": -0.5},
                         "m2": {"n": 0.95, "u1": 0.9, "u2": 0.3, "u3": 0.2, "u4": 0.1, "u5": 0.05},
                         "m3": make_run(12, {"g1": 3, "g2": 10, "n": 1}, fill),
                         "m4": make_run(10, {"a": 1, "b": 2}, fill),
                         "m5": make_run(10, {"g": 9}, fill)},
    })
    return cases


def distinct_scores(rng, values):
    """Round to 6 decimals and nudge collisions so all scores in a run differ."""
    out, seen = [], set()
    for v in values:
        v = round(v, 6)
        while v in seen:
            v = round(v - 1e-6 * rng.randint(1, 9), 6)
        seen.add(v)
        out.append(v)
    return out


def random_instruction_case(seed):
    rng = random.Random(10_000 + seed)
    nq = rng.randint(1, 20)
    c = {"name": f"random_{seed:02d}",
         "description": f"random.Random({10_000 + seed}): {nq} qids, 2-3 condition docs + "
                        f"distractors, runs of 5-60 docs (top of a larger pool, so condition docs "
                        f"can be missing), distinct scores.",
         "qrels_og": {}, "qrels_changed": {}, "qrels_reversed": {},
         "run_og": {}, "run_changed": {}, "run_reversed": {}}
    for qi in range(nq):
        qid = f"{seed}-{qi}" if rng.random() < 0.5 else str(rng.randint(1, 1598))
        while qid in c["qrels_og"]:
            qid += "b"
        ncond = rng.choice([2, 3])
        cond = [f"c{qi}_{j}" for j in range(ncond)]
        shape = rng.random()
        if shape < 0.08:
            gold = []                       # every condition doc becomes non-relevant
        elif shape < 0.16:
            gold = cond[:2]                 # two gold docs
        elif shape < 0.20:
            gold = list(cond)               # nothing changes: no p-MRR doc
        else:
            gold = [rng.choice(cond)]
        negs = [d for d in cond if d not in gold]
        ndis = rng.randint(3, 70)
        dis = [str(rng.randint(0, 99999)) for _ in range(ndis)]
        dis = list(dict.fromkeys(d for d in dis if d not in cond))
        judged0 = dis[: rng.randint(0, min(5, len(dis)))]  # "GPT-4 negatives": 0 in every mode
        og = {**{d: 1 for d in cond}, **{d: 0 for d in judged0}}
        ch = {**{d: 1 for d in gold}, **{d: 0 for d in negs}, **{d: 0 for d in judged0}}
        rv = {**{d: 0 for d in gold}, **{d: 1 for d in negs}, **{d: 0 for d in judged0}}
        c["qrels_og"][qid], c["qrels_changed"][qid], c["qrels_reversed"][qid] = og, ch, rv
        pool = cond + dis
        base = {d: rng.gauss(0.0, 1.0) + (1.0 if d in cond else 0.0) for d in pool}
        follow = rng.uniform(-1.0, 2.0)  # how well this "model" follows the instruction
        for mode in ("og", "changed", "reversed"):
            raw = {}
            for d in pool:
                s = base[d] + rng.gauss(0.0, 0.3)
                if mode == "changed":
                    s += follow * (0.8 if d in gold else (-0.8 if d in negs else 0.0))
                elif mode == "reversed":
                    s += follow * (-0.8 if d in gold else (0.8 if d in negs else 0.0))
                raw[d] = s
            order = sorted(pool, key=lambda d: -raw[d])
            length = min(len(pool), rng.randint(5, 60))
            kept = order[:length]
            if rng.random() < 0.15:  # drop one condition doc from this run (keep the length)
                drop = rng.choice(cond)
                if drop in kept:
                    kept.remove(drop)
                    kept += [d for d in order if d not in kept and d != drop][:1]
            scores = distinct_scores(rng, [raw[d] * 0.25 for d in kept])
            c[f"run_{mode}"][qid] = dict(zip(kept, scores))
    return c


def build_instruction_cases():
    cases = hand_instruction_cases() + [random_instruction_case(s) for s in range(30)]
    out = []
    for c in cases:
        exp = instruction_metrics(c)
        rec = {"name": c["name"], "description": c["description"]}
        for key in ("qrels_og", "qrels_changed", "qrels_reversed", "run_og", "run_changed", "run_reversed"):
            if key in c:
                rec[key] = sort_nested(c[key])
        rec["expected"] = exp
        out.append(rec)
    by = {c["name"]: c for c in out}

    # §1.4 worked example
    e = by["spec_1_4_pmrr_example"]["expected"]
    assert abs(e["p_mrr"]["per_query"]["q1"] - 0.175) < 1e-12 and e["p_mrr"]["per_query"]["q2"] == 0.0
    assert abs(e["p_mrr"]["mean"] - 0.0875) < 1e-12
    assert set(e) == {"p_mrr", "details"}
    d = e["details"]["p_mrr"]["q1"]
    assert (d["d1"]["r_og"], d["d1"]["r_new"], d["d2"]["r_og"], d["d2"]["r_new"]) == (2, 8, 5, 3)
    # 004 footnote: 10 -> 5 and 100 -> 50 both give -0.5
    assert pmrr_doc(10, 5) == -0.5 and pmrr_doc(100, 50) == -0.5

    # §5.4.6 worked examples
    for name in ("spec_5_4_6_wise_examples", "spec_5_4_6_sicr_variant"):
        e = by[name]["expected"]
        for q, (r_ori, r_ins, r_rev, f) in WISE_TABLE.items():
            g = e["details"]["gold"][q][f"{q}-gold"]
            assert (g["R_ori"], g["R_ins"], g["R_rev"], g["N"]) == (r_ori, r_ins, r_rev, 3), (q, g)
            assert abs(e["wise"]["per_query"][q] - f) < 5e-5, (q, e["wise"]["per_query"][q], f)
        assert abs(e["wise"]["mean"] * 100 - (-6.80)) < 5e-3, e["wise"]["mean"]
    e = by["spec_5_4_6_wise_examples"]["expected"]
    g = e["details"]["gold"]["A"]["A-gold"]
    assert (g["S_ori"], g["S_ins"], g["S_rev"]) == (0.80, 0.85, 0.70)
    assert e["sicr"]["per_query"]["A"] == 1.0
    e = by["spec_5_4_6_sicr_variant"]["expected"]
    assert e["details"]["gold"]["A"]["A-gold"]["S_ins"] == 0.78 and e["sicr"]["per_query"]["A"] == 0.0

    # §5.4.2 heatmap cells (N = 1 so the "R_ori <= N" shortcut never applies to R_ori >= 2)
    heat = {(2, 1): 0.950, (3, 1): 0.929, (3, 2): 0.672, (4, 1): 0.913, (4, 2): 0.657, (4, 3): 0.548,
            (5, 4): 0.475, (10, 1): 0.850, (20, 1): 0.782, (20, 19): 0.218, (14, 7): 0.328}
    for (r_ori, r_ins), v in heat.items():
        got = wise_f(r_ori, r_ins, r_ori + 1, 1)
        assert abs(got - v) < 5e-4, (r_ori, r_ins, got, v)
    assert wise_f(21, 1, 22, 1) == 0.01 and wise_f(22, 5, 30, 1) == 0.01
    # §5.4.2: N = 3, R_ori = 3, R_ins = 1 -> 1 (paper) vs 0.929 (code)
    assert wise_f(3, 1, 4, 3) == 1.0 and abs(wise_f(3, 1, 4, 3, strict=True) - 0.929) < 5e-4
    e = by["wise_boundaries"]["expected"]
    assert e["wise"]["per_query"]["w_rori_eq_N"] == 1.0
    assert abs(e["wise_strict"]["per_query"]["w_rori_eq_N"] - 0.9293) < 5e-5
    assert e["wise"]["per_query"]["w_equal_ins_ori"] == 0.5
    assert e["wise"]["per_query"]["w_all_wrong"] == -1.0
    assert e["wise"]["per_query"]["w_equal_beyond_K"] == 0.01
    e = by["sicr_rori_1_rule"]["expected"]
    assert e["sicr"]["per_query"] == {"s1": 1.0, "s2": 0.0, "s3": 0.0, "s4": 0.0, "s5": 1.0}, e["sicr"]
    e = by["missing_docs_negative_scores_multi_gold"]["expected"]
    assert e["details"]["gold"]["m1"]["g"]["R_ori"] == 7 and e["details"]["gold"]["m1"]["g"]["S_ori"] == 0.0
    assert "m4" not in e["wise"]["per_query"] and "m4" in e["p_mrr"]["per_query"]
    assert "m5" in e["wise"]["per_query"] and "m5" not in e["p_mrr"]["per_query"]
    e = by["qrels_graded_absent_and_changed_only"]["expected"]
    assert sorted(e["details"]["p_mrr"]["q1"]) == ["b", "c"] and sorted(e["details"]["gold"]["q1"]) == ["a"]
    assert e["details"]["gold"]["q1"]["a"]["N"] == 3

    # random cases: distinct scores per run, some missing condition docs
    missing = 0
    for c in out:
        if c["name"].startswith("random_"):
            for key in ("run_og", "run_changed", "run_reversed"):
                for q, r in c[key].items():
                    assert len(set(r.values())) == len(r), (c["name"], key, q)
                    assert 4 <= len(r) <= 60, (c["name"], key, q, len(r))
                    missing += sum(1 for d, v in c["qrels_og"][q].items() if v > 0 and d not in r)
    assert missing > 0
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    version = getattr(pytrec_eval, "__version__", "unknown")
    trec = {
        "generator": GENERATOR,
        "pytrec_eval_version": version,
        "measures": ALL_MEASURES,
        "notes": [
            "per_query values are exactly what pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run) "
            "returned (relevance_level 1, i.e. level >= 1 is relevant).",
            "recip_rank_cut_k = pytrec_eval recip_rank on the run truncated to its top k docs in trec_eval "
            "order: score descending with scores compared as 32-bit floats, then doc id descending (strcmp).",
            "evaluated = qids pytrec_eval returned: qids that are keys of the run (an empty run dict counts) "
            "AND have at least one judgment in qrels (an empty judgment dict does not count). Queries with "
            "judgments but no relevant doc are evaluated and score 0 on every measure.",
            "nDCG uses linear gain = relevance level; negative levels give gain 0. The ideal DCG is over all "
            "judged docs with level > 0, cut at k.",
        ],
        "cases": build_trec_cases(),
    }
    instr = {
        "generator": GENERATOR,
        "k_wise": K_WISE,
        "conventions": INSTRUCTION_CONVENTIONS,
        "cases": build_instruction_cases(),
    }
    for fname, obj in (("trec_cases.json", trec), ("instruction_cases.json", instr)):
        path = os.path.join(out_dir, fname)
        with open(path, "w") as f:
            json.dump(obj, f, indent=1, allow_nan=False)
            f.write("\n")
        print(f"wrote {path}: {len(obj['cases'])} cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
