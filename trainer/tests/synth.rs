//! `trainer synth llm` end to end against a stub OpenAI-compatible server on 127.0.0.1 that
//! answers each prompt by its task line: retries after a server error, strict parsing with
//! rejects counted and logged, the judge's validation dropping a record, `None` answers
//! dropped, and a second run served entirely from the cache.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{read_lines, refused, s, succeeded, trainer, write_file};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

fn tmp(name: &str) -> PathBuf {
    crate::common::tmp("synth", name)
}

fn field<'a>(prompt: &'a str, label: &str) -> &'a str {
    prompt
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{label}: ")))
        .unwrap_or("")
}

/// The stub's answer to one prompt.
fn answer(prompt: &str) -> String {
    let task = prompt.lines().next().unwrap_or("");
    let query = field(prompt, "Query");
    if task.contains("instruction-generation") {
        if query.contains("garbled") {
            return "I cannot decide.".into();
        }
        return "Instruction: Only answers for beginners.\nextra line that must be cut".into();
    }
    if task.contains("instruction-poisoning") {
        return "Instruction: Only answers for experts.".into();
    }
    if task.contains("query-poisoning") {
        return format!("Query: {query} in winter");
    }
    if task.contains("passage-generation") {
        return format!(
            "Passage: Written for ({}) about ({query}).\nSecond line.",
            field(prompt, "Instruction")
        );
    }
    if task.contains("relevance-validation") {
        let instruction = field(prompt, "Instruction");
        // Candidates are "[k] text" lines.
        let candidates: Vec<(usize, &str)> = prompt
            .lines()
            .filter_map(|l| {
                let rest = l.strip_prefix('[')?;
                let (k, text) = rest.split_once("] ")?;
                Some((k.parse().ok()?, text))
            })
            .collect();
        let intended = |c: &&(usize, &str)| {
            if query.contains("winter") {
                c.1.contains("winter)")
            } else if instruction.contains("experts") {
                c.1.contains("(Only answers for experts.)")
            } else {
                c.1.starts_with("Original passage") && c.1.contains(query)
            }
        };
        let pick = candidates.iter().find(intended).map(|c| c.0).unwrap_or(1);
        if query.contains("tricky") {
            // A wrong pick: the record must be dropped.
            let wrong = candidates
                .iter()
                .find(|c| !intended(c))
                .map(|c| c.0)
                .unwrap_or(1);
            return format!("Answer: {wrong}");
        }
        return format!("Answer: {pick}");
    }
    if task.contains("complementary-instruction") {
        if query.contains("impossible") {
            return "No way.\n<answer>None</answer>".into();
        }
        return "Reasoning...\n<answer><new_instruction>Only the excluded one, please.</new_instruction></answer>".into();
    }
    "unknown task".into()
}

/// Serves chat completions until the test ends; the first request gets an HTTP 500.
fn stub() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).unwrap();
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let (status, payload) = if n == 0 {
                (
                    "500 Internal Server Error",
                    "{\"error\":\"try again\"}".to_string(),
                )
            } else {
                let request: Value = serde_json::from_slice(&body).unwrap();
                let prompt = request["messages"][0]["content"].as_str().unwrap_or("");
                let text = answer(prompt);
                (
                    "200 OK",
                    json!({"choices": [{"message": {"role": "assistant", "content": text}}]})
                        .to_string(),
                )
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
                payload.len()
            );
        }
    });
    (url, count)
}

/// The arguments of `trainer synth llm` that run the pipeline `name` from `input` into `output`.
fn pipeline<'a>(name: &'a str, input: &'a Path, output: &'a Path) -> [&'a str; 6] {
    [
        "--pipeline",
        name,
        "--input",
        s(input),
        "--output",
        s(output),
    ]
}

fn synth(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["synth", "llm", "--base-url", url, "--concurrency", "3"])
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
}

