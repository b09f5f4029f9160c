//! The learn-live panel: "Train" starts the training worker (see [`crate::learn`]), each step's
//! loss, time and held-out scores appear as they come, and after each step the trained model
//! re-ranks the top of the three columns, which then show its order.

use std::collections::BTreeMap;
use std::rc::Rc;

use leptos::prelude::*;

use super::{page, work, Page, PageSession, Ranked, Work};
use crate::learn::{
    rerank, HeldOut, LearnReply, LearnRequest, StepReport, RERANK_DEPTH, STEPS_PER_PRESS,
};
use crate::state::{Column, Ranking};
use crate::web;

/// The seed of the page's lessons (`trainer lesson`'s default: the native run to compare with).
const SEED: u64 = 42;

/// Where the worker is.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// No worker (never pressed, or reset).
    Idle,
    /// Its wasm loading, then the lesson starting.
    Starting,
    /// Steps to go (the current one included).
    Training(usize),
    /// Between presses: the lesson holds its weights.
    Paused,
    /// Stopped by an error (shown).
    Failed(String),
}

/// The columns as the trained model orders their top, for one encoded corpus and one set of
/// inputs.
#[derive(Clone)]
struct Trained {
    session: Rc<PageSession>,
    inputs: [String; 3],
    columns: BTreeMap<Column, Ranking>,
}

/// Learn live's state, leptos context beside the page's.
#[derive(Clone, Copy)]
pub(super) struct Learn {
    worker: StoredValue<Option<web_sys::Worker>, LocalStorage>,
    phase: RwSignal<Phase>,
    /// Records and held-out queries of the lesson, and its held-out scores before any step.
    started: RwSignal<Option<(usize, usize, HeldOut)>>,
    steps: RwSignal<Vec<StepReport>>,
    trained: RwSignal<Option<Trained>, LocalStorage>,
    /// The base ranking the pending re-ranking started from (the worker answers in order).
    pending: StoredValue<Option<Ranked>, LocalStorage>,
    /// The model and backend the lesson trains on (a switch of either resets it).
    model: StoredValue<String>,
    /// The backend the worker trains on (`cpu`, `wgpu`).
    backend: RwSignal<String>,
}

impl Learn {
    pub(super) fn new() -> Self {
        Learn {
            worker: StoredValue::new_local(None),
            phase: RwSignal::new(Phase::Idle),
            started: RwSignal::new(None),
            steps: RwSignal::new(Vec::new()),
            trained: RwSignal::new_local(None),
            pending: StoredValue::new_local(None),
            model: StoredValue::new(String::new()),
            backend: RwSignal::new(String::new()),
        }
    }

    /// The trained model's columns for `ranked` (the page's current rankings), when the
    /// lesson has re-ranked exactly these.
    pub(super) fn columns_for(self, p: Page, ranked: &Ranked) -> Option<BTreeMap<Column, Ranking>> {
        let trained = self.trained.get()?;
        let inputs = [
            p.search.query.get(),
            p.search.instruction.get(),
            p.search.reversed.get(),
        ];
        (Rc::ptr_eq(&trained.session, &ranked.session) && trained.inputs == inputs)
            .then_some(trained.columns)
    }

    fn post(self, p: Page, request: &LearnRequest, with_files: bool) {
        let json = serde_json::to_string(request).expect("plain data serialises");
        let files = with_files.then(|| p.model.files.get_value()).flatten();
        let sent = self.worker.with_value(|w| match w {
            Some(worker) => web::post_learn(worker, &json, files.as_deref()),
            None => Err("the training worker is not running".into()),
        });
        if let Err(e) = sent {
            self.phase.set(Phase::Failed(e));
        }
    }

