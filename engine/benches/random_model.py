#!/usr/bin/env python3
"""Writes model.safetensors with random weights in the shapes a model folder's weights have
(BERT's initialisation: normal(0, 0.02) matrices, LayerNorm weights 1, biases 0), so that a
throughput run can carry a shapes file of a few KB instead of the weights: a GPU's rate does not
depend on the values. Not for agreement or ranking rows (gpu.sh's `agreement` section).

Usage: random_model.py shapes MODEL_DIR SHAPES.json     (here: the shapes of MODEL_DIR's weights)
       random_model.py write SHAPES.json OUT.safetensors  (there)"""
import json
import sys

import numpy as np


def shapes(model_dir, out):
    from safetensors import safe_open

    with safe_open(f"{model_dir}/model.safetensors", "np") as f:
        table = {k: [list(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()] for k in f.keys()}
    json.dump(table, open(out, "w"))
    print(f"{out}: {len(table)} tensors")


def write(shapes_path, out):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    tensors = {}
    try:
        table = json.load(open(shapes_path))
        entries = [(name, list(map(int, shape)), str(dtype)) for name, (shape, dtype) in table.items()]
    except (OSError, ValueError, TypeError, AttributeError) as err:
        sys.exit(f"{shapes_path}: not a shapes file ({{name: [shape, dtype]}}, `random_model.py shapes`): {err}")
    for name, shape, dtype in entries:
        if dtype.startswith("I"):  # position ids: 0..n
            tensors[name] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        elif "LayerNorm" in name or name.endswith("norm.weight"):
            fill = 1.0 if name.endswith(("weight", "gamma")) else 0.0
            tensors[name] = np.full(shape, fill, np.float32)
        elif name.endswith("bias"):
            tensors[name] = np.zeros(shape, np.float32)
        else:
            tensors[name] = (rng.standard_normal(shape) * 0.02).astype(np.float32)
    save_file(tensors, out, metadata={"format": "pt"})
    print(f"{out}: {len(tensors)} tensors, random")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("shapes", "write"):
        sys.exit(__doc__)
    {"shapes": shapes, "write": write}[sys.argv[1]](sys.argv[2], sys.argv[3])
