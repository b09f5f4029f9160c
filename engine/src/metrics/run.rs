//! Runs (formats.md §2): per query, the scored documents a system returned, and the one ranking
//! order every metric uses.
//!
//! **Ordering.** trec_eval sorts a query's documents by score descending, ties by doc id
//! descending (byte order), and compares scores as 32-bit floats (two scores equal in f32 tie
//! even when they differ in f64; observed with pytrec_eval and kept for exact agreement).
//! [`Run::ranked`] implements exactly that, and every metric, the instruction metrics included,
//! ranks through it, so a tie is resolved the same way everywhere.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::io::Write;
use std::path::Path;

use crate::error::{EngineError, Result};

/// Worker threads for large runs, read ([`Run::parse_trec`]) or evaluated
/// ([`crate::metrics::standard::evaluate`]); 1 on wasm32.
pub fn threads() -> usize {
    if cfg!(target_arch = "wasm32") {
        1
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(16)
    }
}

/// `f` of every item of `items`, each on its own scoped thread, in the items' order; a panic
/// in `f` panics here as "`what` panicked".
pub(crate) fn on_threads<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    what: &str,
) -> Vec<R> {
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = items
            .iter()
            .map(|item| scope.spawn(move || f(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|e| panic!("{what} panicked: {e:?}"))
            })
            .collect()
    })
}

/// The documents a system returned for each query, with their scores.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    queries: BTreeMap<String, Vec<(String, f64)>>,
}

/// One ranked document: id and score, in rank order (index 0 is rank 1).
pub type Ranked<'a> = Vec<(&'a str, f64)>;

impl Run {
    /// An empty run.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `doc` with `score` to `query`; a document already present keeps the higher score.
    pub fn insert(&mut self, query: &str, doc: &str, score: f64) {
        let docs = self.queries.entry(query.to_string()).or_default();
        match docs.iter_mut().find(|(d, _)| d == doc) {
            Some(entry) => entry.1 = entry.1.max(score),
            None => docs.push((doc.to_string(), score)),
        }
    }

    /// Sets the whole result list of `query` (ids must be distinct; they are when they come
    /// from a ranking).
    pub fn set_query(&mut self, query: &str, docs: Vec<(String, f64)>) {
        self.queries.insert(query.to_string(), docs);
    }

    /// Marks `query` as present with no document (an empty result list).
    pub fn add_empty_query(&mut self, query: &str) {
        self.queries.entry(query.to_string()).or_default();
    }

    /// Query ids, sorted.
    pub fn query_ids(&self) -> impl Iterator<Item = &str> {
        self.queries.keys().map(|s| s.as_str())
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// True when no query is present.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// The scored documents of `query` in insertion order, or `None` when the query is absent.
    pub fn docs(&self, query: &str) -> Option<&[(String, f64)]> {
        self.queries.get(query).map(|v| v.as_slice())
    }

    /// `query`'s documents in trec_eval order (see the module docs); empty when absent.
    pub fn ranked(&self, query: &str) -> Ranked<'_> {
        self.queries
            .get(query)
            .map(|docs| rank(docs))
            .unwrap_or_default()
    }

