//! The LanceDB side of the vector store (feature `lancedb`): writing a table, training its
//! ANN index, searching it.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    Array, FixedSizeListArray, Float32Array, RecordBatch, RecordBatchIterator, RecordBatchReader,
    StringArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::database::CreateTableMode;
use lancedb::index::vector::{IvfFlatIndexBuilder, IvfHnswSqIndexBuilder, IvfPqIndexBuilder};
use lancedb::index::Index;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::{DistanceType, Table};

use super::{AnnIndex, StoreHit, StoreSearch, ID_COLUMN, MODEL_KEY, VECTOR_COLUMN};
use crate::encoder::Embeddings;
use crate::error::{EngineError, Result};
use crate::retrieval::MappedIndex;

/// Rows per Arrow batch when writing.
const WRITE_BATCH: usize = 8192;

/// LanceDB's builder for `ann` with `partitions` IVF partitions (`None`: LanceDB's default,
/// about the square root of the row count); `None` for no index.
fn lancedb_index(ann: AnnIndex, partitions: Option<u32>) -> Option<Index> {
    macro_rules! ivf {
        ($builder:expr) => {{
            let b = $builder.distance_type(DistanceType::Dot);
            match partitions {
                Some(n) => b.num_partitions(n),
                None => b,
            }
        }};
    }
    match ann {
        AnnIndex::IvfPq => Some(Index::IvfPq(ivf!(IvfPqIndexBuilder::default()))),
        AnnIndex::IvfHnswSq => Some(Index::IvfHnswSq(ivf!(IvfHnswSqIndexBuilder::default()))),
        AnnIndex::IvfFlat => Some(Index::IvfFlat(ivf!(IvfFlatIndexBuilder::default()))),
        AnnIndex::None => None,
    }
}

/// A LanceDB table of document embeddings, opened once and searched many times.
pub struct VectorStore {
    runtime: tokio::runtime::Runtime,
    table: Table,
    /// The database folder (or URI), for messages.
    location: PathBuf,
    /// Fingerprint of the model that made the vectors.
    pub model: String,
    /// Width of the vectors.
    pub dim: usize,
}

impl std::fmt::Debug for VectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorStore")
            .field("location", &self.location)
            .field("table", &self.table.name())
            .field("model", &self.model)
            .field("dim", &self.dim)
            .finish()
    }
}

fn runtime(location: &Path) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::io(location, e))
}

/// The URI LanceDB is given for the folder `location`: its absolute path. (LanceDB takes any
/// URI that starts with "db", such as the relative folder `db/`, for its cloud service.)
fn uri(location: &Path) -> Result<String> {
    let absolute = std::path::absolute(location).map_err(|e| EngineError::io(location, e))?;
    Ok(absolute.to_string_lossy().into_owned())
}

/// An error of LanceDB or Arrow about the store at `location`.
fn store_error(location: &Path, table: &str, error: impl std::fmt::Display) -> EngineError {
    EngineError::data(location, 0, format!("table {table:?}: {error}"))
}

/// The table's Arrow schema: ids, vectors of width `dim`, and the model in the metadata.
fn schema(model: &str, dim: usize) -> Result<SchemaRef> {
    let width = i32::try_from(dim)
        .map_err(|_| EngineError::Invalid(format!("vector width {dim} is too large")))?;
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let metadata = HashMap::from([(MODEL_KEY.to_string(), model.to_string())]);
    Ok(Arc::new(Schema::new_with_metadata(
        vec![
            Field::new(ID_COLUMN, DataType::Utf8, false),
            Field::new(VECTOR_COLUMN, DataType::FixedSizeList(item, width), false),
        ],
        metadata,
    )))
}

/// One Arrow batch of `ids` and their rows.
fn batch(schema: &SchemaRef, ids: &[String], rows: Vec<f32>) -> Result<RecordBatch, ArrowError> {
    let dim = match schema.field(1).data_type() {
        DataType::FixedSizeList(_, width) => *width,
        _ => unreachable!("the store's schema has a fixed-size vector column"),
    };
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let values = Arc::new(Float32Array::from(rows));
    let vectors = FixedSizeListArray::try_new(item, dim, values, None)?;
    RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from_iter_values(ids)),
            Arc::new(vectors),
        ],
    )
}

