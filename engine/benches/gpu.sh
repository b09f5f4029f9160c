#!/usr/bin/env bash
# GPU throughput and the lever table, in one run on one GPU: the engine on burn-wgpu (Vulkan)
# against sentence-transformers on PyTorch CUDA (fp32, and fp16 autocast as a second anchor),
# same model, texts and training records; each lever of the engine switched alone; a per-kernel
# profile; the agreement of the GPU embeddings with PyTorch's, and f16's demo-set ranking
# against f32's.
#
# Usage: engine/benches/gpu.sh MODEL_DIR TEXTS.jsonl RECORDS.jsonl OUT_DIR
#   MODEL_DIR   a model folder; int8 or F16 weights (`trainer export --int8`) are first
#               written out in f32 (dequantize.py) so that both sides load the same values
#   TEXTS       {"_id","text"} lines to embed; RECORDS: instruction-negative training records
#               (`cargo xtask bench-train` writes them), at least 64 x 8
# Builds of the trainer (here or on a machine with cargo), one folder each under BINS:
#   BINS/plain/trainer     cargo build --release -p trainer --features vulkan
#   BINS/autotune/trainer  the same with --features vulkan,gpu-autotune            (optional)
#   BINS/fused/trainer     the same with --features vulkan,gpu-autotune,gpu-fusion (optional)
# Environment: BINS (default: a folder whose plain/ is target/release), PYTHON (with torch on
#   CUDA and sentence-transformers; default python3), DEVICE (the engine's: vulkan), QUICK=1
#   (no batch-32 embedding, no batch-16 training), SECTIONS (which parts, in which order; see
#   the end), TUNED_STEPS (training steps of the tuning builds, default 40), TRAIN_TIMEOUT
#   (seconds a training row may take, default 240; a row cut short is timed over the steps it
#   logged).
# Last, gpu_table.py prints every result with its ratio to the anchors (results.jsonl).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
model=$1 texts=$2 records=$3 out=$4
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-python3}
device=${DEVICE:-vulkan}
if [ -z "${BINS:-}" ]; then
    BINS=$(mktemp -d)
    ln -s "$root/target/release" "$BINS/plain"
fi
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
results=$out/results.jsonl
: >"$results"
variants=$(for v in plain autotune fused; do [ -x "$BINS/$v/trainer" ] && echo $v; done)
echo "builds: $variants"

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

# One result line: {"task","batch","build","result"}.
record() { [ -n "$4" ] && echo "{\"task\":\"$1\",\"batch\":$2,\"build\":\"$3\",\"result\":$4}" >>"$results"; }

