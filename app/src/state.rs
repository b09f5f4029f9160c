//! The page's state logic, free of any browser API so that it is unit-tested natively: the
//! three columns and how documents move between them, the judgments a user edits, the live
//! metrics (computed by `engine::metrics`, the same code as the CLI), the user's own corpus,
//! and the URL that shares an exact example.

use std::collections::BTreeMap;

use engine::data::{Mode, Passage, Qrels};
use engine::metrics::explain::{self, Breakdown};
use engine::metrics::instruction_following::WiseConfig;
use engine::metrics::standard::Measure;
use engine::metrics::{Metric, ModeReport, Run};

/// The query id used for the single query the page evaluates.
const QID: &str = "q";

/// One of the three rankings shown side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Column {
    /// The query alone.
    Query,
    /// Query + instruction.
    Instructed,
    /// Query + polarity-reversed instruction.
    Reversed,
}

impl Column {
    /// The three columns, left to right.
    pub const ALL: [Column; 3] = [Column::Query, Column::Instructed, Column::Reversed];

    /// The evaluation mode whose judgments apply to this column (formats.md §1: og is the
    /// query alone on the demo set, changed the instruction, reversed its reversal).
    pub fn mode(self) -> Mode {
        match self {
            Column::Query => Mode::Og,
            Column::Instructed => Mode::Changed,
            Column::Reversed => Mode::Reversed,
        }
    }

    /// Stable name, used in `data-testid="ranking-<name>"`.
    pub fn name(self) -> &'static str {
        match self {
            Column::Query => "query",
            Column::Instructed => "instructed",
            Column::Reversed => "reversed",
        }
    }

    /// Column heading.
    pub fn title(self) -> &'static str {
        match self {
            Column::Query => "Query alone",
            Column::Instructed => "Query + instruction",
            Column::Reversed => "Query + reversed instruction",
        }
    }
}

/// A ranking: (passage index in the corpus, cosine score), best first.
pub type Ranking = Vec<(usize, f32)>;

/// How a document moved from the query-alone column to another column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Up by this many places.
    Up(usize),
    /// Down by this many places.
    Down(usize),
    /// Same place.
    Same,
}

impl Move {
    /// Arrow and count, e.g. `▲3`.
    pub fn label(self) -> String {
        match self {
            Move::Up(n) => format!("▲{n}"),
            Move::Down(n) => format!("▼{n}"),
            Move::Same => "=".to_string(),
        }
    }
}

/// The move of the document at position `pos` of `to`, relative to its position in `from`.
/// Both rankings cover the whole corpus, so every document is in both.
pub fn movement(from: &Ranking, to: &Ranking, pos: usize) -> Move {
    let doc = to[pos].0;
    let Some(before) = from.iter().position(|(d, _)| *d == doc) else {
        return Move::Same;
    };
    match before.cmp(&pos) {
        std::cmp::Ordering::Greater => Move::Up(before - pos),
        std::cmp::Ordering::Less => Move::Down(pos - before),
        std::cmp::Ordering::Equal => Move::Same,
    }
}

/// The judgments of the current query, per mode: doc id -> level (absent = unjudged).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judgments {
    levels: BTreeMap<Mode, BTreeMap<String, f64>>,
}

impl Judgments {
    /// The judgments of query `qid` in a set's qrels (empty for a query without any).
    pub fn from_qrels(qrels: &BTreeMap<Mode, Qrels>, qid: &str) -> Self {
        let levels = Mode::ALL
            .into_iter()
            .map(|m| {
                let j = qrels
                    .get(&m)
                    .and_then(|q| q.get(qid))
                    .cloned()
                    .unwrap_or_default();
                (m, j)
            })
            .collect();
        Judgments { levels }
    }

    /// The level of `doc` under `mode` (0 when unjudged).
    pub fn level(&self, mode: Mode, doc: &str) -> f64 {
        self.levels
            .get(&mode)
            .and_then(|j| j.get(doc))
            .copied()
            .unwrap_or(0.0)
    }

    /// True when `doc` is relevant (level > 0) under `mode`.
    pub fn is_relevant(&self, mode: Mode, doc: &str) -> bool {
        self.level(mode, doc) > 0.0
    }

