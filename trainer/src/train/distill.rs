//! The distillation term of a run (`distill_data`, engine::training::distill): the anchors are
//! read and scored by the frozen teacher once, before the first step, and the scores saved in
//! the run folder (`teacher-scores.json`) so that a resumed run reads them instead of encoding
//! every anchor again (minutes on a CPU); each micro-batch then
//! adds `distill_weight` x the mean KL(teacher ‖ student) of `distill_batch` anchors drawn
//! from their own seeded stream (a pure function of the micro-batch number, so a resumed run
//! draws what an uninterrupted one would).

use std::path::Path;

use anyhow::{bail, Context};
use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use engine::model_files::ModelFiles;
use engine::rng::SplitMix64;
use engine::training::{distillation_loss, AnchorRow, BatchLayout, DistillationAnchor, RecordFile};
use engine::{Device, ModelConfig};

use super::config::TrainConfig;
use super::{Texts, TrainModel};

/// Stream id of the anchor draw.
const DISTILL_STREAM: u64 = 0xD157_111A_7E5C;

/// The file in the run folder that keeps the teacher's scores.
pub const TEACHER_SCORES: &str = "teacher-scores.json";

/// The anchors, the teacher's cosines over each anchor's candidates, and how many to draw.
pub struct Distillation {
    anchors: Vec<DistillationAnchor>,
    teacher: Vec<Vec<f32>>,
    per_batch: usize,
    weight: f64,
    temperature: f64,
    seed: u64,
}

impl Distillation {
    /// The run's distillation, or `None` when `distill_data` is empty. The teacher is
    /// `distill_teacher` (default: the run's starting model) on `device`, without gradients.
    pub fn prepare(
        config: &TrainConfig,
        texts: &Texts,
        model_config: &ModelConfig,
        temperature: f64,
        device: &Device,
    ) -> anyhow::Result<Option<Self>> {
        if config.distill_data.as_os_str().is_empty() {
            return Ok(None);
        }
        if !(config.distill_weight > 0.0 && config.distill_weight.is_finite())
            || config.distill_batch == 0
        {
            bail!("--distill-weight must be positive and --distill-batch at least 1");
        }
        let anchors = read_anchors(&config.distill_data)?;
        let teacher_dir = if config.distill_teacher.as_os_str().is_empty() {
            &config.model
        } else {
            &config.distill_teacher
        };
        let files = ModelFiles::read_dir(teacher_dir)?;
        let teacher_config = ModelConfig::from_files(&files)?;
        if teacher_config.bert.hidden_size != model_config.bert.hidden_size
            || teacher_config.bert.vocab_size != model_config.bert.vocab_size
        {
            bail!(
                "{}: the teacher's width or vocabulary differs from the model's",
                teacher_dir.display()
            );
        }
        let saved = SavedScores::path(config);
        let key = SavedScores::key(config, &files)?;
        let scores = match SavedScores::read(&saved, &key, &anchors) {
            Some(scores) => {
                eprintln!("distillation: teacher scores read from {}", saved.display());
                scores
            }
            None => {
                let teacher = TrainModel::load(&files, &teacher_config, false, device)?;
                let scores = teacher_scores(&teacher, texts, &anchors)?;
                SavedScores { key, scores }.write(&saved)?
            }
        };
        eprintln!(
            "distillation: {} anchors from {}, teacher {}, {} per micro-batch, weight {}",
            anchors.len(),
            config.distill_data.display(),
            teacher_dir.display(),
            config.distill_batch,
            config.distill_weight
        );
        Ok(Some(Distillation {
            anchors,
            teacher: scores,
            per_batch: config.distill_batch,
            weight: config.distill_weight,
            temperature,
            seed: config.seed,
        }))
    }

