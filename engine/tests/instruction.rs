//! Instruction-query interaction: templates and the cross-attention module.

use crate::common;

use engine::instruction::{CrossAttentionInteraction, QueryTemplate};
use engine::model_files::CROSS_ATTENTION_WEIGHTS;
use engine::{Device, Encoder, ModelFiles};

#[test]
fn templates_join_instruction_and_query() {
    let q = "sourdough bread";
    let i = "Only forum posts.";
    assert_eq!(
        QueryTemplate::default().apply(i, q),
        "Only forum posts. sourdough bread"
    );
    assert_eq!(
        QueryTemplate::query_first().apply(i, q),
        "sourdough bread Only forum posts."
    );
    assert_eq!(
        QueryTemplate::instruct_query().apply(i, q),
        "Instruct: Only forum posts.\nQuery: sourdough bread"
    );
    let custom: QueryTemplate = "Task: {instruction} | {query}".parse().unwrap();
    assert_eq!(
        custom.apply(i, q),
        "Task: Only forum posts. | sourdough bread"
    );
    let newline: QueryTemplate = "{instruction}\\n{query}".parse().unwrap();
    assert_eq!(newline.apply(i, q), "Only forum posts.\nsourdough bread");
    // No instruction: the query alone, whatever the template.
    for t in [
        QueryTemplate::default(),
        QueryTemplate::instruct_query(),
        custom,
    ] {
        assert_eq!(t.apply("  ", q), q);
    }
    assert!("no placeholder".parse::<QueryTemplate>().is_err());
    assert_eq!(
        "query-first".parse::<QueryTemplate>().unwrap(),
        QueryTemplate::query_first()
    );
}

/// The default model's files with a cross-attention module beside them.
fn encoder_with_cross_attention(module: &CrossAttentionInteraction) -> Encoder {
    let mut files = ModelFiles::read_dir(common::model_dir()).unwrap();
    files.insert(CROSS_ATTENTION_WEIGHTS, module.to_safetensors().unwrap());
    Encoder::from_files(&files, &Device::flex()).unwrap()
}

#[test]
fn cross_attention_uses_the_instruction_and_round_trips_its_weights() {
    let device = Device::flex();
    let plain_encoder = common::cpu_encoder();
    assert_eq!(plain_encoder.interaction().name(), "concat");
    let module = CrossAttentionInteraction::identity(plain_encoder.dim(), &device);
    let mut enc = encoder_with_cross_attention(&module);
    assert_eq!(enc.interaction().name(), "cross-attention");
    // A template does not replace a trained module.
    assert!(!enc.use_template(QueryTemplate::query_first()));
    let q = "sourdough bread recipe";
    let pairs = [
        ("Only forum posts.", q),
        ("Only news articles from 2019.", q),
        ("", q),
    ];
    let out = enc.encode_queries(&pairs).unwrap();
    assert_eq!(out.len(), 3);
    for i in 0..3 {
        let norm: f32 = out.row(i).iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "row {i} normalised");
    }
    let c01 = common::cosine(out.row(0), out.row(1));
    assert!(
        c01 < 0.999999,
        "different instructions give different vectors ({c01})"
    );
    // Empty instruction: the plain query embedding.
    let plain = plain_encoder.encode(&[q]).unwrap();
    assert!(common::cosine(out.row(2), plain.row(0)) > 0.999999);
    // The mixture stays close to the query (identity projections mix query token states),
    // and it is not what concatenation gives.
    assert!(common::cosine(out.row(0), plain.row(0)) > 0.5);
    let concat = plain_encoder.encode_queries(&pairs[..1]).unwrap();
    assert!(common::cosine(out.row(0), concat.row(0)) < 0.9999);

    // Batching does not change a pair's vector (padding is masked).
    let alone = enc.encode_queries(&pairs[1..2]).unwrap();
    assert!(common::cosine(alone.row(0), out.row(1)) > 0.999999);

    // The training loop's differentiable path gives the encoder's vectors.
    let trained = engine::training::embed_cross_attention(
        enc.model(),
        &module,
        enc.tokenizer(),
        enc.config().bert.pad_token_id,
        enc.config().pooling,
        &pairs,
    )
    .unwrap()
    .into_data()
    .try_to_vec::<f32>()
    .unwrap();
    for i in 0..3 {
        let row = &trained[i * enc.dim()..(i + 1) * enc.dim()];
        assert!(common::cosine(row, out.row(i)) > 0.99999, "row {i}");
    }

    let bytes = module.to_safetensors().unwrap();
    let path = std::path::Path::new("cross_attention.safetensors");
    let loaded =
        CrossAttentionInteraction::from_safetensors(&bytes, path, enc.dim(), &device).unwrap();
    let again = encoder_with_cross_attention(&loaded)
        .encode_queries(&pairs[..1])
        .unwrap();
    assert!(common::cosine(again.row(0), out.row(0)) > 0.9999999);
    let err = CrossAttentionInteraction::from_safetensors(&bytes, path, 128, &device)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cross_attention.safetensors") && err.contains("has shape"),
        "{err}"
    );
}

