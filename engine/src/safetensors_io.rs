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
