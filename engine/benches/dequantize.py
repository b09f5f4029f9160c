#!/usr/bin/env python3
"""Writes the f32 weights of a model folder whose model.safetensors holds the web forms (int8
matrices with `NAME.scale` row scales, F16 tensors; `trainer export --int8/--f16`), so that
PyTorch loads exactly the values the engine computes with after it dequantises on load
(`q as f32 * scale`, the same f32 product here).

Usage: dequantize.py MODEL_DIR OUT_DIR   (OUT_DIR gets every file of MODEL_DIR, weights in f32)"""
import shutil
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

SCALE = ".scale"


def main():
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    shutil.copytree(src, dst, dirs_exist_ok=True)
    tensors = load_file(src / "model.safetensors")
    out = {}
    for name, value in tensors.items():
        if name.endswith(SCALE) and name[: -len(SCALE)] in tensors:
            continue
        if value.dtype == np.int8:
            scale = tensors.get(name + SCALE)
            if scale is None:
                sys.exit(f"{src / 'model.safetensors'}: int8 tensor '{name}' has no '{name}{SCALE}'")
            value = value.astype(np.float32) * scale.astype(np.float32)[:, None]
        elif value.dtype == np.float16:
            value = value.astype(np.float32)
        out[name] = np.ascontiguousarray(value)
    save_file(out, dst / "model.safetensors", metadata={"format": "pt"})
    print(f"{dst / 'model.safetensors'}: {len(out)} tensors in f32")


if __name__ == "__main__":
    main()