    /// `distill_weight` x the mean divergence of micro-batch `micro`'s anchors, with
    /// gradients flowing into `model`.
    pub fn loss(
        &self,
        model: &TrainModel,
        texts: &Texts,
        micro: usize,
    ) -> engine::Result<Tensor<1>> {
        let mut rng = SplitMix64::for_stream(self.seed ^ DISTILL_STREAM, micro as u64);
        let chosen: Vec<usize> = (0..self.per_batch)
            .map(|_| {
                ((rng.uniform() * self.anchors.len() as f64) as usize).min(self.anchors.len() - 1)
            })
            .collect();
        let (layout, rows) = lay_out(chosen.iter().map(|&i| &self.anchors[i]));
        let pairs = model.embed_pairs(texts, &layout, 0..layout.pairs.len())?;
        let passages = model.embed_passages(texts, &layout, 0..layout.passages.len())?;
        let teacher: Vec<Vec<f32>> = chosen.iter().map(|&i| self.teacher[i].clone()).collect();
        Ok(distillation_loss(
            pairs.matmul(passages.transpose()),
            &rows,
            &teacher,
            self.temperature,
        )
        .mean()
        .mul_scalar(self.weight))
    }
}

/// The teacher's scores as saved in the run folder, with the key of what they were computed
/// from.
#[derive(Serialize, Deserialize)]
struct SavedScores {
    /// [`SavedScores::key`] of the run that computed them.
    key: String,
    /// One row per anchor: the teacher's cosine with each candidate.
    scores: Vec<Vec<f32>>,
}

impl SavedScores {
    fn path(config: &TrainConfig) -> std::path::PathBuf {
        config.output.join(TEACHER_SCORES)
    }

