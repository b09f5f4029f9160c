//! The field's data sets as they are published on the Hugging Face hub, read as they lie in
//! a downloaded folder (`huggingface-cli download --repo-type dataset ...`), so `--set` and
//! `--data` take them without a conversion step.
//!
//! The hub holds one data set as *configs* (`corpus`, `queries`, `qrels`, ...), each a file
//! (`corpus.jsonl`) or a folder of *split* files (`qrels/test.jsonl`, `qrels_og/test.tsv`,
//! `corpus/test-00000-of-00001.parquet`). The layouts read here, with the revisions the
//! fixtures in `engine/tests/fixtures/published/` follow:
//! - MTEB / BEIR retrieval, JSONL (`mteb/scifact`) or Parquet (MTEB's newer uploads): corpus
//!   `{_id | id, title?, text}`, queries `{_id | id, text}`, qrels `{query-id, corpus-id,
//!   score}`; a plain retrieval set (og only, no instruction).
//! - FollowIR (`jhu-clsp/core17-instructions`) and InfoSearch (`jianqunZ/Language-v1`):
//!   queries carry `instruction_og`, `instruction_changed` (and `instruction_reversed`), qrels
//!   are the configs `qrels_og`, `qrels_changed`, `qrels_reversed`, pools `top_ranked.jsonl`
//!   `{qid, pid}`.
//! - FollowIR in MTEB (`jhu-clsp/core17-instructions-mteb`): each topic is two queries,
//!   `<topic>-og` and `<topic>-changed`, whose instructions are the `instruction` config
//!   `{query-id, instruction}`; qrels and `top_ranked` `{query-id, corpus-ids}` use those ids.
//!   They are folded back into one query per topic with og and changed instructions.
//! - IFIR (`songtingyu/IFIR`, one domain's folder): `<domain>-corpus.jsonl` and
//!   `test_data.json`, each instruction a query (see [`load_ifir`]).
//! - InF-IR training tuples (`aarontrinh02/ms_marco_synthetic_data`): Parquet rows with the
//!   fields of formats.md §3, turned into JSON lines ([`parquet_to_jsonl`]).
//!
//! A Parquet problem is reported as `file:N` with N the row (from 1), as a JSONL one with the
//! line.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::{Map, Value};

use super::{parse_qrels, read_text, record_lines, EvalSet, Mode, Passage, Qrels, Query};
use crate::error::{EngineError, Result};

/// One row of a table: where it came from (file and line or row, from 1) and its fields.
struct Row {
    path: PathBuf,
    at: usize,
    fields: Map<String, Value>,
}

impl Row {
    fn error(&self, problem: impl Into<String>) -> EngineError {
        EngineError::data(&self.path, self.at, problem)
    }

    /// A text field that must be there (any of `names`, the first present wins).
    fn text(&self, names: &[&str]) -> Result<String> {
        self.optional_text(names)?
            .ok_or_else(|| self.error(format!("missing field '{}'", names.join("' or '"))))
    }

    /// A text field that may be absent or null; numbers are read as their decimal text (ids
    /// are sometimes stored as integers).
    fn optional_text(&self, names: &[&str]) -> Result<Option<String>> {
        for name in names {
            match self.fields.get(*name) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => return Ok(Some(s.clone())),
                Some(Value::Number(n)) => return Ok(Some(n.to_string())),
                Some(other) => {
                    return Err(self.error(format!("field '{name}' must be text, found {other}")))
                }
            }
        }
        Ok(None)
    }

    /// A list of texts (`corpus-ids` of MTEB's `top_ranked`).
    fn texts(&self, name: &str) -> Result<Vec<String>> {
        match self.fields.get(name) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.error(format!("'{name}' must hold texts, found {other}"))),
                })
                .collect(),
            _ => Err(self.error(format!("missing list field '{name}'"))),
        }
    }
}

/// Rows of a JSONL or Parquet file.
fn read_rows(path: &Path) -> Result<Vec<Row>> {
    if path.extension().is_some_and(|e| e == "parquet") {
        return read_parquet(path);
    }
    let text = read_text(path)?;
    record_lines(&text)
        .map(|(line, l)| {
            let value: Value = serde_json::from_str(l)
                .map_err(|e| EngineError::data(path, line, super::json_problem(&e)))?;
            match value {
                Value::Object(fields) => Ok(Row {
                    path: path.to_path_buf(),
                    at: line,
                    fields,
                }),
                _ => Err(EngineError::data(path, line, "expected a JSON object")),
            }
        })
        .collect()
}

