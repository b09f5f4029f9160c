#!/usr/bin/env bash
# GPU throughput, in one run on one GPU: the engine on burn-wgpu (Vulkan) against
# sentence-transformers on PyTorch CUDA, same model, texts and training records; then the
# agreement of the two GPU embeddings. Embedding: engine/examples/embed_throughput.rs against
# st_throughput.py; training: `trainer train --loss infonce` against st_train_throughput.py
# (the shapes of `cargo xtask bench-train`).
#
# Usage: engine/benches/gpu.sh MODEL_DIR TEXTS.jsonl RECORDS.jsonl OUT_DIR
#   MODEL_DIR   a model folder; int8 or F16 weights (`trainer export --int8`) are first
#               written out in f32 (dequantize.py) so that both sides load the same values
#   TEXTS       {"_id","text"} lines to embed; RECORDS: instruction-negative training records
#               (`cargo xtask bench-train` writes them), at least 64 x 8
# Build first (here or on a machine with cargo):
#   cargo build --release -p trainer --features vulkan
#   cargo build --release -p engine --features vulkan --example embed_throughput
# Environment: TRAINER, EMBED_THROUGHPUT (built with `--features vulkan`; default
#   target/release/trainer and target/release/examples/embed_throughput), PYTHON (with torch on
#   CUDA and sentence-transformers; default python3), DEVICE (the engine's: vulkan).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
model=$1 texts=$2 records=$3 out=$4
root=$(cd "$here/../.." && pwd)
trainer=${TRAINER:-$root/target/release/trainer}
embed=${EMBED_THROUGHPUT:-$root/target/release/examples/embed_throughput}
python=${PYTHON:-python3}
device=${DEVICE:-vulkan}
mkdir -p "$out"
# Large files (the f32 weights, the trained models) go to a scratch folder; OUT_DIR gets the
# results, logs and training metrics only.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
results=$out/results.jsonl
: >"$results"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
if "$python" - "$model" <<'PY'
import sys
from safetensors import safe_open
with safe_open(sys.argv[1] + "/model.safetensors", "np") as f:
    sys.exit(0 if any(n.endswith(".scale") for n in f.keys()) else 1)
PY
then
    "$python" "$here/dequantize.py" "$model" "$scratch/model-f32" || exit 1
    model=$scratch/model-f32
fi

# Embedding throughput: 3 passes over the texts after a warm-up batch, each batch size.
for batch in 32 128; do
    for side in engine st; do
        if [ $side = engine ]; then
            line=$(timeout 120 "$embed" "$model" "$texts" $batch 3 "$device" f32 | tail -1)
        else
            line=$(timeout 120 "$python" "$here/st_throughput.py" "$model" "$texts" $batch 3 cuda | tail -1)
        fi
        echo "embed batch $batch $side: $line"
        [ -n "$line" ] && echo "{\"task\":\"embed\",\"batch\":$batch,\"result\":$line}" >>"$results"
    done
done

# Training throughput: 8 steps, 64/256 tokens, timed over the steps after the first.
for batch in 16 64; do
    run=$scratch/train-$batch
    timeout 180 "$trainer" train --loss infonce --warmup-ratio 0 --checkpoint-every 0 \
        --device "$device" --model "$model" --data "$records" --output "$run" \
        --batch-size $batch --max-steps 8 --query-max-length 64 --passage-max-length 256 \
        >"$out/train-$batch.log" 2>&1
    tail -3 "$out/train-$batch.log"
    cp "$run/metrics.jsonl" "$out/train-$batch-metrics.jsonl" 2>/dev/null
    line=$("$python" - "$run/metrics.jsonl" "$device" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if isinstance(r.get("loss"), (int, float))]
secs = rows[-1]["elapsed_s"] - rows[0]["elapsed_s"]
pairs = sum(r["pairs"] for r in rows[1:])
print(json.dumps({"system": f"trainer train --loss infonce (burn-wgpu, {sys.argv[2]})",
                  "pairs": pairs, "seconds": secs, "pairs_per_s": pairs / secs}))
PY
)
    echo "train batch $batch engine: $line"
    [ -n "$line" ] && echo "{\"task\":\"train\",\"batch\":$batch,\"result\":$line}" >>"$results"
    line=$(timeout 120 "$python" "$root/trainer/benches/st_train_throughput.py" "$model" "$records" \
        $batch 8 64 256 cuda | tail -1)
    echo "train batch $batch st: $line"
    [ -n "$line" ] && echo "{\"task\":\"train\",\"batch\":$batch,\"result\":$line}" >>"$results"
done

# Agreement: the engine's GPU embeddings against sentence-transformers on CUDA.
head -256 "$texts" >"$out/parity-texts.jsonl"
timeout 120 "$trainer" embed --device "$device" --model "$model" \
    --input "$out/parity-texts.jsonl" --output "$out/parity-engine.jsonl" >"$out/parity.log" 2>&1
line=$("$python" "$here/gpu_parity.py" "$model" "$out/parity-texts.jsonl" "$out/parity-engine.jsonl" cuda | tail -1)
echo "parity: $line"
[ -n "$line" ] && echo "{\"task\":\"parity\",\"result\":$line}" >>"$results"
echo "results: $results"
