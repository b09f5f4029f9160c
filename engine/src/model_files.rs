//! A Hugging Face style model folder (formats.md §4), held as bytes so that the same parsing
//! code serves a folder on disk and files fetched by a browser.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::{EngineError, Result};

/// How a model's weights are stored in its `model.safetensors`. The engine reads every form
/// and computes in f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    /// As trained: 4 bytes a weight.
    F32,
    /// Half precision: half the size; embeddings within cosine 0.999 of f32 (tested).
    F16,
    /// Matrices as int8 with one scale per row, the rest F16: a quarter of the size
    /// ([`crate::safetensors_io::to_int8`]); the web demo's download.
    Int8,
}

/// Name of the transformer configuration file.
pub const CONFIG_JSON: &str = "config.json";
/// Name of the tokenizer file.
pub const TOKENIZER_JSON: &str = "tokenizer.json";
/// Name of the weights file.
pub const WEIGHTS: &str = "model.safetensors";
/// sentence-transformers module list.
pub const MODULES_JSON: &str = "modules.json";
/// sentence-transformers transformer settings (max_seq_length).
pub const SENTENCE_BERT_CONFIG: &str = "sentence_bert_config.json";
/// Default location of the pooling configuration when modules.json does not say.
pub const DEFAULT_POOLING_CONFIG: &str = "1_Pooling/config.json";
/// Optional weights of the cross-attention instruction interaction (trained by the trainer).
pub const CROSS_ATTENTION_WEIGHTS: &str = "cross_attention.safetensors";

/// The raw files of a model, keyed by their path relative to the model folder.
#[derive(Clone)]
pub struct ModelFiles {
    /// Where the files came from (a folder path or a URL prefix); used in error messages.
    pub root: PathBuf,
    files: BTreeMap<String, Vec<u8>>,
}

impl std::fmt::Debug for ModelFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelFiles")
            .field("root", &self.root)
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[derive(Deserialize)]
struct ModuleEntry {
    #[serde(default)]
    path: String,
    #[serde(rename = "type", default)]
    kind: String,
}

/// The entries of `modules.json` that matter here.
#[derive(Debug, Clone, Default)]
pub(crate) struct Modules {
    /// Folder of the Pooling module, relative to the model root.
    pub pooling_path: Option<String>,
    /// Whether a Normalize module follows pooling.
    pub normalize: bool,
    /// Module types we do not implement (for example Dense projections).
    pub unsupported: Vec<String>,
}

impl ModelFiles {
    /// Builds a model from in-memory files (the browser path). Keys are paths relative to the
    /// model folder, such as `"1_Pooling/config.json"`.
    pub fn from_memory(root: impl Into<PathBuf>, files: BTreeMap<String, Vec<u8>>) -> Self {
        ModelFiles {
            root: root.into(),
            files,
        }
    }

