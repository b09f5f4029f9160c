//! Readers for the shared data formats (formats.md §1): corpus and query JSONL, qrels in BEIR
//! TSV or TREC form, candidate lists, and whole evaluation-set folders. Every malformed line is
//! reported as `file:line: problem`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};

#[cfg(all(not(target_arch = "wasm32"), feature = "encoder"))]
pub mod published;
pub mod records;

/// One passage of a corpus.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Passage {
    /// Document id.
    #[serde(rename = "_id")]
    pub id: String,
    /// Optional title.
    #[serde(default)]
    pub title: String,
    /// Passage text.
    pub text: String,
}

impl Passage {
    /// The text given to the encoder: `title + " " + text` when there is a title (BEIR's
    /// convention), else the text.
    pub fn encoder_text(&self) -> String {
        if self.title.trim().is_empty() {
            self.text.clone()
        } else {
            format!("{} {}", self.title, self.text)
        }
    }
}

/// One query of an evaluation set, with its instructions.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Query {
    /// Query id.
    #[serde(rename = "_id")]
    pub id: String,
    /// The core query.
    pub text: String,
    /// Original instruction ("" = the query alone).
    #[serde(default)]
    pub instruction_og: String,
    /// Altered or added constraint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_changed: Option<String>,
    /// Polarity-reversed constraint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_reversed: Option<String>,
    /// What the instruction constrains, a label for people (e.g. `source`, `format`); no
    /// metric reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
}

/// A text to embed, as read by `trainer embed`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TextRecord {
    /// Record id.
    #[serde(rename = "_id")]
    pub id: String,
    /// The text.
    pub text: String,
}

/// Relevance judgments: query id -> doc id -> level (0 = judged non-relevant, > 0 relevant).
///
/// Levels are integers in formats.md, and integer levels give trec_eval's numbers exactly.
/// They are stored as `f64` because real data sets grade with fractions (BIRCO's DORIS-MAE
/// averages annotator votes into levels such as 0.2857); a fractional level is used as the
/// gain in nDCG, and any level > 0 counts as relevant for the binary metrics.
pub type Qrels = BTreeMap<String, BTreeMap<String, f64>>;

/// Writes `items` as JSON lines, one per line, atomically ([`crate::atomic`]).
pub fn write_jsonl<T: Serialize>(path: &Path, items: impl IntoIterator<Item = T>) -> Result<()> {
    let mut file = crate::atomic::AtomicFile::create(path)?;
    for item in items {
        let mut line =
            serde_json::to_vec(&item).map_err(|e| EngineError::Invalid(e.to_string()))?;
        line.push(b'\n');
        file.write_bytes(&line)?;
    }
    file.commit()
}

/// Writes judgments as BEIR TSV with its header (integer levels without a decimal point),
/// atomically.
pub fn write_qrels(path: &Path, qrels: &Qrels) -> Result<()> {
    let mut text = String::from("query-id\tcorpus-id\tscore\n");
    for (q, docs) in qrels {
        for (d, level) in docs {
            text.push_str(&format!("{q}\t{d}\t{level}\n"));
        }
    }
    crate::atomic::write(path, text.as_bytes())
}

/// Parses JSON lines from `text`; blank lines are skipped; `path` names the file in errors.
pub fn parse_jsonl<T: DeserializeOwned>(text: &str, path: &Path) -> Result<Vec<T>> {
    record_lines(text)
        .map(|(number, line)| {
            serde_json::from_str(line)
                .map_err(|e| EngineError::data(path, number, json_problem(&e)))
        })
        .collect()
}

/// The lines of a JSONL text that hold a record, with their 1-based numbers: a byte-order mark
/// is stripped, blank lines (also one holding only the mark) are skipped. Readers and the
/// duplicate check count lines with this one rule.
pub fn record_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_start_matches('\u{feff}')))
        .filter(|(_, line)| !line.trim().is_empty())
}

/// The numbers of the blank lines between records (not the trailing ones): legal JSONL, but in
/// the middle of a file usually a sign of a broken export, so `trainer embed` warns about them.
pub fn blank_lines_inside(text: &str) -> Vec<usize> {
    let last = record_lines(text).last().map_or(0, |(n, _)| n);
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_start_matches('\u{feff}')))
        .filter(|(n, line)| *n < last && line.trim().is_empty())
        .map(|(n, _)| n)
        .collect()
}

pub(crate) fn json_problem(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    // serde appends " at line 1 column N"; the line is ours, keep the column.
    match msg.rfind(" at line ") {
        Some(pos) => {
            let col = msg[pos..].rsplit(' ').next().unwrap_or("");
            format!("{} (column {col})", &msg[..pos])
        }
        None => msg,
    }
}