    /// Flips `doc` between relevant (1) and non-relevant (0) under `mode` (a click).
    pub fn toggle(&mut self, mode: Mode, doc: &str) {
        let now = self.is_relevant(mode, doc);
        self.levels
            .entry(mode)
            .or_default()
            .insert(doc.to_string(), if now { 0.0 } else { 1.0 });
    }

    /// The judgments of `mode`.
    pub fn of(&self, mode: Mode) -> BTreeMap<String, f64> {
        self.levels.get(&mode).cloned().unwrap_or_default()
    }

    /// True when no document is judged relevant under any mode.
    pub fn is_empty(&self) -> bool {
        self.levels.values().all(|j| j.values().all(|l| *l <= 0.0))
    }

    fn qrels(&self) -> BTreeMap<Mode, Qrels> {
        Mode::ALL
            .into_iter()
            .map(|m| (m, [(QID.to_string(), self.of(m))].into()))
            .collect()
    }
}

/// A metric shown under each column, against that column's judgments: the one list the
/// page's labels, the engine's metric names, the teach-mode explanations and
/// [`LiveMetrics::columns`] all follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ColumnMetric {
    /// nDCG@10.
    Ndcg10,
    /// MAP (depth 1000).
    Map,
    /// MRR@10.
    Mrr10,
}

impl ColumnMetric {
    /// In [`LiveMetrics::columns`] order.
    pub const ALL: [ColumnMetric; 3] =
        [ColumnMetric::Ndcg10, ColumnMetric::Map, ColumnMetric::Mrr10];

    /// The label shown.
    pub fn label(self) -> &'static str {
        match self {
            ColumnMetric::Ndcg10 => "nDCG@10",
            ColumnMetric::Map => "MAP",
            ColumnMetric::Mrr10 => "MRR@10",
        }
    }

    /// The stable key in `data-metric`.
    pub fn key(self) -> &'static str {
        match self {
            ColumnMetric::Ndcg10 => "ndcg@10",
            ColumnMetric::Map => "map",
            ColumnMetric::Mrr10 => "mrr@10",
        }
    }

    /// The engine's metric.
    fn metric(self) -> Metric {
        match self {
            ColumnMetric::Ndcg10 => Metric::at(Measure::Ndcg, 10),
            ColumnMetric::Map => Metric::at(Measure::Map, 1000),
            ColumnMetric::Mrr10 => Metric::at(Measure::Mrr, 10),
        }
    }

    /// The teach-mode explanation of this metric in `column`.
    pub fn explained(self, column: Column) -> Explained {
        match self {
            ColumnMetric::Ndcg10 => Explained::Ndcg(column),
            ColumnMetric::Map => Explained::Map(column),
            ColumnMetric::Mrr10 => Explained::Mrr(column),
        }
    }
}

/// The metrics shown live, recomputed on every change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LiveMetrics {
    /// Per column: the [`ColumnMetric::ALL`] values against that column's judgments.
    pub columns: BTreeMap<Column, [f64; 3]>,
    /// p-MRR (query alone vs instructed); `None` when no document is relevant to the query alone
    /// and not under the instruction.
    pub p_mrr: Option<f64>,
    /// WISE; `None` without a gold document (relevant both alone and with the instruction).
    pub wise: Option<f64>,
    /// SICR; `None` without a gold document.
    pub sicr: Option<f64>,
}

impl LiveMetrics {
    /// `metric` of `column`, when the column is ranked.
    pub fn column(&self, column: Column, metric: ColumnMetric) -> Option<f64> {
        let at = ColumnMetric::ALL.iter().position(|m| *m == metric)?;
        self.columns.get(&column).map(|v| v[at])
    }
}

/// Runs of one query for the engine's metrics: the doc ids of `corpus`, scored by the ranking.
pub fn to_run(ranking: &Ranking, corpus: &[Passage]) -> Run {
    let mut run = Run::new();
    run.set_query(
        QID,
        // A ranking of another corpus (the corpus was just switched) contributes nothing.
        ranking
            .iter()
            .filter_map(|(i, s)| corpus.get(*i).map(|p| (p.id.clone(), *s as f64)))
            .collect(),
    );
    run
}

