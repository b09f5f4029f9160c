//! The page's work on the encoder: the model downloaded and verified, the backend started, the
//! corpus encoded (in workers on the CPU, in small steps on WebGPU) and the columns ranked; a
//! WebGPU failure falls back to the CPU.
//!
//! On the CPU the page's thread builds no model: the encoding workers build it, encode the
//! corpus and the queries, and the page only hashes the downloaded files (in steps) and
//! ranks. A task of the page's thread over 100 ms is a page that stutters (the e2e test
//! asserts there is none from navigation to ready).

use super::*;

/// The page's encoder: the CPU encoding workers, which hold the model and encode the corpus
/// and the queries; or a model on the page's thread (WebGPU, where the work is the GPU's, and
/// the CPU when no worker starts).
pub(super) enum PageEncoder {
    /// A model on the page's thread.
    OnPage(Rc<Encoder>),
    /// The CPU encoding workers.
    Workers(Rc<CorpusWorkers>),
}

impl QueryEncoder for PageEncoder {
    fn space(&self) -> engine::EmbeddingSpace {
        match self {
            PageEncoder::OnPage(e) => e.space(),
            PageEncoder::Workers(w) => w.space().clone(),
        }
    }

    async fn encode_queries(&self, pairs: &[(&str, &str)]) -> engine::Result<engine::Embeddings> {
        match self {
            PageEncoder::OnPage(e) => e.encode_queries_async(pairs).await,
            PageEncoder::Workers(w) => w.encode_queries(pairs).await,
        }
    }
}

/// Bytes of a model file hashed in one task (a few milliseconds of SHA-256 in wasm).
const HASH_STEP: usize = 1 << 20;

/// A failure of work on the encoder: on WebGPU (a device lost mid-way, a driver reset, a tab
/// that lost its GPU) the page says so, turns WebGPU off and starts again on the CPU, keeping
/// the corpus and the inputs; on the CPU it is an error.
pub(super) fn fail_work(p: Page, e: impl std::fmt::Display) {
    if p.model.backend.get_untracked() == BackendKind::Cpu {
        return fail(p, e);
    }
    web_log(&format!("WebGPU failed mid-way: {e}"));
    // The first line says what failed; the rest (causes, backtrace) went to the console.
    let e = e.to_string();
    let what = e.lines().next().unwrap_or_default();
    p.load.error.set(Some(format!(
        "WebGPU failed mid-way ({what}); switched to the CPU"
    )));
    p.model.webgpu.set(false);
    p.model.backend.set(BackendKind::Cpu);
    spawn_local(start_backend(p));
}

/// Downloads (or reads from the cache) the chosen model, verifies every file, then starts the
/// backend.
pub(super) async fn load_model(p: Page) {
    p.load.error.set(None);
    p.load.ready.set(false);
    let models = if p.model.models.get_untracked().is_empty() {
        match web::fetch_text("models/index.json")
            .await
            .and_then(|t| models::parse_index(&t))
        {
            Ok(m) => {
                p.model.models.set(m.clone());
                m
            }
            Err(e) => return fail(p, e),
        }
    } else {
        p.model.models.get_untracked()
    };
    let key = p.model.model_key.get_untracked();
    let model = models
        .iter()
        .find(|m| m.key == key)
        .unwrap_or(&models[0])
        .clone();
    p.model.model_key.set(model.key.clone());
    let total = model.total_bytes();
    let mut done = 0u64;
    let mut from_cache = true;
    let mut files = models::Downloaded::new();
    p.load.status.set(Status::Downloading(model.name.clone()));
    for file in &model.files {
        let url = format!("models/{}/{}", model.key, file.path);
        let base = done;
        let result = fetch_verified(&url, file, |n| {
            p.load.progress.set(Some((base + n, total)));
        })
        .await;
        let (bytes, source) = match result {
            Ok(r) => r,
            Err(e) => return fail(p, e),
        };
        from_cache &= source == web::Source::Cache;
        done += file.bytes;
        files.insert(file.path.clone(), bytes);
    }
    p.load.progress.set(None);
    p.load.cache_note.set(if from_cache {
        format!("{} loaded from the browser cache", model.name)
    } else {
        format!("{} downloaded ({})", model.name, human_bytes(total))
    });
    let files = Rc::new(ModelFiles::from_memory(
        format!("models/{}", model.key),
        files,
    ));
    p.model.files.set_value(Some(files));
    start_backend(p).await;
}

