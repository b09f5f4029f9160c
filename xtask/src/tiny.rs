//! A tiny model cut from all-MiniLM-L6-v2 for the browser test of learn live on WebGPU:
//! SwiftShader, the software adapter the test runs on, takes about 25 s for one forward pass of
//! four passages through the full model, so three training steps would take hours. The cut keeps
//! the tokenizer, pooling and file layout and the first 2 layers, each matrix narrowed to its
//! leading 32 (hidden) and 64 (intermediate) rows and columns: the same code paths at a
//! fraction of the arithmetic, deterministic, from files already here.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// Layers kept.
const LAYERS: usize = 2;
/// (full, tiny) sizes of the dimensions narrowed: hidden, intermediate.
const NARROW: [(usize, usize); 2] = [(384, 32), (1536, 64)];
/// Attention heads of the tiny model (16 dimensions each).
const HEADS: usize = 2;

fn narrowed(size: usize) -> usize {
    NARROW
        .iter()
        .find(|(full, _)| *full == size)
        .map_or(size, |(_, tiny)| *tiny)
}

/// Whether `name` belongs to a layer past the kept ones.
fn dropped(name: &str) -> bool {
    name.split("layer.")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n >= LAYERS)
}

/// The leading `shape` block of a row-major f32 tensor of shape `full` (1 or 2 dimensions).
fn leading_block(data: &[u8], full: &[usize], shape: &[usize]) -> Vec<u8> {
    let (rows, cols, full_cols) = match (full, shape) {
        ([n], [m]) => (1, *m, *n),
        ([_, n], [r, m]) => (*r, *m, *n),
        _ => unreachable!("BERT tensors have one or two dimensions"),
    };
    let mut out = Vec::with_capacity(rows * cols * 4);
    for r in 0..rows {
        let start = r * full_cols * 4;
        out.extend_from_slice(&data[start..start + cols * 4]);
    }
    out
}

/// Writes the tiny model's `model.safetensors` into `out`: `base`'s f32 tensors of the kept
/// layers, each cut to its leading block.
fn cut_weights(base: &Path, out: &Path) -> anyhow::Result<()> {
    let path = base.join("model.safetensors");
    let bytes = std::fs::read(&path)?;
    let tensors = SafeTensors::deserialize(&bytes)
        .with_context(|| format!("{}: not a safetensors file", path.display()))?;
    let mut kept: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, view) in tensors.tensors() {
        if dropped(&name) || view.dtype() != Dtype::F32 {
            continue;
        }
        if view.shape().len() > 2 {
            bail!(
                "{}: tensor {name} has {} dimensions",
                path.display(),
                view.shape().len()
            );
        }
        let shape: Vec<usize> = view.shape().iter().map(|&d| narrowed(d)).collect();
        let data = leading_block(view.data(), view.shape(), &shape);
        kept.push((name, shape, data));
    }
    let views = kept
        .iter()
        .map(|(name, shape, data)| {
            TensorView::new(Dtype::F32, shape.clone(), data).map(|v| (name.clone(), v))
        })
        .collect::<Result<Vec<_>, _>>()?;
    std::fs::write(
        out.join("model.safetensors"),
        safetensors::serialize(views, None)?,
    )?;
    Ok(())
}

/// Writes the tiny model into `out` (replaced) from the model folder `base`.
pub fn cut(base: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out.join("1_Pooling"))?;
    for file in [
        "tokenizer.json",
        "modules.json",
        "sentence_bert_config.json",
    ] {
        std::fs::copy(base.join(file), out.join(file))
            .with_context(|| format!("{}", base.join(file).display()))?;
    }
    let edit_json = |file: &str, edits: &[(&str, usize)]| -> anyhow::Result<()> {
        let path = base.join(file);
        let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)
            .with_context(|| format!("{}", path.display()))?;
        for (key, value) in edits {
            json[*key] = serde_json::json!(value);
        }
        std::fs::write(out.join(file), serde_json::to_string_pretty(&json)?)?;
        Ok(())
    };
    edit_json(
        "config.json",
        &[
            ("hidden_size", narrowed(384)),
            ("intermediate_size", narrowed(1536)),
            ("num_hidden_layers", LAYERS),
            ("num_attention_heads", HEADS),
        ],
    )?;
    edit_json(
        "1_Pooling/config.json",
        &[("word_embedding_dimension", narrowed(384))],
    )?;
    cut_weights(base, out)?;
    Ok(out.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_layers() {
        let data: Vec<u8> = (0..12u32).flat_map(|v| (v as f32).to_le_bytes()).collect();
        let block = leading_block(&data, &[3, 4], &[2, 2]);
        let values: Vec<f32> = block
            .chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(values, vec![0.0, 1.0, 4.0, 5.0]);
        assert!(dropped("encoder.layer.2.attention.self.query.weight"));
        assert!(!dropped("encoder.layer.1.output.dense.bias"));
        assert!(!dropped("embeddings.word_embeddings.weight"));
        assert_eq!(
            (narrowed(384), narrowed(1536), narrowed(30522)),
            (32, 64, 30522)
        );
    }
}
