//! The controls: the status bar, the model picker, the inputs and the corpus controls.

use super::*;

#[component]
pub(super) fn StatusBar() -> impl IntoView {
    let p = page();
    let retry = move |_| spawn_local(load_model(p));
    let clear = move |_| {
        spawn_local(async move {
            let note = match web::clear_cache().await {
                Ok(()) => "browser cache cleared; the next load downloads again".to_string(),
                Err(e) => format!("could not clear the cache: {e}"),
            };
            p.load.cache_note.set(note);
        })
    };
    let switch = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        p.model.backend.set(if v == "webgpu" {
            BackendKind::Wgpu
        } else {
            BackendKind::Cpu
        });
        p.model.backend_choice.set(v);
        spawn_local(start_backend(p));
    };
    view! {
        <section class="status" aria-live="polite">
            <span>"Model: "<strong data-testid="model-status">{move || p.load.status.get().to_string()}</strong></span>
            {move || p.load.progress.get().map(|(done, total)| {
                let label = if matches!(p.load.status.get(), Status::Downloading(_)) {
                    format!("{} / {}", human_bytes(done), human_bytes(total))
                } else {
                    format!("{done} / {total}")
                };
                view! {
                    <progress max=total.max(1).to_string() value=done.to_string()></progress>
                    <span class="muted">{label}</span>
                }
            })}
            <span class="muted" data-testid="cache-note">{move || p.load.cache_note.get()}</span>
            <span class="muted" data-testid="corpus-note">{move || p.load.corpus_note.get()}</span>
            <label>"Backend "
                <select aria-label="Backend" on:change=switch prop:value=move || backend_name(p.model.backend.get())>
                    <option value="cpu">"CPU (wasm)"</option>
                    <option value="webgpu" disabled=move || !p.model.webgpu.get()>"WebGPU"</option>
                </select>
            </label>
            <span>"active: "<code data-testid="backend">{move || backend_name(p.model.backend.get())}</code>
                <code data-testid="precision">{move || precision_name(p)}</code></span>
            <ModelPicker />
            <button on:click=clear>"Clear cache"</button>
            <label class="teach-toggle"><input type="checkbox" prop:checked=move || p.view.teach.get()
                on:change=move |_| p.view.teach.update(|t| *t = !*t) />" Teach mode"</label>
            {move || p.load.error.get().map(|e| view! {
                <div class="error" role="alert">
                    <span>{e}</span>" "
                    <button on:click=retry>"Retry"</button>
                </div>
            })}
        </section>
    }
}

#[component]
pub(super) fn ModelPicker() -> impl IntoView {
    let p = page();
    let change = move |ev: leptos::ev::Event| {
        p.model.model_key.set(event_target_value(&ev));
        spawn_local(load_model(p));
    };
    view! {
        <Show when=move || { p.model.models.get().len() > 1 }>
            <label>"Model "
                <select data-testid="model-select" on:change=change prop:value=move || p.model.model_key.get()>
                    {move || p.model.models.get().into_iter().map(|m| view! {
                        <option value=m.key.clone()>{m.name.clone()}</option>
                    }).collect_view()}
                </select>
            </label>
        </Show>
    }
}

/// Takes a user corpus (uploaded or pasted) and switches to it, or shows why not.
pub(super) fn use_user_corpus(p: Page, parsed: Result<Vec<Passage>, String>) {
    match parsed {
        Ok(passages) => {
            p.search.custom.set(passages);
            p.search.judgments.set(Judgments::default());
            p.load.error.set(None);
            set_corpus(p, "custom");
        }
        Err(e) => p.load.error.set(Some(e)),
    }
}

#[component]
pub(super) fn Inputs() -> impl IntoView {
    let p = page();
    let on_text = move |signal: RwSignal<String>| {
        move |ev: leptos::ev::Event| signal.set(event_target_value(&ev))
    };
    view! {
        <section class="inputs">
            <CorpusControls />
            <label class="field">"Query"
                <input type="text" data-testid="query" prop:value=move || p.search.query.get() on:input=on_text(p.search.query) />
            </label>
            <label class="field">"Instruction"
                <textarea data-testid="instruction" rows="2" prop:value=move || p.search.instruction.get() on:input=on_text(p.search.instruction)></textarea>
            </label>
            <label class="field">"Reversed instruction"
                <textarea data-testid="reversed-instruction" rows="2" prop:value=move || p.search.reversed.get() on:input=on_text(p.search.reversed)></textarea>
            </label>
        </section>
    }
}

/// The corpus and example pickers, the upload and the paste box.
/// Reads the file an upload event picked as the user's corpus.
fn upload_corpus(p: Page, ev: leptos::ev::Event) {
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
}

#[component]
pub(super) fn CorpusControls() -> impl IntoView {
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
        if p.search.corpus_key.get_untracked() == "custom" {
            set_corpus(p, "demo");
        }
    };
    let corpus_change = move |ev: leptos::ev::Event| set_corpus(p, &event_target_value(&ev));
    let upload = move |ev: leptos::ev::Event| upload_corpus(p, ev);
    let pasted = RwSignal::new(String::new());
    let use_pasted =
        move |_| use_user_corpus(p, parse_user_corpus(&pasted.get_untracked(), "pasted text"));
    view! {
        <div class="row">
            <label>"Corpus "
                <select data-testid="corpus-select" on:change=corpus_change prop:value=move || p.search.corpus_key.get()>
                    <option value="demo">{format!("Built-in demo ({} passages, {} topics)", set.corpus.len(), topics.len())}</option>
                    {topics.into_iter().map(|(topic, n)| view! {
                        <option value=topic.clone()>{format!("Demo topic: {topic} ({n} passages)")}</option>
                    }).collect_view()}
                    <option value="custom" disabled=move || p.search.custom.get().is_empty()>
                        {move || format!("Your passages ({})", p.search.custom.get().len())}
                    </option>
                </select>
            </label>
            <label>"Example "
                <select aria-label="Demo example" on:change=pick prop:value=move || p.search.qid.get()>
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
