//! Parity with sentence-transformers: embeddings of varied texts (truncation, unicode, CJK,
//! emoji, whitespace oddities, literal special tokens) must match the golden file written by
//! `tests/golden/make_golden.py` with cosine >= 0.9999 each.

use crate::common::{cosine, cpu_encoder, golden};

#[test]
fn embeddings_match_sentence_transformers() {
    let encoder = cpu_encoder();
    let records = golden("minilm_golden.json");
    assert!(
        records.len() >= 50,
        "the golden file must hold at least 50 texts"
    );
    let texts: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
    let got = encoder.encode(&texts).unwrap();
    let mut worst = (1.0f64, String::new());
    for (i, r) in records.iter().enumerate() {
        let c = cosine(got.row(i), &r.embedding);
        if c < worst.0 {
            worst = (c, r.text.chars().take(40).collect());
        }
        assert!(
            c >= 0.9999,
            "text {i} {:?}: cosine {c}",
            r.text.chars().take(60).collect::<String>()
        );
        let max_diff = got
            .row(i)
            .iter()
            .zip(&r.embedding)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(max_diff < 1e-3, "text {i}: max abs diff {max_diff}");
    }
    println!("worst cosine {:.8} for {:?}", worst.0, worst.1);
}

#[test]
fn token_counts_match_the_reference_tokenizer() {
    let encoder = cpu_encoder();
    for r in golden("minilm_golden.json") {
        let ids = encoder.tokenizer().encode(&[r.text.as_str()]).unwrap();
        assert_eq!(
            ids[0].len(),
            r.token_count,
            "token count of {:?}",
            r.text.chars().take(60).collect::<String>()
        );
    }
}

#[test]
fn long_texts_are_truncated_at_max_seq_length() {
    let encoder = cpu_encoder();
    assert_eq!(encoder.config().max_seq_length, 256);
    let long = "word ".repeat(1000);
    let ids = encoder.tokenizer().encode(&[long.as_str()]).unwrap();
    assert_eq!(ids[0].len(), 256);
}