    /// 1-based rank and score of every document of `query`.
    pub fn ranks(&self, query: &str) -> RankLookup<'_> {
        let ranked = self.ranked(query);
        let len = ranked.len();
        let map = ranked
            .into_iter()
            .enumerate()
            .map(|(i, (d, s))| (d, (i + 1, s)))
            .collect();
        RankLookup { map, len }
    }

    /// Keeps the best `k` documents of every query (trec_eval order).
    pub fn truncate(&mut self, k: usize) {
        for docs in self.queries.values_mut() {
            if docs.len() > k {
                let mut ranked: Vec<(String, f64)> = rank(docs)
                    .into_iter()
                    .take(k)
                    .map(|(d, s)| (d.to_string(), s))
                    .collect();
                std::mem::swap(docs, &mut ranked);
            }
        }
    }

    /// Parses a TREC run (`qid Q0 docid rank score tag`, whitespace separated). The rank column
    /// is ignored (trec_eval ranks by score); a repeated (qid, docid) pair, a non-numeric or
    /// non-finite score and a short line are errors naming `path:line`.
    ///
    /// Large files are parsed in parallel: the text is cut at line boundaries into one piece
    /// per core, each piece parsed on its own thread, and the pieces merged in file order (a
    /// query split across pieces, or spread over the file, keeps every line).
    pub fn parse_trec(text: &str, path: &Path) -> Result<Self> {
        let pieces = split_at_lines(text, if text.len() > 1 << 20 { threads() } else { 1 });
        let parsed: Vec<std::result::Result<Piece<'_>, (usize, String)>> = if pieces.len() > 1 {
            on_threads(&pieces, |p| parse_piece(p), "run parser")
        } else {
            pieces.iter().map(|p| parse_piece(p)).collect()
        };
        let mut queries: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
        let mut first_line: HashMap<&str, usize> = HashMap::new();
        let mut lines_before = 0;
        for piece in parsed {
            let piece = piece.map_err(|(line, problem)| {
                EngineError::data(path, lines_before + line + 1, problem)
            })?;
            for (qid, line, docs) in piece.segments {
                first_line.entry(qid).or_insert(lines_before + line + 1);
                match queries.get_mut(qid) {
                    Some(existing) => existing.extend(docs),
                    None => {
                        queries.insert(qid.to_string(), docs);
                    }
                }
            }
            lines_before += piece.lines;
        }
        let lists: Vec<(&String, &Vec<(String, f64)>)> = queries.iter().collect();
        let duplicate = if lists.len() > 1 && pieces.len() > 1 {
            let parts: Vec<_> = lists.chunks(lists.len().div_ceil(pieces.len())).collect();
            let found = on_threads(
                &parts,
                |part| part.iter().find_map(|q| duplicate_in(*q)),
                "run checker",
            );
            found.into_iter().flatten().next()
        } else {
            lists.iter().find_map(|q| duplicate_in(*q))
        };
        if let Some((qid, doc)) = duplicate {
            let line = find_line(text, qid, doc).unwrap_or(first_line[qid]);
            return Err(EngineError::data(
                path,
                line,
                format!("document '{doc}' appears twice for query '{qid}'"),
            ));
        }
        Ok(Run { queries })
    }

    /// Reads a TREC run file (see [`Run::parse_trec`]).
    pub fn read_trec(path: &Path) -> Result<Self> {
        let text = crate::data::read_text(path)?;
        Self::parse_trec(&text, path)
    }

    /// Writes the run in TREC format, each query in rank order, `tag` in the last column.
    pub fn write_trec(&self, out: &mut impl Write, tag: &str) -> std::io::Result<()> {
        for qid in self.queries.keys() {
            for (i, (doc, score)) in self.ranked(qid).iter().enumerate() {
                writeln!(out, "{qid} Q0 {doc} {} {score} {tag}", i + 1)?;
            }
        }
        Ok(())
    }

    /// Writes the run to `path` atomically ([`crate::atomic`]).
    pub fn save_trec(&self, path: &Path, tag: &str) -> Result<()> {
        let mut out = crate::atomic::AtomicFile::create(path)?;
        self.write_trec(&mut out, tag)
            .map_err(|e| EngineError::io(path, e))?;
        out.commit()
    }
}

/// Consecutive lines of one query: (qid, 0-based line of the first, documents).
type Segment<'a> = (&'a str, usize, Vec<(String, f64)>);

/// One parsed piece of a run file: its segments and its number of lines.
struct Piece<'a> {
    segments: Vec<Segment<'a>>,
    lines: usize,
}

