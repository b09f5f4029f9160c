//! Weight-space ensembling: a fine-tuned model's weights moved part of the way back to the
//! model it started from, θ = (1 - s)·θ_tuned + s·θ_start (WiSE-FT: Wortsman et al. 2022,
//! "Robust fine-tuning of zero-shot models").
//!
//! Why: fine-tuning on instruction topics teaches the encoder to follow instructions and costs
//! some of what the base model did well (long queries, general retrieval). Both models lie in
//! one basin of the loss, so their average keeps most of the new skill and most of the old
//! one, without another training run; `s` is chosen on the development sets (RESULTS.md).
//!
//! A negative `s` goes the other way, past the fine-tuned model along the direction training
//! took: θ = (1 + e)·θ_tuned - e·θ_start with e = -s (ExPO: Zheng et al. 2024, "Weak-to-strong
//! extrapolation expedites alignment"). A short fine-tuning run that stops while its skill is
//! still rising gets part of the next steps for free, at no cost in training; too far, and the
//! model leaves the basin. Shares are kept within [-1, 1].

use crate::bert::BertModel;
use crate::error::{EngineError, Result};
use crate::model_files::{ModelFiles, CONFIG_JSON, CROSS_ATTENTION_WEIGHTS, WEIGHTS};
use crate::{Device, ModelConfig};

/// The start model's shares [`interpolate`] takes: from -1 (2 x `tuned` - `start`) to 1
/// (`start`). The command line and the training config check theirs against it.
pub const START_SHARES: std::ops::RangeInclusive<f64> = -1.0..=1.0;

/// `tuned` with every weight moved a share `start_share` (0 = `tuned` itself, 1 = `start`) of
/// the way to `start`'s; a negative share moves it away from `start` (-0.25: 1.25 x `tuned` -
/// 0.25 x `start`). Both must have the same shape.
pub fn interpolate(
    start: &BertModel,
    tuned: &BertModel,
    start_share: f64,
    device: &Device,
) -> Result<BertModel> {
    if !START_SHARES.contains(&start_share) {
        return Err(EngineError::Invalid(format!(
            "the start model's share must be within -1 and 1, not {start_share}"
        )));
    }
    if start.config() != tuned.config() {
        return Err(EngineError::Invalid(
            "the two models have different shapes (config.json)".into(),
        ));
    }
    let s = start_share as f32;
    let mixed: Vec<_> = start
        .named_tensors()?
        .into_iter()
        .zip(tuned.named_tensors()?)
        .map(|((name, shape, a), (_, _, b))| {
            let values = a
                .iter()
                .zip(&b)
                .map(|(a, b)| s * a + (1.0 - s) * b)
                .collect();
            (name, shape, values)
        })
        .collect();
    BertModel::from_safetensors(
        &crate::safetensors_io::write_f32(&mixed)?,
        std::path::Path::new("interpolated weights"),
        tuned.config(),
        device,
    )
}

/// The model folder of [`interpolate`]: `tuned`'s files with the mixed weights (tensors the
/// engine does not use, such as BERT's pooler, kept from `tuned`). Folders with Interaction II's
/// cross-attention weights are refused: the start model has none to mix with.
pub fn interpolate_files(
    start: &ModelFiles,
    tuned: &ModelFiles,
    start_share: f64,
    device: &Device,
) -> Result<ModelFiles> {
    for files in [start, tuned] {
        if files.get(CROSS_ATTENTION_WEIGHTS).is_some() {
            return Err(EngineError::model(
                files.path_of(CROSS_ATTENTION_WEIGHTS),
                "weight interpolation covers the encoder alone, not Interaction II's module",
            ));
        }
    }
    let (start_config, tuned_config) = (
        ModelConfig::from_files(start)?,
        ModelConfig::from_files(tuned)?,
    );
    if start_config.bert != tuned_config.bert {
        return Err(EngineError::model(
            tuned.path_of(CONFIG_JSON),
            format!(
                "its shape differs from {}'s: only a model and its own fine-tuned copy can be mixed",
                start.root.display()
            ),
        ));
    }
    let start_model = BertModel::from_files(start, &start_config.bert, device)?;
    let tuned_model = BertModel::from_files(tuned, &tuned_config.bert, device)?;
    let mixed = interpolate(&start_model, &tuned_model, start_share, device)?;
    let mut files = tuned.clone();
    files.insert(WEIGHTS, mixed.to_safetensors(tuned.get(WEIGHTS))?);
    Ok(files)
}
