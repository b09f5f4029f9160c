#!/usr/bin/env python3
"""Weight-space average of a fine-tuned model and its base (WiSE-FT, "model soup" of two):
every float32 weight becomes (1 - alpha) * base + alpha * tuned. The other files are copied
from the tuned model. Standard library only.

    python3 recipes/tools/average_weights.py BASE TUNED ALPHA OUTPUT

RESULTS.md (ablation, variant W) uses it with alpha 0.5 on the recipe's and on R5's model.
"""
import array
import json
import shutil
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    start = 8 + n
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue  # position ids (I64) and the like are not weights
        s, e = info["data_offsets"]
        values = array.array("f")
        values.frombytes(data[start + s : start + e])
        if sys.byteorder != "little":
            values.byteswap()
        tensors[name] = (info["shape"], values)
    return tensors, header.get("__metadata__")


def write(path, tensors, metadata):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        shape, values = tensors[name]
        if sys.byteorder != "little":
            values.byteswap()
        blob = values.tobytes()
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    base, tuned, alpha, output = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    if not 0.0 <= alpha <= 1.0:
        sys.exit(f"alpha must be in [0, 1], got {alpha}")
    a, _ = read(f"{base}/model.safetensors")
    b, metadata = read(f"{tuned}/model.safetensors")
    missing = sorted(set(b) - set(a))
    if missing:
        sys.exit(f"{base}: lacks weights of {tuned}: {missing[:5]}")
    mixed = {}
    for name, (shape, tv) in b.items():
        bshape, bv = a[name]
        if bshape != shape:
            sys.exit(f"{name}: shape {bshape} in {base}, {shape} in {tuned}")
        mixed[name] = (shape, array.array("f", ((1.0 - alpha) * x + alpha * y for x, y in zip(bv, tv))))
    shutil.copytree(tuned, output, dirs_exist_ok=True)
    write(f"{output}/model.safetensors", mixed, metadata)
    print(f"{output}: {len(mixed)} weights, {alpha} of {tuned} and {1 - alpha} of {base}")


if __name__ == "__main__":
    main()
