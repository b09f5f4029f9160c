//! The distillation term of a run (`distill_data`, engine::training::distill): the anchors are
//! read and scored by the frozen teacher once, before the first step, and the scores saved in
//! the run folder (`teacher-scores.json`) so that a resumed run reads them instead of encoding
//! every anchor again (minutes on a CPU) and distils toward exactly the scores its first start
//! computed; each micro-batch then
//! adds `distill_weight` x the mean KL(teacher ‖ student) at `distill_temperature` (default
//! the objective's τ) of `distill_batch` anchors drawn
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
use engine::ModelConfig;

use super::config::TrainConfig;
use super::setup::Setup;
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
    /// `distill_teacher` (default: the run's starting model) on the run's device, without
    /// gradients; a resumed run reads the scores its first start saved. `objective_temperature`
    /// is the objective's τ, the distillation's unless `distill_temperature` is set.
    pub fn prepare(
        config: &TrainConfig,
        setup: &Setup,
        objective_temperature: f64,
        resuming: bool,
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
        let scores = saved_or_scored(config, setup, teacher_dir, &anchors, resuming)?;
        let temperature = if config.distill_temperature > 0.0 {
            config.distill_temperature
        } else {
            objective_temperature
        };
        eprintln!(
            "distillation: {} anchors from {}, teacher {}, {} per micro-batch, weight {}, temperature {temperature}",
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
        let whole = self.share_loss(model, texts, micro, 0..self.per_batch)?;
        Ok(whole.expect("distill_batch is at least 1"))
    }

    /// The part of [`Distillation::loss`] that anchors `share` of micro-batch `micro`'s draw
    /// make (`None` for an empty share): `distill_weight` x their summed divergence / the
    /// anchors per micro-batch, so that the parts of disjoint shares add up to the whole term.
    /// Data-parallel replicas each compute one share on their own device.
    pub fn share_loss(
        &self,
        model: &TrainModel,
        texts: &Texts,
        micro: usize,
        share: std::ops::Range<usize>,
    ) -> engine::Result<Option<Tensor<1>>> {
        let mut rng = SplitMix64::for_stream(self.seed ^ DISTILL_STREAM, micro as u64);
        let chosen: Vec<usize> = (0..self.per_batch)
            .map(|_| {
                ((rng.uniform() * self.anchors.len() as f64) as usize).min(self.anchors.len() - 1)
            })
            .collect();
        let Some(chosen) = chosen.get(share).filter(|c| !c.is_empty()) else {
            return Ok(None);
        };
        let (layout, rows) = lay_out(chosen.iter().map(|&i| &self.anchors[i]));
        let pairs = model.embed_pairs(texts, &layout, 0..layout.pairs.len())?;
        let passages = model.embed_passages(texts, &layout, 0..layout.passages.len())?;
        let teacher: Vec<Vec<f32>> = chosen.iter().map(|&i| self.teacher[i].clone()).collect();
        Ok(Some(
            distillation_loss(
                pairs.matmul(passages.transpose()),
                &rows,
                &teacher,
                self.temperature,
            )
            .sum()
            .mul_scalar(self.weight / self.per_batch as f64),
        ))
    }

    /// Anchors drawn per micro-batch.
    pub fn per_batch(&self) -> usize {
        self.per_batch
    }
}