fn read_parquet(path: &Path) -> Result<Vec<Row>> {
    let file = File::open(path).map_err(|e| EngineError::io(path, e))?;
    let bad = |at: usize, e: parquet::errors::ParquetError| {
        EngineError::data(path, at, format!("not a readable Parquet file: {e}"))
    };
    let reader = SerializedFileReader::new(file).map_err(|e| bad(0, e))?;
    let rows = reader.get_row_iter(None).map_err(|e| bad(0, e))?;
    rows.enumerate()
        .map(|(i, row)| {
            let row = row.map_err(|e| bad(i + 1, e))?;
            match row.to_json_value() {
                Value::Object(fields) => Ok(Row {
                    path: path.to_path_buf(),
                    at: i + 1,
                    fields,
                }),
                _ => Err(EngineError::data(path, i + 1, "a row that is not a record")),
            }
        })
        .collect()
}

/// The data files of `folder` (JSONL, TSV, Parquet) by split: `test-00000-of-00001.parquet`
/// and `test.jsonl` are both split `test`.
fn files_by_split(folder: &Path) -> Result<BTreeMap<String, Vec<PathBuf>>> {
    let mut by_split: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let entries = std::fs::read_dir(folder).map_err(|e| EngineError::io(folder, e))?;
    for entry in entries {
        let path = entry.map_err(|e| EngineError::io(folder, e))?.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((stem, ext)) = file_name.rsplit_once('.') else {
            continue;
        };
        if !matches!(ext, "jsonl" | "tsv" | "parquet") {
            continue;
        }
        // `test-00000-of-00001` is a shard of split `test`.
        let split_name = stem.split_once('-').map_or(stem, |(s, _)| s);
        by_split
            .entry(split_name.to_string())
            .or_default()
            .push(path);
    }
    Ok(by_split)
}

