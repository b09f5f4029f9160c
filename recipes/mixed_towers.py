#!/usr/bin/env python3
"""Rank a set's candidates with queries embedded by one model and passages by another.

  mixed_towers.py texts SET OUT
  mixed_towers.py rank QUERY_EMBEDDINGS PASSAGE_EMBEDDINGS CANDIDATES > RUN

`texts` writes OUT/queries.jsonl (the queries alone) and OUT/passages.jsonl (titles joined as the
engine joins them: `title + " " + text`) from an evaluation-set folder, for `trainer embed`.
`rank`: QUERY_EMBEDDINGS, PASSAGE_EMBEDDINGS: `trainer embed` output ({"_id", "embedding"} per line),
the texts embedded, queries by model A and passages by model B. CANDIDATES: the set's candidates.tsv (header,
then `query-id <TAB> corpus-id`). Writes a TREC run (cosine scores) to standard output, for
`trainer eval --qrels QRELS --run RUN` and `recipes/ordering_errors.py`.

Why: a fine-tuned encoder moves both its query and its passage embeddings. Crossing the two
models' towers (base queries on tuned passages, tuned queries on base passages) shows which
side a loss comes from, and whether training with one side frozen could avoid it (RESULTS.md,
"Which side drifts").
"""
import collections
import json
import math
import os
import sys


def lines_of(path, skip_header=False):
    """(number, line) of the non-blank lines of `path`, or exit naming PATH."""
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip() and not (skip_header and number == 1):
                    yield number, line.rstrip("\n")
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{path}: {e}")


def json_rows(path, fields, what):
    """(number, row, values of `fields`) of a JSON Lines file, or exit naming PATH:LINE."""
    for number, line in lines_of(path):
        try:
            row = json.loads(line)
            yield number, row, [row[name] for name in fields]
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"{path}:{number}: not {what} line ({e})")


def read_embeddings(path):
    """id -> unit vector, or exit naming PATH:LINE."""
    vectors = {}
    width = None
    for number, _, (key, values) in json_rows(path, ("_id", "embedding"), "an embedding"):
        try:
            vector = [float(x) for x in values]
        except (ValueError, TypeError) as e:
            sys.exit(f"{path}:{number}: not an embedding line ({e})")
        width = width or len(vector)
        if len(vector) != width:
            sys.exit(f"{path}:{number}: {len(vector)} values, the lines before {width}")
        norm = math.sqrt(sum(x * x for x in vector))
        if norm == 0.0:
            sys.exit(f"{path}:{number}: zero embedding for '{key}'")
        vectors[str(key)] = [x / norm for x in vector]
    if not vectors:
        sys.exit(f"{path}: no embeddings")
    return vectors


def read_candidates(path):
    """query id -> candidate ids, in file order, or exit naming PATH:LINE."""
    candidates = collections.defaultdict(list)
    for number, line in lines_of(path, skip_header=True):
        parts = line.split("\t")
        if len(parts) < 2:
            sys.exit(f"{path}:{number}: expected query-id<TAB>corpus-id")
        candidates[parts[0]].append(parts[1])
    return candidates


def read_texts(path, join_title):
    """(id, text) of a set's JSONL file, or exit naming PATH:LINE."""
    rows = []
    for _, row, (key, text) in json_rows(path, ("_id", "text"), "a text"):
        title = str(row.get("title") or "") if join_title else ""
        rows.append((str(key), f"{title} {text}" if title.strip() else str(text)))
    return rows


def write_texts(set_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for source, target, join_title in (("queries", "queries", False), ("corpus", "passages", True)):
        rows = read_texts(os.path.join(set_dir, f"{source}.jsonl"), join_title)
        with open(os.path.join(out_dir, f"{target}.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"_id": k, "text": t}) + "\n" for k, t in rows)


def rank(query_file, passage_file, candidate_file):
    queries, passages = read_embeddings(query_file), read_embeddings(passage_file)
    widths = len(next(iter(queries.values()))), len(next(iter(passages.values())))
    if widths[0] != widths[1]:
        sys.exit(
            f"{query_file} has {widths[0]} values a line, {passage_file} {widths[1]}: "
            "the two models embed into different spaces"
        )
    candidates = read_candidates(candidate_file)
    lines = []
    for query, docs in candidates.items():
        if query not in queries:
            sys.exit(f"{query_file}: no embedding for query '{query}' of {candidate_file}")
        missing = [d for d in docs if d not in passages]
        if missing:
            sys.exit(f"{passage_file}: no embedding for passage '{missing[0]}' of {candidate_file}")
        scored = sorted(
            ((sum(a * b for a, b in zip(queries[query], passages[d])), d) for d in docs),
            key=lambda pair: (-pair[0], pair[1]),
        )
        lines += [f"{query} Q0 {d} {rank} {score:.6f} mixed" for rank, (score, d) in enumerate(scored, 1)]
    sys.stdout.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) == 4 and argv[1] == "texts":
        write_texts(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "rank":
        rank(argv[2], argv[3], argv[4])
    else:
        sys.exit("usage: mixed_towers.py texts SET OUT | rank QUERY_EMB PASSAGE_EMB CANDIDATES > RUN")


if __name__ == "__main__":
    main(sys.argv)
