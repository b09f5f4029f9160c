#!/usr/bin/env python3
"""p-MRR of a saved run beside two references on the same og run: the ideal ranking's and the
maximum.

  pmrr_ceiling.py RUN_DIR SET_DIR

RUN_DIR holds `trainer eval --set SET_DIR --save-runs RUN_DIR`'s og.trec and changed.trec;
SET_DIR the set's qrels/{og,changed}.tsv. p-MRR is FollowIR's: for every passage relevant to
the query alone but not under the changed instruction, 1 - R_og/R_new when it drops, R_new/R_og
- 1 when it rises, averaged per query, then over the queries. Both references are scored
against the same og run:
- the ideal ranking: every passage relevant under the instruction above every other one, each
  group in the og run's order (what a perfect nDCG under the instruction looks like);
- the maximum: the excluded passages below everything else, distractors included, in the order
  that scores best (p-MRR rewards an excluded passage for every rank it drops).
And one reference on the run itself:
- distractors first: the run's ranking with the passages relevant in no mode (the distractors)
  moved just above its highest excluded passage, everything else in the run's order (what the
  demotion term, `train --demotion-weight`, asks of a model that already follows the
  instruction).
On a set where each query re-ranks a few candidates, p-MRR cannot approach 100; this says how far
it can go. Then where the run's p-MRR is lost: how many excluded passages drop, rise or stay,
what the drops earn and the rises cost (points of p-MRR averaged over the excluded passages),
and each rise by the passages that fell below it: wanted ones, distractors, or other excluded
ones (an excluded group reshuffled among itself).
"""
import itertools
import collections
import sys


def fields(path, expected, numeric, header=False):
    """The fields of each non-empty line (after the header line, if any); exits naming FILE:LINE
    on a line without `expected` fields or whose field `numeric` is not an integer."""
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                parts = line.split()
                if not parts or (header and number == 1):
                    continue
                if len(parts) != expected or not parts[numeric].lstrip("-").isdigit():
                    sys.exit(f"{path}:{number}: expected {expected} fields with an integer "
                             f"in field {numeric + 1}, got {line.strip()!r}")
                yield parts
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")


def read_run(path):
    ranks = collections.defaultdict(dict)
    for query, _, doc, rank, _score, _tag in fields(path, 6, numeric=3):
        ranks[query][doc] = int(rank)
    return ranks


def read_qrels(path):
    relevant = collections.defaultdict(set)
    for query, doc, score in fields(path, 3, numeric=2, header=True):
        if int(score) > 0:
            relevant[query].add(doc)
    return relevant


def pairwise(r_og, r_new):
    return r_new / r_og - 1 if r_og > r_new else 1 - r_og / r_new


def best_bottom_order(og_ranks, affected, score):
    """The best score with the affected passages in the last places (every order tried: a query
    excludes at most a handful of its candidates)."""
    others = [d for d in og_ranks if d not in affected]
    best = float("-inf")
    for order in itertools.permutations(affected):
        new = {d: i + 1 for i, d in enumerate(others + list(order))}
        best = max(best, score(new))
    return best


def distractors_first(new_ranks, affected, wanted_og):
    """`new_ranks` with the passages relevant in no mode moved just above the highest affected
    passage, the rest in their order."""
    order = sorted(new_ranks, key=new_ranks.get)
    distractors = [d for d in order if d not in wanted_og]
    kept = [d for d in order if d in wanted_og]
    first = min(i for i, d in enumerate(kept) if d in affected)
    moved = kept[:first] + distractors + kept[first:]
    return {d: i + 1 for i, d in enumerate(moved)}


def losses(og, changed, wanted_og, wanted):
    """Prints the drops, rises and what passed each risen passage, over every excluded passage."""
    moves, earned, passed_by, cost, total = collections.Counter(), 0.0, collections.Counter(), \
        collections.Counter(), 0
    for query, og_ranks in og.items():
        if query not in changed:
            continue
        new = changed[query]
        for d in wanted_og[query] - wanted[query]:
            total += 1
            a, b = og_ranks[d], new[d]
            if b >= a:
                moves["dropped" if b > a else "stayed"] += 1
                earned += pairwise(a, b)
                continue
            moves["rose"] += 1
            fell = {x for x in og_ranks if og_ranks[x] < a and new[x] > b}
            kinds = sorted({"wanted" if x in wanted[query] else
                            "excluded" if x in wanted_og[query] else "distractor" for x in fell})
            key = " and ".join(kinds)
            passed_by[key] += 1
            cost[key] += pairwise(a, b)
    if not total:
        return
    print(f"{total} excluded passages: {moves['dropped']} dropped (+{100 * earned / total:.2f}), "
          f"{moves['rose']} rose ({100 * sum(cost.values()) / total:.2f}), "
          f"{moves['stayed']} stayed")
    for key, count in passed_by.most_common():
        print(f"  rose past {key}: {count} ({100 * cost[key] / total:.2f})")


def main():
    run_dir, set_dir = sys.argv[1], sys.argv[2]
    og, changed = read_run(f"{run_dir}/og.trec"), read_run(f"{run_dir}/changed.trec")
    wanted_og = read_qrels(f"{set_dir}/qrels/og.tsv")
    wanted = read_qrels(f"{set_dir}/qrels/changed.tsv")
    measured, ideal_scores, maximum, demoted = [], [], [], []
    for query, og_ranks in og.items():
        affected = [d for d in wanted_og[query] if d not in wanted[query]]
        if query not in changed or not affected:
            continue
        order = sorted(og_ranks, key=lambda d: (d not in wanted[query], og_ranks[d]))
        ideal = {d: i + 1 for i, d in enumerate(order)}
        score = lambda new: sum(pairwise(og_ranks[d], new[d]) for d in affected) / len(affected)
        measured.append(score(changed[query]))
        ideal_scores.append(score(ideal))
        maximum.append(best_bottom_order(og_ranks, affected, score))
        demoted.append(score(distractors_first(changed[query], affected, wanted_og[query])))
    if not measured:
        sys.exit(f"{run_dir}: no query with a passage that the changed instruction excludes")
    n = len(measured)
    print(f"{n} queries: p-MRR {100 * sum(measured) / n:.2f}; on this og run the ideal ranking's "
          f"{100 * sum(ideal_scores) / n:.2f}, the maximum {100 * sum(maximum) / n:.2f}; "
          f"this run with its distractors first {100 * sum(demoted) / n:.2f}")
    losses(og, changed, wanted_og, wanted)


if __name__ == "__main__":
    main()
