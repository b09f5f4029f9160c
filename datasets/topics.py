#!/usr/bin/env python3
"""Judged instruction-following topics (one JSON object a line: a query, six passages that all
answer it, two distractors, two or three instruction pairs that split the six by one facet in
both polarities) checked and assembled into an evaluation-set folder (docs/formats.md section 1),
which `trainer synth judged --set DIR` turns into training records.

  topics.py check [--query-words MIN MAX] [--passage-words MIN MAX] FILE...
  topics.py assemble OUT_DIR FILE...

check prints every problem as FILE:LINE (topic): problem and exits 1 on any. The default bounds
are the long-query topics' (a query of 25-130 words that describes a situation, passages of
100-450 words); the short constraint topics use --query-words 2 14 --passage-words 35 200.
assemble writes corpus.jsonl, queries.jsonl, qrels/{og,changed,reversed}.tsv, candidates.tsv
(each query re-ranks its own topic's eight passages) and topics.jsonl (the topics as written).
"""
import argparse
import json
import os
import re
import sys

KEYS = ("topic_id", "domain", "query", "passages", "distractors", "instructions")
PAIR_KEYS = ("kind", "changed", "reversed", "changed_relevant", "reversed_relevant")
ON_TOPIC = [f"p{i}" for i in range(1, 7)]


def words(text):
    return len(re.findall(r"\w+", text))


def check_pair(where, query, pair):
    """Problems of one instruction pair."""
    missing = [k for k in PAIR_KEYS if k not in pair]
    if missing:
        return [f"{where}: missing {', '.join(missing)}"]
    probs = []
    kind = pair["kind"]
    if not kind.startswith(("content: ", "attribute: ")):
        probs.append(f'{where}: kind must start with "content: " or "attribute: "')
    changed, reversed_ = set(pair["changed_relevant"]), set(pair["reversed_relevant"])
    if len(changed) != len(pair["changed_relevant"]) or len(reversed_) != len(pair["reversed_relevant"]):
        probs.append(f"{where}: repeated passage id")
    if not changed or not reversed_:
        probs.append(f"{where}: both groups must be non-empty")
    if changed & reversed_:
        probs.append(f"{where}: {sorted(changed & reversed_)} in both groups")
    if changed | reversed_ != set(ON_TOPIC):
        probs.append(f"{where}: the groups must cover exactly p1..p6 (got {sorted(changed | reversed_)})")
    for k in ("changed", "reversed"):
        text = pair[k].strip()
        if words(text) < 2:
            probs.append(f"{where}: {k} instruction too short")
        if query.lower() in text.lower():
            probs.append(f"{where}: {k} instruction repeats the query")
    if pair["changed"].strip().lower() == pair["reversed"].strip().lower():
        probs.append(f"{where}: changed and reversed are the same text")
    return probs


def check_topic(where, topic, bounds, seen):
    """Problems of one topic; `seen` holds the ids, queries and passages met so far."""
    missing = [k for k in KEYS if k not in topic]
    if missing:
        return [f"{where}: missing {', '.join(missing)}"]
    probs = []
    where = f"{where} ({topic['topic_id']})"
    for key, value in (("id", topic["topic_id"]), ("query", topic["query"].strip().lower())):
        if value in seen[key]:
            probs.append(f"{where}: duplicate {key}")
        seen[key].add(value)
    query = topic["query"].strip()
    lo, hi = bounds["query"]
    if not lo <= words(query) <= hi:
        probs.append(f"{where}: the query has {words(query)} words ({lo}-{hi} expected)")
    passages, distractors = topic["passages"], topic["distractors"]
    if [p.get("id") for p in passages] != ON_TOPIC:
        probs.append(f"{where}: passages must be exactly p1..p6 in order")
    if [d.get("id") for d in distractors] != ["d1", "d2"]:
        probs.append(f"{where}: distractors must be exactly d1, d2")
    lo, hi = bounds["passage"]
    for p in passages + distractors:
        if not isinstance(p.get("text"), str) or not isinstance(p.get("title", ""), str):
            probs.append(f"{where}: {p.get('id')}: text and title must be strings")
            continue
        if not lo <= words(p["text"]) <= hi:
            probs.append(f"{where}: {p['id']} has {words(p['text'])} words ({lo}-{hi} expected)")
        if p["text"] in seen["passage"]:
            probs.append(f"{where}: {p['id']} repeats another passage")
        seen["passage"].add(p["text"])
    pairs = topic["instructions"]
    if not 2 <= len(pairs) <= 3:
        probs.append(f"{where}: {len(pairs)} instruction pairs (2-3 expected)")
    for j, pair in enumerate(pairs, 1):
        probs += check_pair(f"{where} pair {j}", query, pair)
    kinds = [p.get("kind", "") for p in pairs]
    if sum(k.startswith("attribute: ") for k in kinds) > 1:
        probs.append(f"{where}: more than one attribute pair")
    if pairs and not any(k.startswith("content: ") for k in kinds):
        probs.append(f"{where}: no content pair")
    return probs


