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
