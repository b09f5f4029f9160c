//! Fine-tuned models against the base model on every evaluation set, with paired significance
//! tests (`trainer eval --set DIR --model BASE --compare-model M --json`): the tables the recipe
//! and the ablation write into RESULTS.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use engine::metrics::report::{Compared, Comparison};

use crate::process::{home, root, step};

/// One evaluation set of a comparison, as a recipe manifest lists it (`recipes/*.json`,
/// `"sets"`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalSetRef {
    /// Row label.
    pub label: String,
    /// Folder (formats.md §1), relative to the workspace root.
    pub dir: PathBuf,
    /// Only the queries whose `constraint` label starts with this (`trainer eval --constraint`).
    #[serde(default)]
    pub constraint: Option<String>,
    /// Every query encoded alone, whatever its instructions (`trainer eval --no-instruction`):
    /// plain retrieval on a set whose og mode has an instruction (BIRCO's task objectives).
    #[serde(default)]
    pub no_instruction: bool,
    /// Compared only when asked for by name (`cargo xtask ablation --birco`): sets slow to
    /// encode.
    #[serde(default)]
    pub only_with: Option<String>,
}

/// The sets of `sets` to compare on: those whose folder is present (the others are named
/// with a message) and, among the optional ones, those `with` asks for.
pub fn present_sets(sets: &[EvalSetRef], with: &[&str]) -> Vec<EvalSetRef> {
    sets.iter()
        .filter(|s| s.only_with.as_deref().is_none_or(|w| with.contains(&w)))
        .filter(|s| {
            let present = root().join(&s.dir).join("queries.jsonl").is_file();
            if !present {
                println!("SKIPPED: {} ({} is absent)", s.label, s.dir.display());
            }
            present
        })
        .cloned()
        .collect()
}

/// The metrics compared, as the engine names a comparison's rows, with their column titles.
fn columns() -> [(String, &'static str); 5] {
    use engine::metrics::report::{mode_metric_label, P_MRR, SICR, WISE};
    [
        (mode_metric_label("og", "ndcg@10"), "nDCG@10"),
        (
            mode_metric_label("changed", "ndcg@10"),
            "nDCG@10 instructed",
        ),
        (P_MRR.to_string(), "p-MRR"),
        (WISE.to_string(), "WISE"),
        (SICR.to_string(), "SICR"),
    ]
}

/// `trainer eval --set DIR --model base --compare-model model --json`: the comparison object.
fn compare(
    trainer: &Path,
    set: &EvalSetRef,
    base: &Path,
    model: &Path,
) -> anyhow::Result<Comparison> {
    let mut command = Command::new(trainer);
    command
        .args(["eval", "--json", "--metrics", "ndcg@10", "--set"])
        .arg(&set.dir);
    if let Some(constraint) = &set.constraint {
        command.arg("--constraint").arg(constraint);
    }
    if set.no_instruction {
        command.arg("--no-instruction");
    }
    let out = command
        .arg("--model")
        .arg(base)
        .arg("--compare-model")
        .arg(model)
        .arg("--passage-cache")
        .arg(home().join(".cache/ifir/passages"))
        .current_dir(root())
        .output()
        .with_context(|| format!("cannot start {}", trainer.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "trainer eval on {}: {}",
        set.dir.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    serde_json::from_slice(&out.stdout).context("unreadable trainer eval output")
}

/// One cell: the model's value, its difference to the base and the paired randomization
/// test's p-value, "-" when the set has no such metric.
fn cell(c: Option<&Compared>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    let p = c.p_randomization;
    let mark = if p.is_some_and(|p| p < 0.05) { "*" } else { "" };
    let p = match p {
        Some(p) if p < 0.001 => "p<0.001".to_string(),
        Some(p) => format!("p={p:.3}"),
        None => "p=-".to_string(),
    };
    format!(
        "{:.2} ({:+.2}{mark}, {p})",
        c.b * 100.0,
        (c.b - c.a) * 100.0
    )
}

fn base_cell(c: Option<&Compared>) -> String {
    c.map(|c| format!("{:.2}", c.a * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// The table of `models` (label, folder) against `base` on `sets`: for each set a base row and
/// one row per model with value, difference and p-value. Prints each row as it comes.
pub fn comparison_table(
    trainer: &Path,
    base: &Path,
    models: &[(String, PathBuf)],
    sets: &[EvalSetRef],
) -> anyhow::Result<String> {
    let columns = columns();
    let mut table = String::from("| set | model |");
    for (_, title) in &columns {
        table.push_str(&format!(" {title} |"));
    }
    table.push_str(&format!("\n|---|---|{}\n", "---|".repeat(columns.len())));
    for set in sets {
        for (i, (label, dir)) in models.iter().enumerate() {
            step(&format!("compare: {}, {label}", set.label));
            let c = compare(trainer, set, base, dir)?;
            if i == 0 {
                let row: Vec<String> = columns
                    .iter()
                    .map(|(k, _)| base_cell(c.comparison.get(k)))
                    .collect();
                table.push_str(&format!("| {} | base | {} |\n", set.label, row.join(" | ")));
            }
            let row: Vec<String> = columns
                .iter()
                .map(|(k, _)| cell(c.comparison.get(k)))
                .collect();
            let line = format!("| {} | {label} | {} |\n", set.label, row.join(" | "));
            print!("{line}");
            table.push_str(&line);
        }
    }
    Ok(table)
}

/// The explanation printed above every comparison table.
pub const TABLE_NOTE: &str = "Values x100. Each fine-tuned cell is `value (difference to the base, p)`: p is the paired \
randomization test over the set's queries (`trainer eval --set DIR --model BASE --compare-model M`), \
`*` marks p < 0.05. \"nDCG@10\" is the og mode (the query alone; for BIRCO the task objective as \
instruction), \"nDCG@10 instructed\" the changed mode judged with qrels/changed.tsv.";

/// Replaces the part of RESULTS.md between `<!-- NAME:start -->` and `<!-- NAME:end -->`
/// (appending the block when absent), keeping the hand-written notes around it.
pub fn write_marked(name: &str, doc: &str) -> anyhow::Result<()> {
    let path = root().join("RESULTS.md");
    let (start, end) = (
        format!("<!-- {name}:start -->"),
        format!("<!-- {name}:end -->"),
    );
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let new = match (old.split_once(&start), old.contains(&end)) {
        (Some((head, rest)), true) => {
            let (_, tail) = rest.split_once(&end).expect("marker present");
            format!("{head}{start}\n{doc}{end}{tail}")
        }
        _ => format!("{old}\n{start}\n{doc}{end}\n"),
    };
    std::fs::write(&path, new)?;
    Ok(())
}