fn tokenizer(max_len: usize) -> engine::tokenize::TextTokenizer {
    let path = common::model_dir().join("tokenizer.json");
    engine::tokenize::TextTokenizer::from_bytes(&std::fs::read(&path).unwrap(), &path, max_len)
        .unwrap()
}

#[test]
fn a_long_instruction_is_cut_before_the_query_loses_a_token() {
    let tok = tokenizer(32);
    let query = "how long should sourdough bread proof in the fridge overnight";
    let instruction = "Only forum posts written by home bakers who describe their own experience with cold retarding, \
                       not professional bakery guides, not recipes from magazines, and nothing older than ten years.";
    let query_tokens = tok.count(query, false).unwrap();
    for template in [
        QueryTemplate::instruction_first(),
        QueryTemplate::query_first(),
        QueryTemplate::instruct_query(),
    ] {
        // Joined without the rule, the text is far over the limit.
        assert!(
            tok.count(&template.apply(instruction, query), true)
                .unwrap()
                > 32
        );
        let text = template.fit(&tok, instruction, query).unwrap();
        assert!(tok.count(&text, true).unwrap() <= 32, "{text}");
        // The whole query survives, and the instruction keeps its head, cut at a word boundary.
        assert!(text.contains(query), "{template:?}: {text}");
        assert!(text.contains("Only forum posts written"), "{text}");
        let kept = text.replace(query, "");
        let last_word = kept
            .split_whitespace()
            .rfind(|w| !w.starts_with("Instruct") && !w.starts_with("Query"))
            .unwrap();
        assert!(
            instruction
                .split_whitespace()
                .any(|w| w.trim_end_matches([',', '.']) == last_word.trim_end_matches([',', '.'])),
            "{last_word} is a cut word"
        );
        // What the tokenizer truncates at 32 tokens of the fitted text loses nothing.
        assert_eq!(
            tok.encode(&[&text]).unwrap()[0].len(),
            tok.count(&text, true).unwrap()
        );
        assert!(query_tokens < 32);
    }
    // Short texts are joined unchanged; a blank instruction is the query alone.
    let t = QueryTemplate::default();
    assert_eq!(
        t.fit(&tok, "Only forum posts.", "sourdough").unwrap(),
        "Only forum posts. sourdough"
    );
    assert_eq!(t.fit(&tok, " ", query).unwrap(), query);
}

#[test]
fn a_query_longer_than_the_budget_is_encoded_alone_and_truncated() {
    let tok = tokenizer(12);
    let query =
        "why does my sourdough starter smell like nail polish remover after feeding it rye flour";
    assert!(tok.count(query, true).unwrap() > 12);
    for template in [
        QueryTemplate::instruction_first(),
        QueryTemplate::query_first(),
    ] {
        // No room for any instruction token: the query alone, which the tokenizer then truncates
        // at its tail as for any long text.
        assert_eq!(
            template.fit(&tok, "Only forum posts.", query).unwrap(),
            query
        );
    }
}

#[test]
fn counts_are_not_capped_by_the_truncation_stored_in_tokenizer_json() {
    // all-MiniLM-L6-v2's tokenizer.json stores truncation at 128 tokens; the model's limit is
    // 256. A 300-word text must count well past both, or the query-text rule never triggers.
    let tok = tokenizer(256);
    let long = "word ".repeat(300);
    assert!(tok.count(&long, false).unwrap() >= 300);
    let instruction = "Only forum posts by home bakers. ".repeat(40);
    let query = "how long should sourdough proof overnight in the fridge";
    let text = QueryTemplate::default()
        .fit(&tok, &instruction, query)
        .unwrap();
    assert!(text.ends_with(query) && tok.count(&text, true).unwrap() <= 256);
    assert!(
        tok.count(&text, true).unwrap() > 200,
        "the instruction keeps what fits"
    );
}
