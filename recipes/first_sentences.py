#!/usr/bin/env python3
"""A copy of an evaluation set whose queries are cut to their first N sentences.

  first_sentences.py SET_DIR N OUT_DIR

BIRCO clinical-trial's queries are patient case descriptions of 42-112 words: a presentation
first, then history, findings and tests. Evaluating a model on the cut copies (`trainer eval
--set OUT_DIR --no-instruction`) says whether a model's loss on the whole query comes from how
it weighs the later details (the loss shrinks on the first sentence alone) or from the subject
itself (it stays). Every other file of the set (corpus, qrels, candidates, objectives) is copied
unchanged; a query is split after `.`, `!` or `?` followed by white space.
"""
import json
import pathlib
import re
import shutil
import sys

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    source, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[3])
    try:
        n = int(sys.argv[2])
        if n < 1:
            raise ValueError
    except ValueError:
        print(f"N must be a whole number of sentences >= 1, not {sys.argv[2]!r}", file=sys.stderr)
        return 2
    queries = source / "queries.jsonl"
    if not queries.is_file():
        print(f"{queries}: not found (SET_DIR must be an evaluation-set folder)", file=sys.stderr)
        return 1
    if out.exists():
        print(f"{out}: exists; give a new folder", file=sys.stderr)
        return 1
    cut = []
    for number, line in enumerate(queries.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            query = json.loads(line)
            query["text"] = " ".join(SENTENCE_END.split(query["text"].strip())[:n])
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
            print(f"{queries}:{number}: not a query object with a text: {err}", file=sys.stderr)
            return 1
        cut.append(json.dumps(query, ensure_ascii=False))
    shutil.copytree(source, out, ignore=shutil.ignore_patterns("queries.jsonl"))
    (out / "queries.jsonl").write_text("\n".join(cut) + "\n", encoding="utf-8")
    print(f"{len(cut)} queries cut to {n} sentence(s): {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
