//! `trainer store` and `trainer search --store`: embeddings in a LanceDB table, searched
//! through its ANN index, with the recall against exact search measured on request.
//!
//! LanceDB is a cargo feature (`lancedb`): it brings Arrow, DataFusion and Lance, several
//! minutes of build. Without it both commands say how to get it.

#[cfg(not(feature = "lancedb"))]
use crate::cli::{StoreArgs, StoreQueryArgs};
#[cfg(not(feature = "lancedb"))]
use engine::{Embeddings, Encoder};

#[cfg(not(feature = "lancedb"))]
const NOT_BUILT: &str = "this trainer was built without the vector store: \
    build it with `cargo build --release -p trainer --features lancedb`";

/// `trainer store`.
#[cfg(not(feature = "lancedb"))]
pub fn create(_: StoreArgs) -> anyhow::Result<()> {
    anyhow::bail!(NOT_BUILT)
}

/// `trainer search --store`: the ranking as (id, score).
#[cfg(not(feature = "lancedb"))]
pub fn search(
    _: &StoreQueryArgs,
    _: Option<&std::path::Path>,
    _: usize,
    _: &Encoder,
    _: &Embeddings,
) -> anyhow::Result<Vec<(String, f32)>> {
    anyhow::bail!(NOT_BUILT)
}

#[cfg(feature = "lancedb")]
pub use lance::{create, search};

#[cfg(feature = "lancedb")]
mod lance {
    use std::sync::Arc;
    use std::time::Instant;

    use engine::retrieval::store::{recall_at_k, AnnIndex, StoreSearch, StoreSource, VectorStore};
    use engine::retrieval::MappedIndex;
    use engine::{Embeddings, Encoder};

    use crate::cli::{StoreArgs, StoreQueryArgs};
    use crate::progress;

    /// `trainer store`.
    pub fn create(args: StoreArgs) -> anyhow::Result<()> {
        let index = Arc::new(MappedIndex::open(&args.index)?);
        if let Some(shard) = &index.header.shard {
            anyhow::bail!(
                "{}: shard {}/{} of a corpus; merge the shards first (`trainer index-merge`)",
                args.index.display(),
                shard.index,
                shard.count
            );
        }
        let rows = index.header.ids.len();
        let model = index.header.model.clone();
        let bar = Arc::new(progress::bar(rows, "writing table"));
        let report = Arc::clone(&bar);
        let started = Instant::now();
        let store = VectorStore::create(
            &args.store,
            &args.table,
            &model,
            StoreSource::Index(index),
            args.overwrite,
            Box::new(move |done| report.set_position(done as u64)),
        )?;
        bar.finish_and_clear();
        let written = started.elapsed();
        eprintln!(
            "wrote {rows} rows (model {model}) into table {:?} of {} in {:.1} s",
            args.table,
            args.store.display(),
            written.as_secs_f64()
        );
        if args.ann == AnnIndex::None {
            return Ok(());
        }
        // LanceDB reports no progress while it trains: say what is running.
        eprintln!("training the {} index on {rows} rows...", args.ann.name());
        let started = Instant::now();
        store.build_index(args.ann, args.partitions)?;
        eprintln!(
            "built the {} index in {:.1} s",
            args.ann.name(),
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// `trainer search --store`: the top `top_k` as (id, score); with `exact` (`--index`), the
    /// recall@k against exact search over that index file goes to stderr.
    pub fn search(
        table: &StoreQueryArgs,
        exact: Option<&std::path::Path>,
        top_k: usize,
        encoder: &Encoder,
        query: &Embeddings,
    ) -> anyhow::Result<Vec<(String, f32)>> {
        let location = table
            .store
            .as_ref()
            .expect("a store source names its folder");
        let store = VectorStore::open(location, &table.table)?;
        store.check_model(encoder.fingerprint())?;
        let how = StoreSearch {
            nprobes: table.nprobes,
            refine_factor: (table.refine > 0).then_some(table.refine),
            exhaustive: false,
        };
        let started = Instant::now();
        let hits = store.search(query, top_k, &how)?;
        let ann_ms = started.elapsed().as_secs_f64() * 1e3;
        if let Some(path) = exact {
            let index = MappedIndex::open(path)?;
            index.check_model(encoder.fingerprint())?;
            let started = Instant::now();
            let exact = index.search(query, top_k)?;
            let exact_ms = started.elapsed().as_secs_f64() * 1e3;
            let recall = recall_at_k(&hits, &exact, &index.header.ids, top_k);
            eprintln!(
                "recall@{} against exact search over {}: {recall:.3} (store {ann_ms:.1} ms, exact {exact_ms:.1} ms)",
                top_k,
                path.display()
            );
        }
        Ok(hits
            .into_iter()
            .next()
            .unwrap_or_default()
            .into_iter()
            .map(|h| (h.id, h.score))
            .collect())
    }
}
