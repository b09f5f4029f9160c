//! The page (wasm32 only): inputs, the three columns, live metrics, teach mode, model loading
//! and backend switching. State logic lives in [`crate::state`]; this file wires it to leptos
//! signals and the browser.
//!
//! Work that takes long (downloading, encoding a corpus) runs as async tasks that yield to the
//! event loop between small steps (see [`crate::session::PASSAGES_PER_STEP`]) rather than in a
//! Web Worker: a worker would need its own copy of the wasm module and of the model in memory,
//! and WebGPU buffers cannot be shared between the two; short steps keep input and painting
//! responsive on both backends.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use engine::data::{EvalSet, Passage};
use engine::{BackendKind, Encoder, ModelFiles};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::models::{self, human_bytes, ServedModel};
use crate::session::Session;
use crate::state::{
    demo_corpus, demo_topics, explain_metric, live_metrics, movement, parse_user_corpus, Column,
    Explained, Judgments, LiveMetrics, Ranking, UrlState, COLUMN_METRICS,
};
use crate::web;

thread_local! {
    /// Downloaded model files (kept to rebuild the encoder on another backend).
    static FILES: RefCell<Option<Rc<ModelFiles>>> = const { RefCell::new(None) };
    /// The encoder on the active backend.
    static ENCODER: RefCell<Option<Rc<Encoder>>> = const { RefCell::new(None) };
    /// The encoded corpus.
    static SESSION: RefCell<Option<Rc<Session>>> = const { RefCell::new(None) };
    /// Bumped by every new search, so stale results are dropped.
    static GENERATION: Cell<u64> = const { Cell::new(0) };
    /// Bumped by every corpus load (a newer corpus or backend wins).
    static CORPUS_GENERATION: Cell<u64> = const { Cell::new(0) };
}

fn bump(counter: &'static std::thread::LocalKey<Cell<u64>>) -> u64 {
    counter.with(|g| {
        g.set(g.get() + 1);
        g.get()
    })
}

fn next_generation() -> u64 {
    bump(&GENERATION)
}

fn current_generation() -> u64 {
    GENERATION.with(|g| g.get())
}

fn current_corpus_generation() -> u64 {
    CORPUS_GENERATION.with(|g| g.get())
}

/// Every signal of the page.
#[derive(Clone, Copy)]
struct Page {
    status: RwSignal<String>,
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
    rankings: RwSignal<BTreeMap<Column, Ranking>>,
    judgments: RwSignal<Judgments>,
    teach: RwSignal<bool>,
    explained: RwSignal<Option<Explained>>,
    tour: RwSignal<Option<usize>>,
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

fn sync_url(p: Page) {
    let state = UrlState {
        corpus: p.corpus_key.get_untracked(),
        qid: p.qid.get_untracked(),
        query: p.query.get_untracked(),
        instruction: p.instruction.get_untracked(),
        reversed: p.reversed.get_untracked(),
        model: p.model_key.get_untracked(),
        backend: p.backend_choice.get_untracked(),
        teach: p.teach.get_untracked(),
    };
    web::replace_search(&state.to_query_string());
}

fn fail(p: Page, e: impl std::fmt::Display) {
    p.error.set(Some(e.to_string()));
    p.status.set("error".into());
    p.ready.set(false);
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
    p.status.set(format!("downloading {}", model.name));
    for file in &model.files {
        let url = format!("models/{}/{}", model.key, file.path);
        let base = done;
        let result = web::fetch_cached(&url, &file.sha256, |n| {
            p.progress.set(Some((base + n, total)));
        })
        .await;
        let (bytes, source) = match result {
            Ok(r) => r,
            Err(e) => return fail(p, format!("download failed: {e}")),
        };
        if let Err(e) = models::verify(file, &bytes) {
            return fail(p, e);
        }
        if source == web::Source::Network {
            from_cache = false;
            web::store_cached(&url, &file.sha256, &bytes).await;
        }
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
    FILES.with(|f| *f.borrow_mut() = Some(files));
    start_backend(p).await;
}

/// Builds the encoder on the selected backend, warms it up and encodes the corpus.
async fn start_backend(p: Page) {
    let Some(files) = FILES.with(|f| f.borrow().clone()) else {
        return;
    };
    p.ready.set(false);
    let kind = p.backend.get_untracked();
    p.status.set(format!("starting {}", backend_name(kind)));
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
    let encoder = match Encoder::from_files(&files, &device) {
        Ok(e) => Rc::new(e),
        Err(e) => return fail(p, e),
    };
    p.status.set("warming up".into());
    web::yield_now().await;
    if let Err(e) = encoder.encode_async(&["warm-up"], &mut |_, _| {}).await {
        return fail(p, e);
    }
    ENCODER.with(|e| *e.borrow_mut() = Some(encoder));
    load_corpus(p).await;
}

fn backend_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Cpu => "cpu",
        _ => "webgpu",
    }
}

