//! The page (wasm32 only): inputs, the three columns, live metrics, teach mode, model loading
//! and backend switching. State logic lives in [`crate::state`]; this file wires it to leptos
//! signals and the browser.
//!
//! Work that takes long runs off the page's thread or in small steps: on the CPU the corpus is
//! encoded in Web Workers running this same wasm, one per core the machine affords
//! (`crate::corpus_worker`: each its own copy of the model in memory, no extra download); on
//! WebGPU, where the GPU does the work, as async
//! tasks that yield to the event loop between small steps (see [`crate::session::steps`]).
//! Learn live trains in a second worker with its own wasm (`learn_panel`).

use std::collections::BTreeMap;
use std::rc::Rc;

use engine::data::{EvalSet, Passage};
use engine::{BackendKind, Encoder, ModelFiles};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::corpus_worker::CorpusWorkers;
use crate::models::{self, human_bytes, ServedModel};
use crate::session::Session;
use crate::state::{
    demo_corpus, demo_topics, explain_metric, live_metrics, movement, parse_user_corpus, Column,
    ColumnMetric, Explained, Judgments, LiveMetrics, Ranking, UrlState,
};
use crate::web;

mod learn_panel;
use learn_panel::{Learn, LearnPanel};

/// What the status bar says.
#[derive(Debug, Clone, PartialEq)]
enum Status {
    /// Before anything started.
    Loading,
    /// Fetching the named model's files.
    Downloading(String),
    /// Building the encoder on a backend.
    Starting(&'static str),
    /// The first forward pass.
    WarmingUp,
    /// Encoding the corpus, `done` of `total`.
    Encoding(usize, usize),
    /// Ready to search.
    Ready,
    /// Stopped by an error (shown beside).
    Error,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Loading => f.write_str("loading"),
            Status::Downloading(name) => write!(f, "downloading {name}"),
            Status::Starting(backend) => write!(f, "starting {backend}"),
            Status::WarmingUp => f.write_str("warming up"),
            Status::Encoding(done, total) => write!(f, "encoding corpus {done}/{total}"),
            Status::Ready => f.write_str("ready"),
            Status::Error => f.write_str("error"),
        }
    }
}

/// The CPU encoding workers with the page encoder whose model they hold.
type WorkersOf = (Rc<Encoder>, Rc<CorpusWorkers>);

/// Every signal of the page, handed to the components as leptos context.
#[derive(Clone, Copy)]
struct Page {
    /// The downloaded model files, kept to rebuild the encoder on another backend.
    files: StoredValue<Option<Rc<ModelFiles>>, LocalStorage>,
    /// The CPU encoding workers and the page encoder they mirror (a new encoder, new workers).
    corpus_workers: StoredValue<Option<WorkersOf>, LocalStorage>,
    /// The encoder on the active backend, once built.
    encoder: RwSignal<Option<Rc<Encoder>>, LocalStorage>,
    status: RwSignal<Status>,
    ready: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    cache_note: RwSignal<String>,
    corpus_note: RwSignal<String>,
    progress: RwSignal<Option<(u64, u64)>>,
    backend: RwSignal<BackendKind>,
    /// The backend the user picked (URL `backend=`), empty when the page chose.
    backend_choice: RwSignal<String>,
    webgpu: RwSignal<bool>,
    models: RwSignal<Vec<ServedModel>>,
    model_key: RwSignal<String>,
    corpus_key: RwSignal<String>,
    corpus: RwSignal<Vec<Passage>>,
    custom: RwSignal<Vec<Passage>>,
    qid: RwSignal<String>,
    query: RwSignal<String>,
    instruction: RwSignal<String>,
    reversed: RwSignal<String>,
    judgments: RwSignal<Judgments>,
    teach: RwSignal<bool>,
    /// Whether the learn-live panel shows outside teach mode (URL `train=1`).
    train: RwSignal<bool>,
    /// The CPU backend's arithmetic (`?precision=f32` in the URL, else int8): read once.
    cpu_precision: engine::Precision,
    /// How many workers encode a corpus on the CPU (`?workers=N` in the URL, else what the
    /// machine affords): read once.
    cpu_workers: Option<usize>,
    explained: RwSignal<Option<Explained>>,
    tour: RwSignal<Option<usize>>,
}