    /// One press of "Train": start the worker and the lesson if needed, then take
    /// [`STEPS_PER_PRESS`] steps.
    fn train(self, p: Page, w: Work) {
        let model = format!(
            "{}/{:?}",
            p.model.model_key.get_untracked(),
            p.model.backend.get_untracked()
        );
        if self.model.get_value() != model {
            self.reset();
            self.model.set_value(model);
        }
        if self.worker.with_value(Option::is_some) {
            self.phase.set(Phase::Training(STEPS_PER_PRESS));
            self.post(p, &LearnRequest::Step, false);
            return;
        }
        self.phase.set(Phase::Starting);
        let on_reply = move |text: String| self.on_reply(p, w, &text);
        let on_error = move |e: String| {
            self.reset();
            self.phase.set(Phase::Failed(format!(
                "{e} (right after a first `cargo xtask demo`, the training worker may still be \
                 building: try again in a few minutes)"
            )));
        };
        match web::learn_worker(on_reply, on_error) {
            Ok(worker) => self.worker.set_value(Some(worker)),
            Err(e) => self.phase.set(Phase::Failed(e)),
        }
    }

    /// Stops the worker and forgets the lesson: the page shows its own model's rankings.
    fn reset(self) {
        if let Some(worker) = self.worker.try_update_value(Option::take).flatten() {
            worker.terminate();
        }
        self.phase.set(Phase::Idle);
        self.started.set(None);
        self.steps.set(Vec::new());
        self.trained.set(None);
        self.pending.set_value(None);
    }

    fn on_reply(self, p: Page, w: Work, text: &str) {
        let reply = match serde_json::from_str::<LearnReply>(text) {
            Ok(reply) => reply,
            Err(e) => return self.phase.set(Phase::Failed(format!("worker reply: {e}"))),
        };
        match reply {
            LearnReply::Loaded => {
                let webgpu = p.model.backend.get_untracked() == engine::BackendKind::Wgpu;
                self.post(p, &LearnRequest::Start { seed: SEED, webgpu }, true)
            }
            LearnReply::Started {
                records,
                held_out_queries,
                held_out,
                backend,
            } => {
                self.backend.set(backend);
                self.started
                    .set(Some((records, held_out_queries, held_out)));
                self.phase.set(Phase::Training(STEPS_PER_PRESS));
                self.post(p, &LearnRequest::Step, false);
            }
            LearnReply::Stepped(report) => {
                self.steps.update(|s| s.push(report));
                self.rerank(p, w);
            }
            LearnReply::Ranked { scores } => {
                self.show_reranked(p, &scores);
                self.after_rerank(p);
            }
            LearnReply::Failed { error } => self.phase.set(Phase::Failed(error)),
        }
    }

    /// Asks the worker to score the top of the page's three columns.
    fn rerank(self, p: Page, w: Work) {
        let Some(ranked) = w.base(p) else {
            // Nothing ranked (a corpus encoding): the next step re-ranks.
            return self.after_rerank(p);
        };
        let inputs = [
            p.search.query.get_untracked(),
            p.search.instruction.get_untracked(),
            p.search.reversed.get_untracked(),
        ];
        let corpus = &ranked.session.corpus;
        let passages: Vec<String> = Column::ALL
            .iter()
            .flat_map(|c| ranked.columns[c].iter().take(RERANK_DEPTH))
            .filter_map(|(doc, _)| corpus.get(*doc).map(|p| p.encoder_text()))
            .collect();
        let [query, instruction, reversed] = inputs;
        let queries = vec![
            (String::new(), query.clone()),
            (instruction, query.clone()),
            (reversed, query),
        ];
        self.pending.set_value(Some(ranked));
        self.post(p, &LearnRequest::Rank { queries, passages }, false);
    }

    /// The next step of this press, or the pause after its last.
    fn after_rerank(self, p: Page) {
        if let Phase::Training(left) = self.phase.get_untracked() {
            if left > 1 {
                self.phase.set(Phase::Training(left - 1));
                return self.post(p, &LearnRequest::Step, false);
            }
            self.phase.set(Phase::Paused);
        }
    }

