//! Readers of the shared formats: clear `file:line` errors for malformed input.

use std::path::Path;

use engine::data::{blank_lines_inside, parse_corpus, parse_jsonl, parse_qrels, Query};
use engine::{EvalSet, Mode};

use crate::common::assert_err;

fn p() -> &'static Path {
    Path::new("set/corpus.jsonl")
}

#[test]
fn corpus_reads_ids_titles_and_ignores_extra_fields() {
    let text = "{\"_id\": \"a\", \"title\": \"T\", \"text\": \"x\", \"metadata\": {}}\n\n{\"_id\": \"b\", \"text\": \"y\"}\n";
    let c = parse_corpus(text, p()).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].encoder_text(), "T x");
    assert_eq!(c[1].encoder_text(), "y");
}

#[test]
fn malformed_corpus_lines_name_file_and_line() {
    let cases = [
        (
            "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"b\"}\n",
            "set/corpus.jsonl:2",
            "missing field `text`",
        ),
        (
            "{\"_id\": \"a\", \"text\": \"x\"}\n{not json}\n",
            "set/corpus.jsonl:2",
            "key must be a string",
        ),
        (
            "{\"_id\": \"a\", \"text\": \"x\"}\n\n{\"_id\": \"a\", \"text\": \"y\"}\n",
            "set/corpus.jsonl:3",
            "duplicate id 'a'",
        ),
        (
            "{\"_id\": 5, \"text\": \"x\"}\n",
            "set/corpus.jsonl:1",
            "invalid type",
        ),
        ("\n\n", "set/corpus.jsonl: ", "empty"),
    ];
    for (text, location, problem) in cases {
        assert_err(parse_corpus(text, p()), location, &[problem]);
    }
}

#[test]
fn queries_with_optional_instructions() {
    let q: Vec<Query> = parse_jsonl(
        "{\"_id\": \"q1\", \"text\": \"t\", \"instruction_og\": \"\", \"instruction_changed\": \"c\"}\n",
        Path::new("queries.jsonl"),
    )
    .unwrap();
    assert_eq!(q[0].instruction_changed.as_deref(), Some("c"));
    assert_eq!(q[0].instruction_reversed, None);
}

#[test]
fn qrels_beir_and_trec_forms() {
    let beir = parse_qrels(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n",
        Path::new("og.tsv"),
    )
    .unwrap();
    assert_eq!(beir["q1"]["d1"], 2.0);
    assert_eq!(beir["q1"]["d2"], 0.0);
    let trec = parse_qrels("q1 0 d1 1\nq2 0 d3 0\n", Path::new("og.txt")).unwrap();
    assert_eq!(trec["q2"]["d3"], 0.0);
    // Fractional levels (BIRCO DORIS-MAE) are kept as they are.
    let graded = parse_qrels(
        "query-id\tcorpus-id\tscore\nq1\td1\t0.2857142857142857\n",
        Path::new("og.tsv"),
    )
    .unwrap();
    assert_eq!(graded["q1"]["d1"], 0.2857142857142857);
    for bad in ["high", "nan", "inf", ""] {
        let text = format!("query-id\tcorpus-id\tscore\nq1\td0\t1\nq1\td1\t{bad}\n");
        let not_a_number = parse_qrels(&text, Path::new("og.tsv"));
        assert_err(not_a_number, "og.tsv:3", &["is not a number"]);
    }
    let three_fields = parse_qrels("q1 0 d1\n", Path::new("og.txt"));
    assert_err(three_fields, "og.txt:1", &["expected 4 fields"]);
}

#[test]
fn a_line_holding_only_a_byte_order_mark_does_not_shift_later_line_numbers() {
    let text = "\u{feff}\n{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"a\", \"text\": \"y\"}\n";
    let prefix = "set/corpus.jsonl:3:";
    assert_err(parse_corpus(text, p()), prefix, &["first on line 2"]);
}

#[test]
fn blank_lines_between_records_are_found_but_not_trailing_ones() {
    let text = "{\"_id\": \"a\"}\n\n{\"_id\": \"b\"}\n \n\n";
    assert_eq!(blank_lines_inside(text), vec![2]);
    assert!(blank_lines_inside("{}\n{}\n\n").is_empty());
}

#[test]
fn qrels_refuse_negative_levels_and_a_pair_judged_twice() {
    for (text, file, says) in [
        (
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t-1\n",
            "og.tsv",
            &["negative"][..],
        ),
        (
            "q1 0 d1 1\nq2 0 d1 0\nq1 0 d1 2\n",
            "og.txt",
            &["judged twice", "line 1"],
        ),
    ] {
        assert_err(
            parse_qrels(text, Path::new(file)),
            &format!("{file}:3:"),
            says,
        );
    }
}

#[test]
fn whole_file_problems_carry_no_line_zero() {
    let msg = parse_corpus("", p()).unwrap_err().to_string();
    assert!(
        msg.starts_with("set/corpus.jsonl: ") && !msg.contains(":0"),
        "{msg}"
    );
}

#[test]
fn io_errors_say_the_system_message_once_in_an_error_chain() {
    let err = engine::data::read_text(Path::new("/nonexistent/ifir/corpus.jsonl")).unwrap_err();
    let chain = format!("{:#}", anyhow::Error::from(err));
    assert_eq!(chain.matches("No such file").count(), 1, "{chain}");
}

#[test]
fn qrels_and_candidates_naming_what_the_set_lacks_are_refused_by_file_and_line() {
    let corpus = "{\"_id\": \"d1\", \"text\": \"one\"}\n{\"_id\": \"d2\", \"text\": \"two\"}\n";
    let queries = "{\"_id\": \"q1\", \"text\": \"first\"}\n";
    let root = Path::new("set");
    let load = |og: &str, candidates: Option<&str>| {
        EvalSet::from_texts(root, corpus, queries, vec![(Mode::Og, og)], candidates)
    };
    // Consistent files load, in BEIR's and TREC's layout.
    load(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        Some("q1\td1\nq1\td2\n"),
    )
    .unwrap();
    load("q1 0 d2 1\n", None).unwrap();
    for (og, candidates, file, says) in [
        (
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq9\td1\t1\n",
            None,
            "og.tsv:3:",
            "query 'q9' is not in queries.jsonl",
        ),
        (
            "q1 0 d1 1\nq1 0 d7 0\n",
            None,
            "og.tsv:2:",
            "passage 'd7' is not in corpus.jsonl",
        ),
        (
            "q1 0 d1 1\n",
            Some("query-id\tcorpus-id\nq1\td3\n"),
            "candidates.tsv:2:",
            "passage 'd3'",
        ),
        (
            "q1 0 d1 1\n",
            Some("q2\td1\n"),
            "candidates.tsv:1:",
            "query 'q2'",
        ),
    ] {
        assert_err(load(og, candidates), "", &[file, says]);
    }
}