/// The page's state, from context.
fn page() -> Page {
    expect_context::<Page>()
}

/// The page's async work as resources: the encoded corpus follows the encoder and the corpus,
/// the rankings follow the encoded corpus and the three inputs. A resource runs one
/// computation at a time and always ends on its newest inputs, so a stale corpus or search
/// never overwrites a newer one.
#[derive(Clone, Copy)]
struct Work {
    session: LocalResource<Option<Rc<Session>>>,
    ranked: LocalResource<Option<Ranked>>,
    /// Learn live: the trained model's order of the columns' top, when there is one.
    learn: Learn,
}

/// The three columns' rankings and the encoded corpus they index.
#[derive(Clone)]
struct Ranked {
    session: Rc<Session>,
    columns: BTreeMap<Column, Ranking>,
}

/// The page's work, from context.
fn work() -> Work {
    expect_context::<Work>()
}

impl Work {
    fn new(p: Page) -> Self {
        let session = LocalResource::new(move || {
            let encoder = p.encoder.get();
            let corpus = p.corpus.get();
            async move {
                match encoder {
                    Some(encoder) => encode_corpus(p, encoder, corpus).await,
                    None => None,
                }
            }
        });
        let ranked = LocalResource::new(move || {
            let session = session.get().flatten();
            let inputs = [p.query.get(), p.instruction.get(), p.reversed.get()];
            async move {
                match session {
                    Some(session) => rank(p, session, inputs).await,
                    None => None,
                }
            }
        });
        Work {
            session,
            ranked,
            learn: Learn::new(),
        }
    }

    /// The page model's rankings of the current encoded corpus, while it is ready (a corpus
    /// being encoded, or one encoded but not ranked yet, has none).
    fn base(self, p: Page) -> Option<Ranked> {
        let ranked = self.ranked.get().flatten()?;
        let session = self.session.get().flatten()?;
        (p.ready.get() && Rc::ptr_eq(&ranked.session, &session)).then_some(ranked)
    }

    /// The rankings to show: [`Work::base`], with the columns in the trained model's order
    /// once learn live has re-ranked them.
    fn shown(self, p: Page) -> Option<Ranked> {
        let mut ranked = self.base(p)?;
        if let Some(columns) = self.learn.columns_for(p, &ranked) {
            ranked.columns = columns;
        }
        Some(ranked)
    }
}

fn demo() -> EvalSet {
    engine::demo::demo_set().expect("the built-in demo set parses (checked by tests)")
}

/// Sets query, instructions and judgments from demo query `qid`.
fn pick_demo_query(p: Page, qid: &str) {
    let set = demo();
    if let Some(q) = set.queries.iter().find(|q| q.id == qid) {
        p.qid.set(q.id.clone());
        p.query.set(q.text.clone());
        p.instruction
            .set(q.instruction_changed.clone().unwrap_or_default());
        p.reversed
            .set(q.instruction_reversed.clone().unwrap_or_default());
        p.judgments.set(Judgments::from_qrels(&set.qrels, &q.id));
    }
}

/// The one place the URL follows the page: every field that a shared link restores.
fn keep_url_in_sync(p: Page) {
    Effect::new(move |_| {
        let state = UrlState {
            corpus: p.corpus_key.get(),
            qid: p.qid.get(),
            query: p.query.get(),
            instruction: p.instruction.get(),
            reversed: p.reversed.get(),
            model: p.model_key.get(),
            backend: p.backend_choice.get(),
            teach: p.teach.get(),
            train: p.train.get(),
            cpu_f32: p.cpu_precision == engine::Precision::F32,
            workers: p.cpu_workers,
        };
        web::replace_search(&state.to_query_string());
    });
}

fn fail(p: Page, e: impl std::fmt::Display) {
    p.error.set(Some(e.to_string()));
    p.status.set(Status::Error);
    p.ready.set(false);
}

