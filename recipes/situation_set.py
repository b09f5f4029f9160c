#!/usr/bin/env python3
"""Make an evaluation-set folder of `datasets/situation-queries` judged as their topics are.

  situation_set.py TOPICS QUERIES OUT

TOPICS: a constraint-topics folder (`../shared/data/constraint-topics/train`: corpus.jsonl,
qrels/og.tsv with query ids `TOPIC-iN`). QUERIES: `datasets/situation-queries/queries.jsonl`
(`_id`, `text`, `topic`). OUT gets `queries.jsonl` (`_id`, `text`), `qrels/og.tsv` (each
situation query judged as its topic's queries are judged with no instruction: the six passages
relevant, the two distractors judged not relevant), `candidates.tsv` (those eight) and
`corpus.jsonl` (the passages judged), the layout of docs/formats.md section 1. `trainer synth
judged --set OUT` then makes one plain replay record per query: the long case description as
the query, a topic passage as the positive, the distractors as hard negatives.

Why (RESULTS.md, ablation J28): the recipe's one missed target is BIRCO clinical-trial with the
query alone, and on the case-matching set its loss is trials on a secondary detail of a case
climbing over trials on the case's own condition. The situation queries are case descriptions
full of secondary details, and each topic's distractors share words with it without answering
it: training on them asks the model to keep a long case's main subject first, which J26 (the
same queries as distillation anchors, the base model as teacher) did not do.
"""
import collections
import json
import os
import sys


def read_og(topics):
    """Topic id -> [(corpus id, grade)] in file order, from the og judgments of its queries."""
    judged = collections.defaultdict(list)
    path = os.path.join(topics, "qrels", "og.tsv")
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3:
                sys.exit(f"{path}:{n}: expected query-id, corpus-id, score")
            if n == 1 and fields[0] == "query-id":
                continue
            topic = fields[0].rsplit("-", 1)[0]
            if (fields[1], fields[2]) not in judged[topic]:
                judged[topic].append((fields[1], fields[2]))
    return judged


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    topics, queries, out = sys.argv[1:]
    judged = read_og(topics)
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    used = set()
    with open(queries) as src, open(os.path.join(out, "queries.jsonl"), "w") as qf, open(
        os.path.join(out, "qrels", "og.tsv"), "w"
    ) as rf, open(os.path.join(out, "candidates.tsv"), "w") as cf:
        rf.write("query-id\tcorpus-id\tscore\n")
        cf.write("query-id\tcorpus-id\n")
        for n, line in enumerate(src, 1):
            try:
                query = json.loads(line)
                qid, text, topic = query["_id"], query["text"], query["topic"]
            except (ValueError, KeyError) as e:
                sys.exit(f"{queries}:{n}: {e}")
            if topic not in judged:
                sys.exit(f"{queries}:{n}: topic {topic} has no judgments in {topics}")
            qf.write(json.dumps({"_id": qid, "text": text}) + "\n")
            for corpus_id, grade in judged[topic]:
                rf.write(f"{qid}\t{corpus_id}\t{grade}\n")
                cf.write(f"{qid}\t{corpus_id}\n")
                used.add(corpus_id)
    with open(os.path.join(topics, "corpus.jsonl")) as src, open(
        os.path.join(out, "corpus.jsonl"), "w"
    ) as f:
        for n, line in enumerate(src, 1):
            try:
                corpus_id = json.loads(line)["_id"]
            except (ValueError, KeyError) as e:
                sys.exit(f"{topics}/corpus.jsonl:{n}: {e}")
            if corpus_id in used:
                f.write(line)


if __name__ == "__main__":
    main()
