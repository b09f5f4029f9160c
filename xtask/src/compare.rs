//! Fine-tuned models against the base model on every evaluation set, with paired significance
//! tests (`trainer eval --set DIR --model BASE --compare-model M --json`): the tables the recipe
//! and the ablation write into RESULTS.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::tasks::{home, root, step};

/// One evaluation set of a comparison.
pub struct EvalSetRef {
    /// Row label.
    pub label: String,
    /// Folder (formats.md §1).
    pub dir: PathBuf,
}

/// The sets every decision is measured on: the hand-written held-out instruction set, the demo
/// set, the held-out MS MARCO queries and synthesized instructions of `data`, and (with
/// `birco`) the BIRCO dev sets with their task objective as the instruction. Sets whose folder
/// is absent are left out with a message.
pub fn decision_sets(data: &Path, birco: bool) -> Vec<EvalSetRef> {
    let shared = root().join("../shared/data");
    let mut sets = vec![
        EvalSetRef {
            label: "hand-written instructions (held out)".into(),
            dir: root().join("evalsets/instructions-heldout"),
        },
        EvalSetRef {
            label: "demo (built-in)".into(),
            dir: root().join("engine/demo"),
        },
        EvalSetRef {
            label: "MS MARCO queries (held out)".into(),
            dir: data.join("heldout/retrieval"),
        },
        EvalSetRef {
            label: "synthesized instructions (held out)".into(),
            dir: data.join("heldout/instructions"),
        },
    ];
    if birco {
        for set in ["clinical-trial", "doris-mae", "wtb"] {
            sets.push(EvalSetRef {
                label: format!("BIRCO dev {set} (objective)"),
                dir: shared.join("birco-dev").join(set),
            });
        }
    }
    sets.retain(|s| {
        let present = s.dir.join("queries.jsonl").is_file();
        if !present {
            println!("SKIPPED: {} ({} is absent)", s.label, s.dir.display());
        }
        present
    });
    sets
}

/// The metrics compared, as `trainer eval --compare` names them, with their column titles.
const COLUMNS: [(&str, &str); 5] = [
    ("og ndcg@10", "nDCG@10"),
    ("changed ndcg@10", "nDCG@10 instructed"),
    ("p-mrr", "p-MRR"),
    ("wise", "WISE"),
    ("sicr", "SICR"),
];

/// `trainer eval --set DIR --model base --compare-model model --json`: the comparison object.
fn compare(
    trainer: &Path,
    set: &Path,
    base: &Path,
    model: &Path,
) -> anyhow::Result<serde_json::Value> {
    let out = Command::new(trainer)
        .args(["eval", "--json", "--metrics", "ndcg@10", "--set"])
        .arg(set)
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
        set.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("unreadable trainer eval output")?;
    Ok(v["comparison"].clone())
}

/// One cell: the model's value, its difference to the base and the paired randomization
/// test's p-value, "-" when the set has no such metric.
fn cell(c: &serde_json::Value) -> String {
    let (Some(a), Some(b)) = (c["a"].as_f64(), c["b"].as_f64()) else {
        return "-".into();
    };
    let p = c["p_randomization"].as_f64();
    let mark = if p.is_some_and(|p| p < 0.05) { "*" } else { "" };
    let p = match p {
        Some(p) if p < 0.001 => "p<0.001".to_string(),
        Some(p) => format!("p={p:.3}"),
        None => "p=-".to_string(),
    };
    format!("{:.2} ({:+.2}{mark}, {p})", b * 100.0, (b - a) * 100.0)
}

fn base_cell(c: &serde_json::Value) -> String {
    c["a"]
        .as_f64()
        .map(|a| format!("{:.2}", a * 100.0))
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
    let mut table = String::from("| set | model |");
    for (_, title) in COLUMNS {
        table.push_str(&format!(" {title} |"));
    }
    table.push_str(&format!("\n|---|---|{}\n", "---|".repeat(COLUMNS.len())));
    for set in sets {
        for (i, (label, dir)) in models.iter().enumerate() {
            step(&format!("compare: {}, {label}", set.label));
            let c = compare(trainer, &set.dir, base, dir)?;
            if i == 0 {
                let row: Vec<String> = COLUMNS.iter().map(|(k, _)| base_cell(&c[*k])).collect();
                table.push_str(&format!("| {} | base | {} |\n", set.label, row.join(" | ")));
            }
            let row: Vec<String> = COLUMNS.iter().map(|(k, _)| cell(&c[*k])).collect();
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
