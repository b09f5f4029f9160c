//! The distillation term of a run (`distill_data`, engine::training::distill): the anchors are
//! read and scored by the frozen teacher once, before the first step, and the scores saved in
//! the run folder (`teacher-scores.json`) so that a resumed run reads them instead of encoding
//! every anchor again (minutes on a CPU) and distils toward exactly the scores its first start
//! computed; each micro-batch then
//! adds `distill_weight` x the mean KL(teacher ‖ student) at `distill_temperature` (default
//! the objective's τ) of `distill_batch` anchors drawn
//! from their own seeded stream (a pure function of the micro-batch number, so a resumed run
//! draws what an uninterrupted one would). With `distill_embedding_weight` > 0 the teacher's
//! embeddings of the anchor texts are kept (and saved) too, and each micro-batch adds that
//! weight x the anchors' [`engine::training::embedding_drift`]: where the texts lie, not only
//! their order.

use std::path::Path;

use anyhow::{bail, Context};
use burn::tensor::{Tensor, TensorData};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use engine::model_files::ModelFiles;
use engine::rng::SplitMix64;
use engine::training::{
    distillation_loss, embedding_drift, AnchorRow, BatchLayout, DistillationAnchor, RecordFile,
};
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
    /// The embedding term, when `distill_embedding_weight` > 0.
    embedding: Option<EmbeddingTerm>,
}

/// The anchors' embedding term: its weight, the teacher's embeddings of every anchor text, and
/// where each anchor's texts are among them.
struct EmbeddingTerm {
    weight: f64,
    teacher: TeacherEmbeddings,
    /// Anchor `a`'s pair and candidates in `teacher` (all anchors laid out at once).
    rows: Vec<AnchorRow>,
}

/// The teacher's embeddings of the anchor texts as all anchors laid out at once lay them out
/// (a passage that is a candidate of several anchors once): unit rows, `dim` wide.
#[derive(Serialize, Deserialize)]
struct TeacherEmbeddings {
    dim: usize,
    pairs: Vec<f32>,
    passages: Vec<f32>,
}

impl TeacherEmbeddings {
    /// Pair `i`'s embedding.
    fn pair(&self, i: usize) -> &[f32] {
        &self.pairs[i * self.dim..(i + 1) * self.dim]
    }

    /// Passage `i`'s embedding.
    fn passage(&self, i: usize) -> &[f32] {
        &self.passages[i * self.dim..(i + 1) * self.dim]
    }