    /// Reads every file the engine uses from a Hugging Face style folder. Required files that are
    /// missing produce [`EngineError::MissingModelFile`]; optional ones are simply absent.
    pub fn read_dir(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(EngineError::model(
                dir,
                "model folder not found (give a Hugging Face style folder with config.json, tokenizer.json and model.safetensors)",
            ));
        }
        let mut files = BTreeMap::new();
        for (name, what) in [
            (CONFIG_JSON, "transformer configuration"),
            (TOKENIZER_JSON, "tokenizer"),
            (WEIGHTS, "weights in safetensors format"),
        ] {
            let path = dir.join(name);
            if !path.is_file() {
                return Err(EngineError::MissingModelFile { path, what });
            }
            files.insert(name.to_string(), read(&path)?);
        }
        for name in [MODULES_JSON, SENTENCE_BERT_CONFIG, CROSS_ATTENTION_WEIGHTS] {
            let path = dir.join(name);
            if path.is_file() {
                files.insert(name.to_string(), read(&path)?);
            }
        }
        let mut model = ModelFiles {
            root: dir.to_path_buf(),
            files,
        };
        let pooling = model.pooling_config_name()?;
        let path = dir.join(&pooling);
        if path.is_file() {
            let bytes = read(&path)?;
            model.files.insert(pooling, bytes);
        }
        Ok(model)
    }

    /// Adds or replaces the file `name` (e.g. trained weights).
    pub fn insert(&mut self, name: impl Into<String>, bytes: Vec<u8>) {
        self.files.insert(name.into(), bytes);
    }

    /// The bytes of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files.get(name).map(|v| v.as_slice())
    }

    /// The bytes of a required file, or a [`EngineError::MissingModelFile`] error.
    pub fn required(&self, name: &str, what: &'static str) -> Result<&[u8]> {
        self.get(name).ok_or_else(|| EngineError::MissingModelFile {
            path: self.path_of(name),
            what,
        })
    }

    /// Display path of a file of this model.
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// The same model with its weights stored in `format` (see [`WeightFormat`]).
    pub fn with_weights(&self, format: WeightFormat) -> Result<ModelFiles> {
        let weights = self.required(WEIGHTS, "weights in safetensors format")?;
        let path = self.path_of(WEIGHTS);
        let rewritten = match format {
            WeightFormat::F32 => return Ok(self.clone()),
            WeightFormat::F16 => crate::safetensors_io::to_f16(weights, &path)?,
            WeightFormat::Int8 => crate::safetensors_io::to_int8(weights, &path)?,
        };
        let mut files = self.files.clone();
        files.insert(WEIGHTS.to_string(), rewritten);
        Ok(ModelFiles {
            root: self.root.clone(),
            files,
        })
    }

    /// The same model with its weights stored as F16 ([`WeightFormat::F16`]).
    pub fn to_f16(&self) -> Result<ModelFiles> {
        self.with_weights(WeightFormat::F16)
    }

    /// Writes every file held into `dir` (a Hugging Face style folder), creating it. Each file
    /// is written beside its destination and renamed, so a crash leaves no half-written file.
    pub fn write_dir(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        for (name, bytes) in &self.files {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| EngineError::io(parent, e))?;
            }
            crate::atomic::write(&path, bytes)?;
        }
        Ok(())
    }

    /// Relative paths of the files held.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(|k| k.as_str())
    }

    /// Parses `modules.json` (absent: a plain transformer, pooling defaults apply).
    pub(crate) fn modules(&self) -> Result<Option<Modules>> {
        let Some(bytes) = self.get(MODULES_JSON) else {
            return Ok(None);
        };
        let entries: Vec<ModuleEntry> = serde_json::from_slice(bytes).map_err(|e| {
            EngineError::model(self.path_of(MODULES_JSON), format!("invalid JSON: {e}"))
        })?;
        let mut modules = Modules::default();
        for entry in entries {
            let kind = entry.kind.rsplit('.').next().unwrap_or("").to_string();
            match kind.as_str() {
                "Transformer" => {}
                "Pooling" => modules.pooling_path = Some(entry.path),
                "Normalize" => modules.normalize = true,
                _ => modules.unsupported.push(entry.kind),
            }
        }
        Ok(Some(modules))
    }

    /// Relative path of the pooling configuration file.
    pub fn pooling_config_name(&self) -> Result<String> {
        Ok(match self.modules()?.and_then(|m| m.pooling_path) {
            Some(p) if !p.is_empty() => format!("{}/config.json", p.trim_end_matches('/')),
            _ => DEFAULT_POOLING_CONFIG.to_string(),
        })
    }

    /// A short, stable identifier of the model: the first 16 hex digits of the SHA-256 over the
    /// configuration, tokenizer, pooling settings and weights. Indexes store it to refuse a
    /// different model.
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        for (name, bytes) in &self.files {
            if name == CROSS_ATTENTION_WEIGHTS {
                continue;
            }
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        let digest = hasher.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| EngineError::io(path, e))
}
