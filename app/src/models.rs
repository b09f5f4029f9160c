//! The models a deployment serves: `models/index.json` in the engine's format
//! ([`engine::served`]), and what the page needs beside it.

use std::collections::BTreeMap;

pub use engine::served::{ModelIndex, ServedFile, ServedModel};

/// Parses `models/index.json` (the engine's format, written by `trainer export --index`).
pub fn parse_index(text: &str) -> Result<Vec<ServedModel>, String> {
    ModelIndex::parse(text, std::path::Path::new("models/index.json"))
        .map(|index| index.models)
        .map_err(|e| e.to_string())
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
        assert!(m[0].files[0].verify(b"hello").is_ok());
        assert!(m[0].files[0]
            .verify(b"hell")
            .unwrap_err()
            .contains("truncated"));
        assert!(m[0].files[0]
            .verify(b"jello")
            .unwrap_err()
            .contains("corrupt"));
        // Fed in pieces (the page hashes a model file a megabyte per task): the same verdicts.
        let pieces = |parts: &[&[u8]]| {
            let mut check = m[0].files[0].check();
            parts.iter().for_each(|p| check.update(p));
            check.finish()
        };
        assert!(pieces(&[b"he", b"", b"llo"]).is_ok());
        assert!(pieces(&[b"hel", b"l"]).unwrap_err().contains("truncated"));
        assert!(pieces(&[b"hello", b"!"]).unwrap_err().contains("truncated"));
        assert!(pieces(&[b"jel", b"lo"]).unwrap_err().contains("corrupt"));
        assert!(parse_index("{}").is_err());
        assert!(parse_index(r#"{"models": []}"#).is_err());
        assert!(
            parse_index(r#"{"models": [{"key": "a", "name": "b", "files": [{"path": 1}]}]}"#)
                .unwrap_err()
                .contains("models/index.json")
        );
        assert_eq!(human_bytes(3 << 20), "3.0 MB");
    }
}
