#!/usr/bin/env python3
"""sentence-transformers training throughput (MultipleNegativesRankingLoss, PyTorch) on the
same records, model, batch and sequence lengths as `trainer train --loss infonce` in
`cargo xtask bench-train`.

Usage: st_train_throughput.py MODEL_DIR RECORDS.jsonl BATCH STEPS QUERY_LEN PASSAGE_LEN [DEVICE [fp16]]
(DEVICE: cpu, the default, or cuda; on cuda each step ends with a synchronisation, as the
engine's trainer reads its loss back after each step. fp16: PyTorch's automatic mixed precision,
the anchor of `trainer train --precision mixed-f16`: the forward pass under
`torch.autocast(device, torch.float16)`, f32 weights, a dynamic loss scale (`torch.amp.GradScaler`).)

Records are instruction-negative records with one hard negative; each becomes the triplet
(instruction + " " + query, positive, negative), exactly the tuples the engine trains on.
Prints one JSON line: pairs (anchors) per second over the steps after the first."""
import json
import sys
import time

import torch
from sentence_transformers import SentenceTransformer, losses


def main():
    model_dir, path = sys.argv[1], sys.argv[2]
    batch, steps, qlen, plen = (int(x) for x in sys.argv[3:7])
    device = sys.argv[7] if len(sys.argv) > 7 else "cpu"
    amp = len(sys.argv) > 8 and sys.argv[8] == "fp16"
    triplets = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                anchor = f"{r['instruction']} {r['query']}" if r["instruction"] else r["query"]
                triplets.append((anchor, r["positive"], r["negatives"][0]))
    torch.manual_seed(0)
    model = SentenceTransformer(model_dir, device=device)
    model.train()
    loss_fn = losses.MultipleNegativesRankingLoss(model, scale=1 / 0.02)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    scaler = torch.amp.GradScaler(device, enabled=amp)

    def features(texts, max_len):
        model.max_seq_length = max_len
        f = model.tokenize(texts)
        return {k: v.to(device) if hasattr(v, "to") else v for k, v in f.items()}

    times = []
    for step in range(steps):
        chunk = [triplets[(step * batch + i) % len(triplets)] for i in range(batch)]
        start = time.perf_counter()
        anchors = features([t[0] for t in chunk], qlen)
        positives = features([t[1] for t in chunk], plen)
        negatives = features([t[2] for t in chunk], plen)
        with torch.autocast(device, dtype=torch.float16, enabled=amp):
            loss = loss_fn([anchors, positives, negatives], None)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        loss.item()  # waits for the step on a GPU
        times.append(time.perf_counter() - start)
    secs = sum(times[1:])
    pairs = batch * (steps - 1)
    print(json.dumps({
        "system": f"sentence-transformers {__import__('sentence_transformers').__version__} MNRL "
                  f"(torch {torch.__version__}, "
                  f"{torch.get_num_threads() if device == 'cpu' else torch.cuda.get_device_name()}"
                  f"{' threads' if device == 'cpu' else ''}{', fp16' if amp else ''})",
        "pairs": pairs, "seconds": secs, "pairs_per_s": pairs / secs}))


if __name__ == "__main__":
    main()