/// Cuts `text` into about `n` pieces, each ending at a line end (or the end of the text).
fn split_at_lines(text: &str, n: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(n);
    let mut rest = text;
    for i in (1..n.max(1)).rev() {
        let target = rest.len() / (i + 1);
        let cut = match rest.as_bytes()[target..].iter().position(|b| *b == b'\n') {
            Some(p) => target + p + 1,
            None => rest.len(),
        };
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    pieces.push(rest);
    pieces
}

/// Parses one piece; an error is (0-based line within the piece, problem).
fn parse_piece(piece: &str) -> std::result::Result<Piece<'_>, (usize, String)> {
    let mut segments: Vec<Segment<'_>> = Vec::new();
    let mut lines = 0;
    for (i, line) in piece.split('\n').enumerate() {
        lines = i + 1;
        let mut fields = line.split_ascii_whitespace();
        let Some(qid) = fields.next() else { continue };
        let (Some(_q0), Some(doc), Some(_rank), Some(score), Some(_tag), None) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            let found = line.split_ascii_whitespace().count();
            return Err((
                i,
                format!("expected 6 fields: qid Q0 docid rank score tag, found {found}"),
            ));
        };
        let score: f64 = score
            .parse()
            .map_err(|_| (i, format!("score '{score}' is not a number")))?;
        if !score.is_finite() {
            return Err((i, format!("score {score} is not finite")));
        }
        // Lines of one query are usually contiguous: extend the current segment.
        match segments.last_mut() {
            Some((q, _, docs)) if *q == qid => docs.push((doc.to_string(), score)),
            _ => segments.push((qid, i, vec![(doc.to_string(), score)])),
        }
    }
    // A piece ending with a line end has an empty last "line" that is the next piece's first.
    if piece.ends_with('\n') {
        lines -= 1;
    }
    Ok(Piece { segments, lines })
}

/// The first document listed twice in one query's list.
fn duplicate_in<'a>(
    (qid, docs): (&'a String, &'a Vec<(String, f64)>),
) -> Option<(&'a str, &'a str)> {
    let mut seen: HashSet<&str, BuildHasherDefault<FxHasher>> =
        HashSet::with_capacity_and_hasher(docs.len(), Default::default());
    docs.iter()
        .find(|(d, _)| !seen.insert(d.as_str()))
        .map(|(d, _)| (qid.as_str(), d.as_str()))
}

/// A fast, non-cryptographic hasher for short ids (the rustc / Firefox "Fx" hash).
#[derive(Default)]
struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(K);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn find_line(text: &str, qid: &str, doc: &str) -> Option<usize> {
    let mut seen = false;
    for (i, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() >= 3 && f[0] == qid && f[2] == doc {
            if seen {
                return Some(i + 1);
            }
            seen = true;
        }
    }
    None
}

/// Sorts scored documents in trec_eval order: score (as f32) descending, then doc id descending.
pub fn rank(docs: &[(String, f64)]) -> Ranked<'_> {
    let mut ranked: Vec<(&str, f64)> = docs.iter().map(|(d, s)| (d.as_str(), *s)).collect();
    // f32 like trec_eval; -0.0 and 0.0 are equal scores (a tie), not ordered.
    let key = |s: f64| {
        let f = s as f32;
        if f == 0.0 {
            0.0
        } else {
            f
        }
    };
    ranked.sort_unstable_by(|a, b| {
        key(b.1)
            .total_cmp(&key(a.1))
            .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
    });
    ranked
}

/// Rank and score of each document of one query's run; a document the run lacks has rank
/// `|run| + 1` and score 0 (the FollowIR / InfoSearch reference convention).
pub struct RankLookup<'a> {
    map: std::collections::HashMap<&'a str, (usize, f64)>,
    len: usize,
}

impl RankLookup<'_> {
    /// 1-based rank of `doc` (`|run| + 1` when absent).
    pub fn rank(&self, doc: &str) -> usize {
        self.map.get(doc).map(|r| r.0).unwrap_or(self.len + 1)
    }

    /// Score of `doc` (0 when absent).
    pub fn score(&self, doc: &str) -> f64 {
        self.map.get(doc).map(|r| r.1).unwrap_or(0.0)
    }
}