/// A failure of work on the encoder: on WebGPU (a device lost mid-way, a driver reset, a tab
/// that lost its GPU) the page says so, turns WebGPU off and starts again on the CPU, keeping
/// the corpus and the inputs; on the CPU it is an error.
fn fail_work(p: Page, e: impl std::fmt::Display) {
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
async fn load_model(p: Page) {
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
async fn fetch_verified(
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
async fn start_backend(p: Page) {
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
fn precision_name(p: Page) -> String {
    match p.backend.get() {
        BackendKind::Cpu => p.cpu_precision.to_string(),
        _ => "f32".into(),
    }
}

fn backend_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Cpu => "cpu",
        _ => "webgpu",
    }
}

/// Encodes `corpus` (or reads its embeddings from the browser cache), showing progress.
async fn encode_corpus(p: Page, encoder: Rc<Encoder>, corpus: Vec<Passage>) -> Option<Rc<Session>> {
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

fn show_progress(p: Page, done: usize, total: usize) {
    p.status.set(Status::Encoding(done, total));
    p.progress.set(Some((done as u64, total as u64)));
}

/// Encodes on the page's thread in small steps, yielding between layers (WebGPU, where the
/// work is the GPU's, and the CPU when no worker can start).
async fn encode_on_page(
    p: Page,
    encoder: Rc<Encoder>,
    corpus: Vec<Passage>,
) -> engine::Result<Session> {
    let progress = move |done, total| show_progress(p, done, total);
    Session::new(encoder, corpus, progress, web::yield_now).await
}

/// Encodes on the CPU in the encoding workers (started once per encoder, kept for the next
/// corpus): the page's thread only receives progress and the embeddings.
async fn encode_in_workers(
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

fn web_log(s: &str) {
    leptos::logging::log!("{s}");
}

/// Ranks the corpus for the query alone, with the instruction and with its reversal.
async fn rank(p: Page, session: Rc<Session>, inputs: [String; 3]) -> Option<Ranked> {
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

/// Switches corpus by key (`demo`, a demo topic, or `custom`).
fn set_corpus(p: Page, key: &str) {
    let (key, passages) = if key == "custom" {
        (key.to_string(), p.custom.get_untracked())
    } else {
        let all = demo().corpus;
        match demo_corpus(&all, key) {
            Some(part) => (key.to_string(), part),
            None => ("demo".to_string(), all),
        }
    };
    p.corpus_key.set(key.clone());
    if key == "custom" {
        p.qid.set(String::new());
    }
    p.corpus.set(passages);
}

impl Page {
    /// The page's signals at start: the URL's state, its demo topic or the whole demo corpus
    /// (a user corpus is not in the URL).
    fn new(url: &UrlState, set: &EvalSet) -> Page {
        // A demo topic from the URL, else the whole demo corpus (a user corpus is not in it).
        let (start_key, start_corpus) = match demo_corpus(&set.corpus, &url.corpus) {
            Some(part) => (url.corpus.clone(), part),
            None => ("demo".to_string(), set.corpus.clone()),
        };
        Page {
            files: StoredValue::new_local(None),
            corpus_workers: StoredValue::new_local(None),
            encoder: RwSignal::new_local(None),
            status: RwSignal::new(Status::Loading),
            ready: RwSignal::new(false),
            error: RwSignal::new(None),
            cache_note: RwSignal::new(String::new()),
            corpus_note: RwSignal::new(String::new()),
            progress: RwSignal::new(None),
            backend: RwSignal::new(BackendKind::Cpu),
            backend_choice: RwSignal::new(url.backend.clone()),
            webgpu: RwSignal::new(false),
            models: RwSignal::new(Vec::new()),
            model_key: RwSignal::new(url.model.clone()),
            corpus_key: RwSignal::new(start_key),
            corpus: RwSignal::new(start_corpus),
            custom: RwSignal::new(Vec::new()),
            qid: RwSignal::new(String::new()),
            query: RwSignal::new(String::new()),
            instruction: RwSignal::new(String::new()),
            reversed: RwSignal::new(String::new()),
            judgments: RwSignal::new(Judgments::default()),
            teach: RwSignal::new(url.teach),
            train: RwSignal::new(url.train),
            cpu_precision: if url.cpu_f32 {
                engine::Precision::F32
            } else {
                engine::Precision::Int8
            },
            cpu_workers: url.workers,
            explained: RwSignal::new(None),
            tour: RwSignal::new(None),
        }
    }
}

/// The page.
#[component]
pub fn App() -> impl IntoView {
    let url = UrlState::from_query_string(&web::location_search());
    let set = demo();
    let p = Page::new(&url, &set);
    // Initial example: the URL's, else the first demo query.
    let qid = if url.qid.is_empty() && url.query.is_empty() {
        set.queries[0].id.clone()
    } else {
        url.qid.clone()
    };
    provide_context(p);
    provide_context(Work::new(p));
    pick_demo_query(p, &qid);
    if !url.query.is_empty() {
        p.query.set(url.query.clone());
        p.instruction.set(url.instruction.clone());
        p.reversed.set(url.reversed.clone());
    }
    keep_url_in_sync(p);
    // WebGPU when the build has it and the browser grants an adapter, unless the URL asks for
    // the CPU; else the CPU.
    spawn_local(async move {
        let gpu = cfg!(feature = "webgpu") && web::webgpu_adapter().await;
        p.webgpu.set(gpu);
        if gpu && p.backend_choice.get_untracked() != "cpu" {
            p.backend.set(BackendKind::Wgpu);
        }
        load_model(p).await
    });

    view! {
        <header class="top">
            <h1>"Instruction-following retrieval"</h1>
            <p class="lead">"Does the search obey the instruction? Compare the ranking of the query alone with the query plus an instruction, and plus its reversal."</p>
        </header>
        <main>
            <StatusBar />
            <Inputs />
            <MetricsPanel />
            <section class="columns" aria-label="Rankings">
                {Column::ALL.into_iter().map(|c| view! { <RankingColumn column=c /> }).collect_view()}
            </section>
            <LearnPanel />
            <TeachPanel />
        </main>
        <footer>
            <p>"Runs entirely in your browser: passages and instructions never leave it. Model: all-MiniLM-L6-v2 (Apache-2.0)."</p>
        </footer>
    }
}

#[component]
fn StatusBar() -> impl IntoView {
    let p = page();
    let retry = move |_| spawn_local(load_model(p));
    let clear = move |_| {
        spawn_local(async move {
            let note = match web::clear_cache().await {
                Ok(()) => "browser cache cleared; the next load downloads again".to_string(),
                Err(e) => format!("could not clear the cache: {e}"),
            };
            p.cache_note.set(note);
        })
    };
    let switch = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        p.backend.set(if v == "webgpu" {
            BackendKind::Wgpu
        } else {
            BackendKind::Cpu
        });
        p.backend_choice.set(v);
        spawn_local(start_backend(p));
    };
    view! {
        <section class="status" aria-live="polite">
            <span>"Model: "<strong data-testid="model-status">{move || p.status.get().to_string()}</strong></span>
            {move || p.progress.get().map(|(done, total)| {
                let label = if matches!(p.status.get(), Status::Downloading(_)) {
                    format!("{} / {}", human_bytes(done), human_bytes(total))
                } else {
                    format!("{done} / {total}")
                };
                view! {
                    <progress max=total.max(1).to_string() value=done.to_string()></progress>
                    <span class="muted">{label}</span>
                }
            })}
            <span class="muted" data-testid="cache-note">{move || p.cache_note.get()}</span>
            <span class="muted" data-testid="corpus-note">{move || p.corpus_note.get()}</span>
            <label>"Backend "
                <select aria-label="Backend" on:change=switch prop:value=move || backend_name(p.backend.get())>
                    <option value="cpu">"CPU (wasm)"</option>
                    <option value="webgpu" disabled=move || !p.webgpu.get()>"WebGPU"</option>
                </select>
            </label>
            <span>"active: "<code data-testid="backend">{move || backend_name(p.backend.get())}</code>
                <code data-testid="precision">{move || precision_name(p)}</code></span>
            <ModelPicker />
            <button on:click=clear>"Clear cache"</button>
            <label class="teach-toggle"><input type="checkbox" prop:checked=move || p.teach.get()
                on:change=move |_| p.teach.update(|t| *t = !*t) />" Teach mode"</label>
            {move || p.error.get().map(|e| view! {
                <div class="error" role="alert">
                    <span>{e}</span>" "
                    <button on:click=retry>"Retry"</button>
                </div>
            })}
        </section>
    }
}

#[component]
fn ModelPicker() -> impl IntoView {
    let p = page();
    let change = move |ev: leptos::ev::Event| {
        p.model_key.set(event_target_value(&ev));
        spawn_local(load_model(p));
    };
    view! {
        <Show when=move || { p.models.get().len() > 1 }>
            <label>"Model "
                <select data-testid="model-select" on:change=change prop:value=move || p.model_key.get()>
                    {move || p.models.get().into_iter().map(|m| view! {
                        <option value=m.key.clone()>{m.name.clone()}</option>
                    }).collect_view()}
                </select>
            </label>
        </Show>
    }
}

/// Takes a user corpus (uploaded or pasted) and switches to it, or shows why not.
fn use_user_corpus(p: Page, parsed: Result<Vec<Passage>, String>) {
    match parsed {
        Ok(passages) => {
            p.custom.set(passages);
            p.judgments.set(Judgments::default());
            p.error.set(None);
            set_corpus(p, "custom");
        }
        Err(e) => p.error.set(Some(e)),
    }
}

#[component]
fn Inputs() -> impl IntoView {
    let p = page();
    let on_text = move |signal: RwSignal<String>| {
        move |ev: leptos::ev::Event| signal.set(event_target_value(&ev))
    };
    view! {
        <section class="inputs">
            <CorpusControls />
            <label class="field">"Query"
                <input type="text" data-testid="query" prop:value=move || p.query.get() on:input=on_text(p.query) />
            </label>
            <label class="field">"Instruction"
                <textarea data-testid="instruction" rows="2" prop:value=move || p.instruction.get() on:input=on_text(p.instruction)></textarea>
            </label>
            <label class="field">"Reversed instruction"
                <textarea data-testid="reversed-instruction" rows="2" prop:value=move || p.reversed.get() on:input=on_text(p.reversed)></textarea>
            </label>
        </section>
    }
}

/// The corpus and example pickers, the upload and the paste box.
#[component]
fn CorpusControls() -> impl IntoView {
    let p = page();
    let set = demo();
    let topics = demo_topics(&set.corpus);
    let queries: Vec<(String, String)> = set
        .queries
        .iter()
        .map(|q| (q.id.clone(), q.text.clone()))
        .collect();
    let pick = move |ev: leptos::ev::Event| {
        pick_demo_query(p, &event_target_value(&ev));
        if p.corpus_key.get_untracked() == "custom" {
            set_corpus(p, "demo");
        }
    };
    let corpus_change = move |ev: leptos::ev::Event| set_corpus(p, &event_target_value(&ev));
    let upload = move |ev: leptos::ev::Event| {
        use wasm_bindgen::JsCast;
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        spawn_local(async move {
            let name = file.name();
            let parsed = web::read_file(&file)
                .await
                .and_then(|t| parse_user_corpus(&t, &name));
            use_user_corpus(p, parsed);
        });
    };
    let pasted = RwSignal::new(String::new());
    let use_pasted =
        move |_| use_user_corpus(p, parse_user_corpus(&pasted.get_untracked(), "pasted text"));
    view! {
        <div class="row">
            <label>"Corpus "
                <select data-testid="corpus-select" on:change=corpus_change prop:value=move || p.corpus_key.get()>
                    <option value="demo">{format!("Built-in demo ({} passages, {} topics)", set.corpus.len(), topics.len())}</option>
                    {topics.into_iter().map(|(topic, n)| view! {
                        <option value=topic.clone()>{format!("Demo topic: {topic} ({n} passages)")}</option>
                    }).collect_view()}
                    <option value="custom" disabled=move || p.custom.get().is_empty()>
                        {move || format!("Your passages ({})", p.custom.get().len())}
                    </option>
                </select>
            </label>
            <label>"Example "
                <select aria-label="Demo example" on:change=pick prop:value=move || p.qid.get()>
                    <option value="">"(your own)"</option>
                    {queries.into_iter().map(|(id, text)| view! { <option value=id.clone()>{format!("{id}: {text}")}</option> }).collect_view()}
                </select>
            </label>
            <label>"Upload passages (JSONL or one per line) "
                <input type="file" data-testid="corpus-upload" accept=".jsonl,.txt,.json,text/plain" on:change=upload />
            </label>
        </div>
        <details>
            <summary>"Paste passages"</summary>
            <textarea aria-label="Passages, one per line" rows="4" on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
            <button on:click=use_pasted>"Use these passages"</button>
        </details>
    }
}

fn metrics_now(p: Page, w: Work) -> LiveMetrics {
    let Some(ranked) = w.shown(p) else {
        return LiveMetrics::default();
    };
    live_metrics(&ranked.columns, &ranked.session.corpus, &p.judgments.get())
}

fn fmt_metric(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1}", v * 100.0))
        .unwrap_or_else(|| "–".into())
}

#[component]
fn MetricButton(
    name: &'static str,
    key: &'static str,
    #[prop(optional)] column: Option<Column>,
    which: Explained,
    value: Signal<Option<f64>>,
) -> impl IntoView {
    let p = page();
    view! {
        <button class="metric" data-testid="metric" data-metric=key
            data-column=column.map(|c| c.name()).unwrap_or("")
            data-value=move || value.get().map(|v| v.to_string()).unwrap_or_default()
            title="Open the formula and the per-document terms"
            on:click=move |_| { p.explained.set(Some(which)); p.teach.set(true); }>
            <span class="metric-name">{name}</span>
            <span class="metric-value">{move || fmt_metric(value.get())}</span>
        </button>
    }
}

#[component]
fn MetricsPanel() -> impl IntoView {
    let p = page();
    let w = work();
    let m = Memo::new(move |_| metrics_now(p, w));
    let pm = Signal::derive(move || m.get().p_mrr);
    let wise = Signal::derive(move || m.get().wise);
    let sicr = Signal::derive(move || m.get().sicr);
    view! {
        <section class="metrics" aria-label="Instruction-following metrics (x100)">
            <MetricButton name="p-MRR" key="p-mrr" which=Explained::PMrr value=pm />
            <MetricButton name="WISE" key="wise" which=Explained::Wise value=wise />
            <MetricButton name="SICR" key="sicr" which=Explained::Sicr value=sicr />
            <span class="muted">"values ×100; – when the judgments do not define the metric; click a metric to see how it is made"</span>
        </section>
    }
}

#[component]
fn RankingColumn(column: Column) -> impl IntoView {
    let p = page();
    let w = work();
    let m = Memo::new(move |_| metrics_now(p, w));
    let value = move |metric| Signal::derive(move || m.get().column(column, metric));
    let rows = move || {
        let Some(Ranked { session, columns }) = w.shown(p) else {
            return Vec::new();
        };
        let corpus = &session.corpus;
        let judgments = p.judgments.get();
        let Some(ranking) = columns.get(&column).cloned() else {
            return Vec::new();
        };
        let base = columns.get(&Column::Query).cloned().unwrap_or_default();
        ranking
            .iter()
            .take(10)
            .enumerate()
            .filter_map(|(pos, (doc, score))| Some((pos, score, corpus.get(*doc)?.clone())))
            .map(|(pos, score, passage)| {
                let relevant = judgments.is_relevant(column.mode(), &passage.id);
                let judged = judgments.level(column.mode(), &passage.id);
                let mv = (column != Column::Query).then(|| movement(&base, &ranking, pos));
                let id = passage.id.clone();
                let toggle = move |_| {
                    p.judgments.update(|j| j.toggle(column.mode(), &id));
                };
                view! {
                    <li data-testid="result" data-doc-id=passage.id.clone() class:relevant=relevant>
                        <div class="result-head">
                            <span class="rank">{pos + 1}</span>
                            {mv.map(|m| view! { <span class="move" title="places moved vs the query alone">{m.label()}</span> })}
                            <span class="score">{format!("{score:.3}")}</span>
                            <button class="judge" data-testid="judge" aria-pressed=relevant.to_string()
                                title="Toggle the judgment for this column's instruction"
                                on:click=toggle>
                                {if relevant { format!("relevant ({judged})") } else { "not relevant".to_string() }}
                            </button>
                        </div>
                        <div class="doc-id">{passage.id.clone()}</div>
                        {(!passage.title.is_empty()).then(|| view! { <div class="title">{passage.title.clone()}</div> })}
                        <p class="text">{passage.text.clone()}</p>
                    </li>
                }
            })
            .collect_view()
            .into_iter()
            .collect::<Vec<_>>()
    };
    view! {
        <div class="column">
            <h2>{column.title()}</h2>
            <div class="column-metrics">
                {ColumnMetric::ALL.map(|metric| view! {
                    <MetricButton name=metric.label() key=metric.key() column=column
                        which=metric.explained(column) value=value(metric) />
                }).collect_view()}
            </div>
            <ol data-testid=format!("ranking-{}", column.name())>{rows}</ol>
        </div>
    }
}

const TOUR: [&str; 4] = [
    "1. The left column ranks passages for the query alone: topic matching only.",
    "2. The middle column adds the instruction. Arrows show how far each passage moved; passages that satisfy the instruction should climb.",
    "3. The right column uses the reversed instruction: the same passages should now fall. WISE rewards exactly this pattern (up with the instruction, down with its reversal).",
    "4. Click a judgment to change it, and watch p-MRR, WISE and SICR recompute. Click any metric to open its formula and per-passage terms.",
];

#[component]
fn TeachPanel() -> impl IntoView {
    let p = page();
    let w = work();
    let breakdown = move || {
        let which = p.explained.get()?;
        let ranked = w.shown(p)?;
        explain_metric(
            which,
            &ranked.columns,
            &ranked.session.corpus,
            &p.judgments.get(),
        )
    };
    view! {
        <Show when=move || p.teach.get()>
            <section class="teach" data-testid="teach" aria-label="Teach mode">
                <h2>"Teach mode"</h2>
                <div class="tour">
                    {move || match p.tour.get() {
                        None => view! { <button on:click=move |_| p.tour.set(Some(0))>"Start the guided tour of one instruction flip"</button> }.into_any(),
                        Some(i) => view! {
                            <p data-testid="tour-step">{TOUR[i]}</p>
                            <button disabled=i == 0 on:click=move |_| p.tour.set(Some(i.saturating_sub(1)))>"Back"</button>
                            {if i + 1 < TOUR.len() {
                                view! { <button on:click=move |_| p.tour.set(Some(i + 1))>"Next"</button> }.into_any()
                            } else {
                                view! { <button on:click=move |_| p.tour.set(None)>"Done"</button> }.into_any()
                            }}
                        }.into_any(),
                    }}
                </div>
                {move || match breakdown() {
                    None => view! { <p class="muted">"Click a metric to see its formula and how each passage contributes. (A metric shows – when the judgments leave it undefined.)"</p> }.into_any(),
                    Some(b) => view! {
                        <div data-testid="breakdown">
                            <h3>{b.metric.clone()}" = "{format!("{:.4}", b.value)}</h3>
                            <p class="formula">{b.formula}</p>
                            <p>{b.combination.clone()}</p>
                            <table>
                                <thead><tr><th>"passage"</th><th>"how"</th><th>"term"</th></tr></thead>
                                <tbody>
                                    {b.terms.into_iter().map(|t| view! {
                                        <tr><td>{t.doc}</td><td>{t.detail}</td><td>{format!("{:.4}", t.value)}</td></tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }.into_any(),
                }}
            </section>
        </Show>
    }
}