/// Reads a JSONL file of records of type `T`.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    parse_jsonl(&read_text(path)?, path)
}

/// Reads a whole file as UTF-8.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| EngineError::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        EngineError::data(path, line, "invalid UTF-8")
    })
}

/// Parses a corpus; ids must be unique and the corpus non-empty.
pub fn parse_corpus(text: &str, path: &Path) -> Result<Vec<Passage>> {
    let passages: Vec<Passage> = parse_jsonl(text, path)?;
    if passages.is_empty() {
        return Err(EngineError::data(
            path,
            0,
            "the corpus is empty (no passages)",
        ));
    }
    check_unique(passages.iter().map(|p| p.id.as_str()), text, path)?;
    Ok(passages)
}

/// Reads a corpus JSONL file (see [`parse_corpus`]).
pub fn read_corpus(path: &Path) -> Result<Vec<Passage>> {
    parse_corpus(&read_text(path)?, path)
}

/// Fails at the line of the first id seen before; `ids` are the records of `text` in order.
pub fn check_unique<'a>(ids: impl Iterator<Item = &'a str>, text: &str, path: &Path) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for ((line, _), id) in record_lines(text).zip(ids) {
        if let Some(first) = seen.insert(id, line) {
            return Err(EngineError::data(
                path,
                line,
                format!("duplicate id '{id}' (first on line {first})"),
            ));
        }
    }
    Ok(())
}

/// Parses queries (queries.jsonl lines); ids must be unique.
pub fn parse_queries(text: &str, path: &Path) -> Result<Vec<Query>> {
    let queries: Vec<Query> = parse_jsonl(text, path)?;
    check_unique(queries.iter().map(|q| q.id.as_str()), text, path)?;
    Ok(queries)
}

/// Parses qrels: BEIR TSV (`query-id<TAB>corpus-id<TAB>score` header) or TREC (`qid 0 docid rel`).
pub fn parse_qrels(text: &str, path: &Path) -> Result<Qrels> {
    let mut qrels = Qrels::new();
    let mut judged = std::collections::HashMap::new();
    let mut lines = text.lines().enumerate().peekable();
    let beir = lines
        .peek()
        .map(|(_, l)| l.trim_start_matches('\u{feff}').starts_with("query-id"))
        .unwrap_or(false);
    if beir {
        lines.next();
    }
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let (q, d, rel) =
            qrels_fields(line, beir).map_err(|e| EngineError::data(path, i + 1, e))?;
        if let Some(first) = judged.insert((q, d), i + 1) {
            return Err(EngineError::data(
                path,
                i + 1,
                format!("query '{q}' and document '{d}' are judged twice (first on line {first})"),
            ));
        }
        qrels
            .entry(q.to_string())
            .or_default()
            .insert(d.to_string(), rel);
    }
    Ok(qrels)
}

/// One qrels line's query, document and level (BEIR's three tab-separated fields or TREC's
/// four), or what is wrong with it.
fn qrels_fields(line: &str, beir: bool) -> std::result::Result<(&str, &str, f64), String> {
    let fields: Vec<&str> = if beir {
        line.split('\t').collect()
    } else {
        line.split_whitespace().collect()
    };
    let (q, d, rel) = match (beir, fields.as_slice()) {
        (true, [q, d, r]) => (*q, *d, *r),
        (false, [q, _, d, r]) => (*q, *d, *r),
        (true, _) => {
            return Err(format!(
                "expected 3 tab-separated fields (query-id, corpus-id, score), found {}",
                fields.len()
            ))
        }
        (false, _) => {
            return Err(format!(
                "expected 4 fields (qid 0 docid rel), found {}",
                fields.len()
            ))
        }
    };
    let level = match rel.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => r,
        Ok(r) if r < 0.0 => {
            return Err(format!(
                "relevance {rel} is negative; levels are >= 0 (0 = judged not relevant)"
            ))
        }
        _ => return Err(format!("relevance '{rel}' is not a number")),
    };
    Ok((q.trim(), d.trim(), level))
}

/// Reads a qrels file (see [`parse_qrels`]).
pub fn read_qrels(path: &Path) -> Result<Qrels> {
    parse_qrels(&read_text(path)?, path)
}