    /// A digest of everything the scores depend on: the teacher's files, the anchors file's
    /// bytes, the token limits, the template and the encoding chunk.
    fn key(config: &TrainConfig, teacher: &ModelFiles) -> anyhow::Result<String> {
        let anchors = std::fs::read(&config.distill_data)
            .with_context(|| format!("{}: cannot read", config.distill_data.display()))?;
        let mut hash = Sha256::new();
        hash.update(teacher.fingerprint());
        hash.update((anchors.len() as u64).to_le_bytes());
        hash.update(&anchors);
        for n in [
            config.query_max_length,
            config.passage_max_length,
            config.encode_chunk,
        ] {
            hash.update((n as u64).to_le_bytes());
        }
        hash.update(serde_json::to_string(&config.template)?);
        Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The scores saved at `path` when they were computed under `key` and fit `anchors` (one
    /// finite score per candidate); else `None`, saying why when a file was there.
    fn read(path: &Path, key: &str, anchors: &[DistillationAnchor]) -> Option<Vec<Vec<f32>>> {
        let text = std::fs::read_to_string(path).ok()?;
        let why = match serde_json::from_str::<SavedScores>(&text) {
            Err(e) => format!("unreadable ({e})"),
            Ok(saved) if saved.key != key => {
                "computed for another teacher, anchors file or token limits".to_string()
            }
            Ok(saved) if !fits(&saved.scores, anchors) => {
                "not one finite score per candidate of the anchors".to_string()
            }
            Ok(saved) => return Some(saved.scores),
        };
        eprintln!(
            "distillation: {}: {why}; scoring the anchors again",
            path.display()
        );
        None
    }

    /// Writes the scores to `path` (atomically) and returns them.
    fn write(self, path: &Path) -> anyhow::Result<Vec<Vec<f32>>> {
        engine::atomic::write(path, serde_json::to_string(&self)?.as_bytes())?;
        Ok(self.scores)
    }
}

/// Whether `scores` has one finite value per candidate of each anchor.
fn fits(scores: &[Vec<f32>], anchors: &[DistillationAnchor]) -> bool {
    scores.len() == anchors.len()
        && scores.iter().zip(anchors).all(|(row, anchor)| {
            row.len() == anchor.candidates.len() && row.iter().all(|v| v.is_finite())
        })
}

/// Every anchor of the file (instruction-negative records with at least two passages).
fn read_anchors(path: &Path) -> anyhow::Result<Vec<DistillationAnchor>> {
    let mut file = RecordFile::open(path, false, &mut |_, _| {})?;
    let mut anchors = Vec::with_capacity(file.len());
    for i in 0..file.len() {
        let record = file.read(i)?;
        let anchor = DistillationAnchor::from_record(&record).with_context(|| {
            format!(
                "{}: record {} is not an instruction-negative record with two passages or more",
                path.display(),
                i + 1
            )
        })?;
        anchors.push(anchor);
    }
    if anchors.is_empty() {
        bail!("{}: no distillation anchors", path.display());
    }
    Ok(anchors)
}

/// The anchors laid out without an I block, and each one's row and candidate columns.
fn lay_out<'a>(
    anchors: impl Iterator<Item = &'a DistillationAnchor>,
) -> (BatchLayout, Vec<AnchorRow>) {
    let tuples: Vec<_> = anchors.map(|a| a.tuple()).collect();
    let layout = BatchLayout::new(&tuples, false, 0.0, &mut SplitMix64::new(0));
    let rows = layout
        .tuples
        .iter()
        .map(|t| AnchorRow {
            pair: t.pair,
            candidates: std::iter::once(t.positive)
                .chain(t.negatives.iter().copied())
                .collect(),
        })
        .collect();
    (layout, rows)
}

/// The teacher's cosines over each anchor's candidates, texts encoded once (chunks of 256
/// anchors), with progress.
fn teacher_scores(
    teacher: &TrainModel,
    texts: &Texts,
    anchors: &[DistillationAnchor],
) -> anyhow::Result<Vec<Vec<f32>>> {
    let bar = crate::progress::bar(anchors.len(), "distillation: teacher scores");
    let mut out = Vec::with_capacity(anchors.len());
    for part in anchors.chunks(256) {
        let (layout, rows) = lay_out(part.iter());
        let pairs = teacher.embed_pairs(texts, &layout, 0..layout.pairs.len())?;
        let passages = teacher.embed_passages(texts, &layout, 0..layout.passages.len())?;
        let n_passages = layout.passages.len();
        let scores: Vec<f32> = pairs
            .matmul(passages.transpose())
            .into_data()
            .try_to_vec::<f32>()
            .map_err(|e| anyhow::anyhow!("reading the teacher's scores: {e:?}"))?;
        for row in rows {
            out.push(
                row.candidates
                    .iter()
                    .map(|&c| scores[row.pair * n_passages + c])
                    .collect(),
            );
        }
        bar.set_position(out.len() as u64);
    }
    bar.finish_and_clear();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(candidates: usize) -> DistillationAnchor {
        DistillationAnchor {
            instruction: String::new(),
            query: "q".into(),
            candidates: (0..candidates).map(|i| format!("passage {i}")).collect(),
        }
    }

    #[test]
    fn saved_scores_are_used_only_under_their_key_and_when_they_fit_the_anchors() {
        let dir = std::env::temp_dir().join(format!("saved-scores-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(TEACHER_SCORES);
        let anchors = [anchor(2), anchor(3)];
        let good = vec![vec![0.5, 0.25], vec![0.1, 0.2, 0.3]];
        assert!(SavedScores::read(&path, "k", &anchors).is_none(), "no file");
        let saved = |scores: Vec<Vec<f32>>| {
            SavedScores {
                key: "k".into(),
                scores,
            }
            .write(&path)
            .unwrap()
        };
        assert_eq!(saved(good.clone()), good);
        assert_eq!(SavedScores::read(&path, "k", &anchors), Some(good.clone()));
        assert!(SavedScores::read(&path, "other", &anchors).is_none());
        assert!(SavedScores::read(&path, "k", &anchors[..1]).is_none());
        saved(vec![vec![0.5, 0.25], vec![0.1, 0.2]]);
        assert!(
            SavedScores::read(&path, "k", &anchors).is_none(),
            "a short row"
        );
        saved(vec![vec![0.5, f32::NAN], vec![0.1, 0.2, 0.3]]);
        assert!(SavedScores::read(&path, "k", &anchors).is_none(), "NaN");
        std::fs::write(&path, "{\"key\": \"k\", \"scores\": [[0.5").unwrap();
        assert!(
            SavedScores::read(&path, "k", &anchors).is_none(),
            "cut short"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
