"""Exports a sentence-transformers BERT model folder to ONNX, fp32 and dynamic int8, in the
layout transformers.js loads (`MODEL/onnx/model.onnx`, `MODEL/onnx/model_quantized.onnx`,
tokenizer and config beside them), and checks both against sentence-transformers.

    python export_onnx.py MODEL_DIR OUT_DIR      # writes OUT_DIR/<name of MODEL_DIR>/

Nothing is fetched from a hub: the model is the local folder. The graph is the transformer
(input_ids, attention_mask, token_type_ids -> last_hidden_state), as the hub's own ONNX
exports of this model are; mean pooling and normalisation stay in the caller (transformers.js
`pipeline('feature-extraction')` with `pooling: 'mean', normalize: true`). The int8 file is
ONNX Runtime's dynamic quantisation (`quantize_dynamic`, signed 8-bit per-channel weights, activations
quantised at run time), what the hub's `model_quantized.onnx` files are.

Prints one JSON line: file sizes and the lowest cosine of each file's sentence embedding
against sentence-transformers over a few texts.
"""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer

TEXTS = [
    "how do solar panels work",
    "Only forum posts from home bakers. sourdough starter",
    "A long passage about marathon training plans that repeat themselves. " * 12,
    "Ünïcödé, 数据, emoji 🎉 and a [SEP] token",
]
FILES = [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
]


class Transformer(torch.nn.Module):
    """The BERT body with the three inputs by name (transformers' positional order varies)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                         token_type_ids=token_type_ids).last_hidden_state


def export(model_dir: Path, onnx_dir: Path) -> Path:
    model = Transformer(AutoModel.from_pretrained(model_dir)).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    sample = tokenizer(["a sample text", "another one, longer than the first"],
                       padding=True, return_tensors="pt")
    path = onnx_dir / "model.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dynamic = {n: {0: "batch_size", 1: "sequence_length"} for n in names}
    dynamic["last_hidden_state"] = {0: "batch_size", 1: "sequence_length"}
    with torch.no_grad():
        torch.onnx.export(
            model,
            (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=dynamic,
            opset_version=14,
            dynamo=False,
        )
    return path


def limit_tokens(model_dir: Path, target: Path) -> None:
    """Writes sentence-transformers' max_seq_length (256 for this model) as the tokenizer's
    model_max_length (512 in the file), the limit transformers.js truncates at: every system
    of the benchmark then sees the same tokens."""
    st_config = model_dir / "sentence_bert_config.json"
    config_path = target / "tokenizer_config.json"
    if not st_config.is_file() or not config_path.is_file():
        return
    limit = json.loads(st_config.read_text())["max_seq_length"]
    config = json.loads(config_path.read_text())
    config["model_max_length"] = limit
    config_path.write_text(json.dumps(config, indent=2))


def embed(session: ort.InferenceSession, tokenizer, texts: list[str]) -> np.ndarray:
    enc = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="np")
    feeds = {i.name: enc[i.name].astype(np.int64) for i in session.get_inputs()}
    hidden = session.run(["last_hidden_state"], feeds)[0]
    mask = enc["attention_mask"][..., None].astype(np.float32)
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main() -> None:
    model_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    target = out_dir / model_dir.name
    onnx_dir = target / "onnx"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        if (model_dir / name).is_file():
            shutil.copy(model_dir / name, target / name)
    limit_tokens(model_dir, target)
    fp32 = export(model_dir, onnx_dir)
    int8 = onnx_dir / "model_quantized.onnx"
    # Per-channel scales: per-tensor ones lose too much on this model (lowest cosine 0.92).
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)

    reference = SentenceTransformer(str(model_dir), device="cpu").encode(
        TEXTS, normalize_embeddings=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    report = {"model": model_dir.name}
    for key, path in [("fp32", fp32), ("int8", int8)]:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        got = embed(session, tokenizer, TEXTS)
        report[f"{key}_bytes"] = path.stat().st_size
        report[f"{key}_min_cosine"] = float((got * reference).sum(1).min())
    if report["fp32_min_cosine"] < 0.9999:
        sys.exit(f"the fp32 export differs from sentence-transformers: {report}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
