//! Learn live (teach mode): the page fine-tunes the loaded model for a few steps on dual-view
//! records built from the demo set's judgments, and watches queries it never trained on.
//!
//! The training itself is the engine's ([`engine::training::lesson`]: the loss, clipping and
//! AdamW that `trainer lesson` and `trainer train` run) on the `synth` crate's lesson records.
//! It runs in a Web Worker built as a second wasm (`learn`, with the engine's `autodiff`
//! feature): a CPU step takes
//! seconds, which the page's thread cannot give without freezing, and visitors who never press
//! "Train" never download the training code (the page's own wasm stays as it was).
//!
//! This module is the message protocol between the two (JSON text; the model files travel
//! beside the first message as bytes) and, with the `learn` feature, [`Learner`]: what the
//! worker does with each request, browser-free so the native tests run it.

use serde::{Deserialize, Serialize};

/// Steps one press of "Train" takes.
pub const STEPS_PER_PRESS: usize = 3;

/// Passages of each column the trained model re-ranks after a step (its top by the page's
/// model): re-encoding the whole corpus after every step would take as long as the first
/// encoding.
pub const RERANK_DEPTH: usize = 10;

/// A request from the page to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LearnRequest {
    /// Start a lesson from the model files sent beside this message (the page's own files).
    Start {
        /// The seed of the record order and I-block sampling.
        seed: u64,
        /// Train on WebGPU (else the CPU).
        webgpu: bool,
    },
    /// Take one optimiser step, then score the held-out queries.
    Step,
    /// Score `passages` for each `(instruction, query)` with the current weights.
    Rank {
        /// The queries with their instructions (empty: the query alone).
        queries: Vec<(String, String)>,
        /// The passages' encoder texts.
        passages: Vec<String>,
    },
}

/// The held-out scores (fractions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    /// nDCG@10 under the changed instruction.
    pub ndcg10_changed: f64,
    /// p-MRR.
    pub p_mrr: f64,
    /// WISE.
    pub wise: f64,
}

/// What one step did, as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// The step's number, from 1.
    pub step: usize,
    /// Its loss (before the update).
    pub loss: f64,
    /// The same batch's loss after the update.
    pub loss_after: f64,
    /// Gradient norm before clipping.
    pub grad_norm: f64,
    /// Learning rate.
    pub lr: f64,
    /// Milliseconds of the step (forward, backward, AdamW).
    pub step_ms: f64,
    /// Milliseconds of the held-out evaluation after it.
    pub eval_ms: f64,
    /// The held-out scores after the step.
    pub held_out: HeldOut,
}

/// The worker's answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LearnReply {
    /// The worker's wasm is loaded and listening.
    Loaded,
    /// A lesson started: its size and the held-out scores before any step.
    Started {
        /// Training records.
        records: usize,
        /// Held-out queries.
        held_out_queries: usize,
        /// The backend it trains on.
        backend: String,
        /// Held-out scores of the model as loaded.
        held_out: HeldOut,
    },
    /// A step was taken.
    Stepped(StepReport),
    /// Cosine scores, one row per query, one column per passage.
    Ranked {
        /// `scores[q][p]`.
        scores: Vec<Vec<f32>>,
    },
    /// The request failed; the lesson (if any) is unchanged.
    Failed {
        /// What went wrong.
        error: String,
    },
}

impl LearnReply {
    /// The reply as the JSON text posted to the page.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("plain data serialises")
    }
}

/// Each column's ranking with its top `depth` passages put in the order of `scores` (their
/// re-scored values, best first; ties keep the old order), the rest after them unchanged.
/// `scores[i]` belongs to `ranking[i]`.
pub fn rerank(ranking: &[(usize, f32)], scores: &[f32]) -> Vec<(usize, f32)> {
    let depth = scores.len().min(ranking.len());
    let mut top: Vec<(usize, f32)> = ranking[..depth]
        .iter()
        .zip(scores)
        .map(|(&(doc, _), &s)| (doc, s))
        .collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    top.extend_from_slice(&ranking[depth..]);
    top
}

#[cfg(feature = "learn")]
pub use learner::Learner;

#[cfg(feature = "learn")]
mod learner {
    use engine::training::lesson::{LessonRun, LessonScores, LessonSettings};
    use engine::{BackendKind, Device, Encoder, ModelFiles};
    use synth::lesson::Lesson;