#[test]
fn inf_ir_pipeline_validates_caches_and_counts_rejects() {
    let (url, count) = stub();
    let dir = tmp("inf-ir");
    let seeds = [
        json!({"query": "bread baking", "positive": "Original passage about bread baking."}),
        json!({"query": "tricky topic", "positive": "Original passage about a tricky topic."}),
        json!({"query": "garbled topic", "positive": "Original passage about garbling."}),
        json!({"query": "solar power", "positive": "Original passage about solar power."}),
    ];
    let seeds: String = seeds.iter().map(|s| s.to_string() + "\n").collect();
    let input = write_file(&dir, "seeds.jsonl", &seeds);
    let output = dir.join("out.jsonl");
    let args = [
        &pipeline("inf-ir", &input, &output)[..],
        &["--distractors", "1"],
    ]
    .concat();
    let out = synth(&url, &args);
    let err = succeeded(&out);
    let records = read_lines(&output);
    assert_eq!(records.len(), 2, "{err}");
    assert_eq!(records[0]["query_positive"], "bread baking");
    assert_eq!(records[1]["query_positive"], "solar power");
    let r = &records[0];
    assert_eq!(
        r["instruction_positive"], "Only answers for beginners.",
        "cut at the first newline"
    );
    assert_eq!(r["instruction_negative"], "Only answers for experts.");
    assert_eq!(r["query_negative"], "bread baking in winter");
    assert!(r["hard_negative_document_1"]
        .as_str()
        .unwrap()
        .contains("experts"));
    assert!(r["hard_negative_document_2"]
        .as_str()
        .unwrap()
        .contains("Second line"));
    // Every record parses as a training record.
    for r in &records {
        engine::training::TrainingRecord::parse(&r.to_string()).unwrap();
    }
    assert!(
        err.contains("2 rejected answers") && err.contains("1 failed validation"),
        "{err}"
    );
    let rejects =
        std::fs::read_to_string(PathBuf::from(format!("{}.rejects.jsonl", output.display())))
            .unwrap();
    // The garbled answer was asked for twice (a second chance), both rejected and logged.
    assert_eq!(rejects.lines().count(), 2);
    assert!(rejects.contains("no 'Instruction:' line"));

    // Resume: every answer comes from the cache, nothing new is asked.
    let before = count.load(Ordering::SeqCst);
    std::fs::remove_file(&output).unwrap();
    let again = synth(&url, &args);
    assert!(again.status.success());
    assert_eq!(
        count.load(Ordering::SeqCst),
        before,
        "the second run paid again"
    );
    assert_eq!(read_lines(&output), records);
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 requests"));
}

#[test]
fn dual_view_pipeline_drops_none_and_bad_input_is_refused() {
    let (url, count) = stub();
    let dir = tmp("dual-view");
    let good = json!({"query": "rust lists", "instruction": "Only beginner material.", "positive": "Vec basics.", "negatives": [], "instruction_negatives": ["Advanced allocator internals."]});
    let none = json!({"query": "impossible", "instruction": "x", "positive": "a", "negatives": [], "instruction_negatives": ["b", "c"]});
    let input = write_file(&dir, "records.jsonl", &format!("{good}\n{none}\n"));
    let output = dir.join("out.jsonl");
    let args = pipeline("dual-view", &input, &output);
    let err = succeeded(&synth(&url, &args));
    let records = read_lines(&output);
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0]["instruction_reversed"],
        "Only the excluded one, please."
    );
    assert!(err.contains("1 None answers"), "{err}");
    let t = engine::training::TrainingRecord::parse(&records[0].to_string())
        .unwrap()
        .tuples(30);
    assert_eq!(t[1].positive, "Advanced allocator internals.");

    // A record without instruction negatives is refused before any request.
    let before = count.load(Ordering::SeqCst);
    std::fs::write(
        &input,
        format!(
            "{good}\n{}\n",
            json!({"query": "q", "instruction": "i", "positive": "p", "negatives": []})
        ),
    )
    .unwrap();
    let bad = synth(&url, &args);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        err.contains("records.jsonl:2:") && err.contains("instruction_negatives"),
        "{err}"
    );
    assert_eq!(count.load(Ordering::SeqCst), before);
}

