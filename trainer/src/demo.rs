//! `trainer demo`: the built-in demo corpus ranked for a query alone, under its instruction
//! and under the polarity-reversed instruction, side by side, with judgments marked.

use engine::data::{Mode, Qrels};
use engine::retrieval;

use crate::cli::DemoArgs;
use crate::search::{encode_passages, snippet};

/// Runs the command.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let set = engine::demo::demo_set()?;
    let template = args.template.template()?;
    let encoder = args.model.load()?;
    let queries: Vec<&engine::Query> = match args.query_id.as_deref() {
        Some("all") => set.queries.iter().collect(),
        Some(id) => vec![set.queries.iter().find(|q| q.id == id).ok_or_else(|| {
            anyhow::anyhow!(
                "no demo query '{id}'; ids run from {} to {}",
                set.queries[0].id,
                set.queries[set.queries.len() - 1].id
            )
        })?],
        None => set.queries.iter().take(3).collect(),
    };
    eprintln!(
        "model {} ({}), {} passages",
        args.model.model.display(),
        encoder.fingerprint(),
        set.corpus.len()
    );
    let corpus = encode_passages(&encoder, &set.corpus)?;
    let empty = Qrels::new();
    let changed = set.qrels.get(&Mode::Changed).unwrap_or(&empty);
    let reversed = set.qrels.get(&Mode::Reversed).unwrap_or(&empty);
    let og = set.qrels.get(&Mode::Og).unwrap_or(&empty);
    for q in queries {
        let instruction = q.instruction_changed.clone().unwrap_or_default();
        let reversed_instruction = q.instruction_reversed.clone().unwrap_or_default();
        let texts = [
            q.text.clone(),
            template.fit(encoder.tokenizer(), &instruction, &q.text)?,
            template.fit(encoder.tokenizer(), &reversed_instruction, &q.text)?,
        ];
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let mut e = encoder.encode(&refs)?;
        e.normalize();
        let hits = retrieval::search(&corpus, &e, args.top_k);
        println!();
        println!("[{}] query: {}", q.id, q.text);
        println!("      instruction:          {instruction}");
        println!("      reversed instruction: {reversed_instruction}");
        let width = 34;
        println!(
            "  {:<w$} | {:<w$} | {:<w$}",
            "query alone (✓ on topic)",
            "+ instruction (✓ obeys it)",
            "+ reversed (✓ obeys it)",
            w = width
        );
        println!("  {}", "-".repeat(width * 3 + 6));
        for rank in 0..args.top_k {
            let cell = |col: usize, judged: &Qrels| -> String {
                match hits[col].get(rank) {
                    Some(hit) => {
                        let id = &set.corpus[hit.index].id;
                        let rel = judged
                            .get(&q.id)
                            .and_then(|m| m.get(id))
                            .copied()
                            .unwrap_or(0.0);
                        format!(
                            "{}. {} {:.3} {}",
                            rank + 1,
                            id,
                            hit.score,
                            if rel > 0.0 { "✓" } else { "✗" }
                        )
                    }
                    None => String::new(),
                }
            };
            println!(
                "  {:<w$} | {:<w$} | {:<w$}",
                cell(0, og),
                cell(1, changed),
                cell(2, reversed),
                w = width
            );
        }
        if let Some(top) = hits[1].first() {
            println!(
                "  top under the instruction: {}",
                snippet(&set.corpus[top.index].encoder_text(), 100)
            );
        }
    }
    Ok(())
}
