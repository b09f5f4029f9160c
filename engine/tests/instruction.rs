//! Instruction-query interaction: templates and the cross-attention module.

mod common;

use engine::instruction::{CrossAttentionInteraction, QueryTemplate};
use engine::Device;

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

#[test]
fn cross_attention_uses_the_instruction_and_round_trips_its_weights() {
    let enc = common::cpu_encoder();
    let device = Device::flex();
    let module = CrossAttentionInteraction::identity(enc.dim(), &device);
    let q = "sourdough bread recipe";
    let out = enc
        .encode_cross_attention(
            &module,
            &[
                ("Only forum posts.", q),
                ("Only news articles from 2019.", q),
                ("", q),
            ],
        )
        .unwrap();
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
    let plain = enc.encode(&[q]).unwrap();
    assert!(common::cosine(out.row(2), plain.row(0)) > 0.999999);
    // The mixture stays close to the query (identity projections mix query token states).
    assert!(common::cosine(out.row(0), plain.row(0)) > 0.5);

    let bytes = module.to_safetensors().unwrap();
    let path = std::path::Path::new("cross_attention.safetensors");
    let loaded =
        CrossAttentionInteraction::from_safetensors(&bytes, path, enc.dim(), &device).unwrap();
    let again = enc
        .encode_cross_attention(&loaded, &[("Only forum posts.", q)])
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
