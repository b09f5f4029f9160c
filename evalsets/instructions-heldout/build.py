#!/usr/bin/env python3
"""Build the held-out, hand-written instruction-following evaluation set.

This set exists to answer one question honestly: does a fine-tuned model follow instructions
better on texts nobody tuned to? So every query, instruction and passage in `topics_*.py` was
written by hand for this project, without looking at (or paraphrasing) the training-data
generators in the repository (`engine/src/training/`, `trainer/src/synth*.rs`); no training run
reads this folder and no template was chosen with it. Licence: MIT OR Apache-2.0.

Data model (as `engine/demo/build_demo.py`): each topic has one query, an `instruction_changed`
(a constraint) and an `instruction_reversed` (the same constraint with its polarity flipped).
`changed_docs` are on-topic passages that answer the bare query AND satisfy the changed
instruction; `reversed_docs` answer the bare query AND satisfy the reversed instruction;
`distractors` share the topic's words but do not answer the query (0 in every mode).

Usage:  python3 evalsets/instructions-heldout/build.py
It rewrites corpus.jsonl, queries.jsonl, qrels/{og,changed,reversed}.tsv and checks them.
"""

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

import sys

sys.path.insert(0, str(HERE))
# The folder writers and the shuffled ids are the demo set's (same data model, same files).
sys.path.insert(0, str(HERE.parent.parent / "engine" / "demo"))
from build_demo import shuffled_corpus, write_set  # noqa: E402
from topics_attributes import TOPICS as ATTRIBUTE_TOPICS  # noqa: E402
from topics_content import TOPICS as CONTENT_TOPICS  # noqa: E402

TOPICS = ATTRIBUTE_TOPICS + CONTENT_TOPICS
FAMILIES = {"attribute", "content"}


def word_count(text):
    return len(text.split())


def assign_ids():
    return shuffled_corpus(TOPICS, "heldout-", "qid")


def build():
    corpus, labels = assign_ids()
    write_set(HERE, TOPICS, corpus, labels, lambda t: {
        "family": t["family"],
        "dimension": t["dimension"],
        "constraint": f'{t["family"]}: {t["dimension"]}',
    })


def check():
    problems = []
    ids, texts, titles = set(), set(), set()
    for t in TOPICS:
        q = t["qid"]
        if q in ids:
            problems.append("duplicate query id %s" % q)
        ids.add(q)
        if t["family"] not in FAMILIES:
            problems.append("%s: family must be one of %s" % (q, sorted(FAMILIES)))
        if not (t["query"] and t["changed"] and t["reversed"] and t["dimension"]):
            problems.append("%s: empty field" % q)
        if len(t["changed_docs"]) < 3 or len(t["reversed_docs"]) < 3:
            problems.append("%s: needs >= 3 passages on each side" % q)
        if len(t["distractors"]) < 1:
            problems.append("%s: needs >= 1 distractor" % q)
        for side in ("changed_docs", "reversed_docs", "distractors"):
            for title, text in t[side]:
                wc = word_count(text)
                if not 15 <= wc <= 260:
                    problems.append("%s %r: %d words" % (q, title, wc))
                if text in texts or title in titles:
                    problems.append("%s: duplicate passage or title %r" % (q, title))
                texts.add(text)
                titles.add(title)
        for check_fn in t.get("checks", []):
            problems.extend("%s: %s" % (q, p) for p in check_fn(t))
    for p in problems:
        print("PROBLEM:", p)
    assert not problems, "%d problems" % len(problems)
    fams = {f: sum(1 for t in TOPICS if t["family"] == f) for f in sorted(FAMILIES)}
    n = sum(len(t["changed_docs"]) + len(t["reversed_docs"]) + len(t["distractors"]) for t in TOPICS)
    print("queries: %d %s; passages: %d; all checks passed" % (len(TOPICS), fams, n))


if __name__ == "__main__":
    check()
    build()
