//! `trainer eval`: metrics of runs (given, or produced by encoding a set), as a table (x100,
//! like the papers) or JSON (raw fractions), and comparisons of two systems with significance.
//! All metric code lives in `engine::metrics`; this file only gathers inputs and prints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use engine::data::{EvalSet, Mode};
use engine::metrics::report::{MtebTask, Report};
use engine::metrics::{evaluate, Metric, ModeReport, PerQuery, QuerySet, Run, WiseConfig};

mod request;

use crate::args::ModelArgs;
use crate::cli::{EvalArgs, JudgeKind};
use crate::progress;
use request::{Encoding, EvalRequest, InstfolSettings, Metrics, MtebOutput, Outputs, SetChoice};

/// The table of a report (values x100, like the papers).
fn print_table(report: &Report) {
    let modes: Vec<&String> = report.modes.keys().collect();
    let mut order: Vec<&String> = modes.clone();
    order.sort_by_key(|m| {
        ["og", "changed", "reversed", "run"]
            .iter()
            .position(|x| x == m)
            .unwrap_or(9)
    });
    println!("{}  (values x100)", report.system);
    print!("{:<14}", "metric");
    for m in &order {
        print!("{:>10}", m);
    }
    println!();
    for name in &report.metrics {
        print!("{:<14}", name);
        for m in &order {
            match report.modes[*m].get(name) {
                Some(v) => print!("{:>10.2}", percent(v.mean)),
                None => print!("{:>10}", "-"),
            }
        }
        println!();
    }
    for (key, v) in &report.following {
        println!(
            "{:<14}{:>10.2}   ({} queries)",
            key,
            percent(v.mean),
            v.per_query.len()
        );
    }
}

/// Says, as trec_eval would not, which queries the evaluation leaves out or scores 0: run
/// queries without judgments are ignored (as trec_eval does) and judged queries missing from
/// the run score 0 (as `trec_eval -c` does).
fn warn_coverage(qrels: &engine::data::Qrels, run: &Run, qrels_path: &Path, run_path: &Path) {
    // A warning about the queries `ids` (none: no warning): the run, their count, then what
    // `says` with the plural ending of "quer" and the first of them.
    let warn = |ids: Vec<&str>, says: &dyn Fn(&str, &str) -> String| {
        if let Some(first) = ids.first() {
            let ending = if ids.len() == 1 { "y" } else { "ies" };
            let run = run_path.display();
            eprintln!("warning: {run}: {} {}", ids.len(), says(ending, first));
        }
    };
    let unjudged = run.query_ids().filter(|q| !qrels.contains_key(*q));
    warn(unjudged.collect(), &|y, first| {
        let qrels = qrels_path.display();
        format!("quer{y} without judgments in {qrels} (e.g. '{first}') not evaluated")
    });
    let missing = qrels.keys().filter(|q| run.docs(q).is_none());
    warn(missing.map(String::as_str).collect(), &|y, first| {
        format!(
            "judged quer{y} missing from the run (e.g. '{first}') score 0, as with trec_eval -c"
        )
    });
}

/// `trainer eval`: one of its forms, then the reports written, compared or printed.
pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    let (request, out) = args.resolve()?;
    let started = std::time::Instant::now();
    let ((reports, ranking), single_run) = match request {
        EvalRequest::Reports { a, b } => {
            let (ra, rb) = (Report::read(&a)?, Report::read(&b)?);
            return print_comparison(&ra, &rb, out.permutations, out.json);
        }
        EvalRequest::Runs {
            qrels,
            runs,
            metrics,
        } => (run_reports(&qrels, &runs, &metrics)?, true),
        EvalRequest::SetRuns { set, runs, metrics } => {
            (set_run_reports(&set, &runs, &metrics, &out)?, false)
        }
        EvalRequest::SetModels {
            set,
            models,
            metrics,
            encoding,
            instfol,
            save_runs,
        } => {
            let asked = ModelsAsked {
                encoding,
                instfol,
                save_runs,
            };
            (model_reports(&set, &models, &metrics, &asked, &out)?, false)
        }
    };
    write_outputs(&out, &reports, &ranking, started.elapsed().as_secs_f64())?;
    if reports.len() == 2 {
        return print_comparison(&reports[0], &reports[1], out.permutations, out.json);
    }
    for r in &reports {
        if out.json {
            println!("{}", r.to_json(single_run));
        } else {
            print_table(r);
        }
    }
    Ok(())
}