/// The files of config `name` in `dir`: `name.jsonl` (or `.parquet`), or the files of one
/// split in the folder `name/` (`split.jsonl`, `split.tsv`, `split-00000-of-00001.parquet`,
/// ...). The split is `split` when given, else `test`, else the folder's only one.
fn config_files(dir: &Path, name: &str, split: Option<&str>) -> Result<Option<Vec<PathBuf>>> {
    for ext in ["jsonl", "parquet"] {
        let file = dir.join(format!("{name}.{ext}"));
        if file.is_file() {
            return Ok(Some(vec![file]));
        }
    }
    let folder = dir.join(name);
    if !folder.is_dir() {
        return Ok(None);
    }
    let mut by_split = files_by_split(&folder)?;
    let chosen = match split {
        Some(s) => s.to_string(),
        None if by_split.contains_key("test") => "test".to_string(),
        None if by_split.len() == 1 => by_split.keys().next().cloned().unwrap_or_default(),
        None => {
            return Err(EngineError::data(
                &folder,
                0,
                format!(
                    "several splits ({}) and none is `test`: name one (--split)",
                    by_split.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ))
        }
    };
    let Some(mut files) = by_split.remove(&chosen) else {
        return Err(EngineError::data(
            &folder,
            0,
            format!(
                "no split `{chosen}` (there are: {})",
                by_split.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    // One form per split: JSONL when both JSONL and TSV are there (InfoSearch ships both).
    if files
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "jsonl"))
    {
        files.retain(|f| f.extension().is_some_and(|e| e != "tsv"));
    }
    files.sort();
    Ok(Some(files))
}

/// Rows of a config, or None when the folder lacks it.
fn config_rows(dir: &Path, name: &str, split: Option<&str>) -> Result<Option<Vec<Row>>> {
    let Some(files) = config_files(dir, name, split)? else {
        return Ok(None);
    };
    let mut rows = Vec::new();
    for file in files {
        rows.extend(read_rows(&file)?);
    }
    Ok(Some(rows))
}

/// Judgments of a qrels config (TSV files through the project's qrels parser).
fn config_qrels(dir: &Path, name: &str, split: Option<&str>) -> Result<Option<Qrels>> {
    let Some(files) = config_files(dir, name, split)? else {
        return Ok(None);
    };
    let mut qrels = Qrels::new();
    for file in files {
        let part = if file.extension().is_some_and(|e| e == "tsv") {
            parse_qrels(&read_text(&file)?, &file)?
        } else {
            qrels_from_rows(read_rows(&file)?)?
        };
        for (q, docs) in part {
            qrels.entry(q).or_default().extend(docs);
        }
    }
    Ok(Some(qrels))
}

fn qrels_from_rows(rows: Vec<Row>) -> Result<Qrels> {
    let mut qrels = Qrels::new();
    for row in rows {
        let q = row.text(&["query-id", "query_id", "qid"])?;
        let d = row.text(&["corpus-id", "corpus_id", "doc_id", "pid"])?;
        let score = match row.fields.get("score") {
            Some(Value::Number(n)) => n.as_f64().filter(|s| s.is_finite() && *s >= 0.0),
            Some(Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0),
            _ => None,
        }
        .ok_or_else(|| row.error("'score' must be a number >= 0"))?;
        if qrels
            .entry(q.clone())
            .or_default()
            .insert(d.clone(), score)
            .is_some()
        {
            return Err(row.error(format!("query '{q}' and document '{d}' are judged twice")));
        }
    }
    Ok(qrels)
}

/// Whether `dir` holds a published layout rather than the project's own (formats.md §1).
pub fn is_published(dir: &Path) -> bool {
    !dir.join("qrels/og.tsv").is_file()
        && (dir.join("test_data.json").is_file()
            || dir.join("corpus").is_dir()
            || dir.join("qrels").is_dir()
            || dir.join("qrels_og").is_dir()
            || dir.join("corpus.parquet").is_file())
}

/// Reads an evaluation set from a published layout (see the module doc); `split` picks the
/// qrels split (default `test`, or the only one).
pub fn load_set(dir: &Path, split: Option<&str>) -> Result<EvalSet> {
    if dir.join("test_data.json").is_file() {
        return load_ifir(dir);
    }
    let corpus = read_corpus(dir, split)?;
    let queries_rows = config_rows(dir, "queries", split)?.ok_or_else(|| {
        EngineError::data(
            dir.join("queries"),
            0,
            "missing: no queries config (queries.jsonl or queries/)",
        )
    })?;
    let instructions = match config_rows(dir, "instruction", split)? {
        Some(rows) => Some(instruction_table(rows)?),
        None => None,
    };
    let mut qrels = BTreeMap::new();
    for mode in Mode::ALL {
        if let Some(q) = config_qrels(dir, &format!("qrels_{}", mode.name()), split)? {
            qrels.insert(mode, q);
        }
    }
    if qrels.is_empty() {
        if let Some(q) = config_qrels(dir, "qrels", split)? {
            qrels.insert(Mode::Og, q);
        }
    }
    let mut pools = read_pools(dir, split)?;
    let mut queries = Vec::new();
    for row in &queries_rows {
        let id = row.text(&["_id", "id"])?;
        let text = row.text(&["text"])?;
        let instruction = |name: &str| row.optional_text(&[name]);
        queries.push(Query {
            instruction_og: match (&instructions, instruction("instruction_og")?) {
                (Some(table), _) => table.get(&id).cloned().unwrap_or_default(),
                (None, og) => og.unwrap_or_default(),
            },
            instruction_changed: instruction("instruction_changed")?,
            instruction_reversed: instruction("instruction_reversed")?,
            constraint: None,
            id,
            text,
        });
    }
    if instructions.is_some() {
        queries = fold_mteb_topics(queries, &mut qrels, pools.as_mut());
    }
    let path = |name: &str| dir.join(name);
    check_unique_ids(queries.iter().map(|q| q.id.as_str()), &path("queries"))?;
    EvalSet::from_parts(dir, corpus, queries, qrels, pools)
}

/// IFIR's `<domain>-corpus.jsonl` in `dir`, without the passages whose text is empty (as
/// IFIR's loader), ids checked unique.
fn read_ifir_corpus(dir: &Path) -> Result<Vec<Passage>> {
    let corpus_file = std::fs::read_dir(dir)
        .map_err(|e| EngineError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("-corpus.jsonl"))
        })
        .ok_or_else(|| EngineError::data(dir, 0, "IFIR folder without a <domain>-corpus.jsonl"))?;
    // IFIR's loader skips passages with an empty text; so does this one.
    let corpus: Vec<Passage> = read_rows(&corpus_file)?
        .iter()
        .map(|row| {
            Ok(Passage {
                id: row.text(&["_id"])?,
                title: row.optional_text(&["title"])?.unwrap_or_default(),
                text: row.text(&["text"])?,
            })
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .filter(|p| !p.text.is_empty())
        .collect();
    check_unique_ids(corpus.iter().map(|p| p.id.as_str()), &corpus_file)?;
    Ok(corpus)
}

/// IFIR (one domain's folder, e.g. `fiqa/`): `<domain>-corpus.jsonl` and `test_data.json`, a
/// list of queries, each with its candidate passages (`corpus`, `{_id}` objects) and
/// instructions of three levels whose relevant passages are indices into that list (`rel`).
/// Each instruction becomes a query `I-J` (query I, instruction J) with the instruction as
/// `instruction_og` and the level as its constraint label (`level 2`); its `rel` passages are
/// relevant, the query's other candidates judged not. IFIR ranks the whole corpus and joins
/// `query + " " + instruction`: evaluate with `--template query-first` to match.
fn load_ifir(dir: &Path) -> Result<EvalSet> {
    let corpus = read_ifir_corpus(dir)?;
    let path = dir.join("test_data.json");
    let items: Vec<IfirItem> = serde_json::from_str(&read_text(&path)?)
        .map_err(|e| EngineError::data(&path, e.line(), super::json_problem(&e)))?;
    let mut queries = Vec::new();
    let mut og = Qrels::new();
    for (i, item) in items.iter().enumerate() {
        let pool: Vec<&str> = item.corpus.iter().map(|c| c.id.as_str()).collect();
        for (j, inst) in item.instructions.iter().enumerate() {
            let id = format!("{i}-{j}");
            let mut judged: BTreeMap<String, f64> =
                pool.iter().map(|d| (d.to_string(), 0.0)).collect();
            for &r in &inst.rel {
                let doc = pool.get(r).ok_or_else(|| {
                    EngineError::data(
                        &path,
                        0,
                        format!(
                            "query {i}, instruction {j}: rel index {r} is past its {} candidates",
                            pool.len()
                        ),
                    )
                })?;
                judged.insert(doc.to_string(), 1.0);
            }
            og.insert(id.clone(), judged);
            queries.push(Query {
                id,
                text: item.text.clone(),
                instruction_og: inst.instruction.clone(),
                instruction_changed: None,
                instruction_reversed: None,
                constraint: Some(format!("level {}", inst.level)),
            });
        }
    }
    EvalSet::from_parts(dir, corpus, queries, BTreeMap::from([(Mode::Og, og)]), None)
}

/// One query of IFIR's `test_data.json`.
#[derive(serde::Deserialize)]
struct IfirItem {
    text: String,
    corpus: Vec<IfirCandidate>,
    instructions: Vec<IfirInstruction>,
}

#[derive(serde::Deserialize)]
struct IfirCandidate {
    #[serde(rename = "_id")]
    id: String,
}

#[derive(serde::Deserialize)]
struct IfirInstruction {
    instruction: String,
    level: u32,
    rel: Vec<usize>,
}

fn read_corpus(dir: &Path, split: Option<&str>) -> Result<Vec<Passage>> {
    let rows = config_rows(dir, "corpus", split)?.ok_or_else(|| {
        EngineError::data(
            dir.join("corpus"),
            0,
            "missing: no corpus config (corpus.jsonl or corpus/)",
        )
    })?;
    let mut corpus = Vec::with_capacity(rows.len());
    for row in &rows {
        corpus.push(Passage {
            id: row.text(&["_id", "id", "doc_id"])?,
            title: row.optional_text(&["title"])?.unwrap_or_default(),
            text: row.text(&["text"])?,
        });
    }
    if corpus.is_empty() {
        return Err(EngineError::data(dir.join("corpus"), 0, "empty corpus"));
    }
    check_unique_ids(corpus.iter().map(|p| p.id.as_str()), &dir.join("corpus"))?;
    Ok(corpus)
}

fn check_unique_ids<'a>(ids: impl Iterator<Item = &'a str>, path: &Path) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(EngineError::data(path, 0, format!("duplicate id '{id}'")));
        }
    }
    Ok(())
}

