//! Files that appear whole or not at all.
//!
//! Every output the project writes (indexes, runs, reports, embeddings, training records, model
//! files) goes through [`AtomicFile`]: the bytes are written to `NAME.partial` beside the
//! destination, flushed to disk, then renamed over `NAME`. A run killed at any moment leaves
//! either the old file or the new one, never half of one; a leftover `.partial` is overwritten
//! by the next attempt.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{EngineError, Result};

/// A file being written beside its destination; [`AtomicFile::commit`] moves it into place.
/// Dropped without a commit, the destination is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    partial: PathBuf,
    writer: BufWriter<File>,
}

impl AtomicFile {
    /// Starts writing `path` (its folder must exist).
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let partial = partial_path(&path);
        let file = File::create(&partial).map_err(|e| EngineError::io(&partial, e))?;
        Ok(AtomicFile {
            path,
            partial,
            writer: BufWriter::new(file),
        })
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends bytes, naming the file in an error.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer
            .write_all(bytes)
            .map_err(|e| EngineError::io(&self.partial, e))
    }

    /// Flushes to disk and renames the file into place.
    pub fn commit(self) -> Result<()> {
        let partial = self.partial;
        self.writer
            .into_inner()
            .map_err(|e| EngineError::io(&partial, e.into_error()))?
            .sync_all()
            .map_err(|e| EngineError::io(&partial, e))?;
        std::fs::rename(&partial, &self.path).map_err(|e| EngineError::io(&self.path, e))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_bytes(bytes)?;
    file.commit()
}

/// Writes `bytes` to `path` atomically when several threads or processes may write the same
/// file at once (a shared cache): each writer has its own `NAME.PID.N.partial`, and the last
/// rename wins with a whole file.
pub fn write_unique(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let path = path.as_ref();
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(
        ".{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = AtomicFile::create(path.with_file_name(name))?;
    file.path = path.to_path_buf();
    file.write_bytes(bytes)?;
    file.commit()
}

/// `NAME.partial` beside `path`.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
}