/// Encodes the current corpus, then searches.
async fn load_corpus(p: Page) {
    let Some(encoder) = ENCODER.with(|e| e.borrow().clone()) else {
        return;
    };
    let generation = bump(&CORPUS_GENERATION);
    p.ready.set(false);
    let corpus = p.corpus.get_untracked();
    let started = web::now_ms();
    // Passage embeddings are cached in the browser per model and corpus: a reload is quick.
    let key = format!("embeddings/{}", Session::cache_key(&encoder, &corpus));
    if let Some(bytes) = web::cache_get(&format!("{key}?v=2")).await {
        if let Some(s) = Session::from_cached(encoder.clone(), corpus.clone(), &bytes) {
            if current_corpus_generation() != generation {
                return;
            }
            web_log(&format!(
                "corpus of {} passages read from the browser cache in {:.0} ms",
                s.corpus.len(),
                web::now_ms() - started
            ));
            p.corpus_note.set(format!(
                "{} passage embeddings from the browser cache",
                s.corpus.len()
            ));
            SESSION.with(|x| *x.borrow_mut() = Some(Rc::new(s)));
            search(p).await;
            return;
        }
    }
    let session = Session::new(
        encoder,
        corpus,
        |done, total| {
            if current_corpus_generation() == generation {
                p.status.set(format!("encoding corpus {done}/{total}"));
                p.progress.set(Some((done as u64, total as u64)));
            }
        },
        web::yield_now,
    )
    .await;
    if current_corpus_generation() != generation {
        return;
    }
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
            SESSION.with(|x| *x.borrow_mut() = Some(Rc::new(s)));
            search(p).await;
        }
        Err(e) => fail(p, e),
    }
}

fn web_log(s: &str) {
    leptos::logging::log!("{s}");
}

/// Ranks the corpus for the three inputs.
async fn search(p: Page) {
    let Some(session) = SESSION.with(|s| s.borrow().clone()) else {
        return;
    };
    let generation = next_generation();
    let query = p.query.get_untracked();
    let (instruction, reversed) = (p.instruction.get_untracked(), p.reversed.get_untracked());
    let started = web::now_ms();
    let result = session
        .rank(&[("", &query), (&instruction, &query), (&reversed, &query)])
        .await;
    if current_generation() != generation {
        return;
    }
    match result {
        Ok(mut r) => {
            web_log(&format!(
                "query encoded and ranked in {:.1} ms",
                web::now_ms() - started
            ));
            let reversed = r.pop().unwrap_or_default();
            let instructed = r.pop().unwrap_or_default();
            let alone = r.pop().unwrap_or_default();
            p.rankings.set(
                [
                    (Column::Query, alone),
                    (Column::Instructed, instructed),
                    (Column::Reversed, reversed),
                ]
                .into(),
            );
            p.status.set("ready".into());
            p.ready.set(true);
        }
        Err(e) => fail(p, e),
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
    // The old rankings index the old corpus: clear them with it.
    p.rankings.set(BTreeMap::new());
    p.corpus.set(passages);
    sync_url(p);
    spawn_local(load_corpus(p));
}

/// Runs a search a moment after the last keystroke.
fn schedule_search(p: Page) {
    sync_url(p);
    let generation = next_generation();
    spawn_local(async move {
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            let _ = web_sys::window()
                .expect("window")
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 250);
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        if current_generation() == generation {
            search(p).await;
        }
    });
}