/// Computes every live metric from the three rankings and the judgments.
pub fn live_metrics(
    rankings: &BTreeMap<Column, Ranking>,
    corpus: &[Passage],
    judgments: &Judgments,
) -> LiveMetrics {
    let runs: BTreeMap<Mode, Run> = rankings
        .iter()
        .map(|(c, r)| (c.mode(), to_run(r, corpus)))
        .collect();
    let metrics = ColumnMetric::ALL.map(ColumnMetric::metric);
    let report = ModeReport::compute(&judgments.qrels(), &runs, &metrics, WiseConfig::default());
    let columns = Column::ALL
        .into_iter()
        .filter_map(|c| {
            let v = report.modes.get(&c.mode())?.per_query.get(QID)?;
            Some((c, [v[0], v[1], v[2]]))
        })
        .collect();
    let one = |p: &engine::metrics::PerQuery| p.per_query.get(QID).copied();
    LiveMetrics {
        columns,
        p_mrr: report.p_mrr.as_ref().and_then(one),
        wise: report.infosearch.as_ref().and_then(|s| one(&s.wise)),
        sicr: report.infosearch.as_ref().and_then(|s| one(&s.sicr)),
    }
}

/// Which metric a teach-mode panel explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explained {
    /// nDCG@10 of a column.
    Ndcg(Column),
    /// MAP of a column.
    Map(Column),
    /// MRR@10 of a column.
    Mrr(Column),
    /// p-MRR.
    PMrr,
    /// WISE.
    Wise,
    /// SICR.
    Sicr,
}

/// The formula and per-document terms of one live metric (`None` when it is undefined).
pub fn explain_metric(
    which: Explained,
    rankings: &BTreeMap<Column, Ranking>,
    corpus: &[Passage],
    judgments: &Judgments,
) -> Option<Breakdown> {
    let run = |c: Column| rankings.get(&c).map(|r| to_run(r, corpus));
    let three = || {
        Some([
            run(Column::Query)?,
            run(Column::Instructed)?,
            run(Column::Reversed)?,
        ])
    };
    match which {
        Explained::Ndcg(c) => Some(explain::ndcg(&run(c)?, QID, &judgments.of(c.mode()), 10)),
        Explained::Map(c) => Some(explain::average_precision(
            &run(c)?,
            QID,
            &judgments.of(c.mode()),
            1000,
        )),
        Explained::Mrr(c) => Some(explain::reciprocal_rank(
            &run(c)?,
            QID,
            &judgments.of(c.mode()),
            10,
        )),
        Explained::PMrr => explain::p_mrr(
            &run(Column::Query)?,
            &run(Column::Instructed)?,
            QID,
            &judgments.of(Mode::Og),
            &judgments.of(Mode::Changed),
        ),
        Explained::Wise => {
            let [a, b, c] = three()?;
            explain::wise(
                [&a, &b, &c],
                QID,
                &judgments.of(Mode::Og),
                &judgments.of(Mode::Changed),
                WiseConfig::default(),
            )
        }
        Explained::Sicr => {
            let [a, b, c] = three()?;
            explain::sicr(
                [&a, &b, &c],
                QID,
                &judgments.of(Mode::Og),
                &judgments.of(Mode::Changed),
            )
        }
    }
}

/// Most passages a user corpus may hold (the page encodes them all in the browser).
pub const MAX_USER_PASSAGES: usize = 2000;
/// Longest passage kept, in characters (the encoder reads at most 256 tokens anyway).
pub const MAX_PASSAGE_CHARS: usize = 4000;

/// Parses a corpus the user pasted or uploaded: JSONL as in formats.md §1 when the first
/// non-blank line starts with `{`, else plain text with one passage per line (ids `p1`, `p2`,
/// ...). Overlong passages are cut to [`MAX_PASSAGE_CHARS`]; errors name the line.
pub fn parse_user_corpus(text: &str, name: &str) -> Result<Vec<Passage>, String> {
    if text.contains('\0') {
        return Err(format!(
            "{name}: a binary file (it holds NUL bytes), not text or JSONL passages"
        ));
    }
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    let Some(first) = first else {
        return Err(format!("{name}: the corpus is empty"));
    };
    let mut passages = if first.trim_start_matches('\u{feff}').starts_with('{') {
        engine::data::parse_corpus(text, std::path::Path::new(name)).map_err(|e| e.to_string())?
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .enumerate()
            .map(|(i, l)| Passage {
                id: format!("p{}", i + 1),
                title: String::new(),
                text: l.to_string(),
            })
            .collect()
    };
    if passages.is_empty() {
        return Err(format!("{name}: no passage found"));
    }
    if passages.len() > MAX_USER_PASSAGES {
        return Err(format!(
            "{name}: {} passages; the page encodes at most {MAX_USER_PASSAGES} in the browser",
            passages.len()
        ));
    }
    for p in &mut passages {
        if p.text.chars().count() > MAX_PASSAGE_CHARS {
            p.text = p.text.chars().take(MAX_PASSAGE_CHARS).collect();
        }
    }
    Ok(passages)
}

