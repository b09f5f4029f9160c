//! Progress bars on stderr for long work (hidden when stderr is not a terminal and the job is
//! small).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting `total` items of `what`.
pub fn bar(total: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{bar:30}} {{pos}}/{{len}} ({{per_sec}}, eta {{eta}})"
        ))
        .expect("valid template"),
    );
    bar
}
