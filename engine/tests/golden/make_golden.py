#!/usr/bin/env python3
"""Writes the golden embeddings the engine's parity tests compare against.

Run it through `cargo xtask golden` (which creates a venv with sentence-transformers from PyPI),
or by hand:  python make_golden.py MODEL_DIR OUT_DIR

Two files are written:
  minilm_golden.json   >= 50 varied texts used by engine/tests/parity.rs
  heldout_golden.json  texts the parity test never sees, used by the `trainer embed` CLI test
Each holds the sentence-transformers and torch versions, the model's sha256 and, per text,
its embedding as produced by SentenceTransformer(MODEL_DIR).encode(texts, batch_size=8).
"""
import hashlib
import json
import os
import sys

LONG_EN = " ".join(
    f"Sentence number {i} talks about retrieval systems that must follow the user's instructions, "
    f"and it keeps going so the text is far longer than the model's limit." for i in range(40))
LONG_FR = ("Le café était fermé, alors nous avons marché jusqu'à la boulangerie près de l'église. " * 30).strip()
LONG_CJK = "信息检索系统应该遵循用户的指令，而不仅仅是匹配主题。" * 40

TEXTS = [
    "",
    "a",
    "Hello world",
    "How do I learn Python as a complete beginner?",
    "Only documents for beginners, please.",
    "Exclude anything published before 2020.",
    "Forum posts, not news articles.",
    "The quick brown fox jumps over the lazy dog.",
    "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG.",
    "the quick brown fox jumps over the lazy dog",
    "Café crème, naïve façade, résumé, coöperate, jalapeño.",
    "Ça va? Où est la gare? Über die Brücke gehen wir morgen.",
    "São Paulo é a maior cidade do Brasil.",
    "Straße, Ærø, Øresund, Åland, İstanbul, Łódź.",
    "東京は日本の首都です。",
    "北京是中国的首都，上海是最大的城市。",
    "서울은 한국의 수도입니다.",
    "Москва — столица России.",
    "مرحبا بالعالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "I love pizza 🍕 and coffee ☕!!!",
    "🙂🙃😉 emoji only 🚀🔥",
    "👩‍👩‍👧‍👦 family emoji with zero-width joiners",
    "   leading and trailing spaces   ",
    "tabs\tbetween\twords",
    "new\nlines\nbetween\nwords",
    "multiple     spaces      inside",
    "\u00a0non-breaking\u00a0spaces\u00a0here",
    "zero\u200bwidth\u200bspace",
    "[SEP]",
    "This text has a literal [SEP] token and a [CLS] token inside.",
    "[MASK] [PAD] [UNK] special tokens written as text",
    "<html><body>Some <b>HTML</b> markup &amp; entities</body></html>",
    "def fibonacci(n):\n    return n if n < 2 else fibonacci(n-1) + fibonacci(n-2)",
    "SELECT * FROM users WHERE age > 30 ORDER BY name;",
    "https://example.com/path?query=1&other=two#fragment",
    "email me at someone@example.org",
    "Prices: $19.99, €5, £3.50, ¥1000, 12% off",
    "1234567890 3.14159 2.71828 1e-10 -42",
    "2024-03-15 10:30:00 UTC",
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "supercalifragilisticexpialidocious",
    "e = mc² and ∑ x_i ≥ ∫ f(x) dx",
    "A.B.C. U.S.A. e.g. i.e. etc.",
    "don't won't can't it's they're",
    "Mixed CASE wOrDs In A sEnTeNcE",
    "!!!???...,,,;;;:::",
    "-----",
    "The mitochondria is the powerhouse of the cell.",
    "Heat pumps move heat rather than generating it, which makes them efficient.",
    "Sourdough bread relies on a starter of wild yeast and lactic acid bacteria.",
    LONG_EN,
    LONG_FR,
    LONG_CJK,
    "word " * 300,
]

HELDOUT = [
    "Which running shoes suit a first marathon?",
    "Only forum posts written after 2021 about solar panels.",
    "Les pâtisseries de Lyon sont délicieuses.",
    "日本語のテキストと English text mixed 🎌",
    "Instruction: ignore news. Query: electric car battery life",
    "A short one.",
    ("Long held-out passage about birdwatching in wetlands at dawn, with binoculars and notebooks. " * 25).strip(),
    "  spaced   out\ttext\nwith [SEP] inside ",
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    model_dir, out_dir = sys.argv[1], sys.argv[2]
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(model_dir, device="cpu")
    meta = {
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "model_sha256": sha256(os.path.join(model_dir, "model.safetensors")),
        "max_seq_length": model.max_seq_length,
    }
    for name, texts in [("minilm_golden.json", TEXTS), ("heldout_golden.json", HELDOUT)]:
        emb = model.encode(texts, batch_size=8, convert_to_numpy=True)
        tok = model.tokenizer
        records = []
        for text, vec in zip(texts, emb):
            ids = tok(text, truncation=True, max_length=model.max_seq_length)["input_ids"]
            records.append({"text": text, "token_count": len(ids),
                            "embedding": [float(f"{x:.8g}") for x in vec.tolist()]})
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "records": records}, f, ensure_ascii=False)
        print(f"wrote {name}: {len(records)} texts")


if __name__ == "__main__":
    main()
