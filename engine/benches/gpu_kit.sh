#!/usr/bin/env bash
# Packs what engine/benches/gpu.sh needs on a GPU machine that reaches no package registry, in
# one folder small enough to carry (the three trainers dominate: about 14, 19 and 20 MB after
# strip and xz):
#   trainer-plain.xz, trainer-autotune.xz, trainer-fused.xz   the builds gpu.sh compares
#   model/      the default model's config and tokenizer files and shapes.json; the weights are
#               written there at random (random_model.py: a GPU's rate does not depend on them;
#               for the agreement rows carry the real model instead)
#   texts.jsonl 1,024 MS MARCO passages (the demo corpus when ../shared/data is absent)
#   records.jsonl.xz  64 x 48 training records, the shape `cargo xtask bench-train` writes
# Then, there: engine/benches/gpu_device.sh KIT OUT.
#
# Usage: engine/benches/gpu_kit.sh KIT_DIR [MODEL_DIR]   (PYTHON: with safetensors)
# Cold, the three builds take about 75 minutes on 2 cores (each rebuilds burn's GPU crates with
# its own features); BUILDS=plain (or a list, or empty) builds fewer.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=$1 model=${2:-$root/models/all-MiniLM-L6-v2}
python=${PYTHON:-python3}
target=${CARGO_TARGET_DIR:-$root/target}
mkdir -p "$kit/model"
for build in ${BUILDS-plain autotune fused}; do
    case $build in
    plain) features=vulkan ;;
    autotune) features=vulkan,gpu-autotune ;;
    fused) features=vulkan,gpu-autotune,gpu-fusion ;;
    *) echo "gpu_kit.sh: unknown build '$build'" >&2 && exit 2 ;;
    esac
    echo "== trainer, $build build (--features $features)"
    (cd "$root" && cargo build --release -p trainer --features "$features")
    strip -o "$kit/trainer-$build" "$target/release/trainer"
    xz -T0 -9e -f "$kit/trainer-$build"
done
find "$model" -maxdepth 2 -type f ! -name 'model.safetensors' ! -name '*.onnx' -printf '%P\n' |
    while read -r f; do mkdir -p "$kit/model/$(dirname "$f")" && cp "$model/$f" "$kit/model/$f"; done
"$python" "$root/engine/benches/random_model.py" shapes "$model" "$kit/model/shapes.json"
corpus=$root/../shared/data/msmarco-subset/corpus.jsonl
[ -f "$corpus" ] || { echo "texts: ../shared/data is absent; the demo corpus instead"; corpus=$root/engine/demo/corpus.jsonl; }
"$python" - "$corpus" "$kit" <<'PY'
import json, sys
docs = []
for number, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    if not line.strip():
        continue
    try:
        docs.append(json.loads(line))
    except ValueError as err:
        sys.exit(f"{sys.argv[1]}:{number}: not a JSON line: {err}")
docs = [d for d in docs if d.get("text", "").strip()]
with open(f"{sys.argv[2]}/texts.jsonl", "w") as f:
    for d in docs[:1024]:
        f.write(json.dumps({"_id": d["_id"], "text": d["text"]}) + "\n")
PY
# The records bench-train times (64 x 48), written by the one writer of them.
(cd "$root" && cargo xtask bench-records "$kit/records.jsonl" --count 3072)
xz -9e -f "$kit/records.jsonl"
du -sh "$kit"
