"""Random perturbations of a model's weights: a null model for how far an evaluation set's
numbers move under a change that carries no information about its task.

    python3 recipes/perturbed_models.py MODEL_DIR OUT_PREFIX SCALE SEED [SEED ...]

Writes OUT_PREFIX-SEED/, a copy of MODEL_DIR whose every encoder weight matrix and embedding
table (2-D float tensors; biases and LayerNorm parameters untouched) has Gaussian noise added,
each entry's standard deviation SCALE x that tensor's own standard deviation. Used in
RESULTS.md ("How much a change that knows nothing moves BIRCO clinical-trial") with SCALE chosen
so that the perturbed model embeds texts at about the cosine to the base that the J34 model
does (0.97 to 0.98). Needs numpy and safetensors (the project's venv has both).
"""
import shutil
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file


def perturb(model: Path, out: Path, scale: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    tensors = load_file(str(model / "model.safetensors"))
    noisy = {}
    for name in sorted(tensors):
        t = tensors[name]
        if t.ndim == 2 and t.dtype == np.float32:
            t = t + rng.standard_normal(t.shape).astype(np.float32) * (scale * float(t.std()))
        noisy[name] = t
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(model, out)
    save_file(noisy, str(out / "model.safetensors"), metadata={"format": "pt"})


def main() -> None:
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    model, prefix = Path(sys.argv[1]), sys.argv[2]
    try:
        scale = float(sys.argv[3])
        seeds = [int(a) for a in sys.argv[4:]]
    except ValueError as e:
        sys.exit(f"SCALE must be a number and each SEED an integer ({e})")
    weights = model / "model.safetensors"
    if not weights.is_file():
        sys.exit(f"{weights}: no such file (MODEL_DIR must hold a model.safetensors)")
    for seed in seeds:
        out = Path(f"{prefix}-{seed}")
        try:
            perturb(model, out, scale, seed)
        except Exception as e:  # a corrupt or unreadable weights file, a full disk
            sys.exit(f"{weights} -> {out}: {e}")
        print(out)


if __name__ == "__main__":
    main()
