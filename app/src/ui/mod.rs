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
use crate::session::QueryEncoder;
use crate::session::Session;
use crate::state::{
    demo_corpus, demo_topics, explain_metric, live_metrics, movement, parse_user_corpus, Column,
    ColumnMetric, Explained, Judgments, LiveMetrics, Ranking, UrlState,
};
use crate::web;

mod columns;
mod controls;
mod learn_panel;
mod load;
mod teach;

use columns::*;
use controls::*;
use learn_panel::{Learn, LearnPanel};
use load::*;
use teach::*;

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

/// A corpus encoded by the page's encoder.
type PageSession = Session<PageEncoder>;

/// Every signal of the page, in four small groups by concern; handed to the components as
/// leptos context.
#[derive(Clone, Copy)]
struct Page {
    model: ModelState,
    load: LoadState,
    search: SearchState,
    view: ViewState,
}

/// The model and the backend that runs it.
#[derive(Clone, Copy)]
struct ModelState {
    /// The downloaded model files, kept to rebuild the encoder on another backend.
    files: StoredValue<Option<Rc<ModelFiles>>, LocalStorage>,
    /// The encoder on the active backend, once built (on the CPU: the encoding workers).
    encoder: RwSignal<Option<Rc<PageEncoder>>, LocalStorage>,
    backend: RwSignal<BackendKind>,
    /// The backend the user picked (URL `backend=`), empty when the page chose.
    backend_choice: RwSignal<String>,
    /// Whether this browser grants a WebGPU adapter (and the build has WebGPU).
    webgpu: RwSignal<bool>,
    /// The served models (`models/index.json`).
    models: RwSignal<Vec<ServedModel>>,
    model_key: RwSignal<String>,
    /// The CPU backend's arithmetic (`?precision=f32` in the URL, else int8): read once.
    cpu_precision: engine::Precision,
    /// How many workers encode a corpus on the CPU (`?workers=N` in the URL, else what the
    /// machine affords): read once.
    cpu_workers: Option<usize>,
}

/// What the status bar says of the work in progress.
#[derive(Clone, Copy)]
struct LoadState {
    status: RwSignal<Status>,
    /// Whether the columns show rankings of the current corpus and inputs.
    ready: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    /// Where the model came from (downloaded, the browser cache).
    cache_note: RwSignal<String>,
    /// Where the corpus embeddings came from.
    corpus_note: RwSignal<String>,
    /// Bytes or passages done of a total, while downloading or encoding.
    progress: RwSignal<Option<(u64, u64)>>,
}

/// The search: the corpus, the three inputs and the judgments the metrics use.
#[derive(Clone, Copy)]
struct SearchState {
    /// `demo`, a demo topic, or `custom`.
    corpus_key: RwSignal<String>,
    corpus: RwSignal<Vec<Passage>>,
    /// The user's own passages (uploaded or pasted).
    custom: RwSignal<Vec<Passage>>,
    /// The demo query shown, empty for the user's own.
    qid: RwSignal<String>,
    query: RwSignal<String>,
    instruction: RwSignal<String>,
    reversed: RwSignal<String>,
    judgments: RwSignal<Judgments>,
}

/// How the page explains itself: teach mode, its tour and explanations, learn live.
#[derive(Clone, Copy)]
struct ViewState {
    teach: RwSignal<bool>,
    /// Whether the learn-live panel shows outside teach mode (URL `train=1`).
    train: RwSignal<bool>,
    /// The metric whose terms are shown.
    explained: RwSignal<Option<Explained>>,
    /// The tour's step, while it runs.
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
    session: LocalResource<Option<Rc<PageSession>>>,
    ranked: LocalResource<Option<Ranked>>,
    /// Learn live: the trained model's order of the columns' top, when there is one.
    learn: Learn,
}

/// The three columns' rankings and the encoded corpus they index.
#[derive(Clone)]
struct Ranked {
    session: Rc<PageSession>,
    columns: BTreeMap<Column, Ranking>,
}

/// The page's work, from context.
fn work() -> Work {
    expect_context::<Work>()
}

