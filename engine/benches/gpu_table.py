#!/usr/bin/env python3
"""The table of engine/benches/gpu.sh's results: every engine row with its ratio to the
sentence-transformers anchors of the same task and batch in the same run.

Usage: gpu_table.py RESULTS.jsonl   (lines {"task","batch","build","result"})"""
import json
import sys


def rate(result):
    """Steady rate (after the first pass) where the row has one, else the overall rate."""
    for key in ("steady_passages_per_s", "passages_per_s", "pairs_per_s"):
        if isinstance(result.get(key), (int, float)):
            return float(result[key])
    return float("nan")


def anchors(rows, task, batch):
    """sentence-transformers' rates for (task, batch) by arithmetic: {"fp32", "fp16" (autocast),
    "half" (the model cast to fp16)}."""
    found = {}
    for r in rows:
        if r["task"] == task and r["batch"] == batch and r["build"] == "st":
            system = r["result"].get("system", "")
            kind = system.rstrip(")").rsplit(",", 1)[-1].strip()
            found[kind if kind in ("fp16", "half") else "fp32"] = rate(r["result"])
    return found


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    print("| task | batch | build | system | rate | / PyTorch fp32 | / fp16 autocast | / fp16 model |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["task"] not in ("embed", "train"):
            continue
        a = anchors(rows, r["task"], r["batch"])
        v = rate(r["result"])
        ratio = lambda k: f"{v / a[k]:.2f}x" if a.get(k) else ""
        unit = "passages/s" if r["task"] == "embed" else "pairs/s"
        print(f"| {r['task']} | {r['batch']} | {r['build']} | {r['result'].get('system', '?')} "
              f"| {v:,.1f} {unit} | {ratio('fp32')} | {ratio('fp16')} | {ratio('half')} |")
    for r in rows:
        if r["task"].startswith("parity"):
            res = r["result"]
            print(f"\n{r['task']}: {res.get('texts')} texts, min cosine {res.get('min_cosine')}, "
                  f"mean {res.get('mean_cosine')} ({res.get('reference')})")


if __name__ == "__main__":
    main()
