#!/usr/bin/env python3
"""Loads a model folder written by `trainer train` with sentence-transformers and compares its
embeddings of the texts in TEXTS.jsonl with the engine's (`trainer embed` output).

Usage: st_load.py MODEL_DIR TEXTS.jsonl ENGINE_EMBEDDINGS.jsonl
Exits 1 unless every cosine is >= 0.9999."""
import json
import sys

import numpy as np
from sentence_transformers import SentenceTransformer


def main():
    model_dir, texts_path, emb_path = sys.argv[1:4]
    texts = [json.loads(l)["text"] for l in open(texts_path, encoding="utf-8") if l.strip()]
    ours = np.array([json.loads(l)["embedding"] for l in open(emb_path, encoding="utf-8") if l.strip()])
    model = SentenceTransformer(model_dir, device="cpu")
    theirs = model.encode(texts, batch_size=16, normalize_embeddings=False)
    cos = (ours * theirs).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    print(f"sentence-transformers loaded {model_dir}: {len(texts)} texts, "
          f"min cosine to the engine {cos.min():.7f}, mean {cos.mean():.7f}")
    if cos.min() < 0.9999:
        sys.exit(1)


if __name__ == "__main__":
    main()