/// The topic of a demo passage: its id without the trailing number (`sourdough-03` is in
/// `sourdough`).
pub fn demo_topic(id: &str) -> &str {
    id.rsplit_once('-').map_or(id, |(topic, _)| topic)
}

/// The demo corpus's topics with their passage counts, in corpus order. Each is a built-in
/// corpus of its own (key: the topic), small enough to encode in a moment on any backend.
pub fn demo_topics(corpus: &[Passage]) -> Vec<(String, usize)> {
    let mut topics: Vec<(String, usize)> = Vec::new();
    for p in corpus {
        let topic = demo_topic(&p.id);
        match topics.iter_mut().find(|(t, _)| t == topic) {
            Some((_, n)) => *n += 1,
            None => topics.push((topic.to_string(), 1)),
        }
    }
    topics
}

/// The passages of built-in corpus `key`: the whole demo corpus for `demo`, one topic's
/// passages for a topic key; `None` for any other key.
pub fn demo_corpus(corpus: &[Passage], key: &str) -> Option<Vec<Passage>> {
    if key == "demo" {
        return Some(corpus.to_vec());
    }
    let part: Vec<Passage> = corpus
        .iter()
        .filter(|p| demo_topic(&p.id) == key)
        .cloned()
        .collect();
    (!part.is_empty()).then_some(part)
}

/// The most Web Workers that encode a corpus on the CPU: each holds its own copy of the model
/// (about 220 MB of wasm memory at the page's batch size).
pub const MAX_CORPUS_WORKERS: usize = 4;

/// What the URL holds: enough to reproduce the page exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlState {
    /// Corpus key (`demo`, a demo topic, or `custom`).
    pub corpus: String,
    /// Demo query id, when the example is one of the set's queries.
    pub qid: String,
    /// The query.
    pub query: String,
    /// The instruction.
    pub instruction: String,
    /// The reversed instruction.
    pub reversed: String,
    /// Model key, when not the default.
    pub model: String,
    /// Backend the user picked (`cpu` or `webgpu`); empty: WebGPU when available.
    pub backend: String,
    /// Arithmetic of the CPU backend's dense layers: `f32` when the URL asks for it, else
    /// int8 (`engine::int8`, WebAssembly SIMD), the faster one.
    pub cpu_f32: bool,
    /// Web Workers that encode a corpus on the CPU (`workers=N`, 1 to
    /// [`MAX_CORPUS_WORKERS`]); `None`: as many as the machine affords.
    pub workers: Option<usize>,
    /// Whether teach mode is on.
    pub teach: bool,
    /// Whether the learn-live panel ("Train") shows outside teach mode (`train=1`; embeds set
    /// it with the custom element's `train` attribute).
    pub train: bool,
}