/// MTEB's `instruction` config: query id -> instruction.
fn instruction_table(rows: Vec<Row>) -> Result<BTreeMap<String, String>> {
    rows.iter()
        .map(|r| {
            Ok((
                r.text(&["query-id", "query_id"])?,
                r.text(&["instruction"])?,
            ))
        })
        .collect()
}

/// Re-ranking pools: `top_ranked.jsonl` `{qid, pid}` rows (FollowIR) or a `top_ranked`
/// config of `{query-id, corpus-ids}` rows (MTEB).
fn read_pools(dir: &Path, split: Option<&str>) -> Result<Option<BTreeMap<String, Vec<String>>>> {
    let Some(rows) = config_rows(dir, "top_ranked", split)? else {
        return Ok(None);
    };
    let mut pools: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in &rows {
        if row.fields.contains_key("corpus-ids") {
            let q = row.text(&["query-id"])?;
            pools.entry(q).or_default().extend(row.texts("corpus-ids")?);
        } else {
            let q = row.text(&["qid", "query-id"])?;
            pools
                .entry(q)
                .or_default()
                .push(row.text(&["pid", "corpus-id"])?);
        }
    }
    Ok(Some(pools))
}

/// FollowIR in MTEB: queries `T-og` and `T-changed` become one query `T` whose og and changed
/// instructions are theirs; their judgments become the og and changed qrels, their pools the
/// topic's pool (og's). Queries without the suffixes stay as they are.
fn fold_mteb_topics(
    queries: Vec<Query>,
    qrels: &mut BTreeMap<Mode, Qrels>,
    pools: Option<&mut BTreeMap<String, Vec<String>>>,
) -> Vec<Query> {
    let topic = |id: &str| -> Option<(String, Mode)> {
        id.strip_suffix("-og")
            .map(|t| (t.to_string(), Mode::Og))
            .or_else(|| {
                id.strip_suffix("-changed")
                    .map(|t| (t.to_string(), Mode::Changed))
            })
    };
    let mut folded: Vec<Query> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for q in queries {
        let Some((t, mode)) = topic(&q.id) else {
            folded.push(q);
            continue;
        };
        let i = *index.entry(t.clone()).or_insert_with(|| {
            folded.push(Query {
                id: t.clone(),
                text: q.text.clone(),
                instruction_og: String::new(),
                instruction_changed: None,
                instruction_reversed: None,
                constraint: None,
            });
            folded.len() - 1
        });
        match mode {
            Mode::Og => folded[i].instruction_og = q.instruction_og,
            _ => folded[i].instruction_changed = Some(q.instruction_og),
        }
    }
    if let Some(all) = qrels.remove(&Mode::Og) {
        for (q, docs) in all {
            match topic(&q) {
                Some((t, mode)) => qrels.entry(mode).or_default().insert(t, docs),
                None => qrels.entry(Mode::Og).or_default().insert(q, docs),
            };
        }
    }
    if let Some(pools) = pools {
        let old = std::mem::take(pools);
        for (q, docs) in old {
            match topic(&q) {
                Some((t, Mode::Og)) => {
                    pools.insert(t, docs);
                }
                Some(_) => {}
                None => {
                    pools.insert(q, docs);
                }
            }
        }
    }
    folded
}