/// A small evaluation-set folder: 10 queries, each with one relevant passage carrying a unique
/// marker word, and unjudged on-topic passages.
fn small_set(dir: &Path) {
    let topics = [
        "sourdough starter",
        "solar panel output",
        "marathon pacing",
        "tomato blight",
        "credit card interest",
        "cat kneading",
        "garlic planting",
        "heat pump noise",
        "bicycle chain wear",
        "passport renewal",
    ];
    let mut corpus = String::new();
    let mut queries = String::new();
    let mut qrels = String::from("query-id\tcorpus-id\tscore\n");
    for (i, t) in topics.iter().enumerate() {
        corpus.push_str(&format!(
            "{}\n{}\n",
            json!({"_id": format!("p{i}"), "title": format!("About {t}"), "text": format!(
                "Marker{i} explains {t} in detail. In 2019 a survey of {t} found 40 percent of people get it wrong. \
                 The key point about {t} is patience and regular checks. Experts agree that {t} rewards care.")}),
            json!({"_id": format!("n{i}"), "title": "", "text": format!(
                "A short history of {t} and its famous names. It has nothing on how to do it. People still talk about {t}.")}),
        ));
        queries.push_str(&format!(
            "{}\n",
            json!({"_id": format!("q{i}"), "text": format!("how does {t} work")})
        ));
        qrels.push_str(&format!("q{i}\tp{i}\t1\n"));
    }
    std::fs::create_dir_all(dir.join("qrels")).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
    std::fs::write(dir.join("qrels/og.tsv"), qrels).unwrap();
}

/// A fresh folder `name` with `small_set` in its subfolder `set`: `(folder, set)`.
fn with_small_set(name: &str) -> (PathBuf, PathBuf) {
    let dir = tmp(name);
    let set = dir.join("set");
    small_set(&set);
    (dir, set)
}

/// `trainer synth renderings` of `set` into `out/train.jsonl` and `out/heldout`, 30% held out.
fn renderings(set: &Path, out: &Path, extra: &[&str]) -> Output {
    let (train, heldout) = (out.join("train.jsonl"), out.join("heldout"));
    let args = [
        &[
            "synth",
            "renderings",
            "--set",
            s(set),
            "--output",
            s(&train),
        ][..],
        &["--heldout", s(&heldout), "--heldout-fraction", "0.3"],
        &["--per-query", "2"],
        extra,
    ];
    trainer(&args.concat())
}

