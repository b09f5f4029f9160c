"""Loads result files written by `trainer eval --mteb-output` with MTEB's own reader
(`mteb.results.task_result.TaskResult.from_disk`) and prints, per file, the task, its main
score and the score keys, as JSON lines. Exits non-zero if MTEB refuses a file.

    python mteb_load.py RESULT.json [...]      # with mteb 2.x importable
"""

import json
import sys
from pathlib import Path

from mteb.results.task_result import TaskResult

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
    }))