/// A model file from the browser cache when the copy there is intact, else downloaded (and
/// streamed into the cache as it arrives, the copy kept once verified), verified against
/// `models/index.json` either way: a corrupt cached copy is dropped and downloaded again; a
/// download that does not match the index is refused (and its cached copy deleted).
pub(super) async fn fetch_verified(
    url: &str,
    file: &models::ServedFile,
    mut progress: impl FnMut(u64),
) -> Result<(Vec<u8>, web::Source), String> {
    if let Some(bytes) = web::cached(url, &file.sha256).await {
        if verify_in_steps(file, &bytes).await.is_ok() {
            progress(bytes.len() as u64);
            return Ok((bytes, web::Source::Cache));
        }
        web_log(&format!(
            "the cached copy of {url} does not match models/index.json: downloading it again"
        ));
        web::forget_cached(url, &file.sha256).await;
    }
    let (bytes, copy) = web::download(url, &file.sha256, progress)
        .await
        .map_err(|e| format!("download failed: {e}"))?;
    if let Err(e) = verify_in_steps(file, &bytes).await {
        copy.discard().await;
        return Err(format!("{e}: the file served at {url} does not match models/index.json (redeploy the model, or rebuild the index with `trainer export --index`)"));
    }
    copy.keep().await;
    Ok((bytes, web::Source::Network))
}

/// `bytes` checked against `file`'s entry a [`HASH_STEP`] at a time, the page's thread given
/// back between steps.
async fn verify_in_steps(file: &models::ServedFile, bytes: &[u8]) -> Result<(), String> {
    let mut check = file.check();
    for piece in bytes.chunks(HASH_STEP) {
        check.update(piece);
        web::yield_now().await;
    }
    check.finish()
}

/// Starts the selected backend: on the CPU the encoding workers (each building the model),
/// else an encoder on the page's thread, warmed up.
pub(super) async fn start_backend(p: Page) {
    let Some(files) = p.model.files.get_value() else {
        return;
    };
    p.load.ready.set(false);
    p.model.encoder.set(None);
    let kind = p.model.backend.get_untracked();
    p.load.status.set(Status::Starting(backend_name(kind)));
    let device = match kind.device_async().await {
        Ok(d) => d,
        Err(e) if kind != BackendKind::Cpu => {
            p.load.error.set(Some(format!(
                "WebGPU is not usable here ({e}); using the CPU"
            )));
            p.model.backend.set(BackendKind::Cpu);
            engine::Device::flex()
        }
        Err(e) => return fail(p, e),
    };
    let encoder = if p.model.backend.get_untracked() == BackendKind::Cpu {
        match start_workers(p, &files).await {
            Ok(workers) => PageEncoder::Workers(workers),
            Err(e) => {
                web_log(&format!(
                    "encoding workers unavailable ({e}): the model runs on the page"
                ));
                match encoder_on_page(p, &files, &device).await {
                    Ok(e) => PageEncoder::OnPage(e),
                    Err(e) => return fail(p, e),
                }
            }
        }
    } else {
        match encoder_on_page(p, &files, &device).await {
            Ok(e) => PageEncoder::OnPage(e),
            Err(e) => return fail_work(p, e),
        }
    };
    p.model.encoder.set(Some(Rc::new(encoder)));
}