#[test]
fn renderings_keep_every_positive_relevant_and_hold_out_the_same_queries() {
    let (dir, set) = with_small_set("renderings");
    succeeded(&renderings(&set, &dir.join("a"), &[]));
    let records = read_lines(&dir.join("a/train.jsonl"));
    let heldout = engine::EvalSet::load(&dir.join("a/heldout/instructions")).unwrap();
    assert!(heldout.qrels.len() == 3, "og, changed and reversed qrels");
    let plain = engine::EvalSet::load(&dir.join("a/heldout/retrieval")).unwrap();
    let held: std::collections::BTreeSet<String> =
        plain.queries.iter().map(|q| q.text.clone()).collect();
    assert!(
        !held.is_empty() && held.len() < 10,
        "{} held out",
        held.len()
    );
    let (mut dual, mut replay) = (0, 0);
    for r in &records {
        let query = r["query"]
            .as_str()
            .or(r["query_positive"].as_str())
            .unwrap();
        assert!(
            !held.contains(query),
            "held-out query {query} in the training data"
        );
        let i: usize = query
            .split_whitespace()
            .find_map(|w| {
                [
                    "sourdough",
                    "solar",
                    "marathon",
                    "tomato",
                    "credit",
                    "cat",
                    "garlic",
                    "heat",
                    "bicycle",
                    "passport",
                ]
                .iter()
                .position(|t| *t == w)
            })
            .unwrap();
        let marker = format!("Marker{i}");
        if r["instruction"].as_str() == Some("") {
            replay += 1;
            assert!(r["positive"].as_str().unwrap().contains(&marker));
            continue;
        }
        dual += 1;
        // Both views' positives are versions of the relevant passage, keeping its answer
        // sentence (the first one, which shares the most words with the query and carries the
        // marker), never the unjudged passage.
        for p in [&r["positive"], &r["instruction_negatives"][0]] {
            let p = p.as_str().unwrap();
            assert!(p.contains(&marker) && !p.contains("famous names"), "{p}");
        }
        assert_ne!(r["instruction"], r["instruction_reversed"]);
        for n in r["negatives"].as_array().unwrap() {
            assert!(
                !n.as_str().unwrap().contains("Marker"),
                "a hard negative is a relevant passage"
            );
        }
    }
    assert!(
        dual > 0 && replay == 10 - held.len(),
        "{dual} dual-view, {replay} replay"
    );
    // Another phrasing mix holds out exactly the same queries.
    let b = renderings(
        &set,
        &dir.join("b"),
        &["--exclusion-share", "0", "--contrast-share", "1"],
    );
    succeeded(&b);
    let retrieval = |d: &str| {
        std::fs::read_to_string(dir.join(d).join("heldout/retrieval/queries.jsonl")).unwrap()
    };
    assert_eq!(retrieval("a"), retrieval("b"));
    // Shares that add up to more than 1 are refused.
    let bad = renderings(
        &set,
        &dir.join("c"),
        &["--exclusion-share", "0.8", "--contrast-share", "0.5"],
    );
    refused(&bad, &["--contrast-share"]);
}

