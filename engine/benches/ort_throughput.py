#!/usr/bin/env python3
"""ONNX Runtime (CPU) throughput on the same texts as the engine's embed_throughput example:
the local ONNX export of the model (engine/benches/export_onnx.py, fp32 or dynamic int8),
the model's own tokenizer (max 256 tokens, as sentence-transformers and the engine), mean
pooling and L2 normalisation in NumPy.

Usage: ort_throughput.py ONNX_FILE MODEL_DIR TEXTS.jsonl BATCH LABEL [REPEATS]"""
import json
import sys
import time

from bench_texts import read_passages
import numpy as np
import onnxruntime as ort
from transformers import AutoTokenizer


def main():
    onnx_file, model_dir, path = sys.argv[1], sys.argv[2], sys.argv[3]
    batch, label = int(sys.argv[4]), sys.argv[5]
    repeats = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    texts = read_passages(path)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    options = ort.SessionOptions()
    session = ort.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"])
    inputs = [i.name for i in session.get_inputs()]

    def encode(chunk):
        enc = tokenizer(chunk, padding=True, truncation=True, max_length=256, return_tensors="np")
        hidden = session.run(None, {n: enc[n].astype(np.int64) for n in inputs})[0]
        mask = enc["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def encode_all():
        # Length-sorted batches, as sentence-transformers and the engine batch.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for s in range(0, len(order), batch):
            encode([texts[i] for i in order[s:s + batch]])

    encode(texts[:batch])
    start = time.perf_counter()
    for _ in range(repeats):
        encode_all()
    secs = time.perf_counter() - start
    total = len(texts) * repeats
    threads = options.intra_op_num_threads or "default"
    print(json.dumps({"system": f"ONNX Runtime {ort.__version__} {label} (intra-op threads {threads})",
                      "passages": total, "seconds": secs, "passages_per_s": total / secs}))


if __name__ == "__main__":
    main()
