#!/usr/bin/env bash
# Runs engine/benches/gpu.sh from a kit (gpu_kit.sh) on a GPU machine with nothing installed but
# the NVIDIA driver and PyTorch with sentence-transformers: unpacks the trainers, writes the
# random weights, checks that the Vulkan build sees the GPU, then runs gpu.sh's sections.
#
# Usage: engine/benches/gpu_device.sh KIT_DIR OUT_DIR
# Environment: SECTIONS (gpu.sh's, in order), BUDGET (seconds for gpu.sh in all, default 540;
#   a row cut short is lost, the rows before it are in OUT_DIR/results.jsonl), DEBS (a folder of
#   .deb files to unpack first, e.g. Debian's libvulkan1 where the machine has no Vulkan
#   loader), TRAIN_TIMEOUT and TUNED_STEPS (gpu.sh's).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
if [ -n "${DEBS:-}" ]; then
    for f in "$DEBS"/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -z "${VK_DRIVER_FILES:-}" ] && [ -f $icd ] && export VK_DRIVER_FILES=$icd
bins=$(mktemp -d)
# Python's lzma: the machine's image may have no xz.
unxz() { python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" "$1" "$2"; }
for build in plain autotune fused; do
    [ -f "$kit/trainer-$build.xz" ] || continue
    mkdir -p "$bins/$build" && unxz "$kit/trainer-$build.xz" "$bins/$build/trainer" && chmod +x "$bins/$build/trainer"
done
model=$(mktemp -d)
cp -r "$kit/model/." "$model/"
[ -f "$model/model.safetensors" ] || python3 "$root/engine/benches/random_model.py" write "$kit/model/shapes.json" "$model/model.safetensors"
unxz "$kit/records.jsonl.xz" "$model/records.jsonl"
nvidia-smi -L || true
head -4 "$kit/texts.jsonl" >"$model/check.jsonl"
"$bins/plain/trainer" embed --model "$model" --input "$model/check.jsonl" --output "$model/check-out.jsonl" \
    --device "${DEVICE:-vulkan}" 2>&1 | tail -2
BINS=$bins QUICK=1 timeout "${BUDGET:-540}" "$root/engine/benches/gpu.sh" "$model" "$kit/texts.jsonl" \
    "$model/records.jsonl" "$out" 2>&1 | tee "$out/console.log"
python3 "$root/engine/benches/gpu_table.py" "$out/results.jsonl" | tee "$out/table.md"