#[test]
fn anchors_pair_written_instructions_with_on_topic_passages_and_skip_excluded_queries() {
    let (dir, set) = with_small_set("anchors");
    // Instructions found by the query's text, by the id's prefix, and one for no query.
    let instructions = dir.join("instructions.jsonl");
    let lines = [
        json!({"_id": "x_1", "text": "I bake at home and want simple advice.", "metadata": {"origin_query": "How does sourdough starter work "}}),
        json!({"_id": "x_2", "text": "I run a bakery and need the science.", "metadata": {"origin_query": "how does sourdough starter work"}}),
        json!({"_id": "q1_1", "text": "I install panels for a living.", "metadata": {}}),
        json!({"_id": "q2_1", "text": "I am training for my first race.", "metadata": {}}),
        json!({"_id": "zz_1", "text": "Matches nothing.", "metadata": {"origin_query": "no such query"}}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&instructions, text.join("\n") + "\n").unwrap();
    // The marathon query is held out.
    let heldout = dir.join("heldout");
    std::fs::create_dir_all(&heldout).unwrap();
    std::fs::write(
        heldout.join("queries.jsonl"),
        json!({"_id": "other-id", "text": "how does marathon pacing work"}).to_string() + "\n",
    )
    .unwrap();
    let out = dir.join("anchors.jsonl");
    succeeded(&anchors(&[
        &["--set", s(&set), "--instructions", s(&instructions)][..],
        &[
            "--exclude",
            s(&heldout),
            "--candidates",
            "3",
            "--per-query",
            "1",
        ],
        &["--output", s(&out)],
    ]));
    let records = read_lines(&out);
    // One per query at most: sourdough (two instructions, one kept) and solar; marathon held out.
    assert_eq!(records.len(), 2, "{records:?}");
    for r in &records {
        let query = r["query"].as_str().unwrap();
        assert!(!query.contains("marathon"));
        let i = if query.contains("sourdough") { 0 } else { 1 };
        assert!(r["positive"]
            .as_str()
            .unwrap()
            .contains(&format!("Marker{i}")));
        let negatives = r["negatives"].as_array().unwrap();
        assert_eq!(negatives.len(), 2);
        // The query's own unjudged passage is the most similar one.
        assert!(negatives[0].as_str().unwrap().contains("famous names"));
        assert!(r["instruction_reversed"].is_null());
    }
    // No instruction for any query: a clear error, no file.
    let none = dir.join("none.jsonl");
    std::fs::write(&none, lines[4].to_string() + "\n").unwrap();
    let never = dir.join("never.jsonl");
    let run = anchors(&[&[
        "--set",
        s(&set),
        "--instructions",
        s(&none),
        "--output",
        s(&never),
    ]]);
    refused(&run, &["no instruction matches"]);
    assert!(!dir.join("never.jsonl").exists());
}

/// `trainer synth anchors` with the concatenated `args`.
fn anchors(args: &[&[&str]]) -> Output {
    trainer(&[&["synth", "anchors"][..], &args.concat()].concat())
}

/// `trainer synth judged --set SET --output OUT EXTRA...`.
fn synth_judged(set: &Path, out: &Path, extra: &[&str]) -> Output {
    trainer(
        &[
            &["synth", "judged", "--set", s(set), "--output", s(out)][..],
            extra,
        ]
        .concat(),
    )
}

/// `trainer synth judged` on the demo set: every relevant passage of both polarities is a
/// positive once, one replay per query text, and the lines read back as training records.
#[test]
fn synth_judged_makes_both_polarities_with_every_relevant_passage_as_a_positive() {
    let dir = tmp("judged");
    let out = dir.join("train.jsonl");
    let demo = crate::common::demo_set();
    succeeded(&synth_judged(&demo, &out, &[]));
    let set = engine::EvalSet::load(&demo).unwrap();
    let relevant = |mode: engine::Mode, q: &str| -> std::collections::BTreeSet<String> {
        set.qrels[&mode]
            .get(q)
            .into_iter()
            .flatten()
            .filter(|(_, &l)| l > 0.0)
            .map(|(d, _)| d.clone())
            .collect()
    };
    let text = |id: &str| {
        set.corpus
            .iter()
            .find(|p| p.id == id)
            .unwrap()
            .encoder_text()
    };
    let lines = read_lines(&out);
    let mut expected_dual = 0;
    for q in &set.queries {
        let (c, r) = (
            relevant(engine::Mode::Changed, &q.id),
            relevant(engine::Mode::Reversed, &q.id),
        );
        let (kept, excluded): (Vec<_>, Vec<_>) =
            (c.difference(&r).collect(), r.difference(&c).collect());
        if kept.is_empty() || excluded.is_empty() {
            continue;
        }
        expected_dual += kept.len().max(excluded.len());
        let records: Vec<&Value> = lines
            .iter()
            .filter(|l| {
                l["query"] == q.text.as_str()
                    && Some(l["instruction"].as_str().unwrap()) == q.instruction_changed.as_deref()
            })
            .collect();
        // The texts of one field of every record.
        let field = |f: fn(&Value) -> &Value| -> std::collections::BTreeSet<String> {
            records
                .iter()
                .map(|l| f(l).as_str().unwrap().to_string())
                .collect()
        };
        let want = |ids: &[&String]| -> std::collections::BTreeSet<String> {
            ids.iter().map(|d| text(d)).collect()
        };
        assert_eq!(field(|l| &l["positive"]), want(&kept), "{}", q.id);
        let reversed_positives = field(|l| &l["instruction_negatives"][0]);
        assert_eq!(reversed_positives, want(&excluded), "{}", q.id);
        assert!(records
            .iter()
            .all(|l| l["instruction_reversed"] == q.instruction_reversed.as_deref().unwrap()));
    }
    let dual = lines
        .iter()
        .filter(|l| l.get("instruction_reversed").is_some())
        .count();
    assert_eq!(dual, expected_dual);
    let texts: std::collections::BTreeSet<&str> =
        set.queries.iter().map(|q| q.text.as_str()).collect();
    let replay = lines.iter().filter(|l| l["instruction"] == "").count();
    assert_eq!(replay, texts.len(), "one replay record per query text");
    assert_eq!(lines.len(), dual + replay);
    // The trainer reads the file as it is.
    let file = engine::data::records::RecordFile::open(&out, false, &mut |_, _| {}).unwrap();
    assert_eq!(file.len(), lines.len());
}

/// Leaving every query out is an error that names the set, with nothing written.
#[test]
fn synth_judged_with_every_query_excluded_fails_without_writing() {
    let dir = tmp("judged-excluded");
    let out = dir.join("train.jsonl");
    let demo = crate::common::demo_set();
    let o = synth_judged(&demo, &out, &["--exclude", s(&demo)]);
    refused(&o, &["no training record", "demo"]);
    assert!(!out.exists());
    let o = synth_judged(&demo, &out, &["--positives", "all"]);
    refused(&o, &["'every' or 'zip'"]);
}

#[test]
fn passage_anchors_take_passages_as_queries_with_their_nearest_others_as_candidates() {
    let (dir, set) = with_small_set("passage-anchors");
    let out = dir.join("anchors.jsonl");
    let both_sets = ["--set", s(&set), "--set", s(&set), "--candidates", "3"];
    let passages = |extra: &[&str]| anchors(&[&both_sets, &["--output", s(&out)], extra]);
    succeeded(&passages(&["--passages-as-queries", "6"]));
    let records = read_lines(&out);
    assert_eq!(records.len(), 12, "6 passages of each --set");
    let texts = corpus_texts(&set);
    let embeddings = base_embeddings(&dir, &texts);
    for r in &records {
        assert_eq!(r["instruction"], "");
        let query = r["query"].as_str().unwrap();
        let q = texts.iter().position(|t| t == query);
        assert!(q.is_some(), "the query is a passage: {query}");
        let candidates = anchor_candidates(r);
        assert!(
            !candidates.contains(&query),
            "a passage is not its own candidate"
        );
        // The candidates are the passages nearest to the query passage, nearest first.
        let others: Vec<usize> = (0..texts.len()).filter(|&o| Some(o) != q).collect();
        let nearest = nearest_texts(&embeddings[q.unwrap()], &others, &texts, &embeddings, 3);
        assert_eq!(candidates, nearest, "{query}");
    }
    // Written instructions and passages as queries are one or the other.
    let both = passages(&["--passages-as-queries", "6", "--instructions", "x.jsonl"]);
    assert!(!both.status.success());
}

/// With far candidates an anchor keeps its nearest passages and draws the rest from the base
/// model's ranks after them, down to --far-depth, in rank order.
#[test]
fn far_candidates_keep_the_nearest_and_draw_the_rest_from_deeper_ranks() {
    let (dir, set) = with_small_set("far-anchors");
    let out = dir.join("anchors.jsonl");
    let base = ["--set", s(&set), "--passages-as-queries", "10"];
    let run =
        |extra: &[&str]| anchors(&[&base, &["--candidates", "4", "--output", s(&out)], extra]);
    succeeded(&run(&["--far-candidates", "2", "--far-depth", "10"]));
    let records = read_lines(&out);
    assert_eq!(records.len(), 10);
    let texts = corpus_texts(&set);
    let embeddings = base_embeddings(&dir, &texts);
    let mut past_the_nearest = 0;
    for r in &records {
        let query = r["query"].as_str().unwrap();
        let q = texts.iter().position(|t| t == query).expect("a passage");
        let others: Vec<usize> = (0..texts.len()).filter(|&o| o != q).collect();
        let ranked = nearest_texts(&embeddings[q], &others, &texts, &embeddings, 10);
        let candidates = anchor_candidates(r);
        assert_eq!(candidates.len(), 4, "{query}");
        assert_eq!(
            candidates[..2],
            ranked[..2],
            "the two nearest stay: {query}"
        );
        let ranks: Vec<usize> = candidates[2..]
            .iter()
            .map(|c| ranked.iter().position(|t| t == c).expect("within rank 10"))
            .collect();
        assert!(ranks[0] >= 2 && ranks[0] < ranks[1], "{ranks:?}");
        past_the_nearest += ranks.iter().filter(|&&r| r >= 4).count();
    }
    assert!(
        past_the_nearest > 0,
        "no far candidate lies past the nearest 4"
    );
    // Drawn from a stream of their own: the same passages are anchors, in the same order, as
    // without far candidates; and the same seed draws the same candidates.
    let queries = |records: &[Value]| -> Vec<String> {
        records.iter().map(|r| r["query"].to_string()).collect()
    };
    succeeded(&run(&[]));
    assert_eq!(queries(&read_lines(&out)), queries(&records));
    succeeded(&run(&["--far-candidates", "2", "--far-depth", "10"]));
    assert_eq!(read_lines(&out), records);
    for (bad, says) in [
        (
            &["--far-candidates", "4"][..],
            "--far-candidates must be below --candidates",
        ),
        (
            &["--far-candidates", "2", "--far-depth", "4"][..],
            "--far-depth above --candidates",
        ),
    ] {
        refused(&run(bad), &[says]);
    }
    let instructions = write_file(
        &dir,
        "instructions.jsonl",
        "{\"_id\": \"q1_1\", \"text\": \"x\"}\n",
    );
    refused(
        &anchors(&[
            &["--set", s(&set), "--instructions", s(&instructions)],
            &["--far-candidates", "1", "--output", s(&out)],
        ]),
        &["--far-candidates applies to anchors with no instruction"],
    );
}

/// Written queries are anchors over the passages of every `--set` joined (two sets whose ids
/// overlap), alone or added to the passage anchors; a bad file is refused naming its line.
#[test]
fn written_query_anchors_rank_the_passages_of_every_set_joined() {
    let (dir, set) = with_small_set("written-query-anchors");
    let demo = crate::common::demo_set();
    let out = dir.join("anchors.jsonl");
    let queries = [
        "My kitchen sourdough starter smells of nail varnish after a week and the loaves stay flat; I feed it once a day with white flour.",
        "We are thinking about putting solar panels on the roof of our terraced house and want to know what affects the savings.",
        "Our old cat kneads the blanket with her paws every evening and purrs loudly; the vet says she is healthy. Why does she keep doing it?",
        "I have never written a line of code and my new job wants me to automate spreadsheets in Python; where do I start?",
    ];
    let lines: Vec<String> = queries
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"_id": format!("sq-{i}"), "text": t, "voice": "request"}).to_string())
        .collect();
    let file = write_file(&dir, "queries.jsonl", &(lines.join("\n") + "\n"));
    let sets = ["--set", s(&set), "--set", s(&demo), "--candidates", "4"];
    let run = |extra: &[&str]| anchors(&[&sets, &["--output", s(&out)], extra]);
    succeeded(&run(&["--queries", s(&file)]));
    let records = read_lines(&out);
    assert_eq!(records.len(), queries.len());
    let texts: Vec<String> = [corpus_texts(&set), corpus_texts(&demo)].concat();
    let mut embedded = texts.clone();
    embedded.extend(queries.iter().map(|q| q.to_string()));
    let embeddings = base_embeddings(&dir, &embedded);
    let passages: Vec<usize> = (0..texts.len()).collect();
    // Each written query's candidates are its 4 nearest passages of both corpora.
    let check_written = |records: &[serde_json::Value]| {
        let mut written = 0;
        for r in records {
            let query = r["query"].as_str().unwrap();
            let Some(q) = queries.iter().position(|t| *t == query) else {
                continue;
            };
            written += 1;
            assert_eq!(r["instruction"], "");
            let nearest = nearest_texts(
                &embeddings[texts.len() + q],
                &passages,
                &texts,
                &embeddings,
                4,
            );
            assert_eq!(anchor_candidates(r), nearest, "{query}");
        }
        assert_eq!(written, queries.len(), "one anchor for every written query");
    };
    check_written(&records);
    let from_both_sets = |set: &Path| {
        corpus_texts(set).iter().any(|t| {
            records
                .iter()
                .any(|r| anchor_candidates(r).contains(&t.as_str()))
        })
    };
    assert!(from_both_sets(&set), "{records:#?}");
    assert!(from_both_sets(&demo), "{records:#?}");
    // Added to the passage anchors: 2 of each set's passages and the 4 queries, which rank
    // the corpora (kept from the passage anchors' encoding) exactly as above.
    succeeded(&run(&["--queries", s(&file), "--passages-as-queries", "2"]));
    let combined = read_lines(&out);
    assert_eq!(combined.len(), 2 + 2 + queries.len());
    check_written(&combined);
    // A query with no text and a repeated id are refused, naming the file and the line.
    let empty = write_file(
        &dir,
        "empty.jsonl",
        &format!("{}\n{{\"_id\": \"x\", \"text\": \" \"}}\n", lines[0]),
    );
    refused(
        &run(&["--queries", s(&empty)]),
        &["empty.jsonl:2", "no text"],
    );
    let twice = write_file(
        &dir,
        "twice.jsonl",
        &format!("{}\n{}\n", lines[0], lines[0]),
    );
    refused(&run(&["--queries", s(&twice)]), &["twice.jsonl:2"]);
    // Neither instructions, passages nor queries: nothing to anchor.
    assert!(!anchors(&[&sets, &["--output", s(&out)]]).status.success());
}