    /// Each column's top in the trained model's order: column `c`'s passages are the `c`-th
    /// block of [`RERANK_DEPTH`] in the request, scored by query `c`.
    fn show_reranked(self, p: Page, scores: &[Vec<f32>]) {
        let Some(ranked) = self.pending.try_update_value(Option::take).flatten() else {
            return;
        };
        let mut columns = BTreeMap::new();
        let mut offset = 0;
        for (c, column) in Column::ALL.iter().enumerate() {
            let ranking = &ranked.columns[column];
            let depth = RERANK_DEPTH.min(ranking.len());
            let block = scores
                .get(c)
                .and_then(|row| row.get(offset..offset + depth))
                .unwrap_or(&[]);
            columns.insert(*column, rerank(ranking, block));
            offset += depth;
        }
        self.trained.set(Some(Trained {
            session: ranked.session.clone(),
            inputs: [
                p.search.query.get_untracked(),
                p.search.instruction.get_untracked(),
                p.search.reversed.get_untracked(),
            ],
            columns,
        }));
    }
}

fn points(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

/// The panel: Train and Reset, the lesson's size, one row per step.
/// One step's row: its loss before and after, its time and the held-out scores.
fn step_row(s: StepReport) -> impl IntoView {
    view! {
        <tr data-testid="learn-step" data-step=s.step data-loss=s.loss.to_string()
            data-loss-after=s.loss_after.to_string()
            data-ndcg=s.held_out.ndcg10_changed.to_string()
            data-p-mrr=s.held_out.p_mrr.to_string() data-wise=s.held_out.wise.to_string()>
            <td>{s.step}</td>
            <td>{format!("{:.4} → {:.4}", s.loss, s.loss_after)}</td>
            <td>{format!("{:.1} s", s.step_ms / 1000.0)}</td>
            <td>{points(s.held_out.ndcg10_changed)}</td>
            <td>{points(s.held_out.p_mrr)}</td>
            <td>{points(s.held_out.wise)}</td>
        </tr>
    }
}

#[component]
pub(super) fn LearnPanel() -> impl IntoView {
    let p = page();
    let w = work();
    let learn = w.learn;
    let busy = move || matches!(learn.phase.get(), Phase::Starting | Phase::Training(_));
    let status = move || match learn.phase.get() {
        Phase::Idle => "Press Train: the model fine-tunes here, in your browser.".to_string(),
        Phase::Starting => "loading the training worker and starting the lesson…".to_string(),
        Phase::Training(left) => {
            format!("training on {}: {left} step(s) to go", learn.backend.get())
        }
        Phase::Paused => "paused: press Train for more steps, Reset for the original model".into(),
        Phase::Failed(e) => format!("error: {e}"),
    };
    let before = move || {
        learn.started.get().map(|(records, queries, h)| {
            view! {
                <p data-testid="learn-lesson">
                    {format!("{records} training examples from the demo set's judgments; {queries} held-out queries, never trained on. Before training: nDCG@10 {}, p-MRR {}, WISE {}.",
                        points(h.ndcg10_changed), points(h.p_mrr), points(h.wise))}
                </p>
            }
        })
    };
    let rows = move || learn.steps.get().into_iter().map(step_row).collect_view();
    view! {
        <Show when=move || p.view.teach.get() || p.view.train.get()>
            <section class="learn" data-testid="learn" aria-label="Learn live">
                <h2>"Learn live"</h2>
                <p class="muted">"Fine-tunes the loaded model for a few steps on dual-view examples (the instruction and its reversal swap which passage is the positive), with the engine's own loss and AdamW, in a background worker on the page's backend (WebGPU or the CPU). The columns then show the trained model's order of their top 10."</p>
                <div class="learn-controls">
                    <button data-testid="learn-train" disabled=move || busy() || !p.load.ready.get()
                        on:click=move |_| learn.train(p, w)>{format!("Train {STEPS_PER_PRESS} steps")}</button>
                    <button data-testid="learn-reset" disabled=move || learn.phase.get() == Phase::Idle
                        on:click=move |_| learn.reset()>"Reset"</button>
                    <span data-testid="learn-status" class="muted">{status}</span>
                </div>
                {before}
                <table class="learn-steps">
                    <thead><tr><th>"step"</th><th>"loss of its batch: before → after"</th><th>"step time"</th>
                        <th>"nDCG@10"</th><th>"p-MRR"</th><th>"WISE"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <p class="muted">"Held-out scores ×100, on the changed instruction (nDCG@10), og vs changed (p-MRR) and all three (WISE)."</p>
            </section>
        </Show>
    }
}
