//! The model being trained: the BERT encoder and, for Interaction II, the cross-attention
//! module, plus what turns a batch layout into the score matrix the objectives read.

use burn::module::Module;
use burn::tensor::Tensor;

use crate::bert::BertModel;
use crate::error::Result;
use crate::instruction::{CrossAttentionInteraction, Interaction};
use crate::model_files::{ModelFiles, CROSS_ATTENTION_WEIGHTS, TOKENIZER_JSON, WEIGHTS};
use crate::tokenize::TextTokenizer;
use crate::training::BatchLayout;
use crate::{Device, ModelConfig, QueryTemplate};

/// The arithmetic of a training step's forward and backward passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrainingPrecision {
    /// 32-bit floats throughout (every backend).
    #[default]
    F32,
    /// Mixed precision on a GPU: the f32 weights stay the master copy (what AdamW updates and
    /// checkpoints save); each step casts them to an f16 copy inside the autodiff graph, so
    /// the transformer's forward and backward passes run in f16 and the gradients arrive back
    /// in f32 through the cast. Pooling, scores and the loss stay f32, and the loss is
    /// multiplied by a dynamic loss scale (`step::LossScale`) so that small gradients do not flush to zero.
    MixedF16,
}

text_names!(TrainingPrecision, "training precision", { F32 => "f32", MixedF16 => "mixed-f16" });

serde_as_text!(TrainingPrecision);

/// The trainable parameters.
#[derive(Module, Debug)]
pub struct TrainModel {
    /// The encoder (shared by queries, instruction + query texts and passages).
    pub bert: BertModel,
    /// Interaction II's module, when training with cross-attention.
    pub cross: Option<CrossAttentionInteraction>,
}

/// Everything fixed during a run: tokenizers, pooling, template.
pub struct Texts {
    /// Tokenizer truncating at the query limit.
    pub query_tokenizer: TextTokenizer,
    /// Tokenizer truncating at the passage limit.
    pub passage_tokenizer: TextTokenizer,
    /// The model's settings (pooling, pad id).
    pub config: ModelConfig,
    /// How instruction and query are joined (concatenation).
    pub template: QueryTemplate,
    /// Texts per forward pass (at most, on the CPU: [`crate::tokenize::Batching`]).
    pub chunk: usize,
}

impl Texts {
    /// The tokenizers of `files` at the run's token limits (each capped at the model's
    /// position embeddings), with the model's settings.
    pub fn new(
        files: &ModelFiles,
        config: &ModelConfig,
        query_max_length: usize,
        passage_max_length: usize,
        template: QueryTemplate,
        chunk: usize,
    ) -> Result<Self> {
        let max_positions = config.bert.max_position_embeddings;
        let tokenizer = |limit: usize| {
            TextTokenizer::from_bytes(
                files.required(TOKENIZER_JSON, "tokenizer")?,
                &files.path_of(TOKENIZER_JSON),
                limit.min(max_positions).max(2),
            )
        };
        Ok(Texts {
            query_tokenizer: tokenizer(query_max_length)?,
            passage_tokenizer: tokenizer(passage_max_length)?,
            config: config.clone(),
            template,
            chunk: chunk.max(1),
        })
    }
}

impl TrainModel {
    /// Loads the base model (and a cross-attention module: saved weights when `files` has
    /// them, else the identity) onto `device`.
    pub fn load(
        files: &ModelFiles,
        config: &ModelConfig,
        cross: bool,
        device: &Device,
    ) -> Result<Self> {
        let bert = BertModel::from_files(files, &config.bert, device)?;
        let cross = if cross {
            let dim = config.bert.hidden_size;
            Some(match Interaction::from_files(files, dim, device)? {
                Some(Interaction::CrossAttention(module)) => *module,
                _ => CrossAttentionInteraction::identity(dim, device),
            })
        } else {
            None
        };
        Ok(TrainModel { bert, cross })
    }

