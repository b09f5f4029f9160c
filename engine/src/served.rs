//! The models a web deployment serves: `models/index.json` lists each model folder with every
//! file's size and sha256, so the page shows byte progress and refuses a corrupt or truncated
//! download instead of failing later in the encoder. `trainer export --index` and `cargo xtask
//! dist` write the entries (from the files they export); the page reads them. One format, one
//! home.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{EngineError, Result};
use crate::model_files::ModelFiles;

/// `models/index.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelIndex {
    /// The served models, the default first.
    pub models: Vec<ServedModel>,
}

/// One served model folder, `models/<key>/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedModel {
    /// Short key, used in the URL (`?model=`) and as its folder name under `models/`.
    pub key: String,
    /// Name shown to the user.
    pub name: String,
    /// Its files.
    pub files: Vec<ServedFile>,
}

/// One file of a served model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedFile {
    /// Path inside the model folder (e.g. `1_Pooling/config.json`).
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Lower-case hex sha256.
    pub sha256: String,
}

impl ModelIndex {
    /// Parses an index; `path` names it in errors. An index without a model is refused.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut index: ModelIndex = serde_json::from_str(text)
            .map_err(|e| EngineError::data(path, e.line(), e.to_string()))?;
        if index.models.is_empty() {
            return Err(EngineError::data(path, 0, "no model listed"));
        }
        for file in index.models.iter_mut().flat_map(|m| &mut m.files) {
            file.sha256.make_ascii_lowercase();
        }
        Ok(index)
    }

    /// Reads the index at `path`, or an empty one when there is no file yet.
    pub fn read_or_new(path: &Path) -> Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(EngineError::io(path, e)),
        }
    }

    /// Adds `model`, replacing an entry with the same key (in place, so the order stays).
    pub fn upsert(&mut self, model: ServedModel) {
        match self.models.iter_mut().find(|m| m.key == model.key) {
            Some(old) => *old = model,
            None => self.models.push(model),
        }
    }

    /// Adds `model` to the index file at `path` (an empty index when there is none yet), written
    /// atomically.
    pub fn upsert_file(path: &Path, model: ServedModel) -> Result<()> {
        let mut index = Self::read_or_new(path)?;
        index.upsert(model);
        index.write(path)
    }

    /// Writes the index to `path` atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| EngineError::Invalid(e.to_string()))?;
        crate::atomic::write(path, text.as_bytes())
    }
}

impl ServedModel {
    /// The entry of `files` served as `models/<key>/`: every file with its size and sha256.
    pub fn of(files: &ModelFiles, key: &str, name: &str) -> Self {
        let files = files
            .names()
            .filter_map(|path| {
                let bytes = files.get(path)?;
                Some(ServedFile {
                    path: path.to_string(),
                    bytes: bytes.len() as u64,
                    sha256: sha256_hex(bytes),
                })
            })
            .collect();
        ServedModel {
            key: key.to_string(),
            name: name.to_string(),
            files,
        }
    }

    /// Total download size.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

impl ServedFile {
    /// Checks downloaded bytes against the entry; the error says what is wrong.
    pub fn verify(&self, bytes: &[u8]) -> std::result::Result<(), String> {
        let mut check = self.check();
        check.update(bytes);
        check.finish()
    }

    /// A check of the bytes fed to it piece by piece ([`FileCheck::update`]): the page hashes
    /// a model file in steps, giving the thread back between them.
    pub fn check(&self) -> FileCheck<'_> {
        FileCheck {
            file: self,
            seen: 0,
            hasher: Sha256::new(),
        }
    }
}

/// A [`ServedFile`]'s check in progress.
pub struct FileCheck<'a> {
    file: &'a ServedFile,
    seen: u64,
    hasher: Sha256,
}

impl FileCheck<'_> {
    /// Hashes the next piece.
    pub fn update(&mut self, piece: &[u8]) {
        self.seen += piece.len() as u64;
        self.hasher.update(piece);
    }

    /// Whether the pieces were the file: its length, then its SHA-256; the error says what is
    /// wrong.
    pub fn finish(self) -> std::result::Result<(), String> {
        let file = self.file;
        if self.seen != file.bytes {
            return Err(format!(
                "{}: received {} bytes, expected {} (truncated or wrong file)",
                file.path, self.seen, file.bytes
            ));
        }
        let digest: String = self
            .hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if digest != file.sha256 {
            return Err(format!(
                "{}: checksum mismatch (the download is corrupt)",
                file.path
            ));
        }
        Ok(())
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