/// The encoder text (title and text) of every passage of the set folder `set`, in file order.
fn corpus_texts(set: &Path) -> Vec<String> {
    read_lines(&set.join("corpus.jsonl"))
        .iter()
        .map(|p| {
            let (title, text) = (
                p["title"].as_str().unwrap_or(""),
                p["text"].as_str().unwrap(),
            );
            if title.is_empty() {
                text.to_string()
            } else {
                format!("{title} {text}")
            }
        })
        .collect()
}

/// The base model's embeddings of `texts` (`trainer embed`).
fn base_embeddings(dir: &Path, texts: &[String]) -> Vec<Vec<f32>> {
    let lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"_id": i.to_string(), "text": t}).to_string())
        .collect();
    let input = write_file(dir, "texts.jsonl", &(lines.join("\n") + "\n"));
    let embedded = dir.join("embedded.jsonl");
    succeeded(&trainer(&[
        "embed",
        "--input",
        s(&input),
        "--output",
        s(&embedded),
    ]));
    read_lines(&embedded)
        .iter()
        .map(|l| serde_json::from_value(l["embedding"].clone()).unwrap())
        .collect()
}

/// The `depth` texts among `among` (indices into `texts` and `embeddings`) nearest to `query`.
fn nearest_texts<'a>(
    query: &[f32],
    among: &[usize],
    texts: &'a [String],
    embeddings: &[Vec<f32>],
    depth: usize,
) -> Vec<&'a str> {
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let mut scored: Vec<(f32, &str)> = among
        .iter()
        .map(|&o| (dot(query, &embeddings[o]), texts[o].as_str()))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.iter().take(depth).map(|(_, t)| *t).collect()
}

/// An anchor record's candidates, first (the positive) to last.
fn anchor_candidates(record: &Value) -> Vec<&str> {
    std::iter::once(record["positive"].as_str().unwrap())
        .chain(
            record["negatives"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap()),
        )
        .collect()
}
