//! Training records (formats.md §3): InF-IR records and instruction-negative records with the
//! optional dual view, read from JSONL files of any size.
//!
//! [`RecordFile`] reads a file once to check every line and remember where each record starts;
//! records are then read back one batch at a time by seeking, so a file of millions of records
//! costs eight bytes of memory per record, and a bad line is reported (or counted and skipped)
//! before any training starts rather than hours into it.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{EngineError, Result};

/// An InF-IR record (seeds-spec §2.3): one positive tuple and two poisoned siblings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfIrRecord {
    /// Q+.
    pub query_positive: String,
    /// I+.
    pub instruction_positive: String,
    /// P+ (`document_positive`, or `document`).
    pub document_positive: String,
    /// I-, the poisoned instruction.
    pub instruction_negative: String,
    /// P1-, relevant to (I-, Q+).
    pub hard_negative_document_1: String,
    /// Q-, the poisoned query.
    pub query_negative: String,
    /// P2-, relevant to (I+, Q-).
    pub hard_negative_document_2: String,
}

/// A Promptriever-style record with instruction negatives (seeds-spec §3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionNegativeRecord {
    /// The bare query.
    pub query: String,
    /// The instruction.
    pub instruction: String,
    /// The passage relevant to query + instruction.
    pub positive: String,
    /// Ordinary hard negatives.
    pub negatives: Vec<String>,
    /// Passages relevant to the bare query but excluded by the instruction.
    pub instruction_negatives: Vec<String>,
    /// The polarity-reversed instruction: under it `instruction_negatives[0]` is relevant and
    /// `positive` is excluded (the dual view); the other instruction negatives, which it asks
    /// for too, are no negatives of that view.
    pub instruction_reversed: Option<String>,
}

impl InfIrRecord {
    /// The record as one JSON line of formats.md §3.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "query_positive": self.query_positive,
            "instruction_positive": self.instruction_positive,
            "document_positive": self.document_positive,
            "instruction_negative": self.instruction_negative,
            "hard_negative_document_1": self.hard_negative_document_1,
            "query_negative": self.query_negative,
            "hard_negative_document_2": self.hard_negative_document_2,
        })
    }
}

impl InstructionNegativeRecord {
    /// The record as one JSON line of formats.md §3.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "query": self.query,
            "instruction": self.instruction,
            "positive": self.positive,
            "negatives": self.negatives,
            "instruction_negatives": self.instruction_negatives,
        });
        if let Some(r) = &self.instruction_reversed {
            v["instruction_reversed"] = serde_json::Value::String(r.clone());
        }
        v
    }
}

/// One line of a training file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrainingRecord {
    /// The InF-IR shape.
    InfIr(InfIrRecord),
    /// The instruction-negative shape.
    InstructionNegative(InstructionNegativeRecord),
}