/// `--mteb-output` and `--output` (each further report beside the first, numbered).
fn write_outputs(
    out: &Outputs,
    reports: &[Report],
    ranking: &Ranking,
    seconds: f64,
) -> anyhow::Result<()> {
    if let Some(mteb) = &out.mteb {
        write_mteb(mteb, &reports[0], ranking, seconds)?;
    }
    if let Some(path) = &out.report {
        write_report(path, &reports[0])?;
        for (i, r) in reports.iter().enumerate().skip(1) {
            write_report(&path.with_extension(format!("{}.json", i + 1)), r)?;
        }
    }
    Ok(())
}

/// How the `--model` form encodes and what else it computes.
struct ModelsAsked {
    encoding: Encoding,
    instfol: Option<InstfolSettings>,
    save_runs: Option<PathBuf>,
}

/// The ranking an evaluation's first report scored (the og mode of a set), kept for MTEB's
/// predictions file, with who made it.
struct Ranking {
    run: Run,
    /// The model folder's name, or the run file's.
    model_name: String,
    /// The model's fingerprint (`unknown` for a run file).
    revision: String,
}

/// `--qrels FILE --run FILE...`: one report per run file; the first file's ranking.
fn run_reports(
    qrels_path: &Path,
    runs: &[PathBuf],
    metrics: &Metrics,
) -> anyhow::Result<(Vec<Report>, Ranking)> {
    let qrels = engine::data::read_qrels(qrels_path)?;
    if qrels.is_empty() {
        bail!("{}: no judgment in the file", qrels_path.display());
    }
    let mut reports = Vec::new();
    let mut first = None;
    for path in runs {
        let run = Run::read_trec(path)?;
        if run.is_empty() {
            bail!("{}: no result line in the run", path.display());
        }
        warn_coverage(&qrels, &run, qrels_path, path);
        let eval = evaluate(&qrels, &run, &metrics.parsed, QuerySet::Judged);
        reports.push(Report::from_evaluation(
            path.display().to_string(),
            &metrics.names,
            "run",
            &eval,
        ));
        first.get_or_insert_with(|| Ranking {
            run,
            model_name: file_name(path),
            revision: "unknown".into(),
        });
    }
    let first = first.expect("--run is not empty");
    Ok((reports, first))
}

/// The set of `choice`, only the queries of `--constraint` when given.
fn load_set(choice: &SetChoice) -> anyhow::Result<EvalSet> {
    let mut set = EvalSet::load_split(&choice.dir, choice.split.as_deref())?;
    if let Some(prefix) = &choice.constraint {
        if set.keep_constraint(prefix) == 0 {
            bail!(
                "{}: no query has a constraint label starting with '{prefix}'",
                choice.dir.join("queries.jsonl").display()
            );
        }
    }
    Ok(set)
}

/// `--set DIR --run MODE=FILE...`: the report of precomputed runs; the og ranking.
fn set_run_reports(
    choice: &SetChoice,
    files: &[(Mode, PathBuf)],
    metrics: &Metrics,
    out: &Outputs,
) -> anyhow::Result<(Vec<Report>, Ranking)> {
    let set = load_set(choice)?;
    let mut runs = BTreeMap::new();
    for (mode, file) in files {
        runs.insert(*mode, Run::read_trec(file)?);
    }
    let report = ModeReport::compute(&set.qrels, &runs, &metrics.parsed, out.wise);
    let name = choice.dir.display().to_string();
    let reports = vec![Report::from_mode_report(name, &metrics.names, &report)];
    let (mode, run) = og_first(runs);
    let file = files.iter().find(|(m, _)| *m == mode).map(|(_, f)| f);
    let ranking = Ranking {
        run,
        model_name: file.map_or_else(|| "runs".into(), |f| file_name(f)),
        revision: "unknown".into(),
    };
    Ok((reports, ranking))
}

