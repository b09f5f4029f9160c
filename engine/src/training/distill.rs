//! Learning without forgetting: a distillation term that keeps the fine-tuned model's ranking
//! of on-topic passages under free-form instructions close to a frozen teacher's (the base
//! model), while the contrastive objective teaches what the teacher cannot do.
//!
//! Why: fine-tuning on rendered passages teaches an instruction to select a document's shape,
//! and the base model's pull of an instruction's *content* towards the passages that match it
//! weakens; that pull is what content constraints ("only studies in children") rely on
//! (RESULTS.md, "the hand-written set by family"). Each [`DistillationAnchor`] is an
//! (instruction, query) with a list of candidate passages about the query. The teacher's
//! cosines over the list, divided by τ, give a distribution; the term is the Kullback-Leibler
//! divergence KL(teacher ‖ student) over that list, averaged over the anchors (Hinton et al.
//! 2015; Li and Hoiem 2016, "Learning without Forgetting").

use burn::tensor::{activation::log_softmax, Tensor, TensorData};

use crate::data::records::TrainingRecord;
use crate::training::objectives::row_logits;
use crate::training::TrainingTuple;

/// An (instruction, query) and the passages whose teacher ranking the student keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistillationAnchor {
    /// The instruction ("" for the query alone).
    pub instruction: String,
    /// The query.
    pub query: String,
    /// The candidate passages (at least two: a distribution over one passage says nothing).
    pub candidates: Vec<String>,
}

impl DistillationAnchor {
    /// The anchor of an instruction-negative record (formats.md §3): its positive, instruction
    /// negatives and negatives are the candidates, in that order. The label is not used: only
    /// the teacher's scores matter. `None` for InF-IR records and records with one passage.
    pub fn from_record(record: &TrainingRecord) -> Option<Self> {
        let TrainingRecord::InstructionNegative(r) = record else {
            return None;
        };
        let candidates: Vec<String> = std::iter::once(&r.positive)
            .chain(&r.instruction_negatives)
            .chain(&r.negatives)
            .cloned()
            .collect();
        (candidates.len() >= 2).then(|| DistillationAnchor {
            instruction: r.instruction.clone(),
            query: r.query.clone(),
            candidates,
        })
    }

    /// The anchor as a training tuple (first candidate as the positive), for laying anchors out
    /// in a [`crate::training::BatchLayout`] without an I block.
    pub fn tuple(&self) -> TrainingTuple {
        TrainingTuple {
            instruction: self.instruction.clone(),
            query: self.query.clone(),
            positive: self.candidates[0].clone(),
            negatives: self.candidates[1..].to_vec(),
            excluded: 0,
        }
    }
}

/// One anchor's place in a score matrix: its pair's row and its candidates' columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorRow {
    /// Row of the score matrix (the anchor's (instruction, query) pair).
    pub pair: usize,
    /// Columns of the score matrix (the anchor's candidates, in order).
    pub candidates: Vec<usize>,
}