impl Work {
    fn new(p: Page) -> Self {
        let session = LocalResource::new(move || {
            let encoder = p.model.encoder.get();
            let corpus = p.search.corpus.get();
            async move {
                match encoder {
                    Some(encoder) => encode_corpus(p, encoder, corpus).await,
                    None => None,
                }
            }
        });
        let ranked = LocalResource::new(move || {
            let session = session.get().flatten();
            let inputs = [
                p.search.query.get(),
                p.search.instruction.get(),
                p.search.reversed.get(),
            ];
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
        (p.load.ready.get() && Rc::ptr_eq(&ranked.session, &session)).then_some(ranked)
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

/// The built-in demo set, parsed once: the page reads it while it mounts (the topics, the
/// first query, its judgments), and parsing it took about a quarter of the mount's task.
pub(crate) fn demo() -> &'static EvalSet {
    static DEMO: std::sync::OnceLock<EvalSet> = std::sync::OnceLock::new();
    DEMO.get_or_init(|| {
        engine::demo::demo_set().expect("the built-in demo set parses (checked by tests)")
    })
}

/// Sets query, instructions and judgments from demo query `qid`.
fn pick_demo_query(p: Page, qid: &str) {
    let set = demo();
    if let Some(q) = set.queries.iter().find(|q| q.id == qid) {
        p.search.qid.set(q.id.clone());
        p.search.query.set(q.text.clone());
        p.search
            .instruction
            .set(q.instruction_changed.clone().unwrap_or_default());
        p.search
            .reversed
            .set(q.instruction_reversed.clone().unwrap_or_default());
        p.search
            .judgments
            .set(Judgments::from_qrels(&set.qrels, &q.id));
    }
}

/// The one place the URL follows the page: every field that a shared link restores.
fn keep_url_in_sync(p: Page) {
    Effect::new(move |_| {
        let state = UrlState {
            corpus: p.search.corpus_key.get(),
            qid: p.search.qid.get(),
            query: p.search.query.get(),
            instruction: p.search.instruction.get(),
            reversed: p.search.reversed.get(),
            model: p.model.model_key.get(),
            backend: p.model.backend_choice.get(),
            teach: p.view.teach.get(),
            train: p.view.train.get(),
            cpu_f32: p.model.cpu_precision == engine::Precision::F32,
            workers: p.model.cpu_workers,
        };
        web::replace_search(&state.to_query_string());
    });
}

fn fail(p: Page, e: impl std::fmt::Display) {
    p.load.error.set(Some(e.to_string()));
    p.load.status.set(Status::Error);
    p.load.ready.set(false);
}

/// Switches corpus by key (`demo`, a demo topic, or `custom`).
fn set_corpus(p: Page, key: &str) {
    let (key, passages) = if key == "custom" {
        (key.to_string(), p.search.custom.get_untracked())
    } else {
        let all = demo().corpus.clone();
        match demo_corpus(&all, key) {
            Some(part) => (key.to_string(), part),
            None => ("demo".to_string(), all),
        }
    };
    p.search.corpus_key.set(key.clone());
    if key == "custom" {
        p.search.qid.set(String::new());
    }
    p.search.corpus.set(passages);
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
        let model = ModelState {
            files: StoredValue::new_local(None),
            encoder: RwSignal::new_local(None),
            backend: RwSignal::new(BackendKind::Cpu),
            backend_choice: RwSignal::new(url.backend.clone()),
            webgpu: RwSignal::new(false),
            models: RwSignal::new(Vec::new()),
            model_key: RwSignal::new(url.model.clone()),
            cpu_precision: if url.cpu_f32 {
                engine::Precision::F32
            } else {
                engine::Precision::Int8
            },
            cpu_workers: url.workers,
        };
        let load = LoadState {
            status: RwSignal::new(Status::Loading),
            ready: RwSignal::new(false),
            error: RwSignal::new(None),
            cache_note: RwSignal::new(String::new()),
            corpus_note: RwSignal::new(String::new()),
            progress: RwSignal::new(None),
        };
        let search = SearchState {
            corpus_key: RwSignal::new(start_key),
            corpus: RwSignal::new(start_corpus),
            custom: RwSignal::new(Vec::new()),
            qid: RwSignal::new(String::new()),
            query: RwSignal::new(String::new()),
            instruction: RwSignal::new(String::new()),
            reversed: RwSignal::new(String::new()),
            judgments: RwSignal::new(Judgments::default()),
        };
        let view = ViewState {
            teach: RwSignal::new(url.teach),
            train: RwSignal::new(url.train),
            explained: RwSignal::new(None),
            tour: RwSignal::new(None),
        };
        Page {
            model,
            load,
            search,
            view,
        }
    }
}

/// The page.
#[component]
pub fn App() -> impl IntoView {
    let url = UrlState::from_query_string(&web::location_search());
    let set = demo();
    let p = Page::new(&url, set);
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
        p.search.query.set(url.query.clone());
        p.search.instruction.set(url.instruction.clone());
        p.search.reversed.set(url.reversed.clone());
    }
    keep_url_in_sync(p);
    // WebGPU when the build has it and the browser grants an adapter, unless the URL asks for
    // the CPU; else the CPU.
    spawn_local(async move {
        let gpu = cfg!(feature = "webgpu") && web::webgpu_adapter().await;
        p.model.webgpu.set(gpu);
        if gpu && p.model.backend_choice.get_untracked() != "cpu" {
            p.model.backend.set(BackendKind::Wgpu);
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