/// Starts the CPU encoding workers: as many as the URL asks or the machine affords.
async fn start_workers(p: Page, files: &ModelFiles) -> Result<Rc<CorpusWorkers>, String> {
    let int8 = p.model.cpu_precision == engine::Precision::Int8;
    let count = p
        .model
        .cpu_workers
        .unwrap_or_else(CorpusWorkers::affordable);
    let (workers, ms) = CorpusWorkers::start(files, int8, count).await?;
    web_log(&format!("{count} encoding worker(s) ready in {ms:.0} ms"));
    Ok(Rc::new(workers))
}

/// An encoder on the page's thread on `device` (int8 on the CPU unless the URL asks for f32),
/// pausing between layers, warmed up.
async fn encoder_on_page(
    p: Page,
    files: &ModelFiles,
    device: &engine::Device,
) -> engine::Result<Rc<Encoder>> {
    let mut e = Encoder::from_files(files, device)?;
    if p.model.backend.get_untracked() == BackendKind::Cpu {
        e.set_precision(p.model.cpu_precision)?;
    }
    // One layer of one batch per task: typing stays answered while the corpus encodes.
    e.pause_between_layers(std::sync::Arc::new(|| Box::pin(web::yield_now())));
    p.load.status.set(Status::WarmingUp);
    web::yield_now().await;
    e.encode_async(&["warm-up"], &mut |_, _| {}).await?;
    Ok(Rc::new(e))
}

/// The active backend's arithmetic, as the page shows it (WebGPU computes in f32).
pub(super) fn precision_name(p: Page) -> String {
    match p.model.backend.get() {
        BackendKind::Cpu => p.model.cpu_precision.to_string(),
        _ => "f32".into(),
    }
}

pub(super) fn backend_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Cpu => "cpu",
        _ => "webgpu",
    }
}

/// Encodes `corpus` (or reads its embeddings from the browser cache), showing progress.
pub(super) async fn encode_corpus(
    p: Page,
    encoder: Rc<PageEncoder>,
    corpus: Vec<Passage>,
) -> Option<Rc<PageSession>> {
    p.load.ready.set(false);
    let started = web::now_ms();
    // Passage embeddings are cached in the browser per model and corpus: a reload is quick.
    let key = format!("embeddings/{}", PageSession::cache_key(&encoder, &corpus));
    if let Some(s) = cached_session(p, &key, &encoder, &corpus).await {
        web_log(&format!(
            "corpus of {} passages read from the browser cache in {:.0} ms",
            s.corpus.len(),
            web::now_ms() - started
        ));
        return Some(Rc::new(s));
    }
    let session = match &*encoder {
        PageEncoder::Workers(workers) => match encode_in_workers(p, workers, &corpus).await {
            Ok(passages) => Ok(PageSession::from_embeddings(
                encoder.clone(),
                corpus,
                passages,
            )),
            Err(e) => {
                web_log(&format!(
                    "encoding worker failed ({e}): encoding on the page"
                ));
                encode_on_new_page_encoder(p, corpus).await
            }
        },
        PageEncoder::OnPage(on_page) => encode_on_page(p, encoder.clone(), on_page, corpus).await,
    };
    p.load.progress.set(None);
    match session {
        Ok(s) => {
            web_log(&format!(
                "corpus of {} passages encoded in {:.0} ms",
                s.corpus.len(),
                web::now_ms() - started
            ));
            if let Ok(bytes) = s.embedding_bytes() {
                web::store_cached(&key, "2", &bytes).await;
            }
            p.load
                .corpus_note
                .set(format!("{} passages encoded", s.corpus.len()));
            Some(Rc::new(s))
        }
        Err(e) => {
            fail_work(p, e);
            None
        }
    }
}

