//! Mutation fuzzing of every parser that reads a user's files or bytes, on stable Rust.
//!
//! Each target starts from valid inputs (seeds), applies random mutations (byte flips, cuts,
//! splices between lines and seeds, odd values: a byte-order mark, NUL, tabs, huge and negative
//! numbers, NaN, a very long line) and feeds the result to the parser. The property: the parser
//! returns (Ok or an error that names the file), it never panics. A panicking input is written to
//! `tests/fuzz-regressions/<target>/` and fails the test; every file there is replayed on each
//! run, so a fixed crash stays fixed.
//!
//! `IFIR_FUZZ_SECS` sets the time per target (default 1 s: the smoke in the test command).
//! `IFIR_FUZZ_SECS=600 cargo test --release -p engine --test tests fuzz:: -- --test-threads 1` is the
//! long run; its figures are in tests/README.md.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::bert::{random_safetensors, BertModel};
use engine::config::BertConfig;
use engine::data::{parse_candidates, parse_corpus, parse_jsonl, parse_qrels, Query};
use engine::metrics::Run;
use engine::retrieval::{write_index, IndexReader, MappedIndex};
use engine::rng::SplitMix64;
use engine::training::TrainingRecord;
use engine::{Device, Embeddings};

/// Odd values spliced into inputs.
const ODD: &[&str] = &[
    "\u{feff}",
    "\0",
    "\t",
    "\r\n",
    "-1",
    "NaN",
    "inf",
    "1e309",
    "18446744073709551616",
    "4611686018427387904",
    "0",
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\\u0000",
    "\u{10ffff}",
    "é",
    "null",
];

/// One mutation of `input`.
fn mutate(input: &[u8], seeds: &[Vec<u8>], rng: &mut SplitMix64) -> Vec<u8> {
    let mut out = input.to_vec();
    let pos = |rng: &mut SplitMix64, len: usize| rng.below(len + 1);
    for _ in 0..1 + rng.below(4) {
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let a = rng.below(out.len());
                let b = (a + 1 + rng.below(16)).min(out.len());
                out.drain(a..b);
            }
            2 => {
                let odd = ODD[rng.below(ODD.len())].as_bytes();
                let i = pos(rng, out.len());
                out.splice(i..i, odd.iter().copied());
            }
            3 => {
                // A line of another seed, or of this input, inserted at a line start.
                let other = &seeds[rng.below(seeds.len())];
                let lines: Vec<&[u8]> = other.split(|&b| b == b'\n').collect();
                let line = lines[rng.below(lines.len())];
                let starts: Vec<usize> = std::iter::once(0)
                    .chain(
                        out.iter()
                            .enumerate()
                            .filter(|(_, &b)| b == b'\n')
                            .map(|(i, _)| i + 1),
                    )
                    .collect();
                let i = starts[rng.below(starts.len())];
                let mut insert = line.to_vec();
                insert.push(b'\n');
                out.splice(i..i, insert);
            }
            4 if !out.is_empty() => {
                let i = rng.below(out.len());
                out.truncate(i);
            }
            5 => {
                let i = pos(rng, out.len());
                let long = vec![b'a' + rng.below(26) as u8; 1 + rng.below(70_000)];
                out.splice(i..i, long);
            }
            _ => {
                let i = pos(rng, out.len());
                out.insert(i, rng.below(256) as u8);
            }
        }
    }
    out
}

/// A parser under test: Ok, or a refusal's message.
type Parser<'a> = Box<dyn Fn(&[u8]) -> Result<(), String> + 'a>;

/// A fuzz target: its name, valid seeds, and the parser under test (Err = a clear refusal,
/// whose message must name `path`).
struct Target<'a> {
    name: &'static str,
    path: &'a Path,
    seeds: Vec<Vec<u8>>,
    parse: Parser<'a>,
}

fn budget() -> Duration {
    let secs = std::env::var("IFIR_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs)
}

fn regressions(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(name)
}

/// One input through the parser: None when it behaved, else what went wrong.
fn check(target: &Target, input: &[u8]) -> Option<String> {
    match catch_unwind(AssertUnwindSafe(|| (target.parse)(input))) {
        Ok(Ok(())) => None,
        Ok(Err(msg)) if msg.contains(&target.path.display().to_string()) => None,
        Ok(Err(msg)) => Some(format!("error without the file's name: {msg}")),
        Err(panic) => Some(format!(
            "panic: {}",
            panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("?")
        )),
    }
}

/// Replays the target's regressions, then fuzzes it for the budget; returns inputs run.
fn fuzz(target: Target) -> usize {
    let dir = regressions(target.name);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let input = std::fs::read(entry.path()).unwrap();
            if let Some(problem) = check(&target, &input) {
                panic!(
                    "{}: regression {}: {problem}",
                    target.name,
                    entry.path().display()
                );
            }
        }
    }
    for seed in &target.seeds {
        assert_eq!(check(&target, seed), None, "{}: a seed fails", target.name);
    }
    let mut rng = SplitMix64::new(
        std::env::var("IFIR_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(7),
    );
    let started = Instant::now();
    let mut runs = 0;
    let mut current = target.seeds[0].clone();
    while started.elapsed() < budget() {
        // Mostly mutate a seed afresh; sometimes keep mutating the last input.
        if rng.below(4) != 0 {
            current = target.seeds[rng.below(target.seeds.len())].clone();
        }
        current = mutate(&current, &target.seeds, &mut rng);
        if current.len() > 1 << 20 {
            current.truncate(1 << 20);
        }
        runs += 1;
        if let Some(problem) = check(&target, &current) {
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join(format!("crash-{runs}"));
            std::fs::write(&file, &current).unwrap();
            panic!(
                "{}: {problem} (input kept in {})",
                target.name,
                file.display()
            );
        }
    }
    eprintln!(
        "fuzz {}: {runs} inputs in {:.0} s, no crash",
        target.name,
        started.elapsed().as_secs_f64()
    );
    runs
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A target whose parser reads the input as (lossy) UTF-8 text: `parse(text, path)`.
fn text_target<'a, T, E: std::fmt::Display>(
    name: &'static str,
    path: &'a Path,
    seeds: Vec<Vec<u8>>,
    parse: impl Fn(&str, &Path) -> Result<T, E> + 'a,
) -> Target<'a> {
    Target {
        name,
        path,
        seeds,
        parse: Box::new(move |b| parse(&text(b), path).map(|_| ()).map_err(err)),
    }
}