/// Parses `candidates.tsv`: query id -> candidate doc ids, in file order.
pub fn parse_candidates(text: &str, path: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || (i == 0 && line.starts_with("query-id")) {
            continue;
        }
        let mut parts = line.split('\t');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(q), Some(d), None) if !q.is_empty() && !d.is_empty() => out
                .entry(q.to_string())
                .or_default()
                .push(d.trim().to_string()),
            _ => {
                return Err(EngineError::data(
                    path,
                    i + 1,
                    "expected 'query-id<TAB>corpus-id'",
                ))
            }
        }
    }
    Ok(out)
}

/// The query and passage ids of a set, against which its qrels and candidates are checked:
/// an id that names nothing (a typo, a file from another set) would otherwise count as a
/// relevant passage no model can retrieve, or a query no run answers, without a word.
struct KnownIds<'a> {
    queries: std::collections::HashSet<&'a str>,
    passages: std::collections::HashSet<&'a str>,
}

impl KnownIds<'_> {
    /// The first line of `text` (qrels in BEIR's or TREC's layout, or candidates) naming a
    /// query or a passage the set does not have, as a `file:line` error.
    fn check(&self, text: &str, path: &Path) -> Result<()> {
        for (line, content) in record_lines(text) {
            if content.starts_with("query-id") {
                continue;
            }
            let fields: Vec<&str> = if content.contains('\t') {
                content.split('\t').map(str::trim).collect()
            } else {
                content.split_whitespace().collect()
            };
            let (query, passage) = match fields.as_slice() {
                [q, _, d, _] => (*q, *d),
                [q, d, ..] => (*q, *d),
                _ => continue,
            };
            let unknown = if !self.queries.contains(query) {
                Some(format!("query '{query}' is not in queries.jsonl"))
            } else if !self.passages.contains(passage) {
                Some(format!("passage '{passage}' is not in corpus.jsonl"))
            } else {
                None
            };
            if let Some(problem) = unknown {
                return Err(EngineError::data(path, line, problem));
            }
        }
        Ok(())
    }
}

/// The relevance modes of an evaluation set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Original instruction (or the query alone).
    Og,
    /// Altered constraint.
    Changed,
    /// Polarity-reversed constraint.
    Reversed,
}

impl Mode {
    /// All modes in canonical order.
    pub const ALL: [Mode; 3] = [Mode::Og, Mode::Changed, Mode::Reversed];

    /// Name used in file names and JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Og => "og",
            Mode::Changed => "changed",
            Mode::Reversed => "reversed",
        }
    }

    /// The instruction of `query` for this mode (None when the query lacks it).
    pub fn instruction(self, query: &Query) -> Option<&str> {
        match self {
            Mode::Og => Some(query.instruction_og.as_str()),
            Mode::Changed => query.instruction_changed.as_deref(),
            Mode::Reversed => query.instruction_reversed.as_deref(),
        }
    }
}

/// An instruction-following evaluation set (formats.md §1).
#[derive(Debug, Clone)]
pub struct EvalSet {
    /// Folder it was read from (or a label).
    pub root: PathBuf,
    /// Passages.
    pub corpus: Vec<Passage>,
    /// Queries.
    pub queries: Vec<Query>,
    /// Judgments per mode that the set has.
    pub qrels: BTreeMap<Mode, Qrels>,
    /// Optional re-ranking pools.
    pub candidates: Option<BTreeMap<String, Vec<String>>>,
}