/// The rows a new table is written from.
#[derive(Debug, Clone)]
pub enum StoreSource {
    /// An index file (`trainer index`), read block by block where it is mapped.
    Index(Arc<MappedIndex>),
    /// Embeddings in memory (L2-normalised) and their ids.
    Memory {
        /// Document ids, in row order.
        ids: Arc<Vec<String>>,
        /// The rows.
        embeddings: Arc<Embeddings>,
    },
}

impl StoreSource {
    /// The model fingerprint the rows carry, when the source records one.
    pub fn model(&self) -> Option<&str> {
        match self {
            StoreSource::Index(index) => Some(&index.header.model),
            StoreSource::Memory { .. } => None,
        }
    }

    fn ids(&self) -> &[String] {
        match self {
            StoreSource::Index(index) => &index.header.ids,
            StoreSource::Memory { ids, .. } => ids,
        }
    }

    fn dim(&self) -> usize {
        match self {
            StoreSource::Index(index) => index.header.dim,
            StoreSource::Memory { embeddings, .. } => embeddings.dim,
        }
    }

    /// Rows `rows` as one Arrow batch.
    fn batch(&self, schema: &SchemaRef, rows: Range<usize>) -> Result<RecordBatch, ArrowError> {
        let values = match self {
            StoreSource::Index(index) => index.block(rows.clone()).into_owned(),
            StoreSource::Memory { embeddings, .. } => {
                embeddings.data[rows.start * embeddings.dim..rows.end * embeddings.dim].to_vec()
            }
        };
        batch(schema, &self.ids()[rows], values)
    }
}

impl VectorStore {
    /// Writes every row of `source` into a new table `table` of the database at `location`
    /// (a folder, created when absent), with `model`'s fingerprint. An existing table of that
    /// name is an error unless `overwrite`. `progress` hears the rows written so far. Lance
    /// commits a table in one step: a write that fails leaves no table behind (or the
    /// previous one, with `overwrite`).
    pub fn create(
        location: &Path,
        table: &str,
        model: &str,
        source: StoreSource,
        overwrite: bool,
        mut progress: Box<dyn FnMut(usize) + Send>,
    ) -> Result<Self> {
        let (count, dim) = (source.ids().len(), source.dim());
        if count == 0 || dim == 0 {
            return Err(EngineError::Invalid(format!(
                "{}: no rows to write into table {table:?}",
                location.display()
            )));
        }
        let schema = schema(model, dim)?;
        let batches = {
            let schema = schema.clone();
            (0..count).step_by(WRITE_BATCH).map(move |start| {
                let rows = start..(start + WRITE_BATCH).min(count);
                let b = source.batch(&schema, rows.clone());
                progress(rows.end);
                b
            })
        };
        let reader: Box<dyn RecordBatchReader + Send> =
            Box::new(RecordBatchIterator::new(batches, schema));
        let runtime = runtime(location)?;
        let mode = if overwrite {
            CreateTableMode::Overwrite
        } else {
            CreateTableMode::Create
        };
        let uri = uri(location)?;
        let created = runtime.block_on(async {
            let db = lancedb::connect(&uri).execute().await?;
            db.create_table(table, reader).mode(mode).execute().await
        });
        let table_handle = created.map_err(|e| store_error(location, table, e))?;
        Ok(VectorStore {
            runtime,
            table: table_handle,
            location: location.to_path_buf(),
            model: model.to_string(),
            dim,
        })
    }