#[test]
fn fuzz_corpus_and_query_jsonl() {
    let path = Path::new("set/corpus.jsonl");
    let corpus = include_bytes!("../demo/corpus.jsonl").to_vec();
    let titled = b"{\"_id\": \"a\", \"title\": \"T\", \"text\": \"x\"}\n".to_vec();
    fuzz(text_target(
        "corpus",
        path,
        vec![corpus, titled],
        parse_corpus,
    ));
    let queries = vec![include_bytes!("../demo/queries.jsonl").to_vec()];
    let queries_path = Path::new("set/queries.jsonl");
    fuzz(text_target(
        "queries",
        queries_path,
        queries,
        parse_jsonl::<Query>,
    ));
}

#[test]
fn fuzz_qrels_runs_and_candidates() {
    let qrels = Path::new("set/qrels/og.tsv");
    let seeds = vec![
        include_bytes!("../demo/qrels/og.tsv").to_vec(),
        b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 0.5\n".to_vec(),
    ];
    fuzz(text_target("qrels", qrels, seeds, parse_qrels));
    let run = b"q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 -3e2 t\n".to_vec();
    let path = Path::new("run.trec");
    fuzz(text_target("trec-run", path, vec![run], Run::parse_trec));
    let candidates = b"query-id\tcorpus-id\nq1\td1\nq1\td2\nq2\td3\n".to_vec();
    let path = Path::new("set/candidates.tsv");
    fuzz(text_target(
        "candidates",
        path,
        vec![candidates],
        parse_candidates,
    ));
}

#[test]
fn fuzz_training_records() {
    // Record errors carry no path (RecordFile adds file:line): any message is a refusal.
    let path = Path::new("");
    fuzz(Target {
        name: "training-record",
        path,
        seeds: vec![
            br#"{"query":"q","instruction":"i","positive":"D+","negatives":["H1"],"instruction_negatives":["N*"],"instruction_reversed":"i rev"}"#.to_vec(),
            br#"{"query_positive":"Q+","instruction_positive":"I+","document":"P+","instruction_negative":"I-","hard_negative_document_1":"P1-","query_negative":"Q-","hard_negative_document_2":"P2-"}"#.to_vec(),
        ],
        parse: Box::new(|b| TrainingRecord::parse(&text(b)).map(|_| ())),
    });
}

#[test]
fn fuzz_config_json_and_safetensors() {
    let config_path = Path::new("model/config.json");
    let config = crate::common::tiny_config(1);
    let config_json = config.to_json().into_bytes();
    fuzz(Target {
        name: "config-json",
        path: config_path,
        seeds: vec![config_json],
        parse: Box::new(|b| {
            BertConfig::from_json(b, config_path)
                .map(|_| ())
                .map_err(err)
        }),
    });
    let weights_path = Path::new("model/model.safetensors");
    let weights = random_safetensors(&config, 1).unwrap();
    let device = Device::flex();
    // The header (and the first tensor bytes) is what a parser reads; mutate that part.
    let header_len = 8 + u64::from_le_bytes(weights[..8].try_into().unwrap()) as usize;
    let (head, body) = weights.split_at(header_len.min(weights.len()));
    let body = body.to_vec();
    fuzz(Target {
        name: "safetensors",
        path: weights_path,
        seeds: vec![head.to_vec()],
        parse: Box::new(|b| {
            let mut bytes = b.to_vec();
            bytes.extend_from_slice(&body);
            BertModel::from_safetensors(&bytes, weights_path, &config, &device)
                .map(|_| ())
                .map_err(err)
        }),
    });
}

#[test]
fn fuzz_index_files() {
    let dir = crate::common::tmp_folder("fuzz-index");
    let path = dir.join("corpus.ifidx");
    let ids: Vec<String> = (0..5).map(|i| format!("d{i}")).collect();
    write_index(
        &path,
        "model",
        &ids,
        &Embeddings {
            dim: 4,
            data: vec![0.5; 20],
        },
    )
    .unwrap();
    let seed = std::fs::read(&path).unwrap();
    let input = dir.join("input.ifidx");
    fuzz(Target {
        name: "index",
        path: &input,
        seeds: vec![seed],
        parse: Box::new(|b| {
            std::fs::write(&input, b).unwrap();
            let reader = IndexReader::open(&input).map_err(err)?;
            reader.read_all().map_err(err)?;
            let mapped = MappedIndex::open(&input).map_err(err)?;
            let query = Embeddings {
                dim: mapped.header.dim,
                data: vec![0.5; mapped.header.dim],
            };
            mapped.search(&query, 3).map(|_| ()).map_err(err)
        }),
    });
    std::fs::remove_dir_all(&dir).unwrap();
}
