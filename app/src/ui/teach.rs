//! Teach mode: the guided tour and the metrics explained term by term.

use super::*;

pub(super) const TOUR: [&str; 4] = [
    "1. The left column ranks passages for the query alone: topic matching only.",
    "2. The middle column adds the instruction. Arrows show how far each passage moved; passages that satisfy the instruction should climb.",
    "3. The right column uses the reversed instruction: the same passages should now fall. WISE rewards exactly this pattern (up with the instruction, down with its reversal).",
    "4. Click a judgment to change it, and watch p-MRR, WISE and SICR recompute. Click any metric to open its formula and per-passage terms.",
];

#[component]
pub(super) fn TeachPanel() -> impl IntoView {
    let p = page();
    let w = work();
    let breakdown = move || {
        let which = p.view.explained.get()?;
        let ranked = w.shown(p)?;
        explain_metric(
            which,
            &ranked.columns,
            &ranked.session.corpus,
            &p.search.judgments.get(),
        )
    };
    view! {
        <Show when=move || p.view.teach.get()>
            <section class="teach" data-testid="teach" aria-label="Teach mode">
                <h2>"Teach mode"</h2>
                <div class="tour">
                    {move || match p.view.tour.get() {
                        None => view! { <button on:click=move |_| p.view.tour.set(Some(0))>"Start the guided tour of one instruction flip"</button> }.into_any(),
                        Some(i) => view! {
                            <p data-testid="tour-step">{TOUR[i]}</p>
                            <button disabled=i == 0 on:click=move |_| p.view.tour.set(Some(i.saturating_sub(1)))>"Back"</button>
                            {if i + 1 < TOUR.len() {
                                view! { <button on:click=move |_| p.view.tour.set(Some(i + 1))>"Next"</button> }.into_any()
                            } else {
                                view! { <button on:click=move |_| p.view.tour.set(None)>"Done"</button> }.into_any()
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
