#!/usr/bin/env python3
"""Agreement of the engine's GPU embeddings (`trainer embed --device vulkan` output) with
sentence-transformers on the same model and texts, on the device named.

Usage: gpu_parity.py MODEL_DIR TEXTS.jsonl ENGINE_EMBEDDINGS.jsonl [DEVICE]
Prints one JSON line: texts compared, minimum and mean cosine."""
import json
import sys

import numpy as np
from bench_texts import read_passages
from sentence_transformers import SentenceTransformer


def main():
    model_dir, texts_path, ours_path = sys.argv[1:4]
    device = sys.argv[4] if len(sys.argv) > 4 else "cuda"
    texts = read_passages(texts_path)
    with open(ours_path, encoding="utf-8") as f:
        ours = np.array([json.loads(line)["embedding"] for line in f if line.strip()], dtype=np.float64)
    if len(ours) != len(texts):
        sys.exit(f"{ours_path}: {len(ours)} embeddings for {len(texts)} texts")
    theirs = SentenceTransformer(model_dir, device=device).encode(texts, batch_size=32).astype(np.float64)
    cos = (ours * theirs).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    print(json.dumps({"texts": len(texts), "min_cosine": float(cos.min()), "mean_cosine": float(cos.mean()),
                      "reference": f"sentence-transformers on {device}"}))


if __name__ == "__main__":
    main()