/// `--set DIR --model DIR [--compare-model DIR]`: one report per model; the first's og
/// ranking.
fn model_reports(
    choice: &SetChoice,
    models: &[PathBuf],
    metrics: &Metrics,
    asked: &ModelsAsked,
    out: &Outputs,
) -> anyhow::Result<(Vec<Report>, Ranking)> {
    let set = load_set(choice)?;
    let mut reports = Vec::new();
    let mut first = None;
    for (i, model) in models.iter().enumerate() {
        let save = asked.save_runs.as_ref().map(|d| match i {
            0 => d.clone(),
            _ => d.join(format!("model{}", i + 1)),
        });
        let evaluated = evaluate_model(
            asked,
            model,
            &set,
            &metrics.parsed,
            out.wise,
            save.as_deref(),
        )?;
        let mut report = Report::from_mode_report(
            model.display().to_string(),
            &metrics.names,
            &evaluated.report,
        );
        if let Some(v) = evaluated.instfol {
            report.following.insert("instfol".to_string(), (&v).into());
        }
        reports.push(report);
        first.get_or_insert_with(|| Ranking {
            run: og_first(evaluated.runs).1,
            model_name: file_name(model),
            revision: evaluated.fingerprint,
        });
    }
    Ok((reports, first.expect("at least one model")))
}

/// The og run of `runs` (the query alone, or the set's og instruction), else the first.
fn og_first(mut runs: BTreeMap<Mode, Run>) -> (Mode, Run) {
    match runs.remove(&Mode::Og) {
        Some(run) => (Mode::Og, run),
        None => runs.into_iter().next().expect("at least one run"),
    }
}

/// The last component of `path`, for names.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// What evaluating one model gave.
struct ModelEvaluation {
    report: ModeReport,
    instfol: Option<PerQuery>,
    runs: BTreeMap<Mode, Run>,
    /// The model's fingerprint.
    fingerprint: String,
}

/// The set's passages encoded, read from (or written to) the passage cache when given.
fn encode_set(
    encoder: &engine::Encoder,
    set: &EvalSet,
    cache: Option<&Path>,
) -> anyhow::Result<engine::Embeddings> {
    let bar = progress::bar(set.corpus.len(), "encoding corpus");
    let mut tick = |done: usize, _| bar.set_position(done as u64);
    let passages = match cache {
        Some(dir) => {
            use engine::evaluation::{encode_passages_cached, passage_cache_path, CacheOutcome};
            let (e, outcome) = encode_passages_cached(encoder, set, dir, &mut tick)?;
            let path = passage_cache_path(encoder, set, dir);
            match outcome {
                CacheOutcome::Hit => eprintln!("passages read from {}", path.display()),
                CacheOutcome::Miss => eprintln!("passages cached in {}", path.display()),
                CacheOutcome::Replaced => eprintln!(
                    "warning: {} was unreadable; passages encoded again and the file replaced",
                    path.display()
                ),
            }
            e
        }
        None => engine::evaluation::encode_passages(encoder, set, &mut tick)?,
    };
    bar.finish_and_clear();
    Ok(passages)
}

/// `--save-runs DIR`: each mode's run as DIR/MODE.trec.
fn save_trec_runs(dir: &Path, runs: &BTreeMap<Mode, Run>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    for (mode, run) in runs {
        run.save_trec(&dir.join(format!("{}.trec", mode.name())), "trainer")?;
    }
    eprintln!("runs saved in {}", dir.display());
    Ok(())
}

