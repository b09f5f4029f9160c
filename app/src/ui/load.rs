//! The page's work on the encoder: the model downloaded and verified, the backend started, the
//! corpus encoded (in workers on the CPU, in small steps on WebGPU) and the columns ranked; a
//! WebGPU failure falls back to the CPU.

use super::*;

/// A failure of work on the encoder: on WebGPU (a device lost mid-way, a driver reset, a tab
/// that lost its GPU) the page says so, turns WebGPU off and starts again on the CPU, keeping
/// the corpus and the inputs; on the CPU it is an error.
pub(super) fn fail_work(p: Page, e: impl std::fmt::Display) {
    if p.backend.get_untracked() == BackendKind::Cpu {
        return fail(p, e);
    }
    web_log(&format!("WebGPU failed mid-way: {e}"));
    // The first line says what failed; the rest (causes, backtrace) went to the console.
    let e = e.to_string();
    let what = e.lines().next().unwrap_or_default();
    p.error.set(Some(format!(
        "WebGPU failed mid-way ({what}); switched to the CPU"
    )));
    p.webgpu.set(false);
    p.backend.set(BackendKind::Cpu);
    spawn_local(start_backend(p));
}

/// Downloads (or reads from the cache) the chosen model, verifies every file, then starts the
/// backend.
pub(super) async fn load_model(p: Page) {
    p.error.set(None);
    p.ready.set(false);
    let models = if p.models.get_untracked().is_empty() {
        match web::fetch_text("models/index.json")
            .await
            .and_then(|t| models::parse_index(&t))
        {
            Ok(m) => {
                p.models.set(m.clone());
                m
            }
            Err(e) => return fail(p, e),
        }
    } else {
        p.models.get_untracked()
    };
    let key = p.model_key.get_untracked();
    let model = models
        .iter()
        .find(|m| m.key == key)
        .unwrap_or(&models[0])
        .clone();
    p.model_key.set(model.key.clone());
    let total = model.total_bytes();
    let mut done = 0u64;
    let mut from_cache = true;
    let mut files = models::Downloaded::new();
    p.status.set(Status::Downloading(model.name.clone()));
    for file in &model.files {
        let url = format!("models/{}/{}", model.key, file.path);
        let base = done;
        let result = fetch_verified(&url, file, |n| {
            p.progress.set(Some((base + n, total)));
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
    p.progress.set(None);
    p.cache_note.set(if from_cache {
        format!("{} loaded from the browser cache", model.name)
    } else {
        format!("{} downloaded ({})", model.name, human_bytes(total))
    });
    let files = Rc::new(ModelFiles::from_memory(
        format!("models/{}", model.key),
        files,
    ));
    p.files.set_value(Some(files));
    start_backend(p).await;
}

/// A model file from the browser cache when the copy there is intact, else downloaded (and
/// then cached), verified against `models/index.json` either way: a corrupt cached copy is
/// dropped and downloaded again; a download that does not match the index is refused.
pub(super) async fn fetch_verified(
    url: &str,
    file: &models::ServedFile,
    mut progress: impl FnMut(u64),
) -> Result<(Vec<u8>, web::Source), String> {
    if let Some(bytes) = web::cached(url, &file.sha256).await {
        if file.verify(&bytes).is_ok() {
            progress(bytes.len() as u64);
            return Ok((bytes, web::Source::Cache));
        }
        web_log(&format!(
            "the cached copy of {url} does not match models/index.json: downloading it again"
        ));
        web::forget_cached(url, &file.sha256).await;
    }
    let bytes = web::download(url, progress)
        .await
        .map_err(|e| format!("download failed: {e}"))?;
    file.verify(&bytes).map_err(|e| {
        format!("{e}: the file served at {url} does not match models/index.json (redeploy the model, or rebuild the index with `trainer export --index`)")
    })?;
    web::store_cached(url, &file.sha256, &bytes).await;
    Ok((bytes, web::Source::Network))
}

/// Builds the encoder on the selected backend, warms it up and encodes the corpus.
pub(super) async fn start_backend(p: Page) {
    let Some(files) = p.files.get_value() else {
        return;
    };
    p.ready.set(false);
    let kind = p.backend.get_untracked();
    p.status.set(Status::Starting(backend_name(kind)));
    let device = match kind.device_async().await {
        Ok(d) => d,
        Err(e) if kind != BackendKind::Cpu => {
            p.error.set(Some(format!(
                "WebGPU is not usable here ({e}); using the CPU"
            )));
            p.backend.set(BackendKind::Cpu);
            engine::Device::flex()
        }
        Err(e) => return fail(p, e),
    };
    let built = Encoder::from_files(&files, &device).and_then(|mut e| {
        if kind == BackendKind::Cpu {
            e.set_precision(p.cpu_precision)?;
        }
        Ok(e)
    });
    let encoder = match built {
        Ok(mut e) => {
            // One layer of one batch per task: typing stays answered while the corpus encodes.
            e.pause_between_layers(std::sync::Arc::new(|| Box::pin(web::yield_now())));
            Rc::new(e)
        }
        Err(e) => return fail(p, e),
    };
    p.status.set(Status::WarmingUp);
    web::yield_now().await;
    if let Err(e) = encoder.encode_async(&["warm-up"], &mut |_, _| {}).await {
        return fail_work(p, e);
    }
    p.encoder.set(Some(encoder));
}

/// The active backend's arithmetic, as the page shows it (WebGPU computes in f32).
pub(super) fn precision_name(p: Page) -> String {
    match p.backend.get() {
        BackendKind::Cpu => p.cpu_precision.to_string(),
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
    encoder: Rc<Encoder>,
    corpus: Vec<Passage>,
) -> Option<Rc<Session>> {
    p.ready.set(false);
    let started = web::now_ms();
    // Passage embeddings are cached in the browser per model and corpus: a reload is quick.
    let key = format!("embeddings/{}", Session::cache_key(&encoder, &corpus));
    if let Some(bytes) = web::cache_get(&format!("{key}?v=2")).await {
        if let Some(s) = Session::from_cached(encoder.clone(), corpus.clone(), &bytes) {
            web_log(&format!(
                "corpus of {} passages read from the browser cache in {:.0} ms",
                s.corpus.len(),
                web::now_ms() - started
            ));
            p.corpus_note.set(format!(
                "{} passage embeddings from the browser cache",
                s.corpus.len()
            ));
            return Some(Rc::new(s));
        }
    }
    let session = if p.backend.get_untracked() == BackendKind::Cpu {
        match encode_in_workers(p, &encoder, &corpus).await {
            Ok(session) => Ok(session),
            Err(e) => {
                web_log(&format!(
                    "encoding worker unavailable ({e}): encoding on the page"
                ));
                encode_on_page(p, encoder, corpus).await
            }
        }
    } else {
        encode_on_page(p, encoder, corpus).await
    };
    p.progress.set(None);
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
            p.corpus_note
                .set(format!("{} passages encoded", s.corpus.len()));
            Some(Rc::new(s))
        }
        Err(e) => {
            fail_work(p, e);
            None
        }
    }
}

pub(super) fn show_progress(p: Page, done: usize, total: usize) {
    p.status.set(Status::Encoding(done, total));
    p.progress.set(Some((done as u64, total as u64)));
}

/// Encodes on the page's thread in small steps, yielding between layers (WebGPU, where the
/// work is the GPU's, and the CPU when no worker can start).
pub(super) async fn encode_on_page(
    p: Page,
    encoder: Rc<Encoder>,
    corpus: Vec<Passage>,
) -> engine::Result<Session> {
    let progress = move |done, total| show_progress(p, done, total);
    Session::new(encoder, corpus, progress, web::yield_now).await
}

/// Encodes on the CPU in the encoding workers (started once per encoder, kept for the next
/// corpus): the page's thread only receives progress and the embeddings.
pub(super) async fn encode_in_workers(
    p: Page,
    encoder: &Rc<Encoder>,
    corpus: &[Passage],
) -> Result<Session, String> {
    let current = p.corpus_workers.with_value(|w| {
        w.as_ref()
            .filter(|(of, _)| Rc::ptr_eq(of, encoder))
            .map(|(_, workers)| workers.clone())
    });
    show_progress(p, 0, corpus.len());
    let workers = match current {
        Some(workers) => workers,
        None => {
            p.corpus_workers.set_value(None);
            let files = p.files.get_value().ok_or("no model files")?;
            let int8 = p.cpu_precision == engine::Precision::Int8;
            let count = p.cpu_workers.unwrap_or_else(CorpusWorkers::affordable);
            let (workers, ms) = CorpusWorkers::start(&files, int8, count).await?;
            web_log(&format!("{count} encoding worker(s) ready in {ms:.0} ms"));
            let workers = Rc::new(workers);
            p.corpus_workers
                .set_value(Some((encoder.clone(), workers.clone())));
            workers
        }
    };
    let texts: Vec<String> = corpus.iter().map(|c| c.encoder_text()).collect();
    let progress = |done, total| show_progress(p, done, total);
    let encoded = workers.encode(&texts, encoder.dim(), progress).await;
    if encoded.is_err() {
        // A worker that failed (or crashed) is not asked again: the next corpus starts anew.
        p.corpus_workers.set_value(None);
    }
    let (passages, memory) = encoded?;
    web_log(&format!(
        "{} encoding worker(s), memory {:.0} MB together",
        workers.len(),
        memory / 1048576.0
    ));
    Ok(Session::from_embeddings(
        encoder.clone(),
        corpus.to_vec(),
        passages,
    ))
}

pub(super) fn web_log(s: &str) {
    leptos::logging::log!("{s}");
}

/// Ranks the corpus for the query alone, with the instruction and with its reversal.
pub(super) async fn rank(p: Page, session: Rc<Session>, inputs: [String; 3]) -> Option<Ranked> {
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
            p.status.set(Status::Ready);
            p.ready.set(true);
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
