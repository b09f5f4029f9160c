//! # engine: instruction-following retrieval in one crate
//!
//! Instruction-following retrieval asks a search system to obey what the user says ("only
//! documents for beginners", "forum posts, not news") rather than match the topic alone. Three
//! programs need the same machinery: the native `trainer` (training, evaluation, search), the
//! browser `app` (live demo) and the tests. This crate is that machinery, so each concept lives
//! in exactly one place:
//!
//! * [`model_files`] and [`config`]: a Hugging Face style model folder, read from disk or bytes;
//! * [`tokenize`], [`bert`] and [`encoder`]: text to embeddings, matching sentence-transformers;
//! * [`instruction`]: how an instruction joins a query (template or cross-attention);
//! * [`kernels`]: vectorised CPU kernels burn-flex lacks (GELU forward and backward), plugged
//!   in through burn's backend-extension point;
//! * [`int8`]: 8-bit dense layers for CPU inference (AVX-512 VNNI or AVX2 kernels, chosen at run time);
//! * [`backend`]: one model code path over burn's CPU, wgpu/WebGPU, Vulkan and CUDA devices;
//! * [`retrieval`]: exact cosine top-k, streaming, and the persistent index file;
//! * [`atomic`] and [`served`]: files that appear whole, and the web deployment's model index;
//! * [`data`] and [`demo`]: the shared data formats and the built-in demo set;
//! * [`metrics`]: every evaluation metric (trec_eval-exact standard metrics, p-MRR, WISE,
//!   SICR, INSTFOL, significance tests), one implementation for CLI, trainer and browser;
//! * [`evaluation`]: from an evaluation set and an encoder to one run per mode;
//! * [`training`]: what fine-tuning needs that is not a training loop: the training-record
//!   formats, batches that keep siblings and dual views together, and every contrastive
//!   objective (InF-Embed's univariate and multivariate losses, InfoNCE) as tensor code;
//! * [`rng`]: the one seedable random generator.
//!
//! The encoder runs on [burn](https://burn.dev): tensors carry a runtime `Device`, so the same
//! functions serve every backend; only the device value differs.

#![deny(missing_docs)]

/// Serialises a type as its `Display` text and deserialises it with `FromStr`, so settings
/// files hold the same words as the command line (`"cpu"`, `"multi-p-i"`).
#[cfg_attr(not(feature = "encoder"), allow(unused_macros))]
macro_rules! serde_as_text {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// `Display` and `FromStr` (errors: [`EngineError::Invalid`]) for an enum named by fixed words:
/// `text_names!(Padding, "padding", { Longest => "longest", Buckets => "buckets" })`. Only the
/// encoder's modules name such enums.
#[cfg(feature = "encoder")]
macro_rules! text_names {
    ($t:ident, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self {
                    $($t::$variant => $name,)+
                })
            }
        }

        impl std::str::FromStr for $t {
            type Err = $crate::error::EngineError;
            fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
                match s {
                    $($name => Ok($t::$variant),)+
                    other => {
                        let names = [$($name),+];
                        let (last, rest) = names.split_last().expect("at least one name");
                        let listed = match rest {
                            [] => last.to_string(),
                            _ => format!("{} or {last}", rest.join(", ")),
                        };
                        Err($crate::error::EngineError::Invalid(format!(
                            "unknown {} '{other}': use {listed}",
                            $what
                        )))
                    }
                }
            }
        }
    };
}

pub mod atomic;
#[cfg(feature = "encoder")]
pub mod backend;
#[cfg(feature = "encoder")]
pub mod bert;
pub mod config;
pub mod data;
pub mod demo;
#[cfg(feature = "encoder")]
pub mod encoder;
pub mod error;
#[cfg(feature = "encoder")]
pub mod evaluation;
#[cfg(feature = "encoder")]
pub mod instruction;
pub mod int8;
#[cfg(feature = "encoder")]
pub mod kernels;
pub mod metrics;
pub mod model_files;
#[cfg(feature = "encoder")]
pub mod retrieval;
pub mod rng;
pub mod safetensors_io;
pub mod served;
#[cfg(feature = "encoder")]
pub mod tokenize;
#[cfg(feature = "encoder")]
pub mod training;

#[cfg(feature = "encoder")]
pub use backend::{BackendKind, DeviceSet};
#[cfg(feature = "encoder")]
pub use burn::tensor::Device;
pub use config::{BertConfig, ModelConfig, Pooling};
pub use data::{EvalSet, Mode, Passage, Query};
#[cfg(feature = "encoder")]
pub use encoder::{EmbeddingSpace, Embeddings, Encoder, Precision, Readback};
pub use error::{EngineError, Result};
#[cfg(feature = "encoder")]
pub use instruction::{CrossAttentionInteraction, QueryTemplate};
pub use model_files::{ModelFiles, WeightFormat};