/// The Parquet files of published training data: the file itself, or the `.parquet` files of a
/// folder (or of its `data/` folder, as a hub data set has them), the `train-*` split's when
/// there are several splits, in name order. Empty when there are none.
pub fn training_parquet_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return match path.extension().is_some_and(|e| e == "parquet") {
            true => vec![path.to_path_buf()],
            false => Vec::new(),
        };
    }
    let list = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
                    .collect()
            })
            .unwrap_or_default();
        let is_train = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("train"))
        };
        if files.iter().any(is_train) {
            files.retain(is_train);
        }
        files.sort();
        files
    };
    let files = list(path);
    if files.is_empty() {
        list(&path.join("data"))
    } else {
        files
    }
}

/// Writes the rows of published training data ([`training_parquet_files`]) as JSON lines at
/// `output` (atomically, streamed), for the project's training reader; returns how many.
/// Fields are kept as they are: the reader checks them by name.
pub fn parquet_to_jsonl(files: &[PathBuf], output: &Path) -> Result<usize> {
    let mut out = crate::atomic::AtomicFile::create(output)?;
    let mut count = 0;
    for file in files {
        let handle = File::open(file).map_err(|e| EngineError::io(file, e))?;
        let bad = |at: usize, e: parquet::errors::ParquetError| {
            EngineError::data(file, at, format!("not a readable Parquet file: {e}"))
        };
        let reader = SerializedFileReader::new(handle).map_err(|e| bad(0, e))?;
        for (i, row) in reader
            .get_row_iter(None)
            .map_err(|e| bad(0, e))?
            .enumerate()
        {
            let row = row.map_err(|e| bad(i + 1, e))?;
            let mut line = row.to_json_value().to_string();
            line.push('\n');
            out.write_bytes(line.as_bytes())?;
            count += 1;
        }
    }
    out.commit()?;
    Ok(count)
}
