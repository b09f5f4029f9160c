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
    let mut passes = Vec::with_capacity(args.repeat);
    let mut embeddings = engine::Embeddings::new(encoder.dim());
    for _ in 0..args.repeat {
        let started = std::time::Instant::now();
        let bar = progress::bar(texts.len(), "embedding");
        embeddings =
            encoder.encode_with_progress(&texts, &mut |done, _| bar.set_position(done as u64))?;
        bar.finish_and_clear();
        passes.push(started.elapsed().as_secs_f64());
    }
    if args.repeat > 1 {
        println!("{}", throughput(&args, &encoder, texts.len(), &passes));
    }
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

/// The JSON line of `--repeat`: each pass's seconds, and the rate of the passes after the first.
fn throughput(
    args: &EmbedArgs,
    encoder: &engine::Encoder,
    texts: usize,
    passes: &[f64],
) -> serde_json::Value {
    let steady: f64 = passes[1..].iter().sum();
    let compute = &args.model.compute;
    serde_json::json!({
        "system": format!(
            "trainer embed (device {}, {}, {} padding, {} readback, {} attention, batch {})",
            compute.device,
            compute.precision,
            encoder.padding,
            encoder.readback,
            encoder.model().attention(),
            encoder.batch_size
        ),
        "passages": texts * (passes.len() - 1),
        "pass_seconds": passes,
        "seconds": steady,
        "passages_per_s": (texts * (passes.len() - 1)) as f64 / steady.max(1e-12),
    })
}
