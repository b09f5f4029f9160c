"""The passages of a benchmark's JSONL file as the engine embeds them: "title text" when the
line has a title, else the text (shared by the anchors' throughput scripts)."""
import json


def read_passages(path: str) -> list[str]:
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                title = r.get("title") or ""
                texts.append(f"{title} {r['text']}" if title.strip() else r["text"])
    return texts
