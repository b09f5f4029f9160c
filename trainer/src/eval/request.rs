//! `trainer eval`'s flags resolved once (ripgrep's low and high arguments): what was asked
//! ([`EvalRequest`], one variant per form of the command) and where the result goes
//! ([`Outputs`]). The handlers take these values, never the flags, so a combination that makes
//! no sense is refused here, before any file is read.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use engine::data::Mode;
use engine::metrics::{Metric, WiseConfig};

use crate::args::ComputeArgs;
use crate::cli::{EvalArgs, JudgeKind};

/// Default metrics of the `--qrels --run` form.
const RUN_DEFAULT_METRICS: &str = "ndcg@10,map@1000,mrr@10,recall@100,p@10";
/// Default per-mode metrics of the `--set` forms.
const SET_DEFAULT_METRICS: &str = "ndcg@10,ndcg@5,map@1000,mrr@10,recall@100,p@10";

/// One form of `trainer eval`.
pub enum EvalRequest {
    /// `--compare A.json B.json`: two reports written by `--output`.
    Reports { a: PathBuf, b: PathBuf },
    /// `--qrels FILE --run FILE...`: one report per run file.
    Runs {
        qrels: PathBuf,
        runs: Vec<PathBuf>,
        metrics: Metrics,
    },
    /// `--set DIR --run MODE=FILE...`: precomputed runs of a set's modes.
    SetRuns {
        set: SetChoice,
        runs: Vec<(Mode, PathBuf)>,
        metrics: Metrics,
    },
    /// `--set DIR --model DIR [--compare-model DIR]`: encode, rank and evaluate every mode.
    SetModels {
        set: SetChoice,
        models: Vec<PathBuf>,
        metrics: Metrics,
        encoding: Encoding,
        instfol: Option<InstfolSettings>,
        save_runs: Option<PathBuf>,
    },
}

/// The metrics asked for, as written and parsed.
pub struct Metrics {
    /// As written (the report's names).
    pub names: Vec<String>,
    /// Parsed.
    pub parsed: Vec<Metric>,
}

/// An evaluation set and which of its queries.
pub struct SetChoice {
    /// The folder.
    pub dir: PathBuf,
    /// A published set's qrels split.
    pub split: Option<String>,
    /// Only the queries whose `constraint` label starts with this.
    pub constraint: Option<String>,
}

/// How a model encodes a set.
pub struct Encoding {
    /// Device, batch size, arithmetic.
    pub compute: ComputeArgs,
    /// How instruction and query are joined.
    pub template: crate::cli::TemplateArgs,
    /// The query alone in every mode.
    pub no_instruction: bool,
    /// Where passage embeddings are cached.
    pub passage_cache: Option<PathBuf>,
    /// Documents kept per query.
    pub depth: usize,
}

/// INSTFOL@k and its judge.
pub struct InstfolSettings {
    /// Who judges.
    pub kind: JudgeKind,
    /// The k of INSTFOL@k.
    pub k: usize,
    /// The top of the judge's scale.
    pub max_score: f64,
    /// The LLM judge's endpoint and model (else from the environment).
    pub url: Option<String>,
    /// The LLM judge's model.
    pub model: Option<String>,
}

/// Where and how the result goes.
pub struct Outputs {
    /// JSON (raw fractions) instead of a table.
    pub json: bool,
    /// The full report file (`--output`).
    pub report: Option<PathBuf>,
    /// MTEB's result files.
    pub mteb: Option<MtebOutput>,
    /// Permutations of the randomization test.
    pub permutations: usize,
    /// WISE's variant.
    pub wise: WiseConfig,
}

/// `--mteb-output DIR`, with the task's name, revision and split resolved.
pub struct MtebOutput {
    /// The folder.
    pub dir: PathBuf,
    /// The task's name (`--mteb-task`, else the set's or qrels file's name).
    pub task: String,
    /// The data set's hub revision.
    pub revision: String,
    /// The split.
    pub split: String,
}