impl UrlState {
    /// The query string (without `?`): only non-empty fields, percent-encoded.
    pub fn to_query_string(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("corpus", &self.corpus),
            ("qid", &self.qid),
            ("q", &self.query),
            ("i", &self.instruction),
            ("r", &self.reversed),
            ("model", &self.model),
            ("backend", &self.backend),
        ] {
            if !v.is_empty() {
                let value: String = form_urlencoded::byte_serialize(v.as_bytes()).collect();
                parts.push(format!("{k}={value}"));
            }
        }
        if self.teach {
            parts.push("teach=1".into());
        }
        if self.train {
            parts.push("train=1".into());
        }
        if self.cpu_f32 {
            parts.push("precision=f32".into());
        }
        if let Some(n) = self.workers {
            parts.push(format!("workers={n}"));
        }
        parts.join("&")
    }

    /// Parses a query string (with or without `?`); unknown keys and bad escapes are ignored.
    pub fn from_query_string(s: &str) -> Self {
        let mut state = UrlState::default();
        for (k, v) in form_urlencoded::parse(s.trim_start_matches('?').as_bytes()) {
            let v = v.into_owned();
            match k.as_ref() {
                "corpus" => state.corpus = v,
                "qid" => state.qid = v,
                "q" => state.query = v,
                "i" => state.instruction = v,
                "r" => state.reversed = v,
                "model" => state.model = v,
                "backend" if v == "cpu" || v == "webgpu" => state.backend = v,
                "teach" => state.teach = v == "1" || v == "true",
                "train" => state.train = v == "1" || v == "true",
                "precision" => state.cpu_f32 = v == "f32",
                "workers" => {
                    state.workers = v
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_CORPUS_WORKERS).contains(n))
                }
                _ => {}
            }
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(n: usize) -> Vec<Passage> {
        (0..n)
            .map(|i| Passage {
                id: format!("d{i}"),
                title: String::new(),
                text: format!("passage {i}"),
            })
            .collect()
    }

    fn ranking(order: &[usize]) -> Ranking {
        order
            .iter()
            .enumerate()
            .map(|(i, d)| (*d, 1.0 - i as f32 / 10.0))
            .collect()
    }

    #[test]
    fn moves_count_places_between_columns() {
        let a = ranking(&[0, 1, 2, 3]);
        let b = ranking(&[2, 0, 1, 3]);
        assert_eq!(movement(&a, &b, 0), Move::Up(2));
        assert_eq!(movement(&a, &b, 1), Move::Down(1));
        assert_eq!(movement(&a, &b, 3), Move::Same);
        assert_eq!(Move::Up(2).label(), "▲2");
    }

    #[test]
    fn live_metrics_follow_judgment_edits() {
        let c = corpus(5);
        let rankings: BTreeMap<Column, Ranking> = [
            (Column::Query, ranking(&[0, 1, 2, 3, 4])),
            (Column::Instructed, ranking(&[1, 0, 2, 3, 4])),
            (Column::Reversed, ranking(&[2, 3, 4, 0, 1])),
        ]
        .into();
        let mut j = Judgments::default();
        // Nothing judged: metrics of each column are 0, no instruction metric is defined.
        let m = live_metrics(&rankings, &c, &j);
        assert!(m.p_mrr.is_none() && m.wise.is_none());
        // d1 relevant alone and with the instruction (gold), d0 only alone (p-MRR document).
        j.toggle(Mode::Og, "d0");
        j.toggle(Mode::Og, "d1");
        j.toggle(Mode::Changed, "d1");
        let m = live_metrics(&rankings, &c, &j);
        // Instructed column: d1 at rank 1 -> MRR 1.
        assert_eq!(m.columns[&Column::Instructed][2], 1.0);
        // d0 moved from rank 1 to 2: p-MRR = 1 - 1/2 = 0.5.
        assert!((m.p_mrr.unwrap() - 0.5).abs() < 1e-12);
        // d1: R_ori 2 (N = 2), R_ins 1, R_rev 5 -> WISE 1, complies for SICR.
        assert_eq!(m.wise, Some(1.0));
        assert_eq!(m.sicr, Some(1.0));
        // Un-judging d1 under the instruction changes the numbers.
        j.toggle(Mode::Changed, "d1");
        let m2 = live_metrics(&rankings, &c, &j);
        assert_eq!(m2.columns[&Column::Instructed][2], 0.0);
        assert!(m2.wise.is_none());
        // Explanations agree with the live numbers.
        let e = explain_metric(Explained::PMrr, &rankings, &c, &j).unwrap();
        assert!((e.value - m2.p_mrr.unwrap()).abs() < 1e-12);
        let e = explain_metric(Explained::Ndcg(Column::Query), &rankings, &c, &j).unwrap();
        assert!((e.value - m2.columns[&Column::Query][0]).abs() < 1e-12);
    }

    #[test]
    fn rankings_of_a_previous_corpus_do_not_panic() {
        // The page switches corpus before the new rankings arrive.
        let rankings: BTreeMap<Column, Ranking> = Column::ALL
            .into_iter()
            .map(|c| (c, ranking(&[7, 0, 9])))
            .collect();
        let m = live_metrics(&rankings, &corpus(2), &Judgments::default());
        assert!(m.p_mrr.is_none());
        assert_eq!(
            to_run(&rankings[&Column::Query], &corpus(2))
                .ranked("q")
                .len(),
            1
        );
    }

    #[test]
    fn user_corpora_plain_text_and_jsonl() {
        let p = parse_user_corpus("first passage\n\n  second one  \n", "pasted").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[1].id.as_str(), p[1].text.as_str()), ("p2", "second one"));
        let j = parse_user_corpus(
            "{\"_id\": \"a\", \"text\": \"<img src=x onerror=alert(1)>\"}\n",
            "up.jsonl",
        )
        .unwrap();
        assert_eq!(j[0].text, "<img src=x onerror=alert(1)>");
        let err = parse_user_corpus("{\"_id\": \"a\"}\n", "up.jsonl").unwrap_err();
        assert!(err.starts_with("up.jsonl:1"), "{err}");
        assert!(parse_user_corpus(" \n\n", "x")
            .unwrap_err()
            .contains("empty"));
        let long = "x".repeat(MAX_PASSAGE_CHARS + 10);
        assert_eq!(
            parse_user_corpus(&long, "x").unwrap()[0].text.len(),
            MAX_PASSAGE_CHARS
        );
        // Binary junk is refused by name; so is a corpus too large for the browser.
        let junk = String::from_utf8_lossy(b"\x7fELF\x02\x01\x00\x00 junk\n\x00\xff").into_owned();
        let err = parse_user_corpus(&junk, "a.out").unwrap_err();
        assert!(err.starts_with("a.out:") && err.contains("binary"), "{err}");
        let many = "a passage\n".repeat(MAX_USER_PASSAGES + 1);
        let err = parse_user_corpus(&many, "big.txt").unwrap_err();
        assert!(
            err.starts_with("big.txt:") && err.contains("at most"),
            "{err}"
        );
    }

    #[test]
    fn demo_topics_are_corpora_of_their_own() {
        let set = engine::demo::demo_set().unwrap();
        let topics = demo_topics(&set.corpus);
        assert!(topics.len() >= 5, "{topics:?}");
        assert_eq!(
            topics.iter().map(|(_, n)| n).sum::<usize>(),
            set.corpus.len()
        );
        let (topic, n) = &topics[0];
        let part = demo_corpus(&set.corpus, topic).unwrap();
        assert_eq!(part.len(), *n);
        assert!(part.iter().all(|p| p.id.starts_with(&format!("{topic}-"))));
        assert_eq!(
            demo_corpus(&set.corpus, "demo").unwrap().len(),
            set.corpus.len()
        );
        assert!(demo_corpus(&set.corpus, "no-such-topic").is_none());
        assert!(demo_corpus(&set.corpus, "custom").is_none());
    }

    #[test]
    fn url_state_round_trips_odd_text() {
        let s = UrlState {
            corpus: "demo".into(),
            qid: "q01".into(),
            query: "naïve & \"quoted\" + 100% 東京 🚀".into(),
            instruction: "only a=b?c#d".into(),
            reversed: String::new(),
            model: String::new(),
            backend: "cpu".into(),
            teach: true,
            train: true,
            cpu_f32: true,
            workers: Some(2),
        };
        let qs = s.to_query_string();
        assert!(!qs.contains(' ') && !qs.contains('#') && !qs.contains("r="));
        assert_eq!(UrlState::from_query_string(&format!("?{qs}")), s);
        // Broken escapes and unknown keys do not fail.
        let t = UrlState::from_query_string("q=50%&x=1&i=%zz%41");
        assert_eq!((t.query.as_str(), t.instruction.as_str()), ("50%", "%zzA"));
        // Only the two backends the page has are taken from a URL.
        assert_eq!(
            UrlState::from_query_string("backend=webgpu").backend,
            "webgpu"
        );
        assert_eq!(UrlState::from_query_string("backend=cuda").backend, "");
        // int8 on the CPU unless the URL asks for f32; the default is not written.
        assert!(!UrlState::from_query_string("precision=int8").cpu_f32);
        assert!(!UrlState::default().to_query_string().contains("precision"));
        assert!(UrlState::from_query_string("train=1").train);
        assert!(!UrlState::from_query_string("train=0").train);
        // Worker counts outside 1..=MAX_CORPUS_WORKERS are the machine's choice.
        assert_eq!(UrlState::from_query_string("workers=1").workers, Some(1));
        for bad in ["workers=0", "workers=9", "workers=two", "workers="] {
            assert_eq!(UrlState::from_query_string(bad).workers, None, "{bad}");
        }
    }
}