/// The teacher's cosines over every anchor's candidates: read from the run folder when a
/// resumed run saved them under the same key (teacher, starting model, anchors file, token
/// limits, template), else computed by the teacher at `teacher_dir` and saved there.
fn saved_or_scored(
    config: &TrainConfig,
    setup: &Setup,
    teacher_dir: &Path,
    anchors: &[DistillationAnchor],
    resuming: bool,
) -> anyhow::Result<Vec<Vec<f32>>> {
    let teacher = ModelFiles::read_dir(teacher_dir)?;
    let teacher_config = ModelConfig::from_files(&teacher)?;
    let model_config = &setup.model_config;
    if teacher_config.bert.hidden_size != model_config.bert.hidden_size
        || teacher_config.bert.vocab_size != model_config.bert.vocab_size
    {
        bail!(
            "{}: the teacher's width or vocabulary differs from the model's",
            teacher_dir.display()
        );
    }
    let key = ScoresKey {
        teacher: teacher.fingerprint(),
        base: setup.base.fingerprint(),
        anchors: std::fs::read(&config.distill_data)
            .with_context(|| format!("{}: cannot read", config.distill_data.display()))?,
        limits: [
            config.query_max_length,
            config.passage_max_length,
            config.encode_chunk,
        ],
        template: serde_json::to_string(&config.template)?,
    }
    .digest();
    let saved = config.output.join(TEACHER_SCORES);
    let scores = match resuming
        .then(|| SavedScores::read(&saved, &key, anchors))
        .flatten()
    {
        Some(scores) => {
            eprintln!("distillation: teacher scores read from {}", saved.display());
            scores
        }
        None => {
            let model = TrainModel::load(&teacher, &teacher_config, false, &setup.device)?;
            let scores = teacher_scores(&model, &setup.texts, anchors)?;
            SavedScores { key, scores }.write_or_warn(&saved)
        }
    };
    Ok(scores)
}

/// Everything the teacher's scores depend on besides the arithmetic.
struct ScoresKey {
    /// The teacher's files ([`ModelFiles::fingerprint`]).
    teacher: String,
    /// The starting model's files, whose tokenizer, pooling and pad id encode the texts.
    base: String,
    /// The anchors file's bytes.
    anchors: Vec<u8>,
    /// Query and passage token limits and texts per forward pass.
    limits: [usize; 3],
    /// How instruction and query are joined (JSON).
    template: String,
}

