#!/usr/bin/env python3
"""The case-matching set: patient case descriptions, each re-ranking eight clinical-trial
descriptions judged for that patient (2 eligible, 1 excluded, 0 not relevant).

  build.py [--check-only]

Reads topics.jsonl (the source of truth, one topic a line), checks every topic and, unless
--check-only, writes the evaluation-set folder beside it (docs/formats.md section 1):
corpus.jsonl, queries.jsonl (the case as the query, the task objective as instruction_og),
qrels/og.tsv (graded) and candidates.tsv (each case re-ranks its own eight trials). Problems are
printed as topics.jsonl:LINE (topic): problem, and the script exits 1 on any.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OBJECTIVE = (
    "Given a patient's case description, find the clinical trials this patient could enrol "
    "in: trials that study the patient's presenting condition and whose inclusion and "
    "exclusion criteria the patient meets."
)
GRADES = [0, 0, 0, 1, 1, 2, 2, 2]


def words(text):
    return len(re.findall(r"\w+", text))


def problems(topic):
    """Every problem of one topic."""
    out = []
    for key in ("topic_id", "condition", "case", "trials"):
        if key not in topic:
            out.append(f"missing {key}")
    if out:
        return out
    if not 60 <= words(topic["case"]) <= 120:
        out.append(f"case of {words(topic['case'])} words (60-120)")
    trials = topic["trials"]
    if [t.get("id") for t in trials] != [f"t{j}" for j in range(1, 9)]:
        out.append("trials must be t1..t8")
    if sorted(t.get("grade") for t in trials) != GRADES:
        out.append("grades must be three 2s, two 1s and three 0s")
    for t in trials:
        n = words(t.get("title", "") + " " + t.get("text", ""))
        if not 80 <= n <= 170:
            out.append(f"{t.get('id')}: {n} words (80-170)")
        if not t.get("why", "").strip():
            out.append(f"{t.get('id')}: no reason for its grade")
    return out


def main():
    source = os.path.join(HERE, "topics.jsonl")
    topics, bad, seen = [], False, set()
    with open(source, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                topic = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"topics.jsonl:{number}: not JSON ({e.msg}, column {e.colno})")
                bad = True
                continue
            if not isinstance(topic, dict):
                print(f"topics.jsonl:{number}: not a JSON object")
                bad = True
                continue
            found = problems(topic)
            if topic.get("topic_id") in seen:
                found.append("duplicate topic_id")
            seen.add(topic.get("topic_id"))
            for p in found:
                print(f"topics.jsonl:{number} ({topic.get('topic_id')}): {p}")
                bad = True
            topics.append(topic)
    if bad:
        sys.exit(1)
    if "--check-only" in sys.argv:
        print(f"{len(topics)} topics, no problem")
        return
    write(topics)
    print(f"{len(topics)} topics, {8 * len(topics)} trials written to {HERE}")


def write(topics):
    os.makedirs(os.path.join(HERE, "qrels"), exist_ok=True)
    corpus, queries = [], []
    qrels, candidates = ["query-id\tcorpus-id\tscore"], ["query-id\tcorpus-id"]
    for topic in topics:
        qid = topic["topic_id"]
        queries.append({"_id": qid, "text": topic["case"], "instruction_og": OBJECTIVE})
        for t in topic["trials"]:
            doc = f"{qid}-{t['id']}"
            corpus.append({"_id": doc, "title": t["title"], "text": t["text"]})
            qrels.append(f"{qid}\t{doc}\t{t['grade']}")
            candidates.append(f"{qid}\t{doc}")
    dump = lambda name, rows: open(os.path.join(HERE, name), "w", encoding="utf-8").write(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    )
    dump("corpus.jsonl", corpus)
    dump("queries.jsonl", queries)
    for name, lines in (("qrels/og.tsv", qrels), ("candidates.tsv", candidates)):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