/// One model on the set: its report, INSTFOL when asked, its runs and fingerprint.
fn evaluate_model(
    asked: &ModelsAsked,
    model: &Path,
    set: &EvalSet,
    metrics: &[Metric],
    wise: WiseConfig,
    save_runs: Option<&Path>,
) -> anyhow::Result<ModelEvaluation> {
    let encoding = &asked.encoding;
    let model_args = ModelArgs {
        model: model.to_path_buf(),
        compute: encoding.compute.clone(),
    };
    let mut encoder = model_args.load()?;
    encoding.template.apply(&mut encoder);
    let passages = encode_set(&encoder, set, encoding.passage_cache.as_deref())?;
    let runs = engine::evaluation::runs(
        &encoder,
        set,
        &passages,
        encoding.no_instruction,
        encoding.depth,
    )?;
    if let Some(dir) = save_runs {
        save_trec_runs(dir, &runs)?;
    }
    let instfol = match &asked.instfol {
        Some(settings) => {
            let ranked = Ranked {
                encoder: &encoder,
                set,
                passages: &passages,
                runs: &runs,
            };
            Some(instfol(settings, encoding.depth, &ranked)?)
        }
        None => None,
    };
    Ok(ModelEvaluation {
        report: ModeReport::compute(&set.qrels, &runs, metrics, wise),
        instfol,
        runs,
        fingerprint: encoder.fingerprint().to_string(),
    })
}

/// What one model's evaluation has at hand for INSTFOL.
struct Ranked<'a> {
    encoder: &'a engine::Encoder,
    set: &'a EvalSet,
    passages: &'a engine::Embeddings,
    runs: &'a BTreeMap<Mode, Run>,
}

fn instfol(
    settings: &InstfolSettings,
    depth: usize,
    ranked: &Ranked<'_>,
) -> anyhow::Result<PerQuery> {
    let Ranked {
        encoder,
        set,
        passages,
        runs,
    } = *ranked;
    use engine::metrics::instfol::instfol;
    let instructed = runs
        .get(&Mode::Changed)
        .context("INSTFOL needs the set's changed instructions and qrels/changed.tsv")?;
    // The og run is the query alone when the set has no og instructions; else encode it.
    let q = encoder.encode_queries(&engine::evaluation::query_pairs(set, Mode::Og, true)?)?;
    let alone = engine::evaluation::rank(set, passages, &q, depth)?;
    let texts: BTreeMap<String, (String, String)> = set
        .queries
        .iter()
        .map(|q| {
            (
                q.id.clone(),
                (
                    q.text.clone(),
                    q.instruction_changed.clone().unwrap_or_default(),
                ),
            )
        })
        .collect();
    let by_id: std::collections::HashMap<&str, &engine::Passage> =
        set.corpus.iter().map(|p| (p.id.as_str(), p)).collect();
    let passage = |d: &str| by_id.get(d).map(|p| p.encoder_text()).unwrap_or_default();
    let changed_qrels = set
        .qrels
        .get(&Mode::Changed)
        .context("INSTFOL needs qrels/changed.tsv")?;
    let mut judge = judge(settings, changed_qrels)?;
    let judged = instfol(
        &alone,
        instructed,
        settings.k,
        &texts,
        passage,
        judge.as_mut(),
    )?;
    report_unscored(&judged, texts.len())?;
    Ok(judged.scores)
}

/// INSTFOL's judge of `settings`, judging by the set's changed qrels or an LLM.
fn judge<'a>(
    settings: &InstfolSettings,
    changed_qrels: &'a engine::data::Qrels,
) -> anyhow::Result<Box<dyn engine::metrics::instfol::InstructionJudge + 'a>> {
    use engine::metrics::instfol::{GradedQrelsJudge, QrelsJudge};
    let s_max = settings.max_score;
    Ok(match settings.kind {
        JudgeKind::Qrels => Box::new(QrelsJudge {
            qrels: changed_qrels,
            s_max,
        }),
        JudgeKind::Graded => Box::new(GradedQrelsJudge {
            qrels: changed_qrels,
            s_max,
        }),
        JudgeKind::Llm => Box::new(crate::judge::LlmJudge::new(
            crate::judge::LlmJudgeConfig::from_env(
                settings.url.clone(),
                settings.model.clone(),
                s_max,
            )?,
        )),
    })
}