    use super::{HeldOut, LearnReply, LearnRequest, StepReport};

    /// A lesson in the worker: the demo set's lesson, its run, and an encoder with the
    /// current weights for the held-out queries and the page's re-ranking.
    pub struct Learner {
        backend: BackendKind,
        lesson: Lesson,
        run: LessonRun,
        encoder: Encoder,
    }

    impl From<LessonScores> for HeldOut {
        fn from(s: LessonScores) -> Self {
            HeldOut {
                ndcg10_changed: s.ndcg10_changed,
                p_mrr: s.p_mrr,
                wise: s.wise,
            }
        }
    }

    impl Learner {
        /// Starts the demo set's lesson (the page's settings, `seed`) on `files`, computing on
        /// `device` (of `backend`).
        pub fn start(
            files: &ModelFiles,
            seed: u64,
            backend: BackendKind,
            device: Device,
        ) -> engine::Result<Self> {
            let lesson = Lesson::from_set(&engine::demo::demo_set()?)?;
            let settings = LessonSettings {
                seed,
                ..LessonSettings::default()
            };
            let run = LessonRun::new(files, lesson.records.clone(), settings, &device)?;
            let encoder = run.encoder()?;
            Ok(Learner {
                backend,
                lesson,
                run,
                encoder,
            })
        }

        /// The reply to [`LearnRequest::Start`]: the lesson's size and its scores now.
        pub async fn started(&self) -> engine::Result<LearnReply> {
            Ok(LearnReply::Started {
                records: self.lesson.records.len(),
                held_out_queries: self.lesson.held_out.queries.len(),
                backend: self.backend.name().into(),
                held_out: LessonScores::evaluate_async(&self.lesson.held_out, &self.encoder)
                    .await?
                    .into(),
            })
        }

        /// One step, then the held-out scores with the new weights; `now()` gives
        /// milliseconds (the browser's clock in the worker).
        pub async fn step(&mut self, now: &dyn Fn() -> f64) -> engine::Result<StepReport> {
            let started = now();
            let step = self.run.step_async().await?;
            self.encoder = self.run.encoder()?;
            let stepped = now();
            let held_out = LessonScores::evaluate_async(&self.lesson.held_out, &self.encoder)
                .await?
                .into();
            Ok(StepReport {
                step: step.step,
                loss: step.loss,
                loss_after: step.loss_after,
                grad_norm: step.grad_norm,
                lr: step.lr,
                step_ms: stepped - started,
                eval_ms: now() - stepped,
                held_out,
            })
        }

        /// Cosine scores of `passages` for each `(instruction, query)`.
        pub async fn rank(
            &self,
            queries: &[(String, String)],
            passages: &[String],
        ) -> engine::Result<Vec<Vec<f32>>> {
            let pairs: Vec<(&str, &str)> = queries
                .iter()
                .map(|(i, q)| (i.as_str(), q.as_str()))
                .collect();
            let mut q = self.encoder.encode_queries_async(&pairs).await?;
            let texts: Vec<&str> = passages.iter().map(String::as_str).collect();
            let mut p = self.encoder.encode_async(&texts, &mut |_, _| {}).await?;
            q.normalize();
            p.normalize();
            Ok(q.rows()
                .map(|qr| {
                    p.rows()
                        .map(|pr| qr.iter().zip(pr).map(|(a, b)| a * b).sum())
                        .collect()
                })
                .collect())
        }

