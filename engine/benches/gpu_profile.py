#!/usr/bin/env python3
"""Summarises a cubecl profile log (CUBECL_DEBUG_LOG=FILE CUBECL_DEBUG_OPTION=profile): GPU
time and dispatches per kernel, largest first, with the share of the total, and the
dispatches per unit of work (per batch when embedding, per step when training).

Usage: gpu_profile.py LOG UNITS   (UNITS: the batches or steps the log covers)"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\|\s*([0-9.]+)\s*(ns|µs|us|ms|s)\s*\|\s*(.+?)\s*$")
SCALE = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def kernel_name(text):
    """The kernel's name without its type parameters, launch details and variant hash
    (`KernelBinop | AddOp_68692a12` -> `KernelBinop / AddOp`)."""
    name = re.split(r"[<({\[]", text, maxsplit=1)[0].strip()
    name = re.sub(r"_[0-9a-f]{8}\b", "", name).replace(" | ", " / ")
    parts = [p for p in name.split("::") if p]
    return "::".join(parts[-2:]) if parts else text[:60]


def main():
    path, units = sys.argv[1], max(1, int(sys.argv[2]))
    seconds = defaultdict(float)
    count = defaultdict(int)
    unmeasured = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                name = kernel_name(m.group(3))
                seconds[name] += float(m.group(1)) * SCALE[m.group(2)]
                count[name] += 1
            elif line.startswith("|") and "not measured" in line:
                unmeasured += 1
    total = sum(seconds.values())
    dispatches = sum(count.values())
    print(f"{dispatches} timed dispatches ({dispatches / units:.0f} per unit of {units}), "
          f"{total * 1e3:.1f} ms of GPU time ({total * 1e3 / units:.2f} ms per unit); "
          f"{unmeasured} not measured\n")
    print("| kernel | dispatches | ms | share |")
    print("|---|---|---|---|")
    for name in sorted(seconds, key=seconds.get, reverse=True)[:25]:
        print(f"| {name} | {count[name]} | {seconds[name] * 1e3:.2f} | {seconds[name] / max(total, 1e-12):.1%} |")


if __name__ == "__main__":
    main()