/// The session of `corpus`'s embeddings under `key` in the browser cache, when they are
/// there and match.
async fn cached_session(
    p: Page,
    key: &str,
    encoder: &Rc<PageEncoder>,
    corpus: &[Passage],
) -> Option<PageSession> {
    let bytes = web::cache_get(&format!("{key}?v=2")).await?;
    let s = PageSession::from_cached(encoder.clone(), corpus.to_vec(), &bytes)?;
    p.load.corpus_note.set(format!(
        "{} passage embeddings from the browser cache",
        s.corpus.len()
    ));
    Some(s)
}

pub(super) fn show_progress(p: Page, done: usize, total: usize) {
    p.load.status.set(Status::Encoding(done, total));
    p.load.progress.set(Some((done as u64, total as u64)));
}

/// Encodes on the page's thread in small steps, yielding between layers (WebGPU, where the
/// work is the GPU's, and the CPU when no worker can start).
async fn encode_on_page(
    p: Page,
    encoder: Rc<PageEncoder>,
    on_page: &Encoder,
    corpus: Vec<Passage>,
) -> engine::Result<PageSession> {
    let progress = move |done, total| show_progress(p, done, total);
    PageSession::new(encoder, on_page, corpus, progress, web::yield_now).await
}

/// After the encoding workers failed: a CPU encoder on the page's thread, which encodes this
/// corpus and ranks its queries, and becomes the page's encoder (failed workers are not asked
/// again; a new model or backend starts new ones). The swap is untracked: this very corpus
/// is encoded here, not a second time by the resource that follows the encoder.
async fn encode_on_new_page_encoder(p: Page, corpus: Vec<Passage>) -> engine::Result<PageSession> {
    let files = p
        .model
        .files
        .get_value()
        .ok_or_else(|| engine::EngineError::Invalid("no model files".into()))?;
    let on_page = encoder_on_page(p, &files, &engine::Device::flex()).await?;
    let encoder = Rc::new(PageEncoder::OnPage(on_page.clone()));
    p.model
        .encoder
        .update_untracked(|e| *e = Some(encoder.clone()));
    encode_on_page(p, encoder, &on_page, corpus).await
}

/// Encodes `corpus` in the CPU encoding workers: the page's thread only receives progress and
/// the embeddings.
async fn encode_in_workers(
    p: Page,
    workers: &CorpusWorkers,
    corpus: &[Passage],
) -> Result<engine::Embeddings, String> {
    show_progress(p, 0, corpus.len());
    let texts: Vec<String> = corpus.iter().map(|c| c.encoder_text()).collect();
    let progress = |done, total| show_progress(p, done, total);
    let (passages, memory) = workers
        .encode(&texts, workers.space().dim, progress)
        .await?;
    web_log(&format!(
        "{} encoding worker(s), memory {:.0} MB together",
        workers.len(),
        memory / 1048576.0
    ));
    Ok(passages)
}

pub(super) fn web_log(s: &str) {
    leptos::logging::log!("{s}");
}

/// Ranks the corpus for the query alone, with the instruction and with its reversal.
pub(super) async fn rank(p: Page, session: Rc<PageSession>, inputs: [String; 3]) -> Option<Ranked> {
    let [query, instruction, reversed] = inputs;
    let started = web::now_ms();
    let result = session
        .rank(&[("", &query), (&instruction, &query), (&reversed, &query)])
        .await;
    match result {
        Ok((mut r, encoded)) => {
            web_log(&format!(
                "query encoded and ranked in {:.1} ms ({encoded} of 3 texts encoded)",
                web::now_ms() - started
            ));
            let reversed = r.pop().unwrap_or_default();
            let instructed = r.pop().unwrap_or_default();
            let alone = r.pop().unwrap_or_default();
            p.load.status.set(Status::Ready);
            p.load.ready.set(true);
            Some(Ranked {
                session,
                columns: [
                    (Column::Query, alone),
                    (Column::Instructed, instructed),
                    (Column::Reversed, reversed),
                ]
                .into(),
            })
        }
        Err(e) => {
            fail_work(p, e);
            None
        }
    }
}