    /// Opens table `table` of the database at `location` and reads its model and width.
    pub fn open(location: &Path, table: &str) -> Result<Self> {
        if !location.exists() {
            return Err(EngineError::io(
                location,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such vector store"),
            ));
        }
        let runtime = runtime(location)?;
        let uri = uri(location)?;
        let opened = runtime.block_on(async {
            let db = lancedb::connect(&uri).execute().await?;
            let t = db.open_table(table).execute().await?;
            let schema = t.schema().await?;
            Ok::<_, lancedb::Error>((t, schema))
        });
        let (table_handle, schema) = opened.map_err(|e| store_error(location, table, e))?;
        let model = schema.metadata().get(MODEL_KEY).cloned().ok_or_else(|| {
            store_error(
                location,
                table,
                format!(
                    "no model fingerprint ({MODEL_KEY}) in the schema: not written by this tool"
                ),
            )
        })?;
        let dim = match schema.field_with_name(VECTOR_COLUMN).map(|f| f.data_type()) {
            Ok(DataType::FixedSizeList(_, width)) => *width as usize,
            _ => {
                return Err(store_error(
                    location,
                    table,
                    format!("no fixed-size {VECTOR_COLUMN:?} column"),
                ))
            }
        };
        Ok(VectorStore {
            runtime,
            table: table_handle,
            location: location.to_path_buf(),
            model,
            dim,
        })
    }

    /// Fails with [`EngineError::ModelMismatch`] unless the vectors were made by `model`.
    pub fn check_model(&self, model: &str) -> Result<()> {
        if self.model != model {
            return Err(EngineError::ModelMismatch {
                path: self.location.join(format!("{}.lance", self.table.name())),
                index_model: self.model.clone(),
                current_model: model.to_string(),
            });
        }
        Ok(())
    }

    /// Rows in the table.
    pub fn len(&self) -> Result<usize> {
        self.runtime
            .block_on(self.table.count_rows(None))
            .map_err(|e| self.error(e))
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    fn error(&self, e: impl std::fmt::Display) -> EngineError {
        store_error(&self.location, self.table.name(), e)
    }

    /// Trains and writes the ANN index on the vector column (replacing an existing one).
    /// `partitions`: IVF partitions, `None` for LanceDB's default.
    pub fn build_index(&self, ann: AnnIndex, partitions: Option<u32>) -> Result<()> {
        let Some(index) = lancedb_index(ann, partitions) else {
            return Ok(());
        };
        self.runtime
            .block_on(
                self.table
                    .create_index(&[VECTOR_COLUMN], index)
                    .replace(true)
                    .execute(),
            )
            .map_err(|e| self.error(e))
    }

    /// The `k` nearest rows of each query (L2-normalised, the store's width), best first.
    pub fn search(
        &self,
        queries: &Embeddings,
        k: usize,
        how: &StoreSearch,
    ) -> Result<Vec<Vec<StoreHit>>> {
        if queries.dim != self.dim {
            return Err(self.error(format!(
                "query width {} does not match the store's width {}",
                queries.dim, self.dim
            )));
        }
        queries
            .rows()
            .map(|q| self.runtime.block_on(self.search_one(q, k, how)))
            .collect::<Result<Vec<_>, lancedb::Error>>()
            .map_err(|e| self.error(e))
    }

    async fn search_one(
        &self,
        query: &[f32],
        k: usize,
        how: &StoreSearch,
    ) -> Result<Vec<StoreHit>, lancedb::Error> {
        let mut q = self
            .table
            .query()
            .nearest_to(query)?
            .column(VECTOR_COLUMN)
            .distance_type(DistanceType::Dot)
            .select(Select::columns(&[ID_COLUMN]))
            .limit(k);
        if how.exhaustive {
            q = q.bypass_vector_index();
        } else {
            q = q.nprobes(how.nprobes)?;
            if let Some(r) = how.refine_factor {
                q = q.refine_factor(r);
            }
        }
        let batches: Vec<RecordBatch> = q.execute().await?.try_collect().await?;
        let mut hits = Vec::with_capacity(k);
        for b in &batches {
            let ids = column::<StringArray>(b, ID_COLUMN)?;
            let distances = column::<Float32Array>(b, "_distance")?;
            for r in 0..b.num_rows() {
                hits.push(StoreHit {
                    id: ids.value(r).to_string(),
                    // LanceDB's dot distance is 1 - q.v.
                    score: 1.0 - distances.value(r),
                });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(hits)
    }
}

/// A column of a result batch, as its Arrow type.
fn column<'b, A: Array + 'static>(
    batch: &'b RecordBatch,
    name: &str,
) -> Result<&'b A, lancedb::Error> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<A>())
        .ok_or_else(|| lancedb::Error::Runtime {
            message: format!("the search result has no {name:?} column of the expected type"),
        })
}
