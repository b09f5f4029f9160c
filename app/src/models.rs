//! The models a deployment serves: `models/index.json`, written by `cargo xtask dist`, lists
//! each model folder with every file's size and sha256, so the page shows byte progress and
//! refuses a corrupt or truncated download instead of failing later in the encoder.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// One file of a served model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFile {
    /// Path inside the model folder (e.g. `1_Pooling/config.json`).
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Lower-case hex sha256.
    pub sha256: String,
}

/// One served model.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedModel {
    /// Short key, used in the URL (`?model=`) and as its folder name under `models/`.
    pub key: String,
    /// Name shown to the user.
    pub name: String,
    /// Its files.
    pub files: Vec<ModelFile>,
}

impl ServedModel {
    /// Total download size.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

/// Parses `models/index.json`: `{"models": [{"key", "name", "files": [{"path", "bytes",
/// "sha256"}]}]}`.
pub fn parse_index(text: &str) -> Result<Vec<ServedModel>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("models/index.json: {e}"))?;
    let models = v["models"]
        .as_array()
        .ok_or("models/index.json: no \"models\" list")?;
    let mut out = Vec::new();
    for (i, m) in models.iter().enumerate() {
        let field = |k: &str| {
            m[k].as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("models/index.json: model {i} has no \"{k}\""))
        };
        let files = m["files"]
            .as_array()
            .ok_or_else(|| format!("models/index.json: model {i} has no \"files\""))?
            .iter()
            .map(|f| {
                Some(ModelFile {
                    path: f["path"].as_str()?.to_string(),
                    bytes: f["bytes"].as_u64()?,
                    sha256: f["sha256"].as_str()?.to_ascii_lowercase(),
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("models/index.json: model {i} has a malformed file entry"))?;
        out.push(ServedModel {
            key: field("key")?,
            name: field("name")?,
            files,
        });
    }
    if out.is_empty() {
        return Err("models/index.json: no model listed".into());
    }
    Ok(out)
}

/// Checks downloaded bytes against the index entry; the error says what is wrong.
pub fn verify(file: &ModelFile, bytes: &[u8]) -> Result<(), String> {
    if bytes.len() as u64 != file.bytes {
        return Err(format!(
            "{}: received {} bytes, expected {} (truncated or wrong file)",
            file.path,
            bytes.len(),
            file.bytes
        ));
    }
    let digest: String = Sha256::digest(bytes)
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

/// Files keyed by path, as `engine::ModelFiles::from_memory` takes them.
pub type Downloaded = BTreeMap<String, Vec<u8>>;

/// Human-readable byte count.
pub fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MB", n as f64 / (1u64 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.0} kB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_parses_and_downloads_are_verified() {
        let sha = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        let index = format!(
            r#"{{"models": [{{"key": "minilm", "name": "MiniLM", "files": [{{"path": "x.bin", "bytes": 5, "sha256": "{sha}"}}]}}]}}"#
        );
        let m = parse_index(&index).unwrap();
        assert_eq!(m[0].total_bytes(), 5);
        assert!(verify(&m[0].files[0], b"hello").is_ok());
        assert!(verify(&m[0].files[0], b"hell")
            .unwrap_err()
            .contains("truncated"));
        assert!(verify(&m[0].files[0], b"jello")
            .unwrap_err()
            .contains("corrupt"));
        assert!(parse_index("{}").is_err());
        assert!(parse_index(r#"{"models": []}"#).is_err());
        assert!(
            parse_index(r#"{"models": [{"key": "a", "name": "b", "files": [{"path": 1}]}]}"#)
                .unwrap_err()
                .contains("malformed")
        );
        assert_eq!(human_bytes(3 << 20), "3.0 MB");
    }
}