impl EvalArgs {
    /// The form asked for and its outputs, or the first flag combination that makes no sense.
    pub fn resolve(self) -> anyhow::Result<(EvalRequest, Outputs)> {
        let outputs = self.outputs();
        let request = match (&self.compare[..], &self.qrels, &self.set) {
            ([a, b], None, None) => EvalRequest::Reports {
                a: a.clone(),
                b: b.clone(),
            },
            ([_, _], _, _) => bail!("--compare takes two report files alone, without --qrels or --set"),
            ([], Some(_), Some(_)) => {
                bail!("give either --qrels (with --run FILE) or --set, not both")
            }
            ([], Some(qrels), None) => self.runs_request(qrels.clone())?,
            ([], None, Some(_)) => self.set_request()?,
            ([], None, None) => bail!("nothing to evaluate: give --qrels FILE --run FILE, --set DIR (with --run MODE=FILE or --model DIR), or --compare A.json B.json"),
            _ => bail!("--compare takes two report files (written with --output)"),
        };
        Ok((request, outputs))
    }

    fn outputs(&self) -> Outputs {
        let source = self.set.as_ref().or(self.qrels.as_ref());
        let mteb = self.mteb_output.as_ref().map(|dir| MtebOutput {
            dir: dir.clone(),
            task: self.mteb_task.clone().unwrap_or_else(|| stem(source)),
            revision: self.mteb_revision.clone(),
            split: self.split.clone().unwrap_or_else(|| "test".into()),
        });
        Outputs {
            json: self.json,
            report: self.output.clone(),
            mteb,
            permutations: self.permutations,
            wise: WiseConfig {
                k: 20,
                strict_n: self.wise_strict,
            },
        }
    }

    fn runs_request(&self, qrels: PathBuf) -> anyhow::Result<EvalRequest> {
        if self.run.is_empty() {
            bail!("--qrels needs --run FILE (a TREC run)");
        }
        Ok(EvalRequest::Runs {
            qrels,
            runs: self.run.iter().map(PathBuf::from).collect(),
            metrics: metrics(self.metrics.as_deref(), RUN_DEFAULT_METRICS)?,
        })
    }

    fn set_request(self) -> anyhow::Result<EvalRequest> {
        let metrics = metrics(self.metrics.as_deref(), SET_DEFAULT_METRICS)?;
        let set = SetChoice {
            dir: self.set.clone().expect("the --set form"),
            split: self.split.clone(),
            constraint: self.constraint.clone(),
        };
        if !self.run.is_empty() {
            if self.model.is_some() {
                bail!("give either --run MODE=FILE or --model, not both");
            }
            let runs = self
                .run
                .iter()
                .map(|spec| mode_file(spec))
                .collect::<Result<_, _>>()?;
            return Ok(EvalRequest::SetRuns { set, runs, metrics });
        }
        let Some(model) = self.model.clone() else {
            bail!(
                "--set needs --run MODE=FILE (precomputed runs) or --model DIR (encode and rank)"
            );
        };
        let instfol = self.instfol.map(|kind| InstfolSettings {
            kind,
            k: self.instfol_k,
            max_score: self.judge_max_score,
            url: self.judge_url.clone(),
            model: self.judge_model.clone(),
        });
        Ok(EvalRequest::SetModels {
            set,
            models: std::iter::once(model).chain(self.compare_model).collect(),
            metrics,
            encoding: Encoding {
                compute: self.compute,
                template: self.template,
                no_instruction: self.no_instruction,
                passage_cache: self.passage_cache,
                depth: self.depth,
            },
            instfol,
            save_runs: self.save_runs,
        })
    }
}

/// `--metrics`, else `default`, parsed.
fn metrics(list: Option<&str>, default: &str) -> anyhow::Result<Metrics> {
    let list = list.unwrap_or(default);
    let parsed = Metric::parse_list(list).map_err(|e| anyhow::anyhow!("--metrics: {e}"))?;
    let names = list.split(',').map(|s| s.trim().to_string()).collect();
    Ok(Metrics { names, parsed })
}

/// `--run MODE=FILE` with `--set`.
fn mode_file(spec: &str) -> anyhow::Result<(Mode, PathBuf)> {
    let (mode, file) = spec.split_once('=').with_context(|| {
        format!("--run '{spec}': with --set write MODE=FILE (og, changed, reversed)")
    })?;
    let mode = Mode::ALL
        .into_iter()
        .find(|m| m.name() == mode.trim())
        .with_context(|| format!("unknown mode '{mode}' (og, changed, reversed)"))?;
    Ok((mode, PathBuf::from(file)))
}

/// The file or folder name of `path` without extension ("task" without one).
fn stem(path: Option<&PathBuf>) -> String {
    path.and_then(|p| Path::new(p).file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "task".into())
}
