//! Writing f32 tensors in the safetensors format (the reading side is the `safetensors` crate),
//! and the smaller forms of a weights file the web demo downloads: F16, and int8 matrices with
//! one scale per row.

use crate::error::{EngineError, Result};
pub use crate::int8::quantize_rows;

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

/// The suffix of the tensor holding an int8 matrix's row scales: `NAME.scale` beside `NAME`.
pub const INT8_SCALE_SUFFIX: &str = ".scale";

/// One tensor of a rewritten file: name, dtype, shape, little-endian bytes.
type Rewritten = (String, safetensors::Dtype, Vec<usize>, Vec<u8>);

/// Rewrites a safetensors file with every F32 tensor stored as F16 (round to nearest even),
/// other tensors unchanged: half the download for the browser, and the engine reads F16 back
/// as f32 (embeddings stay within cosine 0.999 of the f32 model; tested). `path` names the
/// source in errors.
pub fn to_f16(bytes: &[u8], path: &std::path::Path) -> Result<Vec<u8>> {
    rewrite(bytes, path, |name, view| {
        let values = f32_values(view);
        vec![(
            name.to_string(),
            safetensors::Dtype::F16,
            view.shape().to_vec(),
            values
                .iter()
                .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
                .collect(),
        )]
    })
}

/// Rewrites a safetensors file with every F32 matrix (embedding tables, linear weights) stored
/// as int8 with one f32 scale per row (`NAME.scale`, the row's largest magnitude / 127; rows
/// are output channels of a linear layer, tokens of an embedding table), and every other F32
/// tensor (biases, layer norms) as F16: a quarter of the f32 download. The engine dequantises
/// on load ([`dequantize_int8`]), so it computes in f32 exactly as before, from weights
/// rounded to 255 levels per row. `path` names the source in errors.
pub fn to_int8(bytes: &[u8], path: &std::path::Path) -> Result<Vec<u8>> {
    rewrite(bytes, path, |name, view| {
        let values = f32_values(view);
        let shape = view.shape().to_vec();
        if shape.len() != 2 || shape[1] == 0 {
            return vec![(
                name.to_string(),
                safetensors::Dtype::F16,
                shape,
                values
                    .iter()
                    .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
                    .collect(),
            )];
        }
        let (quantized, scales) = quantize_rows(&values, shape[1]);
        vec![
            (
                name.to_string(),
                safetensors::Dtype::I8,
                shape.clone(),
                quantized.iter().map(|q| *q as u8).collect(),
            ),
            (
                format!("{name}{INT8_SCALE_SUFFIX}"),
                safetensors::Dtype::F32,
                vec![shape[0]],
                scales.iter().flat_map(|s| s.to_le_bytes()).collect(),
            ),
        ]
    })
}

/// The f32 values of an int8 matrix (`data`, `rows x width`) with its row `scales`; `None`
/// unless the sizes agree.
pub fn dequantize_int8(data: &[u8], scales: &[f32], width: usize) -> Option<Vec<f32>> {
    if width == 0 || data.len() != scales.len() * width {
        return None;
    }
    Some(
        data.chunks(width)
            .zip(scales)
            .flat_map(|(row, s)| row.iter().map(move |q| *q as i8 as f32 * s))
            .collect(),
    )
}

fn f32_values(view: &safetensors::tensor::TensorView<'_>) -> Vec<f32> {
    view.data()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Rewrites every F32 tensor of a safetensors file with `convert` (which may emit several
/// tensors for one), other tensors unchanged.
fn rewrite(
    bytes: &[u8],
    path: &std::path::Path,
    convert: impl Fn(&str, &safetensors::tensor::TensorView<'_>) -> Vec<Rewritten>,
) -> Result<Vec<u8>> {
    let bad = |problem: String| EngineError::data(path, 0, problem);
    let tensors = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| bad(format!("not a readable safetensors file: {e}")))?;
    let mut names: Vec<String> = tensors.names().into_iter().map(|s| s.to_string()).collect();
    names.sort();
    let mut converted: Vec<Rewritten> = Vec::new();
    for name in names {
        let view = tensors
            .tensor(&name)
            .map_err(|e| bad(format!("tensor '{name}': {e}")))?;
        if view.dtype() == safetensors::Dtype::F32 {
            converted.extend(convert(&name, &view));
        } else {
            converted.push((
                name,
                view.dtype(),
                view.shape().to_vec(),
                view.data().to_vec(),
            ));
        }
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