        /// Answers one request of a started lesson (a start is the caller's: it carries the
        /// files).
        pub async fn answer(
            &mut self,
            request: &LearnRequest,
            now: &dyn Fn() -> f64,
        ) -> LearnReply {
            let result = match request {
                LearnRequest::Start { .. } => Err(engine::EngineError::Invalid(
                    "a lesson is running: reset it before starting another".into(),
                )),
                LearnRequest::Step => self.step(now).await.map(LearnReply::Stepped),
                LearnRequest::Rank { queries, passages } => self
                    .rank(queries, passages)
                    .await
                    .map(|scores| LearnReply::Ranked { scores }),
            };
            result.unwrap_or_else(|e| LearnReply::Failed {
                error: e.to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_are_tagged_json() {
        let r: LearnRequest =
            serde_json::from_str(r#"{"type": "start", "seed": 7, "webgpu": false}"#).unwrap();
        assert_eq!(
            r,
            LearnRequest::Start {
                seed: 7,
                webgpu: false
            }
        );
        let r: LearnRequest = serde_json::from_str(r#"{"type": "step"}"#).unwrap();
        assert_eq!(r, LearnRequest::Step);
        assert!(serde_json::from_str::<LearnRequest>(r#"{"type": "fly"}"#).is_err());
        let reply = LearnReply::Failed { error: "x".into() };
        assert_eq!(reply.to_json(), r#"{"type":"failed","error":"x"}"#);
        let back: LearnReply = serde_json::from_str(&LearnReply::Loaded.to_json()).unwrap();
        assert_eq!(back, LearnReply::Loaded);
    }

    #[test]
    fn reranking_orders_the_top_by_the_new_scores_and_keeps_the_rest() {
        let ranking = vec![(4, 0.9), (2, 0.8), (7, 0.7), (1, 0.1)];
        let got = rerank(&ranking, &[0.1, 0.5, 0.5]);
        assert_eq!(got, vec![(2, 0.5), (7, 0.5), (4, 0.1), (1, 0.1)]);
        // More scores than passages: only the passages there are.
        assert_eq!(rerank(&ranking[..1], &[0.3, 0.2]), vec![(4, 0.3)]);
        assert_eq!(rerank(&ranking, &[]), ranking);
    }

    /// Runs a future that needs no waking (the CPU backend answers at once).
    #[cfg(feature = "learn")]
    fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
        let mut work = std::pin::pin!(work);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(v) = work.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    /// The default model's folder, or None (with a visible note) when it is absent.
    #[cfg(feature = "learn")]
    fn model_dir() -> Option<std::path::PathBuf> {
        let dir = std::env::var("IFIR_MODEL")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2")
            });
        if dir.join("model.safetensors").is_file() {
            Some(dir)
        } else {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED: no model at {}", dir.display());
            None
        }
    }

    #[cfg(feature = "learn")]
    #[test]
    fn the_worker_starts_steps_and_ranks_with_the_trained_weights() {
        use engine::{BackendKind, Device, ModelFiles};
        let Some(dir) = model_dir() else { return };
        let files = ModelFiles::read_dir(&dir).unwrap();
        let mut learner = Learner::start(&files, 42, BackendKind::Cpu, Device::flex()).unwrap();
        let LearnReply::Started {
            records,
            held_out_queries,
            backend,
            held_out: before,
        } = block_on(learner.started()).unwrap()
        else {
            panic!("not a start reply")
        };
        assert_eq!(
            (records, held_out_queries, backend.as_str()),
            (80, 8, "cpu")
        );
        let clock = std::cell::Cell::new(0.0);
        let now = || {
            clock.set(clock.get() + 1.0);
            clock.get()
        };
        let LearnReply::Stepped(step) = block_on(learner.answer(&LearnRequest::Step, &now)) else {
            panic!("not a step reply")
        };
        assert_eq!(step.step, 1);
        assert!(step.loss_after < step.loss, "{step:?}");
        assert!(step.step_ms > 0.0 && step.eval_ms > 0.0);
        assert_ne!(
            step.held_out, before,
            "the held-out scores follow the weights"
        );
        // Ranking uses the trained weights: scores equal a fresh encoder's on the trained files.
        let queries = vec![
            (String::new(), "sourdough starter".to_string()),
            (
                "Only forum posts.".to_string(),
                "sourdough starter".to_string(),
            ),
        ];
        let passages = vec![
            "Feed the starter daily.".to_string(),
            "Electric cars.".to_string(),
        ];
        let LearnReply::Ranked { scores } = block_on(learner.answer(
            &LearnRequest::Rank {
                queries: queries.clone(),
                passages: passages.clone(),
            },
            &now,
        )) else {
            panic!("not a rank reply")
        };
        assert_eq!((scores.len(), scores[0].len()), (2, 2));
        assert!(scores[0][0] > scores[0][1], "{scores:?}");
        let start_again = block_on(learner.answer(
            &LearnRequest::Start {
                seed: 1,
                webgpu: false,
            },
            &now,
        ));
        assert!(matches!(start_again, LearnReply::Failed { .. }));
    }
}