impl TrainingRecord {
    /// Parses one JSON line. Extra fields are ignored; missing or mistyped ones are errors
    /// that name the field (the caller adds file and line).
    pub fn parse(line: &str) -> std::result::Result<Self, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| crate::data::json_problem(&e))?;
        let Value::Object(obj) = value else {
            return Err("a training record must be a JSON object".into());
        };
        if obj.contains_key("query_positive") {
            let doc = if obj.contains_key("document_positive") {
                "document_positive"
            } else {
                "document"
            };
            Ok(TrainingRecord::InfIr(InfIrRecord {
                query_positive: text(&obj, "query_positive")?,
                instruction_positive: text(&obj, "instruction_positive")?,
                document_positive: text(&obj, doc).map_err(|_| {
                    "missing or empty field 'document_positive' (or 'document')".to_string()
                })?,
                instruction_negative: text(&obj, "instruction_negative")?,
                hard_negative_document_1: text(&obj, "hard_negative_document_1")?,
                query_negative: text(&obj, "query_negative")?,
                hard_negative_document_2: text(&obj, "hard_negative_document_2")?,
            }))
        } else if obj.contains_key("query") || obj.contains_key("positive") {
            let instruction_negatives = texts(&obj, "instruction_negatives")?;
            let instruction_reversed = match obj.get("instruction_reversed") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.trim().is_empty() => {
                    return Err("field 'instruction_reversed' is empty (leave it out, or null, for a record without the reversed view)".into())
                }
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err("field 'instruction_reversed' must be a string".into()),
            };
            if instruction_reversed.is_some() && instruction_negatives.is_empty() {
                return Err("'instruction_reversed' needs at least one entry in 'instruction_negatives' (its positive)".into());
            }
            Ok(TrainingRecord::InstructionNegative(
                InstructionNegativeRecord {
                    query: text(&obj, "query")?,
                    instruction: match obj.get("instruction") {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(s)) => s.clone(),
                        Some(_) => return Err("field 'instruction' must be a string".into()),
                    },
                    positive: text(&obj, "positive")?,
                    negatives: texts(&obj, "negatives")?,
                    instruction_negatives,
                    instruction_reversed,
                },
            ))
        } else {
            Err("not a training record: expected the InF-IR fields (query_positive, instruction_positive, document_positive, ...) or the instruction-negative fields (query, instruction, positive, negatives, instruction_negatives)".into())
        }
    }
}

fn text(obj: &Map<String, Value>, field: &str) -> std::result::Result<String, String> {
    match obj.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("field '{field}' is empty")),
        Some(_) => Err(format!("field '{field}' must be a string")),
        None => Err(format!("missing field '{field}'")),
    }
}

fn texts(obj: &Map<String, Value>, field: &str) -> std::result::Result<Vec<String>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
                _ => Err(format!("'{field}[{i}]' must be a non-empty string")),
            })
            .collect(),
        Some(_) => Err(format!("field '{field}' must be a list of strings")),
    }
}

/// A bad line met while indexing with skipping allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRecord {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// A checked training file: where each valid record starts, for reading batches back.
#[derive(Debug)]
pub struct RecordFile {
    path: PathBuf,
    /// (byte offset, 1-based line) of each valid record.
    entries: Vec<(u64, usize)>,
    /// Lines skipped as bad (only with `skip_bad`).
    pub skipped: Vec<SkippedRecord>,
    reader: BufReader<File>,
}

impl RecordFile {
    /// Reads `path` once, checking every non-blank line. A bad line is a `file:line` error,
    /// or, with `skip_bad`, is counted in [`RecordFile::skipped`] and left out. A file with no
    /// valid record is an error. `progress(bytes_read, total_bytes)` is called now and then.
    pub fn open(path: &Path, skip_bad: bool, progress: &mut dyn FnMut(u64, u64)) -> Result<Self> {
        let file = File::open(path).map_err(|e| EngineError::io(path, e))?;
        let total = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut entries = Vec::new();
        let mut skipped = Vec::new();
        let mut offset = 0u64;
        let mut buf = Vec::new();
        let mut line_no = 0usize;
        loop {
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|e| EngineError::io(path, e))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let start = offset;
            offset += n as u64;
            if line_no.is_multiple_of(4096) {
                progress(offset, total);
            }
            let Some(problem) = line_problem(&buf) else {
                continue;
            };
            match problem {
                None => entries.push((start, line_no)),
                Some(problem) if skip_bad => skipped.push(SkippedRecord {
                    line: line_no,
                    problem,
                }),
                Some(problem) => return Err(EngineError::data(path, line_no, problem)),
            }
        }
        progress(offset, total);
        if entries.is_empty() {
            let problem = match skipped.len() {
                0 => "no training records in the file".to_string(),
                n => format!("no valid training record ({n} bad lines skipped)"),
            };
            return Err(EngineError::data(path, line_no.max(1), problem));
        }
        let file = File::open(path).map_err(|e| EngineError::io(path, e))?;
        Ok(RecordFile {
            path: path.to_path_buf(),
            entries,
            skipped,
            reader: BufReader::new(file),
        })
    }

    /// Number of valid records.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no valid record (never, after a successful open).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Record `i` (0-based among the valid records).
    pub fn read(&mut self, i: usize) -> Result<TrainingRecord> {
        let (offset, line_no) = self.entries[i];
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|e| EngineError::io(&self.path, e))?;
        let mut buf = String::new();
        (&mut self.reader)
            .take(u64::MAX)
            .read_line(&mut buf)
            .map_err(|e| EngineError::io(&self.path, e))?;
        TrainingRecord::parse(buf.trim_start_matches('\u{feff}')).map_err(|p| {
            EngineError::data(
                &self.path,
                line_no,
                format!("{p} (the file changed during training?)"),
            )
        })
    }
}