def check(files, bounds):
    """(topics read, problems) over `files`."""
    seen = {"id": set(), "query": set(), "passage": set()}
    count, probs = 0, []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"{path}:{line_no}"
                try:
                    topic = json.loads(line)
                except json.JSONDecodeError as e:
                    probs.append(f"{where}: not JSON ({e})")
                    continue
                if not isinstance(topic, dict):
                    probs.append(f"{where}: not a JSON object")
                    continue
                count += 1
                probs += check_topic(where, topic, bounds, seen)
    return count, probs


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_tsv(path, header, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\t".join(header) + "\n")
        for row in rows:
            f.write("\t".join(str(x) for x in row) + "\n")


def assemble(out, files):
    topics = [json.loads(l) for path in files for l in open(path, encoding="utf-8") if l.strip()]
    os.makedirs(f"{out}/qrels", exist_ok=True)
    corpus, queries, candidates = [], [], []
    qrels = {"og": [], "changed": [], "reversed": []}
    for t in topics:
        tid = t["topic_id"]
        docs = t["passages"] + t["distractors"]
        corpus += [{"_id": f"{tid}-{p['id']}", "title": p.get("title", ""), "text": p["text"]} for p in docs]
        for j, pair in enumerate(t["instructions"], 1):
            qid = f"{tid}-i{j}"
            queries.append({"_id": qid, "text": t["query"], "instruction_og": "",
                            "instruction_changed": pair["changed"], "instruction_reversed": pair["reversed"],
                            "constraint": pair["kind"], "domain": t.get("domain", ""), "topic": tid})
            for p in docs:
                did = f"{tid}-{p['id']}"
                candidates.append((qid, did))
                qrels["og"].append((qid, did, int(p["id"] in ON_TOPIC)))
                qrels["changed"].append((qid, did, int(p["id"] in pair["changed_relevant"])))
                qrels["reversed"].append((qid, did, int(p["id"] in pair["reversed_relevant"])))
    write_jsonl(f"{out}/corpus.jsonl", corpus)
    write_jsonl(f"{out}/queries.jsonl", queries)
    write_jsonl(f"{out}/topics.jsonl", topics)
    write_tsv(f"{out}/candidates.tsv", ("query-id", "corpus-id"), candidates)
    for mode, rows in qrels.items():
        write_tsv(f"{out}/qrels/{mode}.tsv", ("query-id", "corpus-id", "score"), rows)
    print(f"{out}: {len(topics)} topics, {len(queries)} queries, {len(corpus)} passages")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--query-words", nargs=2, type=int, default=[25, 130], metavar=("MIN", "MAX"))
    c.add_argument("--passage-words", nargs=2, type=int, default=[100, 450], metavar=("MIN", "MAX"))
    c.add_argument("files", nargs="+")
    a = sub.add_parser("assemble")
    a.add_argument("out")
    a.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.command == "check":
        bounds = {"query": args.query_words, "passage": args.passage_words}
        count, probs = check(args.files, bounds)
        for p in probs:
            print(p)
        print(f"{count} topics checked, {len(probs)} problems")
        sys.exit(1 if probs else 0)
    problems = check(args.files, {"query": [1, 10**6], "passage": [1, 10**6]})[1]
    if problems:
        sys.exit("refusing to assemble topics with structural problems:\n" + "\n".join(problems))
    assemble(args.out, args.files)


if __name__ == "__main__":
    main()
