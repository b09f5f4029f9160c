//! The web demo (minimal page for now): lists the built-in demo set that the full app will
//! rank live in the browser with the same `engine` crate.

use leptos::prelude::*;

/// One row of the demo-set overview.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryRow {
    /// Query id.
    pub id: String,
    /// The query.
    pub text: String,
    /// Its instruction.
    pub instruction: String,
    /// Its polarity-reversed instruction.
    pub reversed: String,
}

/// Rows describing the demo set, or the error that stopped it loading.
pub fn demo_rows() -> Result<(usize, Vec<QueryRow>), String> {
    let set = engine::demo::demo_set().map_err(|e| e.to_string())?;
    let rows = set
        .queries
        .iter()
        .map(|q| QueryRow {
            id: q.id.clone(),
            text: q.text.clone(),
            instruction: q.instruction_changed.clone().unwrap_or_default(),
            reversed: q.instruction_reversed.clone().unwrap_or_default(),
        })
        .collect();
    Ok((set.corpus.len(), rows))
}

#[component]
fn App() -> impl IntoView {
    let body = match demo_rows() {
        Ok((passages, rows)) => view! {
            <p>{format!("Built-in demo set: {passages} passages, {} queries.", rows.len())}</p>
            <table>
                <thead><tr><th>"id"</th><th>"query"</th><th>"instruction"</th><th>"reversed instruction"</th></tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| view! {
                        <tr><td>{r.id}</td><td>{r.text}</td><td>{r.instruction}</td><td>{r.reversed}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any(),
        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
    };
    view! {
        <main>
            <h1>"Instruction-following retrieval"</h1>
            <p data-testid="model-status">"loading"</p>
            {body}
        </main>
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_rows_list_every_query_with_both_instructions() {
        let (passages, rows) = super::demo_rows().unwrap();
        assert!(passages >= 150);
        assert!(rows.len() >= 15);
        assert!(rows
            .iter()
            .all(|r| !r.instruction.is_empty() && !r.reversed.is_empty()));
    }
}
