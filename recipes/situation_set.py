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


def read_queries(queries, judged, topics):
    """[(query id, text, topic)] from QUERIES, each topic checked against the judgments."""
    read = []
    with open(queries) as src:
        for n, line in enumerate(src, 1):
            try:
                query = json.loads(line)
                qid, text, topic = query["_id"], query["text"], query["topic"]
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{queries}:{n}: {e}")
            if topic not in judged:
                sys.exit(f"{queries}:{n}: topic {topic} has no judgments in {topics}")
            read.append((qid, text, topic))
    return read


def read_corpus(topics, wanted):
    """The corpus lines of TOPICS whose ids are in `wanted`, in file order; every one present."""
    path = os.path.join(topics, "corpus.jsonl")
    lines, found = [], set()
    with open(path) as src:
        for n, line in enumerate(src, 1):
            try:
                corpus_id = json.loads(line)["_id"]
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{n}: {e}")
            if corpus_id in wanted:
                lines.append(line if line.endswith("\n") else line + "\n")
                found.add(corpus_id)
    missing = sorted(wanted - found)
    if missing:
        sys.exit(f"{path}: judged passages missing from the corpus: {', '.join(missing[:5])}")
    return lines


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    topics, queries, out = sys.argv[1:]
    # Everything is read and checked before the first file is written: a bad input leaves no
    # half-written folder.
    judged = read_og(topics)
    read = read_queries(queries, judged, topics)
    corpus = read_corpus(topics, {cid for _, _, t in read for cid, _ in judged[t]})
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    with open(os.path.join(out, "queries.jsonl"), "w") as qf, open(
        os.path.join(out, "qrels", "og.tsv"), "w"
    ) as rf, open(os.path.join(out, "candidates.tsv"), "w") as cf:
        rf.write("query-id\tcorpus-id\tscore\n")
        cf.write("query-id\tcorpus-id\n")
        for qid, text, topic in read:
            qf.write(json.dumps({"_id": qid, "text": text}) + "\n")
            for corpus_id, grade in judged[topic]:
                rf.write(f"{qid}\t{corpus_id}\t{grade}\n")
                cf.write(f"{qid}\t{corpus_id}\n")
    with open(os.path.join(out, "corpus.jsonl"), "w") as f:
        f.writelines(corpus)


if __name__ == "__main__":
    main()
