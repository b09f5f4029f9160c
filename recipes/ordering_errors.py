#!/usr/bin/env python3
"""Where a ranking of graded candidates goes wrong: pairs in the wrong order, by grade.

  ordering_errors.py QRELS RUN [RUN ...]

QRELS: BEIR TSV with graded judgments (evalsets/case-matching/qrels/og.tsv: 2 eligible, 1
excluded, 0 not relevant); RUN: a TREC run (`trainer eval --save-runs DIR` writes DIR/og.trec).
For each run it prints, over the judged candidates of every query:
  - how many pairs put a grade-0 candidate above a candidate graded 1 or more (off-topic
    documents climbing over on-topic ones: what plain retrieval loses when it forgets);
  - how many pairs put a grade-1 candidate above a grade-2 one (eligibility, the finer
    distinction);
  - the grades of the candidates ranked first.
Every run after the first is also compared with the first, query by query: the mean change in
grade-0-above pairs per query and its two-sided paired randomization test (sign flips, 10,000
draws, seed 0; the test `trainer eval --compare-model` applies to metrics).
"""
import collections
import random
import sys


def fields(path, expected, split, skip_header=False):
    """The non-blank lines of `path` split into `expected` fields, or exit naming PATH:LINE."""
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if (skip_header and number == 1) or not line.strip():
                    continue
                parts = split(line.rstrip("\n"))
                if len(parts) != expected:
                    sys.exit(f"{path}:{number}: expected {expected} fields, found {len(parts)}")
                yield number, parts
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{path}: {e}")


def number_at(path, line, text):
    try:
        return float(text)
    except ValueError:
        sys.exit(f"{path}:{line}: '{text}' is not a number")


def read_qrels(path):
    grades = collections.defaultdict(dict)
    for line, (q, d, level) in fields(path, 3, lambda l: l.split("\t"), skip_header=True):
        grades[q][d] = number_at(path, line, level)
    return grades


def read_run(path):
    scored = collections.defaultdict(list)
    for line, (q, _, d, _, score, _) in fields(path, 6, str.split):
        scored[q].append((-number_at(path, line, score), d))
    return {q: [d for _, d in sorted(docs)] for q, docs in scored.items()}


def errors(grades, run):
    off_topic_above = on_topic_pairs = excluded_above = eligibility_pairs = 0
    first, per_query = collections.Counter(), {}
    for q, docs in run.items():
        before = off_topic_above
        judged = [d for d in docs if d in grades[q]]
        for i, a in enumerate(judged):
            for b in judged[i + 1 :]:
                ga, gb = grades[q][a], grades[q][b]
                if min(ga, gb) == 0 and max(ga, gb) >= 1:
                    on_topic_pairs += 1
                    off_topic_above += ga == 0
                if {ga, gb} == {1, 2}:
                    eligibility_pairs += 1
                    excluded_above += ga == 1
        if judged:
            first[grades[q][judged[0]]] += 1
        per_query[q] = off_topic_above - before
    return off_topic_above, on_topic_pairs, excluded_above, eligibility_pairs, first, per_query


def paired_randomization(differences, draws=10_000, seed=0):
    """Two-sided p-value of the mean of paired differences under random sign flips."""
    rng = random.Random(seed)
    observed = abs(sum(differences))
    hits = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in differences)) >= observed - 1e-12
        for _ in range(draws)
    )
    return (hits + 1) / (draws + 1)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    grades = read_qrels(sys.argv[1])
    reference = None
    for path in sys.argv[2:]:
        off, pairs, excl, elig, first, per_query = errors(grades, read_run(path))
        firsts = ", ".join(f"{int(g)}: {n}" for g, n in sorted(first.items()))
        line = (f"{path}: grade 0 above 1-2 in {off} of {pairs} pairs; "
                f"1 above 2 in {excl} of {elig}; first-ranked grades {{{firsts}}}")
        if reference is None:
            reference = per_query
        else:
            diff = [per_query.get(q, 0) - n for q, n in reference.items()]
            line += (f"; against the first, {sum(diff) / len(diff):+.2f} grade-0-above pairs"
                     f" a query (p = {paired_randomization(diff):.3f})")
        print(line)


if __name__ == "__main__":
    main()
