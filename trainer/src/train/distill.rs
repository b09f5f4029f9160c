//! The distillation term of a run (`distill_data`, engine::training::distill): the anchors are
//! read and scored by the frozen teacher once, before the first step; each micro-batch then
//! adds `distill_weight` x the mean KL(teacher ‖ student) of `distill_batch` anchors drawn
//! from their own seeded stream (a pure function of the micro-batch number, so a resumed run
//! draws what an uninterrupted one would).

use std::path::Path;

use anyhow::{bail, Context};
use burn::tensor::Tensor;

use engine::model_files::ModelFiles;
use engine::rng::SplitMix64;
use engine::training::{distillation_loss, AnchorRow, BatchLayout, DistillationAnchor, RecordFile};
use engine::{Device, ModelConfig};

use super::config::TrainConfig;
use super::{Texts, TrainModel};

/// Stream id of the anchor draw.
const DISTILL_STREAM: u64 = 0xD157_111A_7E5C;

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
        let teacher = TrainModel::load(&files, &teacher_config, false, device)?;
        let scores = teacher_scores(&teacher, texts, &anchors)?;
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