    /// This model with the encoder's lowest `blocks` frozen ([`BertModel::freeze_lowest`]);
    /// a cross-attention module stays trainable.
    pub fn freeze_lowest(self, blocks: usize) -> Result<Self> {
        Ok(TrainModel {
            bert: self.bert.freeze_lowest(blocks)?,
            cross: self.cross,
        })
    }

    /// The model that computes a step in `precision`: this one for f32; for mixed precision
    /// a copy whose encoder weights are cast to f16 inside the autodiff graph, so gradients
    /// flow back through the cast to this model's f32 parameters.
    pub fn computing_in(&self, precision: TrainingPrecision) -> TrainModel {
        match precision {
            TrainingPrecision::F32 => self.clone(),
            TrainingPrecision::MixedF16 => {
                let mut half = self.clone();
                half.bert.cast_float(burn::tensor::FloatDType::F16);
                half
            }
        }
    }

    /// Pair embeddings `[pairs, d]` (only rows `range` of the layout's pairs).
    pub fn embed_pairs(
        &self,
        texts: &Texts,
        layout: &BatchLayout,
        range: std::ops::Range<usize>,
    ) -> Result<Tensor<2>> {
        let pairs = &layout.pairs[range];
        let pad = texts.config.bert.pad_token_id;
        let pooling = texts.config.pooling;
        Ok(match &self.cross {
            None => {
                let joined = pairs
                    .iter()
                    .map(|&(i, q)| {
                        texts.template.fit(
                            &texts.query_tokenizer,
                            &layout.instructions[i],
                            &layout.queries[q],
                        )
                    })
                    .collect::<Result<Vec<String>>>()?;
                let joined: Vec<&str> = joined.iter().map(|s| s.as_str()).collect();
                crate::training::embed(
                    &self.bert,
                    &texts.query_tokenizer,
                    pad,
                    pooling,
                    &joined,
                    texts.chunk,
                )?
            }
            Some(module) => {
                let split: Vec<(&str, &str)> = pairs
                    .iter()
                    .map(|&(i, q)| (layout.instructions[i].as_str(), layout.queries[q].as_str()))
                    .collect();
                crate::training::embed_cross_attention(
                    &self.bert,
                    module,
                    &texts.query_tokenizer,
                    pad,
                    pooling,
                    &split,
                )?
            }
        })
    }

    /// Passage embeddings `[passages, d]` (rows `range`).
    pub fn embed_passages(
        &self,
        texts: &Texts,
        layout: &BatchLayout,
        range: std::ops::Range<usize>,
    ) -> Result<Tensor<2>> {
        let passages: Vec<&str> = layout.passages[range].iter().map(|s| s.as_str()).collect();
        crate::training::embed(
            &self.bert,
            &texts.passage_tokenizer,
            texts.config.bert.pad_token_id,
            texts.config.pooling,
            &passages,
            texts.chunk,
        )
    }

    /// An encoder with the current weights on `device` (this model's device without
    /// autodiff), reading `base`'s tokenizer and configuration; `fingerprint` names the
    /// weights.
    pub fn encoder(
        &self,
        base: &ModelFiles,
        device: &Device,
        fingerprint: String,
    ) -> Result<crate::Encoder> {
        let interaction = self
            .cross
            .as_ref()
            .map(|c| Interaction::CrossAttention(Box::new(c.valid())));
        crate::Encoder::from_model(base, self.bert.valid(), interaction, device, fingerprint)
    }

    /// The model as a Hugging Face folder: `base`'s files with the trained weights (tensors
    /// the engine does not train, such as the pooler, copied from `base`), plus
    /// `cross_attention.safetensors` for Interaction II.
    pub fn to_files(&self, base: &ModelFiles) -> Result<ModelFiles> {
        let mut files = base.clone();
        files.insert(WEIGHTS, self.bert.to_safetensors(base.get(WEIGHTS))?);
        if let Some(cross) = &self.cross {
            files.insert(CROSS_ATTENTION_WEIGHTS, cross.to_safetensors()?);
        }
        Ok(files)
    }
}
