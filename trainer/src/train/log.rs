//! The run's log (`metrics.jsonl`, plots) and its periodic evaluation.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use burn::module::Module;

use engine::model_files::ModelFiles;
use engine::Device;

use super::{plot, TrainModel};

/// The metrics a periodic evaluation reports (raw fractions).
pub type Scores = Vec<(String, f64)>;

/// Evaluates the current weights on an evaluation set through the engine's evaluation path
/// (the same code as `trainer eval`): nDCG@10 per mode, p-MRR, WISE, SICR.
pub fn evaluate(
    model: &TrainModel,
    base: &ModelFiles,
    set: &engine::EvalSet,
    template: &engine::QueryTemplate,
    device: &Device,
) -> anyhow::Result<Scores> {
    let files = model.valid().to_files(base)?;
    let mut encoder = engine::Encoder::from_files(&files, device)?;
    encoder.use_template(template.clone());
    encoder.batch_size = 32;
    let bar = crate::progress::bar(set.corpus.len(), "evaluating: encoding corpus");
    let passages =
        engine::evaluation::encode_passages(&encoder, set, &mut |d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let runs = engine::evaluation::runs(
        &encoder,
        set,
        &passages,
        false,
        engine::evaluation::DEFAULT_RUN_DEPTH,
    )?;
    let metric: engine::metrics::Metric = "ndcg@10".parse()?;
    let report =
        engine::metrics::ModeReport::compute(&set.qrels, &runs, &[metric], Default::default());
    let mut scores = Vec::new();
    for (mode, eval) in &report.modes {
        scores.push((format!("ndcg@10 {}", mode.name()), eval.mean[0]));
    }
    if let Some(p) = report.p_mrr.as_ref().filter(|p| !p.is_empty()) {
        scores.push(("p-mrr".into(), p.mean));
    }
    if let Some(s) = report.infosearch.as_ref().filter(|s| !s.wise.is_empty()) {
        scores.push(("wise".into(), s.wise.mean));
        scores.push(("sicr".into(), s.sicr.mean));
    }
    let shown: Vec<String> = scores
        .iter()
        .map(|(k, v)| format!("{k} {:.2}", v * 100.0))
        .collect();
    eprintln!("eval: {}", shown.join(", "));
    Ok(scores)
}

/// `metrics.jsonl`: one line per step (`{"step", "loss", "lr", "grad_norm", "pairs_per_s",
/// "elapsed_s"}`) and per evaluation (`{"step", "eval": {...}}`).
pub struct MetricsLog {
    path: PathBuf,
    lines: Vec<serde_json::Value>,
}

impl MetricsLog {
    /// Opens the log, keeping only lines up to `start_step` (a resumed run rewrites the rest).
    pub fn open(path: &Path, start_step: usize) -> anyhow::Result<Self> {
        let mut lines = Vec::new();
        if start_step > 0 {
            if let Ok(text) = std::fs::read_to_string(path) {
                for line in text.lines() {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                        if v["step"].as_u64().is_some_and(|s| s as usize <= start_step) {
                            lines.push(v);
                        }
                    }
                }
            }
        }
        let log = MetricsLog {
            path: path.to_path_buf(),
            lines,
        };
        log.rewrite()?;
        Ok(log)
    }

    pub fn rewrite(&self) -> anyhow::Result<()> {
        let mut text = String::new();
        for l in &self.lines {
            text.push_str(&l.to_string());
            text.push('\n');
        }
        Ok(engine::atomic::write(&self.path, text.as_bytes())?)
    }

    pub fn append(&mut self, v: serde_json::Value) -> anyhow::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.path)
            .with_context(|| format!("{}: cannot open", self.path.display()))?;
        writeln!(f, "{v}").with_context(|| format!("{}: cannot write", self.path.display()))?;
        self.lines.push(v);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        step: usize,
        pairs: usize,
        loss: f64,
        lr: f64,
        grad_norm: f64,
        rate: f64,
        elapsed: f64,
    ) -> anyhow::Result<()> {
        use engine::metrics::json_number as n;
        self.append(serde_json::json!({
            "step": step, "pairs": pairs, "loss": n(loss), "lr": n(lr), "grad_norm": n(grad_norm),
            "pairs_per_s": n(rate), "elapsed_s": n(elapsed)
        }))
    }

    pub fn eval(&mut self, step: usize, scores: &Scores) -> anyhow::Result<()> {
        let map: serde_json::Map<String, serde_json::Value> = scores
            .iter()
            .map(|(k, v)| (k.clone(), engine::metrics::json_number(*v)))
            .collect();
        self.append(serde_json::json!({"step": step, "eval": map}))
    }

    /// Writes `plots/loss.svg` and, with evaluations, `plots/eval.svg`.
    pub fn plot(&self, output: &Path) -> anyhow::Result<()> {
        let dir = output.join("plots");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        let points = |key: &str| -> Vec<(f64, f64)> {
            self.lines
                .iter()
                .filter_map(|l| Some((l["step"].as_f64()?, l[key].as_f64()?)))
                .collect()
        };
        let loss = plot::line_chart(
            "training loss",
            "step",
            &[plot::Series {
                name: "loss",
                points: points("loss"),
            }],
        );
        engine::atomic::write(dir.join("loss.svg"), loss.as_bytes())?;
        let mut names: Vec<String> = Vec::new();
        for l in &self.lines {
            if let Some(obj) = l["eval"].as_object() {
                for k in obj.keys() {
                    if !names.contains(k) {
                        names.push(k.clone());
                    }
                }
            }
        }
        if !names.is_empty() {
            let series: Vec<plot::Series> = names
                .iter()
                .map(|name| plot::Series {
                    name,
                    points: self
                        .lines
                        .iter()
                        .filter_map(|l| {
                            Some((l["step"].as_f64()?, l["eval"][name].as_f64()? * 100.0))
                        })
                        .collect(),
                })
                .collect();
            let chart = plot::line_chart("evaluation (x100)", "step", &series);
            engine::atomic::write(dir.join("eval.svg"), chart.as_bytes())?;
        }
        Ok(())
    }
}