/// What is wrong with one line of a training file: `None` for a blank line (skipped), else
/// `Some(None)` for a good record and `Some(Some(problem))` for a bad one.
fn line_problem(bytes: &[u8]) -> Option<Option<String>> {
    match std::str::from_utf8(bytes) {
        Err(_) => Some(Some("invalid UTF-8".to_string())),
        Ok(line) => {
            let line = line.trim_start_matches('\u{feff}');
            if line.trim().is_empty() {
                None
            } else {
                Some(TrainingRecord::parse(line).err())
            }
        }
    }
}

/// One (instruction, query) with its positive passage and hard negatives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingTuple {
    /// The instruction ("" for the query alone).
    pub instruction: String,
    /// The query.
    pub query: String,
    /// The passage relevant to instruction + query.
    pub positive: String,
    /// Hard negatives (instruction negatives first).
    pub negatives: Vec<String>,
    /// How many of the leading `negatives` are instruction negatives: passages that answer the
    /// query but that the instruction rules out (formats.md §3).
    pub excluded: usize,
}

impl TrainingRecord {
    /// The record's tuples, each keeping at most `max_negatives` hard negatives.
    pub fn tuples(&self, max_negatives: usize) -> Vec<TrainingTuple> {
        match self {
            TrainingRecord::InfIr(r) => vec![
                TrainingTuple {
                    instruction: r.instruction_positive.clone(),
                    query: r.query_positive.clone(),
                    positive: r.document_positive.clone(),
                    negatives: Vec::new(),
                    excluded: 0,
                },
                TrainingTuple {
                    instruction: r.instruction_negative.clone(),
                    query: r.query_positive.clone(),
                    positive: r.hard_negative_document_1.clone(),
                    negatives: Vec::new(),
                    excluded: 0,
                },
                TrainingTuple {
                    instruction: r.instruction_positive.clone(),
                    query: r.query_negative.clone(),
                    positive: r.hard_negative_document_2.clone(),
                    negatives: Vec::new(),
                    excluded: 0,
                },
            ],
            TrainingRecord::InstructionNegative(r) => {
                let original = TrainingTuple {
                    instruction: r.instruction.clone(),
                    query: r.query.clone(),
                    positive: r.positive.clone(),
                    negatives: r
                        .instruction_negatives
                        .iter()
                        .chain(&r.negatives)
                        .take(max_negatives)
                        .cloned()
                        .collect(),
                    excluded: r.instruction_negatives.len().min(max_negatives),
                };
                let mut out = vec![original];
                if let Some(reversed) = &r.instruction_reversed {
                    out.push(TrainingTuple {
                        instruction: reversed.clone(),
                        query: r.query.clone(),
                        positive: r.instruction_negatives[0].clone(),
                        // The other instruction negatives are left out: what the
                        // instruction rules out, its reversal asks for.
                        negatives: std::iter::once(&r.positive)
                            .chain(&r.negatives)
                            .take(max_negatives)
                            .cloned()
                            .collect(),
                        excluded: 1.min(max_negatives),
                    });
                }
                out
            }
        }
    }
}
