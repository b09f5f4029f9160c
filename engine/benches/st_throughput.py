#!/usr/bin/env python3
"""sentence-transformers (PyTorch CPU) throughput on the same texts as the engine's
embed_throughput example. Usage: st_throughput.py MODEL_DIR TEXTS.jsonl BATCH [REPEATS]"""
import json
import sys
import time

import torch
from bench_texts import read_passages
from sentence_transformers import SentenceTransformer


def main():
    model_dir, path, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    texts = read_passages(path)
    model = SentenceTransformer(model_dir, device="cpu")
    model.encode(texts[:batch], batch_size=batch)
    start = time.perf_counter()
    for _ in range(repeats):
        model.encode(texts, batch_size=batch)
    secs = time.perf_counter() - start
    total = len(texts) * repeats
    print(json.dumps({"system": f"sentence-transformers {__import__('sentence_transformers').__version__} "
                      f"(torch {torch.__version__}, {torch.get_num_threads()} threads)",
                      "passages": total, "seconds": secs, "passages_per_s": total / secs}))


if __name__ == "__main__":
    main()