# Embedding: 4 passes over the texts; the rate of the last 3 (kernels compile, and tune, in the
# first; sentence-transformers' warm-up is one batch, its compilation was done by PyTorch's
# build).
engine_embed() { # build batch precision padding readback [attention]
    local line attention=${6:-decomposed}
    line=$(timeout 150 "$BINS/$1/trainer" embed --model "$model" --input "$texts" --output "$scratch/e.jsonl" \
        --repeat 4 --device "$device" --batch-size "$2" --precision "$3" --padding "$4" --readback "$5" \
        --attention "$attention" 2>"$out/embed-$1-$2-$3-$4-$5-$attention.log" | tail -1)
    echo "embed b$2 $1 $3 $4 $5 $attention: $line"
    record embed "$2" "$1" "$line"
}
st_embed() { # batch precision
    local line
    line=$(timeout 150 "$python" "$here/st_throughput.py" "$model" "$texts" "$1" 3 cuda "$2" | tail -1)
    echo "embed b$1 st $2: $line"
    record embed "$1" st "$line"
}
# Training: 64/256 tokens; 8 steps timed over the 7 after the first, or STEPS steps timed over
# the last 7 (a build that tunes its kernels spends its first steps tuning every training shape).
# CHUNK is --encode-chunk, the texts per forward pass (the default 32 makes a 64-triplet step six
# forward passes: two of queries, four of passages; 128 makes it two).
engine_train() { # build batch [steps] [precision: f32 or mixed-f16] [chunk]
    local steps=${3:-8} precision=${4:-f32} chunk=${5:-32} line
    local run=$scratch/train-$1-$2-$precision-c$chunk
    timeout "${TRAIN_TIMEOUT:-240}" "$BINS/$1/trainer" train --loss infonce --warmup-ratio 0 --checkpoint-every 0 \
        --device "$device" --model "$model" --data "$records" --output "$run" --precision "$precision" \
        --batch-size "$2" --max-steps "$steps" --query-max-length 64 --passage-max-length 256 \
        --encode-chunk "$chunk" >"$out/train-$1-$2-$precision-c$chunk.log" 2>&1
    cp "$run/metrics.jsonl" "$out/metrics-$1-$2-$precision-c$chunk.jsonl" 2>/dev/null
    line=$("$python" - "$run/metrics.jsonl" "$device" "$1" "$precision, $chunk texts a pass" <<'PY'
import json, os, sys
if not os.path.exists(sys.argv[1]):
    sys.exit(f"{sys.argv[1]}: no steps logged (see the row's log)")
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if isinstance(r.get("loss"), (int, float))][-8:]
if len(rows) < 2:
    sys.exit(f"{sys.argv[1]}: {len(rows)} steps logged, too few to time")
secs = rows[-1]["elapsed_s"] - rows[0]["elapsed_s"]
pairs = sum(r["pairs"] for r in rows[1:])
print(json.dumps({"system": f"trainer train --loss infonce (burn-wgpu, {sys.argv[2]}, {sys.argv[3]} build, {sys.argv[4]})",
                  "pairs": pairs, "seconds": secs, "pairs_per_s": pairs / secs}))
PY
)
    echo "train b$2 $1 $precision c$chunk: $line"
    record train "$2" "$1" "$line"
}
st_train() { # batch [fp32 or fp16: PyTorch's automatic mixed precision]
    local line
    line=$(timeout 150 "$python" "$root/trainer/benches/st_train_throughput.py" "$model" "$records" \
        "$1" 8 64 256 cuda "${2:-fp32}" | tail -1)
    echo "train b$1 st ${2:-fp32}: $line"
    record train "$1" st "$line"
}
profile() {
    # Profile: each kernel's GPU time (cubecl's profiler, which waits for every kernel: the
    # per-kernel shares, not the throughput) over one pass at batch 128 and two training steps.
    head -512 "$texts" >"$scratch/profile-texts.jsonl"
    CUBECL_DEBUG_LOG="$scratch/embed-profile.log" CUBECL_DEBUG_OPTION=profile timeout 120 \
        "$BINS/plain/trainer" embed --model "$model" --input "$scratch/profile-texts.jsonl" --output "$scratch/p.jsonl" \
        --device "$device" --batch-size 128 >/dev/null 2>&1
    "$python" "$here/gpu_profile.py" "$scratch/embed-profile.log" 4 >"$out/profile-embed.txt"
    CUBECL_DEBUG_LOG="$scratch/train-profile.log" CUBECL_DEBUG_OPTION=profile timeout 150 \
        "$BINS/plain/trainer" train --loss infonce --warmup-ratio 0 --checkpoint-every 0 \
        --device "$device" --model "$model" --data "$records" --output "$scratch/train-profile" \
        --batch-size 64 --max-steps 2 --query-max-length 64 --passage-max-length 256 >/dev/null 2>&1
    "$python" "$here/gpu_profile.py" "$scratch/train-profile.log" 2 >"$out/profile-train.txt"
    head -30 "$out/profile-embed.txt"
    head -30 "$out/profile-train.txt"
}
agreement() {
    # Agreement: the engine's GPU embeddings (f32, then f16) against sentence-transformers on CUDA.
    head -256 "$texts" >"$out/parity-texts.jsonl"
    for precision in f32 f16; do
        timeout 120 "$BINS/plain/trainer" embed --device "$device" --precision $precision --model "$model" \
            --input "$out/parity-texts.jsonl" --output "$scratch/parity-$precision.jsonl" >"$out/parity-$precision.log" 2>&1
        line=$("$python" "$here/gpu_parity.py" "$model" "$out/parity-texts.jsonl" "$scratch/parity-$precision.jsonl" cuda | tail -1)
        echo "parity $precision: $line"
        record "parity-$precision" 32 plain "$line"
    done
    # f16's ranking of the demo set against f32's, same GPU, paired tests.
    for precision in f32 f16; do
        timeout 120 "$BINS/plain/trainer" eval --set "$root/engine/demo" --model "$model" --device "$device" \
            --precision $precision --output "$scratch/demo-$precision.json" >"$out/demo-$precision.log" 2>&1
    done
    "$BINS/plain/trainer" eval --compare "$scratch/demo-f32.json" "$scratch/demo-f16.json" >"$out/demo-compare.txt" 2>&1
    cat "$out/demo-compare.txt"
}

# The run in sections, in the order SECTIONS names them (default: all, in order of what matters
# most, so that a run cut short keeps the most). A lease shorter than the whole run names the
# sections still unmeasured first; results.jsonl and the logs are written as each row ends.
anchors_embed() { st_embed 128 fp32; st_embed 128 fp16; st_embed 128 half; }
levers_embed() {
    engine_embed plain 128 f32 longest each-batch
    engine_embed plain 128 f32 buckets each-batch
    engine_embed plain 128 f32 longest pipelined
    engine_embed plain 128 f32 buckets pipelined
    engine_embed plain 128 f16 buckets pipelined
}
levers_train() {
    st_train 64
    st_train 64 fp16
    engine_train plain 64
    engine_train plain 64 8 f32 128
    engine_train plain 64 8 mixed-f16
    engine_train plain 64 8 mixed-f16 128
}
# The builds that tune (and fuse) their kernels: STEPS steps, the rate of the last 8 (the first
# steps tune every training shape; with CUBECL_AUTOTUNE_LEVEL=minimal they tune fewer candidates).
tuned_train() {
    local config v
    for config in "mixed-f16 128" "f32 128" "f32 32"; do
        for v in $variants; do
            [ $v = plain ] && continue
            engine_train $v 64 "${TUNED_STEPS:-40}" $config
        done
    done
}
tuned_embed() {
    for v in $variants; do
        [ $v = plain ] && continue
        engine_embed $v 128 f32 longest pipelined
        engine_embed $v 128 f32 buckets pipelined
        engine_embed $v 128 f32 buckets pipelined fused
        engine_embed $v 128 f16 buckets pipelined
    done
}
small_batches() {
    [ -n "${QUICK:-}" ] && return
    st_embed 32 fp32
    engine_embed plain 32 f32 longest each-batch
    engine_embed plain 32 f32 buckets pipelined
    st_train 16
    engine_train plain 16
}
for section in ${SECTIONS:-anchors_embed levers_embed agreement levers_train profile tuned_embed tuned_train small_batches}; do
    case $section in
    anchors_embed | levers_embed | agreement | levers_train | profile | tuned_embed | tuned_train | small_batches)
        echo "== $section"
        $section
        ;;
    *) echo "gpu.sh: unknown section '$section'" >&2 && exit 2 ;;
    esac
done
"$python" "$here/gpu_table.py" "$results" | tee "$out/table.md"