impl ScoresKey {
    /// A SHA-256 digest of every field, in hex.
    fn digest(&self) -> String {
        let mut hash = Sha256::new();
        for part in [
            self.teacher.as_bytes(),
            self.base.as_bytes(),
            &self.anchors,
            self.template.as_bytes(),
        ] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        for n in self.limits {
            hash.update((n as u64).to_le_bytes());
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The teacher's scores as saved in the run folder, with the key of what they were computed
/// from.
#[derive(Serialize, Deserialize)]
struct SavedScores {
    /// [`ScoresKey::digest`] of the run that computed them.
    key: String,
    /// One row per anchor: the teacher's cosine with each candidate.
    scores: Vec<Vec<f32>>,
}

impl SavedScores {
    /// The scores saved at `path` when they were computed under `key` and fit `anchors` (one
    /// finite score per candidate); else `None`, saying why unless there was no file.
    fn read(path: &Path, key: &str, anchors: &[DistillationAnchor]) -> Option<Vec<Vec<f32>>> {
        let why = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => format!("cannot read ({e})"),
            Ok(text) => match serde_json::from_str::<SavedScores>(&text) {
                Err(e) => format!("unreadable ({e})"),
                Ok(saved) if saved.key != key => "computed under other settings (teacher, starting model, anchors file, token limits, template or encoding chunk)".to_string(),
                Ok(saved) if !fits(&saved.scores, anchors) => {
                    "not one finite score per candidate of the anchors".to_string()
                }
                Ok(saved) => return Some(saved.scores),
            },
        };
        eprintln!(
            "distillation: {}: {why}; scoring the anchors again",
            path.display()
        );
        None
    }

    /// Writes the scores to `path` (atomically) and returns them. The file only saves a
    /// resumed run the scoring, so a failed write is a warning, not the end of the run.
    fn write_or_warn(self, path: &Path) -> Vec<Vec<f32>> {
        let written = serde_json::to_string(&self)
            .map_err(anyhow::Error::from)
            .and_then(|json| Ok(engine::atomic::write(path, json.as_bytes())?));
        if let Err(e) = written {
            eprintln!("distillation: the teacher's scores were not saved ({e:#}); a resumed run will score the anchors again");
        }
        self.scores
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

/// Texts per call of the encoder while scoring: the unit of progress (each call sorts its
/// texts by length and pads each batch of `encode_chunk` to its longest).
const SCORING_CHUNK: usize = 512;

/// The teacher's cosines over each anchor's candidates, with progress. All anchors share one
/// layout, so a passage that is a candidate of several anchors is encoded once (the recipe's
/// 10,880 candidates are 4,045 passages).
fn teacher_scores(
    teacher: &TrainModel,
    texts: &Texts,
    anchors: &[DistillationAnchor],
) -> anyhow::Result<Vec<Vec<f32>>> {
    let (layout, rows) = lay_out(anchors.iter());
    let (n_pairs, n_passages) = (layout.pairs.len(), layout.passages.len());
    let bar = crate::progress::bar(n_pairs + n_passages, "distillation: teacher texts");
    let in_chunks =
        |n: usize, embed: &dyn Fn(std::ops::Range<usize>) -> engine::Result<Tensor<2>>| {
            let parts = (0..n)
                .step_by(SCORING_CHUNK)
                .map(|start| {
                    let part = embed(start..(start + SCORING_CHUNK).min(n))?;
                    bar.inc(part.dims()[0] as u64);
                    Ok(part)
                })
                .collect::<engine::Result<Vec<_>>>()?;
            Ok::<_, engine::EngineError>(Tensor::cat(parts, 0))
        };
    let pairs = in_chunks(n_pairs, &|r| teacher.embed_pairs(texts, &layout, r))?;
    let passages = in_chunks(n_passages, &|r| teacher.embed_passages(texts, &layout, r))?;
    let dim = pairs.dims()[1];
    let read = |t: Tensor<2>| {
        t.into_data()
            .try_to_vec::<f32>()
            .map_err(|e| anyhow::anyhow!("reading the teacher's embeddings: {e:?}"))
    };
    let (pairs, passages) = (read(pairs)?, read(passages)?);
    bar.finish_and_clear();
    // Only the candidates' cosines (the rows are unit length): no pairs x passages matrix.
    let passages: Vec<&[f32]> = passages.chunks_exact(dim).collect();
    Ok(rows
        .iter()
        .map(|anchor| {
            let pair = &pairs[anchor.pair * dim..(anchor.pair + 1) * dim];
            anchor
                .candidates
                .iter()
                .map(|&c| pair.iter().zip(passages[c]).map(|(a, b)| a * b).sum())
                .collect()
        })
        .collect())
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
            .write_or_warn(&path)
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
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(
            SavedScores::read(&path, "k", &anchors).is_none(),
            "a folder"
        );
        // A file that cannot be written (a folder is in the way) costs a warning, not the run.
        assert_eq!(saved(good.clone()), good);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_key_changes_with_everything_the_scores_depend_on() {
        let key = || ScoresKey {
            teacher: "t".into(),
            base: "b".into(),
            anchors: b"{}".to_vec(),
            limits: [256, 256, 32],
            template: "\"concat\"".into(),
        };
        let digest = key().digest();
        assert_eq!(digest, key().digest());
        assert_eq!(digest.len(), 64);
        let changed: [fn(&mut ScoresKey); 7] = [
            |k| k.teacher.push('x'),
            |k| k.base.push('x'),
            |k| k.anchors.push(b'\n'),
            |k| k.limits[0] = 128,
            |k| k.limits[1] = 128,
            |k| k.limits[2] = 16,
            |k| k.template.push(' '),
        ];
        for (i, change) in changed.iter().enumerate() {
            let mut k = key();
            change(&mut k);
            assert_ne!(k.digest(), digest, "change {i}");
        }
        // Field boundaries count: moving a byte from one field to the next is another key.
        let mut k = key();
        k.teacher = "tb".into();
        k.base = String::new();
        assert_ne!(k.digest(), digest);
    }
}
