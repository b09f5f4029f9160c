//! The three columns and the live metrics above them.

use super::*;

pub(super) fn metrics_now(p: Page, w: Work) -> LiveMetrics {
    let Some(ranked) = w.shown(p) else {
        return LiveMetrics::default();
    };
    live_metrics(
        &ranked.columns,
        &ranked.session.corpus,
        &p.search.judgments.get(),
    )
}

pub(super) fn fmt_metric(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1}", v * 100.0))
        .unwrap_or_else(|| "–".into())
}

#[component]
pub(super) fn MetricButton(
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
            on:click=move |_| { p.view.explained.set(Some(which)); p.view.teach.set(true); }>
            <span class="metric-name">{name}</span>
            <span class="metric-value">{move || fmt_metric(value.get())}</span>
        </button>
    }
}

#[component]
pub(super) fn MetricsPanel() -> impl IntoView {
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

/// A passage's judgment in a column's mode.
struct Judged {
    relevant: bool,
    level: f64,
}

/// One result of a column: its rank, how far it moved against the query alone, its score,
/// the judgment toggle and the passage.
fn result_item(
    p: Page,
    column: Column,
    pos: usize,
    score: f32,
    passage: Passage,
    moved: Option<crate::state::Move>,
    judged: Judged,
) -> impl IntoView {
    let Judged { relevant, level } = judged;
    let id = passage.id.clone();
    let toggle = move |_| {
        p.search.judgments.update(|j| j.toggle(column.mode(), &id));
    };
    view! {
        <li data-testid="result" data-doc-id=passage.id.clone() class:relevant=relevant>
            <div class="result-head">
                <span class="rank">{pos + 1}</span>
                {moved.map(|m| view! { <span class="move" title="places moved vs the query alone">{m.label()}</span> })}
                <span class="score">{format!("{score:.3}")}</span>
                <button class="judge" data-testid="judge" aria-pressed=relevant.to_string()
                    title="Toggle the judgment for this column's instruction"
                    on:click=toggle>
                    {if relevant { format!("relevant ({level})") } else { "not relevant".to_string() }}
                </button>
            </div>
            <div class="doc-id">{passage.id.clone()}</div>
            {(!passage.title.is_empty()).then(|| view! { <div class="title">{passage.title.clone()}</div> })}
            <p class="text">{passage.text.clone()}</p>
        </li>
    }
}

#[component]
pub(super) fn RankingColumn(column: Column) -> impl IntoView {
    let p = page();
    let w = work();
    let m = Memo::new(move |_| metrics_now(p, w));
    let value = move |metric| Signal::derive(move || m.get().column(column, metric));
    let rows = move || {
        let Some(Ranked { session, columns }) = w.shown(p) else {
            return Vec::new();
        };
        let corpus = &session.corpus;
        let judgments = p.search.judgments.get();
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
                let moved = (column != Column::Query).then(|| movement(&base, &ranking, pos));
                let judged = Judged {
                    relevant: judgments.is_relevant(column.mode(), &passage.id),
                    level: judgments.level(column.mode(), &passage.id),
                };
                result_item(p, column, pos, *score, passage, moved, judged)
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
