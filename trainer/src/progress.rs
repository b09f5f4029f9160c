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

/// The training bar: steps, loss and pairs/s (in the message), ETA.
pub fn train_bar(total_steps: usize) -> ProgressBar {
    let bar = ProgressBar::new(total_steps as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} training {bar:30} step {pos}/{len} {msg} (eta {eta})",
        )
        .expect("valid template"),
    );
    bar
}
