"""Loads result files written by `trainer eval --mteb-output` with MTEB's own reader
(`mteb.results.task_result.TaskResult.from_disk`) and prints, per file, the task, its main
score and the score keys, as JSON lines. Exits non-zero if MTEB refuses a file.

Beside each TASK.json, TASK_predictions.json (the ranking) is read as MTEB reads a previous
run to re-rank it: `AbsTaskRetrieval.convert_to_reranking` on the registered task of that
name (its data stands in, nothing is downloaded); the line gets the top 10 per query
(`top_ranked`) that MTEB took from the file.

    python mteb_load.py RESULT.json [...]      # with mteb 2.x importable
"""

import json
import sys
from pathlib import Path

import mteb
from mteb.results.task_result import TaskResult


def top_ranked(predictions: Path, task_name: str, split: str) -> dict:
    task = mteb.get_task(task_name)
    task.dataset = {"default": {split: {}}}
    task.data_loaded = True
    task.convert_to_reranking(predictions, top_k=10)
    return dict(task.dataset["default"][split]["top_ranked"])


for name in sys.argv[1:]:
    result = TaskResult.from_disk(Path(name))
    split, entries = next(iter(result.scores.items()))
    entry = entries[0]
    print(json.dumps({
        "file": name,
        "task_name": result.task_name,
        "dataset_revision": result.dataset_revision,
        "split": split,
        "hf_subset": entry["hf_subset"],
        "main_score": entry["main_score"],
        "keys": sorted(entry.keys()),
        "top_ranked": top_ranked(
            Path(name).with_name(f"{Path(name).stem}_predictions.json"),
            result.task_name,
            split,
        ),
    }))