    /// Whether these are `pairs` x `passages` finite rows.
    fn fit(&self, pairs: usize, passages: usize) -> bool {
        self.dim > 0
            && self.pairs.len() == pairs * self.dim
            && self.passages.len() == passages * self.dim
            && self
                .pairs
                .iter()
                .chain(&self.passages)
                .all(|v| v.is_finite())
    }
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
        let with_embeddings = config.distill_embedding_weight > 0.0;
        let (whole, rows) = lay_out(anchors.iter());
        let (scores, embeddings) = saved_or_scored(
            config,
            setup,
            teacher_dir,
            (&anchors, &whole, &rows),
            resuming,
            with_embeddings,
        )?;
        let temperature = if config.distill_temperature > 0.0 {
            config.distill_temperature
        } else {
            objective_temperature
        };
        eprintln!(
            "distillation: {} anchors from {}, teacher {}, {} per micro-batch, weight {}, temperature {temperature}, embedding weight {}",
            anchors.len(),
            config.distill_data.display(),
            teacher_dir.display(),
            config.distill_batch,
            config.distill_weight,
            config.distill_embedding_weight
        );
        let embedding = embeddings.map(|teacher| EmbeddingTerm {
            weight: config.distill_embedding_weight,
            teacher,
            rows,
        });
        Ok(Some(Distillation {
            anchors,
            teacher: scores,
            per_batch: config.distill_batch,
            weight: config.distill_weight,
            temperature,
            seed: config.seed,
            embedding,
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
        let divergence = distillation_loss(
            pairs.clone().matmul(passages.clone().transpose()),
            &rows,
            &teacher,
            self.temperature,
        )
        .sum()
        .mul_scalar(self.weight / self.per_batch as f64);
        Ok(Some(match &self.embedding {
            None => divergence,
            Some(term) => {
                let drift = term.drift(chosen, &rows, pairs, passages);
                divergence + drift.mul_scalar(term.weight / self.per_batch as f64)
            }
        }))
    }

    /// Anchors drawn per micro-batch.
    pub fn per_batch(&self) -> usize {
        self.per_batch
    }
}

impl EmbeddingTerm {
    /// The summed drift of the `chosen` anchors, laid out as `rows` with the model's
    /// embeddings `pairs` and `passages`: each anchor's query's drift plus the mean of its
    /// candidates' (a sum over anchors, so that disjoint shares add up).
    fn drift(
        &self,
        chosen: &[usize],
        rows: &[AnchorRow],
        pairs: Tensor<2>,
        passages: Tensor<2>,
    ) -> Tensor<1> {
        let (n_pairs, n_passages, dim) = (pairs.dims()[0], passages.dims()[0], self.teacher.dim);
        let (mut pair_teacher, mut passage_teacher) =
            (vec![0f32; n_pairs * dim], vec![0f32; n_passages * dim]);
        let (mut pair_weight, mut passage_weight) = (vec![0f32; n_pairs], vec![0f32; n_passages]);
        for (row, &anchor) in rows.iter().zip(chosen) {
            let whole = &self.rows[anchor];
            let teacher_pair = self.teacher.pair(whole.pair);
            pair_teacher[row.pair * dim..(row.pair + 1) * dim].copy_from_slice(teacher_pair);
            pair_weight[row.pair] += 1.0;
            let share = 1.0 / row.candidates.len() as f32;
            for (&here, &there) in row.candidates.iter().zip(&whole.candidates) {
                let teacher_passage = self.teacher.passage(there);
                passage_teacher[here * dim..(here + 1) * dim].copy_from_slice(teacher_passage);
                passage_weight[here] += share;
            }
        }
        let device = pairs.device();
        let matrix =
            |v: Vec<f32>, n: usize| Tensor::<2>::from_data(TensorData::new(v, [n, dim]), &device);
        let vector =
            |v: Vec<f32>, n: usize| Tensor::<1>::from_data(TensorData::new(v, [n]), &device);
        let pair_drift = embedding_drift(pairs, matrix(pair_teacher, n_pairs));
        let passage_drift = embedding_drift(passages, matrix(passage_teacher, n_passages));
        (pair_drift * vector(pair_weight, n_pairs)).sum()
            + (passage_drift * vector(passage_weight, n_passages)).sum()
    }
}

/// The teacher's cosines over every anchor's candidates, and its embeddings of the anchor
/// texts when `with_embeddings`: read from the run folder when a resumed run saved them under
/// the same key (teacher, starting model, anchors file, token limits, template), else
/// computed by the teacher at `teacher_dir` and saved there.
fn saved_or_scored(
    config: &TrainConfig,
    setup: &Setup,
    teacher_dir: &Path,
    (anchors, whole, rows): (&[DistillationAnchor], &BatchLayout, &[AnchorRow]),
    resuming: bool,
    with_embeddings: bool,
) -> anyhow::Result<(Vec<Vec<f32>>, Option<TeacherEmbeddings>)> {
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
    let found = resuming
        .then(|| {
            let texts = with_embeddings.then_some((whole.pairs.len(), whole.passages.len()));
            SavedScores::read(&saved, &key, anchors, texts)
        })
        .flatten();
    let computed = match found {
        Some(found) => {
            eprintln!("distillation: teacher scores read from {}", saved.display());
            found
        }
        None => {
            let model = TrainModel::load(&teacher, &teacher_config, false, &setup.device)?;
            let (scores, embeddings) = teacher_view(&model, &setup.texts, whole, rows)?;
            SavedScores {
                key,
                scores,
                embeddings: with_embeddings.then_some(embeddings),
            }
            .write_or_warn(&saved)
        }
    };
    Ok((computed.scores, computed.embeddings))
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
    /// The teacher's embeddings of the anchor texts, kept when the run has an embedding term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    embeddings: Option<TeacherEmbeddings>,
}

impl SavedScores {
    /// What was saved at `path` when it was computed under `key` and fits `anchors` (one
    /// finite score per candidate, and, when `texts` gives the anchors' (pairs, passages) laid
    /// out at once, the embeddings of every one); else `None`, saying why unless there was no
    /// file.
    fn read(
        path: &Path,
        key: &str,
        anchors: &[DistillationAnchor],
        texts: Option<(usize, usize)>,
    ) -> Option<Self> {
        let why = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => format!("cannot read ({e})"),
            Ok(text) => match serde_json::from_str::<SavedScores>(&text) {
                Err(e) => format!("unreadable ({e})"),
                Ok(saved) if saved.key != key => "computed under other settings (teacher, starting model, anchors file, token limits, template or encoding chunk)".to_string(),
                Ok(saved) if !fits(&saved.scores, anchors) => {
                    "not one finite score per candidate of the anchors".to_string()
                }
                Ok(saved)
                    if texts.is_some_and(|(pairs, passages)| {
                        !saved
                            .embeddings
                            .as_ref()
                            .is_some_and(|e| e.fit(pairs, passages))
                    }) =>
                {
                    "without the teacher's embeddings of every anchor text".to_string()
                }
                Ok(saved) => return Some(saved),
            },
        };
        eprintln!(
            "distillation: {}: {why}; scoring the anchors again",
            path.display()
        );
        None
    }

    /// Writes itself to `path` (atomically) and returns itself. The file only saves a
    /// resumed run the scoring, so a failed write is a warning, not the end of the run.
    fn write_or_warn(self, path: &Path) -> Self {
        let written = serde_json::to_string(&self)
            .map_err(anyhow::Error::from)
            .and_then(|json| Ok(engine::atomic::write(path, json.as_bytes())?));
        if let Err(e) = written {
            eprintln!("distillation: the teacher's scores were not saved ({e:#}); a resumed run will score the anchors again");
        }
        self
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

/// The teacher's cosines over each anchor's candidates and its embeddings of every anchor
/// text, with progress. All anchors share one layout, so a passage that is a candidate of
/// several anchors is encoded once (the recipe's 10,880 candidates are 4,045 passages).
fn teacher_view(
    teacher: &TrainModel,
    texts: &Texts,
    layout: &BatchLayout,
    rows: &[AnchorRow],
) -> anyhow::Result<(Vec<Vec<f32>>, TeacherEmbeddings)> {
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
    let pairs = in_chunks(n_pairs, &|r| teacher.embed_pairs(texts, layout, r))?;
    let passages = in_chunks(n_passages, &|r| teacher.embed_passages(texts, layout, r))?;
    let dim = pairs.dims()[1];
    let read = |t: Tensor<2>| {
        t.into_data()
            .try_to_vec::<f32>()
            .map_err(|e| anyhow::anyhow!("reading the teacher's embeddings: {e:?}"))
    };
    let (pairs, passages) = (read(pairs)?, read(passages)?);
    bar.finish_and_clear();
    // Only the candidates' cosines (the rows are unit length): no pairs x passages matrix.
    let rows_of: Vec<&[f32]> = passages.chunks_exact(dim).collect();
    let scores = rows
        .iter()
        .map(|anchor| {
            let pair = &pairs[anchor.pair * dim..(anchor.pair + 1) * dim];
            anchor
                .candidates
                .iter()
                .map(|&c| pair.iter().zip(rows_of[c]).map(|(a, b)| a * b).sum())
                .collect()
        })
        .collect();
    Ok((
        scores,
        TeacherEmbeddings {
            dim,
            pairs,
            passages,
        },
    ))
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
        let read = |key: &str, anchors: &[DistillationAnchor]| {
            SavedScores::read(&path, key, anchors, None).map(|saved| saved.scores)
        };
        assert!(read("k", &anchors).is_none(), "no file");
        let saved = |scores: Vec<Vec<f32>>| {
            SavedScores {
                key: "k".into(),
                scores,
                embeddings: None,
            }
            .write_or_warn(&path)
            .scores
        };
        assert_eq!(saved(good.clone()), good);
        assert_eq!(read("k", &anchors), Some(good.clone()));
        assert!(read("other", &anchors).is_none());
        // A run with the embedding term needs the teacher's embeddings of every anchor text
        // as all anchors lay out: both share the query "q" (1 pair) and 3 passages.
        let (whole, _) = lay_out(anchors.iter());
        let texts = (whole.pairs.len(), whole.passages.len());
        assert_eq!(texts, (1, 3));
        assert!(
            SavedScores::read(&path, "k", &anchors, Some(texts)).is_none(),
            "no embeddings"
        );
        let with = |pairs: usize| SavedScores {
            key: "k".into(),
            scores: good.clone(),
            embeddings: Some(TeacherEmbeddings {
                dim: 2,
                pairs: vec![0.5; 2 * pairs],
                passages: vec![0.5; 2 * 3],
            }),
        };
        with(1).write_or_warn(&path);
        let back = SavedScores::read(&path, "k", &anchors, Some(texts)).expect("fits");
        assert_eq!(back.embeddings.map(|e| e.passages.len()), Some(6));
        with(2).write_or_warn(&path);
        assert!(
            SavedScores::read(&path, "k", &anchors, Some(texts)).is_none(),
            "a row too many"
        );
        assert_eq!(
            read("k", &anchors),
            Some(good.clone()),
            "enough without the term"
        );
        assert!(read("k", &anchors[..1]).is_none());
        saved(vec![vec![0.5, 0.25], vec![0.1, 0.2]]);
        assert!(read("k", &anchors).is_none(), "a short row");
        saved(vec![vec![0.5, f32::NAN], vec![0.1, 0.2, 0.3]]);
        assert!(read("k", &anchors).is_none(), "NaN");
        std::fs::write(&path, "{\"key\": \"k\", \"scores\": [[0.5").unwrap();
        assert!(read("k", &anchors).is_none(), "cut short");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(read("k", &anchors).is_none(), "a folder");
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