/// The page.
#[component]
pub fn App() -> impl IntoView {
    let url = UrlState::from_query_string(&web::location_search());
    let set = demo();
    // A demo topic from the URL, else the whole demo corpus (a user corpus is not in it).
    let (start_key, start_corpus) = match demo_corpus(&set.corpus, &url.corpus) {
        Some(part) => (url.corpus.clone(), part),
        None => ("demo".to_string(), set.corpus.clone()),
    };
    let p = Page {
        status: RwSignal::new("loading".into()),
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
        rankings: RwSignal::new(BTreeMap::new()),
        judgments: RwSignal::new(Judgments::default()),
        teach: RwSignal::new(url.teach),
        explained: RwSignal::new(None),
        tour: RwSignal::new(None),
    };
    // Initial example: the URL's, else the first demo query.
    let qid = if url.qid.is_empty() && url.query.is_empty() {
        set.queries[0].id.clone()
    } else {
        url.qid.clone()
    };
    pick_demo_query(p, &qid);
    if !url.query.is_empty() {
        p.query.set(url.query.clone());
        p.instruction.set(url.instruction.clone());
        p.reversed.set(url.reversed.clone());
    }
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
            <StatusBar p=p />
            <Inputs p=p />
            <MetricsPanel p=p />
            <section class="columns" aria-label="Rankings">
                {Column::ALL.into_iter().map(|c| view! { <RankingColumn p=p column=c /> }).collect_view()}
            </section>
            <TeachPanel p=p />
        </main>
        <footer>
            <p>"Runs entirely in your browser: passages and instructions never leave it. Model: all-MiniLM-L6-v2 (Apache-2.0)."</p>
        </footer>
    }
}

