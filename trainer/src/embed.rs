//! `trainer embed`: JSONL texts in, JSONL embeddings out, in input order.

use std::io::Write;

use anyhow::Context;
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
    // Write beside the target, then rename: an interrupted run never leaves a partial file.
    let tmp = args.output.with_extension("jsonl.partial");
    {
        let file = std::fs::File::create(&tmp)
            .with_context(|| format!("{}: cannot create", tmp.display()))?;
        let mut w = std::io::BufWriter::new(file);
        for (record, row) in records.iter().zip(embeddings.rows()) {
            let line = serde_json::json!({"_id": record.id, "embedding": row});
            writeln!(w, "{line}").with_context(|| format!("{}: write failed", tmp.display()))?;
        }
        w.flush()
            .with_context(|| format!("{}: write failed", tmp.display()))?;
    }
    std::fs::rename(&tmp, &args.output)
        .with_context(|| format!("{}: cannot write", args.output.display()))?;
    eprintln!(
        "embedded {} texts ({} dims) into {}",
        records.len(),
        embeddings.dim,
        args.output.display()
    );
    Ok(())
}
