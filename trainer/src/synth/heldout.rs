//! The queries `synth attributes` and `synth renderings` hold out, written as evaluation sets:
//! `instructions/` (each held-out record as a query with og, changed and reversed judgments)
//! and `retrieval/` (the same queries alone, with their original judgments).

use std::collections::HashSet;
use std::path::Path;

use engine::data::records::InstructionNegativeRecord;
use engine::{EvalSet, Mode};

/// Writes both held-out sets under `dir`.
pub fn write_heldout_sets(
    dir: &Path,
    set: &EvalSet,
    og: &engine::data::Qrels,
    heldout: &[HeldOut],
    queries: &[&engine::Query],
    removed: &HashSet<String>,
) -> anyhow::Result<()> {
    write_heldout(&dir.join("instructions"), set, heldout, removed)?;
    write_retrieval(&dir.join("retrieval"), set, og, queries)?;
    eprintln!(
        "held out: {} instruction queries in {} and {} plain queries in {} (evaluation sets)",
        heldout.len(),
        dir.join("instructions").display(),
        queries.len(),
        dir.join("retrieval").display()
    );
    Ok(())
}

/// A passage of a held-out record: one of the corpus, or a synthesized version.
pub enum PassageRef {
    /// A passage of the corpus, by id.
    Corpus(String),
    /// A synthesized version, added to the held-out corpus.
    New {
        /// Its id.
        id: String,
        /// Its text.
        text: String,
    },
}

impl PassageRef {
    fn id(&self) -> &str {
        match self {
            PassageRef::Corpus(id) | PassageRef::New { id, .. } => id,
        }
    }
}

/// A held-out record and where its two passages are.
pub struct HeldOut {
    /// The query id it gets.
    pub id: String,
    /// The record.
    pub record: InstructionNegativeRecord,
    /// Its kind (the constraint's name).
    pub kind: &'static str,
    /// The passage the instruction keeps.
    pub positive: PassageRef,
    /// The passage its reversal keeps.
    pub negative: PassageRef,
}

/// The corpus of `set` without the `removed` ids, plus `extra` passages.
fn corpus_with(
    set: &EvalSet,
    removed: &HashSet<String>,
    extra: &[(&str, &str)],
) -> Vec<engine::Passage> {
    let added = extra.iter().map(|(id, text)| engine::Passage {
        id: id.to_string(),
        title: String::new(),
        text: text.to_string(),
    });
    set.corpus
        .iter()
        .filter(|p| !removed.contains(&p.id))
        .cloned()
        .chain(added)
        .collect()
}

/// The held-out queries without instructions, with their original judgments: the general
/// retrieval check on queries the model never trained on.
fn write_retrieval(
    dir: &Path,
    set: &EvalSet,
    og: &engine::data::Qrels,
    queries: &[&engine::Query],
) -> anyhow::Result<()> {
    let judged = queries
        .iter()
        .filter_map(|q| Some((q.id.clone(), og.get(&q.id)?.clone())))
        .collect();
    let plain = queries
        .iter()
        .map(|q| engine::Query {
            id: q.id.clone(),
            text: q.text.clone(),
            instruction_og: String::new(),
            instruction_changed: None,
            instruction_reversed: None,
            constraint: None,
        })
        .collect();
    EvalSet {
        root: dir.to_path_buf(),
        corpus: corpus_with(set, &HashSet::new(), &[]),
        queries: plain,
        qrels: [(Mode::Og, judged)].into(),
        candidates: None,
    }
    .write(dir)?;
    Ok(())
}

/// The held-out records as an evaluation set over the corpus (synthesized versions added, the
/// passages they were made from removed).
fn write_heldout(
    dir: &Path,
    set: &EvalSet,
    records: &[HeldOut],
    removed: &HashSet<String>,
) -> anyhow::Result<()> {
    let extra: Vec<(&str, &str)> = records
        .iter()
        .flat_map(|r| [&r.positive, &r.negative])
        .filter_map(|p| match p {
            PassageRef::New { id, text } => Some((id.as_str(), text.as_str())),
            PassageRef::Corpus(_) => None,
        })
        .collect();
    let queries = records
        .iter()
        .map(|r| engine::Query {
            id: r.id.clone(),
            text: r.record.query.clone(),
            instruction_og: String::new(),
            instruction_changed: Some(r.record.instruction.clone()),
            instruction_reversed: r.record.instruction_reversed.clone(),
            constraint: Some(r.kind.to_string()),
        })
        .collect();
    // Under the query alone both passages are relevant; the instruction keeps one of them,
    // its reversal the other.
    let judged = |positive_level: f64, negative_level: f64| -> engine::data::Qrels {
        records
            .iter()
            .map(|r| {
                let levels = [
                    (r.positive.id().to_string(), positive_level),
                    (r.negative.id().to_string(), negative_level),
                ];
                (r.id.clone(), levels.into())
            })
            .collect()
    };
    EvalSet {
        root: dir.to_path_buf(),
        corpus: corpus_with(set, removed, &extra),
        queries,
        qrels: [
            (Mode::Og, judged(1.0, 1.0)),
            (Mode::Changed, judged(1.0, 0.0)),
            (Mode::Reversed, judged(0.0, 1.0)),
        ]
        .into(),
        candidates: None,
    }
    .write(dir)?;
    Ok(())
}