/// KL(teacher ‖ student) of each anchor, `[rows.len()]`. `scores` are the student's cosines
/// `[pairs, passages]`; `teacher[r]` holds the teacher's cosines of row `r`'s candidates, in
/// the same order. Both are divided by `temperature` before the softmax. Rows may have
/// different lengths.
pub fn distillation_loss(
    scores: Tensor<2>,
    rows: &[AnchorRow],
    teacher: &[Vec<f32>],
    temperature: f64,
) -> Tensor<1> {
    assert_eq!(rows.len(), teacher.len(), "one teacher row per anchor");
    let device = scores.device();
    let n = rows.len();
    let width = rows
        .iter()
        .map(|r| r.candidates.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut target = vec![0f32; n * width];
    let mut entropy = vec![0f32; n];
    for (r, (row, t)) in rows.iter().zip(teacher).enumerate() {
        assert_eq!(row.candidates.len(), t.len(), "teacher row {r} length");
        let p = softmax(t, temperature);
        target[r * width..r * width + p.len()].copy_from_slice(&p);
        // Σ p log p, the constant part of the divergence (0 log 0 = 0).
        entropy[r] = p.iter().filter(|&&x| x > 0.0).map(|&x| x * x.ln()).sum();
    }
    let target = Tensor::<2>::from_data(TensorData::new(target, [n, width]), &device);
    let entropy = Tensor::<1>::from_data(TensorData::new(entropy, [n]), &device);
    let columns: Vec<(usize, &[usize])> =
        rows.iter().map(|r| (r.pair, &r.candidates[..])).collect();
    let logits = row_logits(scores, &columns, temperature);
    let cross = (log_softmax(logits, 1) * target).sum_dim(1).reshape([n]);
    entropy - cross
}

/// How far each text's embedding has moved from the teacher's, `[rows]`: 1 - cos(student,
/// teacher) per row of two `[rows, d]` matrices of unit rows (the encoder's output). Zero, with
/// a zero gradient through the encoder's normalisation, while the student embeds as the
/// teacher does.
///
/// Why beside [`distillation_loss`]: a divergence over each anchor's candidates holds only
/// their order relative to each other, so the whole space may turn. The recipe's model embeds
/// its own distillation anchors at cosine 0.72 to the base's embeddings of the same texts, and
/// trial descriptions (BIRCO clinical-trial) at 0.67, their pairwise similarities correlating
/// 0.80 with the base's (RESULTS.md, "J34"). This term holds where every anchor text lies.
pub fn embedding_drift(student: Tensor<2>, teacher: Tensor<2>) -> Tensor<1> {
    let [rows, _] = student.dims();
    (student * teacher)
        .sum_dim(1)
        .reshape([rows])
        .neg()
        .add_scalar(1.0)
}

/// The teacher's distribution over one row of cosines.
fn softmax(cosines: &[f32], temperature: f64) -> Vec<f32> {
    let logits: Vec<f64> = cosines.iter().map(|&c| c as f64 / temperature).collect();
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exp: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f64 = exp.iter().sum();
    exp.iter().map(|e| (e / sum) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::records::InstructionNegativeRecord;

    fn device() -> crate::Device {
        crate::Device::flex()
    }

    fn values(t: Tensor<1>) -> Vec<f32> {
        t.into_data().try_to_vec::<f32>().expect("f32")
    }

    fn matrix(rows: &[&[f32]]) -> Tensor<2> {
        let (n, k) = (rows.len(), rows[0].len());
        let flat: Vec<f32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        Tensor::from_data(TensorData::new(flat, [n, k]), &device())
    }

    #[test]
    fn zero_when_the_student_scores_like_the_teacher() {
        let scores = matrix(&[&[0.9, 0.5, 0.1], &[0.2, 0.7, 0.3]]);
        let rows = vec![
            AnchorRow {
                pair: 0,
                candidates: vec![0, 1, 2],
            },
            AnchorRow {
                pair: 1,
                candidates: vec![2, 1],
            },
        ];
        let teacher = vec![vec![0.9, 0.5, 0.1], vec![0.3, 0.7]];
        for v in values(distillation_loss(scores, &rows, &teacher, 0.05)) {
            assert!(v.abs() < 1e-5, "{v}");
        }
    }

    #[test]
    fn equals_the_divergence_computed_by_hand() {
        // Teacher cosines (0.6, 0.5) and student (0.5, 0.6) at τ = 0.1: logits 6/5 and 5/6.
        let scores = matrix(&[&[0.5, 0.6, 0.0]]);
        let rows = vec![AnchorRow {
            pair: 0,
            candidates: vec![0, 1],
        }];
        let teacher = vec![vec![0.6, 0.5]];
        let got = values(distillation_loss(scores, &rows, &teacher, 0.1))[0] as f64;
        let p = [1.0 / (1.0 + (-1.0f64).exp()), 1.0 / (1.0 + 1.0f64.exp())];
        let q = [p[1], p[0]];
        let want: f64 = p.iter().zip(&q).map(|(a, b)| a * (a / b).ln()).sum();
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
        assert!(want > 0.4);
    }

    #[test]
    fn padding_of_shorter_rows_changes_nothing() {
        let scores = matrix(&[&[0.4, 0.1, 0.8, 0.3]]);
        let short = AnchorRow {
            pair: 0,
            candidates: vec![1, 3],
        };
        let long = AnchorRow {
            pair: 0,
            candidates: vec![0, 1, 2, 3],
        };
        let teacher_short = vec![0.5, 0.2];
        let alone = values(distillation_loss(
            scores.clone(),
            std::slice::from_ref(&short),
            std::slice::from_ref(&teacher_short),
            0.05,
        ))[0];
        let beside = values(distillation_loss(
            scores,
            &[short, long],
            &[teacher_short, vec![0.1, 0.2, 0.3, 0.4]],
            0.05,
        ));
        assert!((alone - beside[0]).abs() < 1e-5);
        assert!(beside[1] > 0.0);
    }

    #[test]
    fn the_gradient_pulls_the_student_towards_the_teacher() {
        // dKL/dz = (softmax(z) - p_teacher) / τ for the student's cosines z.
        let device = crate::Device::flex().autodiff();
        let student = [0.2f32, 0.6, 0.4];
        let teacher = vec![vec![0.7f32, 0.1, 0.3]];
        let tau = 0.5;
        let scores = Tensor::<2>::from_data(TensorData::new(student.to_vec(), [1, 3]), &device)
            .require_grad();
        let rows = vec![AnchorRow {
            pair: 0,
            candidates: vec![0, 1, 2],
        }];
        let grads = distillation_loss(scores.clone(), &rows, &teacher, tau)
            .sum()
            .backward();
        let got: Vec<f32> = scores
            .grad(&grads)
            .expect("a gradient")
            .into_data()
            .try_to_vec::<f32>()
            .expect("f32");
        let q = softmax(&student, tau);
        let p = softmax(&teacher[0], tau);
        for c in 0..3 {
            let want = (q[c] - p[c]) / tau as f32;
            assert!((got[c] - want).abs() < 1e-5, "{got:?}");
        }
        // The teacher's favourite is the one pushed up (negative gradient).
        assert!(got[0] < 0.0 && got[1] > 0.0);
    }

    #[test]
    fn drift_is_one_minus_each_rows_cosine_and_pulls_back_only_once_moved() {
        let unit = |v: [f32; 2]| {
            let n = (v[0] * v[0] + v[1] * v[1]).sqrt();
            [v[0] / n, v[1] / n]
        };
        let (a, b) = (unit([1.0, 0.0]), unit([3.0, 4.0]));
        let teacher = matrix(&[&a[..], &a[..]]);
        let drift = values(embedding_drift(matrix(&[&a[..], &b[..]]), teacher));
        assert!(drift[0].abs() < 1e-6, "{drift:?}");
        assert!((drift[1] - (1.0 - 0.6)).abs() < 1e-6, "{drift:?}");
        // Through the normalisation: no gradient at the teacher's direction, and a moved
        // embedding is turned back towards it.
        let device = crate::Device::flex().autodiff();
        let raw = Tensor::<2>::from_data(
            TensorData::new(vec![2.0f32, 0.0, 3.0, 4.0], [2, 2]),
            &device,
        )
        .require_grad();
        let norm = raw.clone().powf_scalar(2.0).sum_dim(1).sqrt();
        let student = raw.clone() / norm;
        let teacher = Tensor::<2>::from_data(
            TensorData::new(vec![1.0f32, 0.0, 1.0, 0.0], [2, 2]),
            &device,
        );
        let grads = embedding_drift(student, teacher).sum().backward();
        let g: Vec<f32> = raw
            .grad(&grads)
            .expect("a gradient")
            .into_data()
            .try_to_vec::<f32>()
            .expect("f32");
        assert!(g[0].abs() < 1e-6 && g[1].abs() < 1e-6, "{g:?}");
        // Descending the gradient of (3, 4) lowers its y and raises its x: towards (1, 0).
        assert!(g[2] < 0.0 && g[3] > 0.0, "{g:?}");
    }

    #[test]
    fn anchors_come_from_instruction_negative_records_with_two_passages() {
        let record = |negatives: Vec<String>| {
            TrainingRecord::InstructionNegative(InstructionNegativeRecord {
                query: "q".into(),
                instruction: "i".into(),
                positive: "p".into(),
                negatives,
                instruction_negatives: vec!["x".into()],
                instruction_reversed: None,
            })
        };
        let a = DistillationAnchor::from_record(&record(vec!["n".into()])).expect("anchor");
        assert_eq!(a.candidates, ["p", "x", "n"]);
        let t = a.tuple();
        assert_eq!((t.positive.as_str(), t.negatives.len()), ("p", 2));
        let mut lone = record(Vec::new());
        if let TrainingRecord::InstructionNegative(r) = &mut lone {
            r.instruction_negatives.clear();
        }
        assert!(DistillationAnchor::from_record(&lone).is_none());
    }
}
