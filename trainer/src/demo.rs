//! `trainer demo`: the built-in demo corpus ranked for a query alone, under its instruction
//! and under the polarity-reversed instruction, side by side, with judgments marked.

use engine::data::{Mode, Qrels};
use engine::retrieval::{self, Hit};

use crate::cli::DemoArgs;
use crate::search::{encode_passages, snippet};

/// Columns' width in characters.
const WIDTH: usize = 34;

/// Runs the command.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let set = engine::demo::demo_set()?;
    let mut encoder = args.model.load()?;
    args.template.apply(&mut encoder);
    let queries = chosen_queries(&set, args.query_id.as_deref())?;
    eprintln!(
        "model {} ({}), {} passages",
        args.model.model.display(),
        encoder.fingerprint(),
        set.corpus.len()
    );
    let corpus = encode_passages(&encoder, &set.corpus)?;
    for q in queries {
        let instruction = q.instruction_changed.clone().unwrap_or_default();
        let reversed_instruction = q.instruction_reversed.clone().unwrap_or_default();
        let e = encoder.encode_queries(&[
            ("", q.text.as_str()),
            (&instruction, &q.text),
            (&reversed_instruction, &q.text),
        ])?;
        let hits = retrieval::search(&corpus, &e, args.top_k);
        println!();
        println!("[{}] query: {}", q.id, q.text);
        println!("      instruction:          {instruction}");
        println!("      reversed instruction: {reversed_instruction}");
        print_columns(&set, q, &hits, args.top_k);
        if let Some(top) = hits[1].first() {
            println!(
                "  top under the instruction: {}",
                snippet(&set.corpus[top.index].encoder_text(), 100)
            );
        }
    }
    Ok(())
}

/// The queries `--query-id` names: one id, `all`, or the first three.
fn chosen_queries<'a>(
    set: &'a engine::EvalSet,
    id: Option<&str>,
) -> anyhow::Result<Vec<&'a engine::Query>> {
    Ok(match id {
        Some("all") => set.queries.iter().collect(),
        Some(id) => vec![set.queries.iter().find(|q| q.id == id).ok_or_else(|| {
            anyhow::anyhow!(
                "no demo query '{id}'; ids run from {} to {}",
                set.queries[0].id,
                set.queries[set.queries.len() - 1].id
            )
        })?],
        None => set.queries.iter().take(3).collect(),
    })
}

/// The three rankings side by side, each hit marked by the judgments of its column's mode.
fn print_columns(set: &engine::EvalSet, q: &engine::Query, hits: &[Vec<Hit>], top_k: usize) {
    let empty = Qrels::new();
    let judged = |mode: Mode| set.qrels.get(&mode).unwrap_or(&empty);
    let columns = [
        judged(Mode::Og),
        judged(Mode::Changed),
        judged(Mode::Reversed),
    ];
    println!(
        "  {:<w$} | {:<w$} | {:<w$}",
        "query alone (✓ on topic)",
        "+ instruction (✓ obeys it)",
        "+ reversed (✓ obeys it)",
        w = WIDTH
    );
    println!("  {}", "-".repeat(WIDTH * 3 + 6));
    for rank in 0..top_k {
        let cell = |col: usize| -> String {
            let Some(hit) = hits[col].get(rank) else {
                return String::new();
            };
            let id = &set.corpus[hit.index].id;
            let relevant = columns[col]
                .get(&q.id)
                .and_then(|m| m.get(id))
                .is_some_and(|level| *level > 0.0);
            let mark = if relevant { "✓" } else { "✗" };
            format!("{}. {} {:.3} {mark}", rank + 1, id, hit.score)
        };
        println!(
            "  {:<w$} | {:<w$} | {:<w$}",
            cell(0),
            cell(1),
            cell(2),
            w = WIDTH
        );
    }
}
