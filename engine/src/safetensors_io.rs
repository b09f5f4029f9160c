//! Writing f32 tensors in the safetensors format (the reading side is the `safetensors` crate).

use crate::error::{EngineError, Result};

/// Serialises `(name, shape, values)` triples as a safetensors file.
pub fn write_f32(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Result<Vec<u8>> {
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, _, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .zip(&bytes)
        .map(|((name, shape, _), data)| {
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                .map(|view| (name.clone(), view))
                .map_err(|e| EngineError::Invalid(format!("tensor '{name}': {e}")))
        })
        .collect::<Result<_>>()?;
    safetensors::serialize(views, None)
        .map_err(|e| EngineError::Invalid(format!("safetensors: {e}")))
}

/// Rewrites a safetensors file with every F32 tensor stored as F16 (round to nearest even),
/// other tensors unchanged: half the download for the browser, and the engine reads F16 back
/// as f32 (embeddings stay within cosine 0.999 of the f32 model; tested). `path` names the
/// source in errors.
pub fn to_f16(bytes: &[u8], path: &std::path::Path) -> Result<Vec<u8>> {
    let bad = |problem: String| EngineError::data(path, 0, problem);
    let tensors = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| bad(format!("not a readable safetensors file: {e}")))?;
    let mut names: Vec<String> = tensors.names().into_iter().map(|s| s.to_string()).collect();
    names.sort();
    let mut converted: Vec<(String, safetensors::Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for name in names {
        let view = tensors
            .tensor(&name)
            .map_err(|e| bad(format!("tensor '{name}': {e}")))?;
        let (dtype, data) = if view.dtype() == safetensors::Dtype::F32 {
            let half: Vec<u8> = view
                .data()
                .chunks_exact(4)
                .flat_map(|c| {
                    half::f16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes()
                })
                .collect();
            (safetensors::Dtype::F16, half)
        } else {
            (view.dtype(), view.data().to_vec())
        };
        converted.push((name, dtype, view.shape().to_vec(), data));
    }
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = converted
        .iter()
        .map(|(name, dtype, shape, data)| {
            safetensors::tensor::TensorView::new(*dtype, shape.clone(), data)
                .map(|view| (name.clone(), view))
                .map_err(|e| EngineError::Invalid(format!("tensor '{name}': {e}")))
        })
        .collect::<Result<_>>()?;
    safetensors::serialize(views, None)
        .map_err(|e| EngineError::Invalid(format!("safetensors: {e}")))
}