impl EvalSet {
    /// Reads a set folder: the project's layout (formats.md §1), or natively a data set as
    /// published on the Hugging Face hub ([`published`]; qrels split `test`, or the only one).
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_split(dir, None)
    }

    /// [`EvalSet::load`], with the split of a published set's qrels named.
    pub fn load_split(dir: &Path, split: Option<&str>) -> Result<Self> {
        #[cfg(all(not(target_arch = "wasm32"), feature = "encoder"))]
        if published::is_published(dir) {
            return published::load_set(dir, split);
        }
        if let Some(split) = split {
            return Err(EngineError::data(
                dir,
                0,
                format!("split `{split}` asked for, but this is a set in the project's layout (one split)"),
            ));
        }
        let file = |name: &str| dir.join(name);
        let mut texts = BTreeMap::new();
        for mode in Mode::ALL {
            let path = file(&format!("qrels/{}.tsv", mode.name()));
            if path.is_file() {
                texts.insert(mode, read_text(&path)?);
            }
        }
        let candidates_path = file("candidates.tsv");
        let candidates = if candidates_path.is_file() {
            Some(read_text(&candidates_path)?)
        } else {
            None
        };
        Self::from_texts(
            dir,
            &read_text(&file("corpus.jsonl"))?,
            &read_text(&file("queries.jsonl"))?,
            texts.iter().map(|(m, t)| (*m, t.as_str())).collect(),
            candidates.as_deref(),
        )
    }

    /// Builds a set from file contents (used for the embedded demo set and in the browser).
    pub fn from_texts(
        root: &Path,
        corpus: &str,
        queries: &str,
        qrels: Vec<(Mode, &str)>,
        candidates: Option<&str>,
    ) -> Result<Self> {
        let corpus = parse_corpus(corpus, &root.join("corpus.jsonl"))?;
        let queries_list = parse_queries(queries, &root.join("queries.jsonl"))?;
        let known = KnownIds {
            queries: queries_list.iter().map(|q| q.id.as_str()).collect(),
            passages: corpus.iter().map(|p| p.id.as_str()).collect(),
        };
        let mut parsed = BTreeMap::new();
        for (mode, text) in qrels {
            let path = root.join(format!("qrels/{}.tsv", mode.name()));
            parsed.insert(mode, parse_qrels(text, &path)?);
            known.check(text, &path)?;
        }
        let candidates_path = root.join("candidates.tsv");
        let candidates = candidates
            .map(|t| {
                known.check(t, &candidates_path)?;
                parse_candidates(t, &candidates_path)
            })
            .transpose()?;
        Self::from_parts(root, corpus, queries_list, parsed, candidates)
    }

    /// A set from its parts, checked: at least one query, og judgments.
    pub fn from_parts(
        root: &Path,
        corpus: Vec<Passage>,
        queries: Vec<Query>,
        qrels: BTreeMap<Mode, Qrels>,
        candidates: Option<BTreeMap<String, Vec<String>>>,
    ) -> Result<Self> {
        if queries.is_empty() {
            return Err(EngineError::data(
                root.join("queries.jsonl"),
                0,
                "no queries",
            ));
        }
        if !qrels.contains_key(&Mode::Og) {
            return Err(EngineError::data(
                root.join("qrels/og.tsv"),
                0,
                "missing: every set needs qrels/og.tsv (or, published, qrels/ or qrels_og/)",
            ));
        }
        Ok(EvalSet {
            root: root.to_path_buf(),
            corpus,
            queries,
            qrels,
            candidates,
        })
    }

    /// Keeps only the queries whose `constraint` label starts with `prefix` (their judgments
    /// and pools with them), to evaluate one family of instructions on its own; returns how
    /// many are kept. The corpus stays whole: the other queries' passages still compete.
    pub fn keep_constraint(&mut self, prefix: &str) -> usize {
        self.queries.retain(|q| {
            q.constraint
                .as_deref()
                .is_some_and(|c| c.starts_with(prefix))
        });
        let kept: std::collections::BTreeSet<String> =
            self.queries.iter().map(|q| q.id.clone()).collect();
        for qrels in self.qrels.values_mut() {
            qrels.retain(|q, _| kept.contains(q));
        }
        if let Some(pools) = &mut self.candidates {
            pools.retain(|q, _| kept.contains(q));
        }
        self.queries.len()
    }

    /// Writes the set as a folder (formats.md §1): `corpus.jsonl`, `queries.jsonl`,
    /// `qrels/MODE.tsv` for each mode it has, `candidates.tsv` when it has pools; each file
    /// atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let qrels_dir = dir.join("qrels");
        std::fs::create_dir_all(&qrels_dir).map_err(|e| EngineError::io(&qrels_dir, e))?;
        write_jsonl(&dir.join("corpus.jsonl"), &self.corpus)?;
        write_jsonl(&dir.join("queries.jsonl"), &self.queries)?;
        for (mode, qrels) in &self.qrels {
            write_qrels(&qrels_dir.join(format!("{}.tsv", mode.name())), qrels)?;
        }
        if let Some(candidates) = &self.candidates {
            let mut text = String::from("query-id\tcorpus-id\n");
            for (q, docs) in candidates {
                for d in docs {
                    text.push_str(&format!("{q}\t{d}\n"));
                }
            }
            crate::atomic::write(dir.join("candidates.tsv"), text.as_bytes())?;
        }
        Ok(())
    }

    /// Each passage's row in `corpus`, by id.
    pub fn passage_rows(&self) -> std::collections::HashMap<&str, usize> {
        self.corpus
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.as_str(), i))
            .collect()
    }

    /// Modes whose qrels are present and for which every query has an instruction.
    pub fn modes(&self) -> Vec<Mode> {
        Mode::ALL
            .into_iter()
            .filter(|m| self.qrels.contains_key(m))
            .filter(|m| self.queries.iter().all(|q| m.instruction(q).is_some()))
            .collect()
    }
}
