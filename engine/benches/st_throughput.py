#!/usr/bin/env python3
"""sentence-transformers (PyTorch) throughput on the same texts as the engine's
embed_throughput example. Usage: st_throughput.py MODEL_DIR TEXTS.jsonl BATCH [REPEATS] [DEVICE]
[PRECISION] (DEVICE: cpu, the default, or cuda; PRECISION: fp32, the default; fp16 / bf16:
PyTorch's autocast, f32 weights with half-precision products; half: the model cast to fp16,
`model.half()`, as the engine's `--precision f16` casts it)."""
import contextlib
import json
import sys
import time

import torch
from bench_texts import read_passages
from sentence_transformers import SentenceTransformer


def where(device):
    if device == "cpu":
        return f"{torch.get_num_threads()} threads"
    return torch.cuda.get_device_name()


def main():
    model_dir, path, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    device = sys.argv[5] if len(sys.argv) > 5 else "cpu"
    precision = sys.argv[6] if len(sys.argv) > 6 else "fp32"
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    texts = read_passages(path)
    model = SentenceTransformer(model_dir, device=device)
    if precision == "half":
        model = model.half()
    arithmetic = (torch.autocast(device, dtype=dtypes[precision]) if precision in dtypes
                  else contextlib.nullcontext())
    with arithmetic:
        model.encode(texts[:batch], batch_size=batch)
        start = time.perf_counter()
        for _ in range(repeats):
            model.encode(texts, batch_size=batch)
        secs = time.perf_counter() - start
    total = len(texts) * repeats
    print(json.dumps({"system": f"sentence-transformers {__import__('sentence_transformers').__version__} "
                      f"(torch {torch.__version__}, {where(device)}, {precision})",
                      "passages": total, "seconds": secs, "passages_per_s": total / secs}))


if __name__ == "__main__":
    main()
