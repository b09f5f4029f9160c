//! `trainer index` and `trainer search`: exact cosine retrieval over a corpus or an index file.

use std::path::Path;

use engine::data::{read_corpus, Passage};
use engine::retrieval::{self, IndexHeader, IndexWriter, MappedIndex, Shard};
use engine::{Embeddings, Encoder};

use crate::cli::{IndexArgs, IndexMergeArgs, SearchArgs, SearchSource};
use crate::progress;

/// Encodes passages (title + text) with a progress bar; rows are L2-normalised.
pub fn encode_passages(encoder: &Encoder, passages: &[Passage]) -> anyhow::Result<Embeddings> {
    let texts: Vec<String> = passages.iter().map(|p| p.encoder_text()).collect();
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    let bar = progress::bar(refs.len(), "encoding corpus");
    let mut e =
        encoder.encode_with_progress(&refs, &mut |done, _| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    e.normalize();
    Ok(e)
}

/// Passages encoded per chunk when building an index: bounds memory for large corpora.
const INDEX_CHUNK: usize = 4096;

fn build_index(
    encoder: &Encoder,
    corpus: &Path,
    output: &Path,
    shard: Option<(usize, usize)>,
) -> anyhow::Result<()> {
    let passages = read_corpus(corpus)?;
    let ids: Vec<String> = passages.iter().map(|p| p.id.clone()).collect();
    let shard = match shard {
        Some((i, n)) => Some(Shard::new(i, n, &ids)?),
        None => None,
    };
    let part = shard.as_ref().map_or(0..passages.len(), |s| s.rows());
    let passages = &passages[part.clone()];
    let mut header = IndexHeader::new(encoder.fingerprint(), encoder.dim(), ids[part].to_vec());
    header.shard = shard.clone();
    let mut writer = IndexWriter::create(output, header)?;
    let bar = progress::bar(passages.len(), "indexing");
    for (c, chunk) in passages.chunks(INDEX_CHUNK).enumerate() {
        let texts: Vec<String> = chunk.iter().map(|p| p.encoder_text()).collect();
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        let base = c * INDEX_CHUNK;
        let e = encoder
            .encode_with_progress(&refs, &mut |done, _| bar.set_position((base + done) as u64))?;
        writer.append(&e.data)?;
    }
    bar.finish_and_clear();
    writer.finish()?;
    let what = match &shard {
        Some(s) => format!(
            "shard {}/{} ({} of {} passages)",
            s.index,
            s.count,
            passages.len(),
            s.corpus_rows
        ),
        None => format!("{} passages", passages.len()),
    };
    eprintln!(
        "indexed {what} with model {} into {}",
        encoder.fingerprint(),
        output.display()
    );
    Ok(())
}

/// `trainer index`.
pub fn index(args: IndexArgs) -> anyhow::Result<()> {
    let encoder = args.model.load()?;
    build_index(&encoder, &args.corpus, &args.output, args.shard)
}

/// `trainer index-merge`.
pub fn merge(args: IndexMergeArgs) -> anyhow::Result<()> {
    let header = retrieval::merge_shards(&args.shards, &args.output)?;
    eprintln!(
        "merged {} shards ({} passages, model {}) into {}",
        args.shards.len(),
        header.ids.len(),
        header.model,
        args.output.display()
    );
    Ok(())
}

/// `trainer search`.
pub fn run(args: SearchArgs) -> anyhow::Result<()> {
    if args.query.trim().is_empty() {
        anyhow::bail!("--query is empty: there is nothing to rank the corpus by");
    }
    let source = args.source()?;
    let mut encoder = args.model.load()?;
    args.template.apply(&mut encoder);
    let query = encoder.encode_queries(&[(&args.instruction, &args.query)])?;

    // Titles and texts for display, when the corpus is at hand.
    let passages = match &args.corpus {
        Some(path) => Some(read_corpus(path)?),
        None => None,
    };
    let ranked = match source {
        SearchSource::Store {
            query: store,
            exact,
        } => crate::store::search(&store, exact.as_deref(), args.top_k, &encoder, &query)?,
        SearchSource::Index { path, corpus } => {
            if !path.exists() {
                let corpus = corpus.ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: index does not exist; give --corpus to build it",
                        path.display()
                    )
                })?;
                build_index(&encoder, &corpus, &path, None)?;
            }
            let index = MappedIndex::open(&path)?;
            index.check_model(encoder.fingerprint())?;
            let hits = index.search(&query, args.top_k)?;
            with_ids(&index.header.ids, &hits[0])
        }
        SearchSource::Corpus => {
            let passages = passages
                .as_ref()
                .expect("a corpus source has --corpus, read above");
            let corpus = encode_passages(&encoder, passages)?;
            let ids: Vec<String> = passages.iter().map(|p| p.id.clone()).collect();
            with_ids(&ids, &retrieval::search(&corpus, &query, args.top_k)[0])
        }
    };
    print_ranking(&args, &encoder, passages.as_deref(), &ranked);
    Ok(())
}

/// The ranking as a table with snippets (when the corpus is at hand), or JSON lines.
fn print_ranking(
    args: &SearchArgs,
    encoder: &engine::Encoder,
    passages: Option<&[Passage]>,
    ranked: &[(String, f32)],
) {
    let by_id: std::collections::HashMap<&str, &Passage> = passages
        .iter()
        .flat_map(|p| p.iter())
        .map(|p| (p.id.as_str(), p))
        .collect();
    if !args.json {
        println!("query: {:?}", args.query);
        if !args.instruction.trim().is_empty() {
            println!(
                "instruction: {:?} ({})",
                args.instruction,
                encoder.interaction().name()
            );
        }
    }
    for (rank, (id, score)) in ranked.iter().enumerate() {
        let snippet = by_id
            .get(id.as_str())
            .map(|p| snippet(&p.encoder_text(), 70))
            .unwrap_or_default();
        if args.json {
            println!(
                "{}",
                serde_json::json!({"rank": rank + 1, "_id": id, "score": score})
            );
        } else {
            println!("{:>3}. {:.4}  {:<16} {}", rank + 1, score, id, snippet);
        }
    }
}

/// Hits as (document id, score), best first.
fn with_ids(ids: &[String], hits: &[retrieval::Hit]) -> Vec<(String, f32)> {
    hits.iter()
        .map(|h| (ids[h.index].clone(), h.score))
        .collect()
}

/// The first `n` characters of `text` on one line.
pub fn snippet(text: &str, n: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut s: String = one_line.chars().take(n).collect();
    if one_line.chars().count() > n {
        s.push('…');
    }
    s
}