/// Logs every judge answer without a usable score; INSTFOL covers the other queries, and
/// fails when the judge scored none.
fn report_unscored(
    judged: &engine::metrics::instfol::Instfol,
    queries: usize,
) -> anyhow::Result<()> {
    for e in &judged.unscored {
        eprintln!("warning: INSTFOL: {e}; the query is left out");
    }
    let left_out = judged.unscored.len();
    if left_out > 0 && judged.scores.per_query.is_empty() {
        bail!("INSTFOL: the judge gave no usable score for any of the {queries} queries ({left_out} answers without a score, listed above)");
    }
    if left_out > 0 {
        eprintln!(
            "INSTFOL over {} of {queries} queries: {left_out} left out, their judge's answer held no score",
            judged.scores.per_query.len()
        );
    }
    Ok(())
}

/// `--mteb-output DIR`: the first report as MTEB's `DIR/TASK.json`, and its ranking as MTEB's
/// predictions file `DIR/TASK_predictions.json`.
fn write_mteb(
    mteb: &MtebOutput,
    report: &Report,
    ranking: &Ranking,
    seconds: f64,
) -> anyhow::Result<()> {
    let (dir, name) = (&mteb.dir, &mteb.task);
    let task = MtebTask {
        name: name.clone(),
        revision: mteb.revision.clone(),
        split: mteb.split.clone(),
        seconds,
    };
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&report.to_mteb(&task))?;
    engine::atomic::write(&path, text.as_bytes())?;
    let predictions = dir.join(task.predictions_file());
    let json = task.predictions(&ranking.run, &ranking.model_name, &ranking.revision);
    engine::atomic::write(&predictions, serde_json::to_string(&json)?.as_bytes())?;
    eprintln!(
        "MTEB result written to {}, its ranking to {}",
        path.display(),
        predictions.display()
    );
    Ok(())
}

fn write_report(path: &Path, report: &Report) -> anyhow::Result<()> {
    report.write(path)?;
    eprintln!("report written to {}", path.display());
    Ok(())
}

fn print_comparison(a: &Report, b: &Report, permutations: usize, json: bool) -> anyhow::Result<()> {
    if json {
        let comparison = engine::metrics::report::Comparison::of(a, b, permutations)?;
        println!("{}", serde_json::to_string(&comparison)?);
        return Ok(());
    }
    let rows = a.compare(b, permutations)?;
    println!("A = {}\nB = {}   (values x100; p: paired t-test, paired randomization test with {permutations} permutations)", a.system, b.system);
    println!(
        "{:<22}{:>9}{:>9}{:>9}{:>8}{:>10}{:>10}",
        "metric", "A", "B", "B-A", "n", "p(t)", "p(rand)"
    );
    let p = |v: Option<f64>| v.map(|p| format!("{p:.4}")).unwrap_or_else(|| "-".into());
    for (label, c) in rows {
        let sig = match c.p_randomization {
            Some(p) if p < 0.05 => " *",
            _ => "",
        };
        println!(
            "{:<22}{:>9.2}{:>9.2}{:>+9.2}{:>8}{:>10}{:>10}{sig}",
            label,
            percent(c.a),
            percent(c.b),
            percent(c.b - c.a),
            c.queries,
            p(c.p_t_test),
            p(c.p_randomization)
        );
    }
    println!("* p(rand) < 0.05");
    Ok(())
}

/// A fraction as a percentage for a two-decimal table, with no negative zero ("-0.00" for a
/// metric that cannot be negative reads as a bug).
fn percent(fraction: f64) -> f64 {
    let p = fraction * 100.0;
    if p.abs() < 0.005 {
        0.0
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentages_have_no_negative_zero() {
        for v in [-0.0, -1e-12, 1e-9] {
            assert_eq!(format!("{:.2}", super::percent(v)), "0.00");
        }
        assert_eq!(format!("{:+.2}", super::percent(-0.0123)), "-1.23");
    }
}
