//! Typed errors for everything the engine reads, parses and computes.

use std::path::PathBuf;

/// Every failure the engine can report. Each variant names the file (and line where there is one)
/// so that a user can fix the input without reading the source.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said. Not an error `source`: the message above already
        /// carries it, and a source would print it twice in a chain (`anyhow`'s `{:#}`).
        error: std::io::Error,
    },
    /// A required file of a model folder is absent.
    #[error("{path}: missing model file ({what})")]
    MissingModelFile {
        /// The path that was expected.
        path: PathBuf,
        /// What the file is for.
        what: &'static str,
    },
    /// A model file exists but its content is unusable.
    #[error("{path}: {problem}")]
    BadModelFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A data file (JSONL, TSV, index) has a malformed line or record.
    #[error("{}: {problem}", located(path, *line))]
    BadData {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 when the problem concerns the whole file).
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// An index file was built with a different model than the one in use.
    #[error("{path}: index was built with model {index_model} but the current model is {current_model}; rebuild the index")]
    ModelMismatch {
        /// The index file.
        path: PathBuf,
        /// Fingerprint stored in the index.
        index_model: String,
        /// Fingerprint of the model in use.
        current_model: String,
    },
    /// The tokenizer failed on a text.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A judge answered without a usable score (INSTFOL leaves the query out and goes on).
    #[error("no score in the judge's answer for query {query}, document {document}: {answer}")]
    NoScore {
        /// The query id.
        query: String,
        /// The document id.
        document: String,
        /// What the judge said, cut for the message.
        answer: String,
    },
    /// A compute backend could not be initialised.
    #[error("backend {backend}: {problem}")]
    Backend {
        /// Name of the backend.
        backend: String,
        /// What went wrong.
        problem: String,
    },
    /// An argument given by the caller is invalid.
    #[error("{0}")]
    Invalid(String),
}

/// Shorthand for results carrying an [`EngineError`].
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

impl EngineError {
    /// An I/O error for `path`.
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        EngineError::Io {
            path: path.into(),
            error,
        }
    }

    /// A malformed-data error at `path:line`.
    pub fn data(path: impl Into<PathBuf>, line: usize, problem: impl Into<String>) -> Self {
        EngineError::BadData {
            path: path.into(),
            line,
            problem: problem.into(),
        }
    }

    /// A bad-model-file error for `path`.
    pub fn model(path: impl Into<PathBuf>, problem: impl Into<String>) -> Self {
        EngineError::BadModelFile {
            path: path.into(),
            problem: problem.into(),
        }
    }
}

/// `path:line`, or `path` alone when the problem concerns the whole file (line 0).
fn located(path: &std::path::Path, line: usize) -> String {
    if line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{line}", path.display())
    }
}