#[component]
fn StatusBar(p: Page) -> impl IntoView {
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
        sync_url(p);
        spawn_local(start_backend(p));
    };
    view! {
        <section class="status" aria-live="polite">
            <span>"Model: "<strong data-testid="model-status">{move || p.status.get()}</strong></span>
            {move || p.progress.get().map(|(done, total)| {
                let label = if p.status.get().starts_with("downloading") {
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
            <span>"active: "<code data-testid="backend">{move || backend_name(p.backend.get())}</code></span>
            <ModelPicker p=p />
            <button on:click=clear>"Clear cache"</button>
            <label class="teach-toggle"><input type="checkbox" prop:checked=move || p.teach.get()
                on:change=move |_| { p.teach.update(|t| *t = !*t); sync_url(p); } />" Teach mode"</label>
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
fn ModelPicker(p: Page) -> impl IntoView {
    let change = move |ev: leptos::ev::Event| {
        p.model_key.set(event_target_value(&ev));
        sync_url(p);
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

#[component]
fn Inputs(p: Page) -> impl IntoView {
    let set = demo();
    let topics = demo_topics(&set.corpus);
    let queries: Vec<(String, String)> = set
        .queries
        .iter()
        .map(|q| (q.id.clone(), q.text.clone()))
        .collect();
    let on_text = move |signal: RwSignal<String>| {
        move |ev: leptos::ev::Event| {
            signal.set(event_target_value(&ev));
            schedule_search(p);
        }
    };
    let pick = move |ev: leptos::ev::Event| {
        pick_demo_query(p, &event_target_value(&ev));
        if p.corpus_key.get_untracked() == "custom" {
            set_corpus(p, "demo");
        } else {
            schedule_search(p);
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
            match web::read_file(&file)
                .await
                .and_then(|t| parse_user_corpus(&t, &name))
            {
                Ok(passages) => {
                    p.custom.set(passages);
                    p.judgments.set(Judgments::default());
                    p.error.set(None);
                    set_corpus(p, "custom");
                }
                Err(e) => p.error.set(Some(e)),
            }
        });
    };
    let pasted = RwSignal::new(String::new());
    let use_pasted = move |_| match parse_user_corpus(&pasted.get_untracked(), "pasted text") {
        Ok(passages) => {
            p.custom.set(passages);
            p.judgments.set(Judgments::default());
            p.error.set(None);
            set_corpus(p, "custom");
        }
        Err(e) => p.error.set(Some(e)),
    };
    view! {
        <section class="inputs">
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

fn metrics_now(p: Page) -> LiveMetrics {
    let rankings = p.rankings.get();
    let corpus = p.corpus.get();
    let judgments = p.judgments.get();
    if rankings.is_empty() {
        return LiveMetrics::default();
    }
    live_metrics(&rankings, &corpus, &judgments)
}

fn fmt_metric(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1}", v * 100.0))
        .unwrap_or_else(|| "–".into())
}

#[component]
fn MetricButton(
    p: Page,
    name: &'static str,
    key: &'static str,
    #[prop(optional)] column: Option<Column>,
    which: Explained,
    value: Signal<Option<f64>>,
) -> impl IntoView {
    view! {
        <button class="metric" data-testid="metric" data-metric=key
            data-column=column.map(|c| c.name()).unwrap_or("")
            data-value=move || value.get().map(|v| v.to_string()).unwrap_or_default()
            title="Open the formula and the per-document terms"
            on:click=move |_| { p.explained.set(Some(which)); p.teach.set(true); sync_url(p); }>
            <span class="metric-name">{name}</span>
            <span class="metric-value">{move || fmt_metric(value.get())}</span>
        </button>
    }
}

#[component]
fn MetricsPanel(p: Page) -> impl IntoView {
    let m = Memo::new(move |_| metrics_now(p));
    let pm = Signal::derive(move || m.get().p_mrr);
    let wise = Signal::derive(move || m.get().wise);
    let sicr = Signal::derive(move || m.get().sicr);
    view! {
        <section class="metrics" aria-label="Instruction-following metrics (x100)">
            <MetricButton p=p name="p-MRR" key="p-mrr" which=Explained::PMrr value=pm />
            <MetricButton p=p name="WISE" key="wise" which=Explained::Wise value=wise />
            <MetricButton p=p name="SICR" key="sicr" which=Explained::Sicr value=sicr />
            <span class="muted">"values ×100; – when the judgments do not define the metric; click a metric to see how it is made"</span>
        </section>
    }
}

#[component]
fn RankingColumn(p: Page, column: Column) -> impl IntoView {
    let m = Memo::new(move |_| metrics_now(p));
    let col = move |i: usize| Signal::derive(move || m.get().columns.get(&column).map(|v| v[i]));
    let keys = ["ndcg@10", "map", "mrr@10"];
    let which = [
        Explained::Ndcg(column),
        Explained::Map(column),
        Explained::Mrr(column),
    ];
    let rows = move || {
        let rankings = p.rankings.get();
        let corpus = p.corpus.get();
        let judgments = p.judgments.get();
        let Some(ranking) = rankings.get(&column).cloned() else {
            return Vec::new();
        };
        let base = rankings.get(&Column::Query).cloned().unwrap_or_default();
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
                {(0..3).map(|i| view! {
                    <MetricButton p=p name=COLUMN_METRICS[i] key=keys[i] column=column which=which[i] value=col(i) />
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
fn TeachPanel(p: Page) -> impl IntoView {
    let breakdown = move || {
        let which = p.explained.get()?;
        explain_metric(
            which,
            &p.rankings.get(),
            &p.corpus.get(),
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
