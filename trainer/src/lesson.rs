//! `trainer lesson`: the web page's learn-live mode on the command line, the same engine code
//! (`engine::training::lesson`), with its records and settings written beside it so that
//! `trainer train --config DIR/config.json` can retrace it.

use anyhow::Context;
use engine::training::lesson::{LessonRun, LessonScores, LessonSettings};
use synth::lesson::Lesson;

use crate::cli::LessonArgs;

/// Runs the lesson, printing and logging the loss and the held-out scores after each step.
pub fn run(args: LessonArgs) -> anyhow::Result<()> {
    let set = lesson_set(&args)?;
    let lesson = Lesson::from_set(&set)?;
    let settings = LessonSettings {
        max_steps: args.steps,
        seed: args.seed,
        ..LessonSettings::default()
    };
    write_records_and_config(&args, &lesson, &settings)?;
    let device = args.model.compute.device.device()?;
    let base = engine::ModelFiles::read_dir(&args.model.model)?;
    let mut run = LessonRun::new(&base, lesson.records.clone(), settings, &device)?;
    let log = take_steps(&mut run, &lesson, args.steps)?;
    let out = &args.output;
    let lines: String = log.iter().map(|l| format!("{l}\n")).collect();
    engine::atomic::write(out.join("metrics.jsonl"), lines.as_bytes())?;
    run.files()?.write_dir(out.join("model"))?;
    eprintln!(
        "model in {}; `trainer train --config {} --output DIR` takes the same steps",
        out.join("model").display(),
        out.join("config.json").display()
    );
    Ok(())
}

/// The set of `--set` (default the demo set), only `--topic`'s queries when given.
fn lesson_set(args: &LessonArgs) -> anyhow::Result<engine::EvalSet> {
    let mut set = match &args.set {
        Some(dir) => engine::EvalSet::load(dir)?,
        None => engine::demo::demo_set()?,
    };
    if let Some(topic) = &args.topic {
        let prefix = format!("{topic}-");
        set.queries.retain(|q| q.id.starts_with(&prefix));
        anyhow::ensure!(
            !set.queries.is_empty(),
            "{}: no query of topic {topic} (no query id starts with {prefix})",
            set.root.display()
        );
    }
    Ok(set)
}

/// `records.jsonl` and the `trainer train` config that retraces the lesson, in `--output`.
fn write_records_and_config(
    args: &LessonArgs,
    lesson: &Lesson,
    settings: &LessonSettings,
) -> anyhow::Result<()> {
    let out = &args.output;
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let records = out.join("records.jsonl");
    engine::atomic::write(&records, lesson.records_jsonl().as_bytes())?;
    let mut config = settings.trainer_config();
    config["model"] = serde_json::json!(args.model.model);
    config["data"] = serde_json::json!(records);
    config["device"] = serde_json::json!(args.model.compute.device);
    engine::atomic::write(
        out.join("config.json"),
        serde_json::to_string_pretty(&config)?.as_bytes(),
    )?;
    eprintln!(
        "lesson: {} records from {} training queries, {} held-out queries over {} passages",
        lesson.records.len(),
        lesson.training_queries.len(),
        lesson.held_out.queries.len(),
        lesson.held_out.corpus.len()
    );
    Ok(())
}

/// The held-out scores before the first step, then `steps` steps each scored: the log lines.
fn take_steps(
    run: &mut LessonRun,
    lesson: &Lesson,
    steps: usize,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let before = LessonScores::evaluate(&lesson.held_out, &run.encoder()?)?;
    report("before", &before);
    let mut log = vec![serde_json::json!({"step": 0, "eval": before})];
    for _ in 0..steps {
        let started = std::time::Instant::now();
        let step = run.step()?;
        let seconds = started.elapsed().as_secs_f64();
        let scores = LessonScores::evaluate(&lesson.held_out, &run.encoder()?)?;
        report(
            &format!(
                "step {} loss {:.4} -> {:.4} after the update ({seconds:.1} s)",
                step.step, step.loss, step.loss_after
            ),
            &scores,
        );
        let mut line = serde_json::to_value(step)?;
        line["seconds"] = serde_json::json!(seconds);
        line["eval"] = serde_json::to_value(scores)?;
        log.push(line);
    }
    Ok(log)
}

fn report(what: &str, s: &LessonScores) {
    eprintln!(
        "{what}: held-out nDCG@10 (changed) {:.2}, p-MRR {:.2}, WISE {:.2}",
        s.ndcg10_changed * 100.0,
        s.p_mrr * 100.0,
        s.wise * 100.0
    );
}
