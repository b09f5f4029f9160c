//! `trainer embed`: JSONL texts in, JSONL embeddings out, in input order.

use engine::data::{blank_lines_inside, check_unique, parse_jsonl, read_text, TextRecord};

use crate::cli::EmbedArgs;
use crate::progress;

/// Runs the command.
pub fn run(args: EmbedArgs) -> anyhow::Result<()> {
    let text = read_text(&args.input)?;
    let records: Vec<TextRecord> = parse_jsonl(&text, &args.input)?;
    if records.is_empty() {
        anyhow::bail!("{}: no records to embed", args.input.display());
    }
    // Output rows are keyed by id: two rows with one id could not be told apart.
    check_unique(records.iter().map(|r| r.id.as_str()), &text, &args.input)?;
    let blank = blank_lines_inside(&text);
    if let Some(first) = blank.first() {
        eprintln!(
            "warning: {}:{first}: {} blank line(s) between records were skipped",
            args.input.display(),
            blank.len()
        );
    }
    let encoder = args.model.load()?;
    let texts: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
    let bar = progress::bar(texts.len(), "embedding");
    let embeddings =
        encoder.encode_with_progress(&texts, &mut |done, _| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    // Atomic: an interrupted run never leaves a partial file.
    engine::data::write_jsonl(
        &args.output,
        records
            .iter()
            .zip(embeddings.rows())
            .map(|(record, row)| serde_json::json!({"_id": record.id, "embedding": row})),
    )?;
    eprintln!(
        "embedded {} texts ({} dims) into {}",
        records.len(),
        embeddings.dim,
        args.output.display()
    );
    Ok(())
}
