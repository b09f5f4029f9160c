//! `trainer`: the native command-line tool of the project. It stays thin: every model, data
//! format and retrieval concept lives in the `engine` crate; this binary parses arguments,
//! shows progress and prints results.

mod args;
mod chat;
mod cli;
mod demo;
mod embed;
mod eval;
mod judge;
mod lesson;
mod progress;
mod search;
mod store;
mod synth;
mod train;

use clap::{CommandFactory, FromArgMatches};

/// `trainer export`: the model's files, weights optionally in F16 or int8.
fn export(args: cli::ExportArgs) -> anyhow::Result<()> {
    use engine::WeightFormat;
    let format = match (args.f16, args.int8) {
        (_, true) => WeightFormat::Int8,
        (true, false) => WeightFormat::F16,
        (false, false) => WeightFormat::F32,
    };
    let files = engine::ModelFiles::read_dir(&args.model)?.with_weights(format)?;
    files.write_dir(&args.output)?;
    eprintln!(
        "model written to {}{}",
        args.output.display(),
        match format {
            WeightFormat::F32 => "",
            WeightFormat::F16 => " (F16 weights)",
            WeightFormat::Int8 => " (int8 matrices with row scales)",
        }
    );
    if let Some(index_path) = &args.index {
        let folder = args
            .output
            .file_name()
            .map(|n| n.to_string_lossy().to_string());
        let key = args
            .key
            .clone()
            .or(folder)
            .unwrap_or_else(|| "model".into());
        let name = args.name.clone().unwrap_or_else(|| key.clone());
        engine::served::ModelIndex::upsert_file(
            index_path,
            engine::served::ServedModel::of(&files, &key, &name),
        )?;
        eprintln!("listed as '{key}' in {}", index_path.display());
    }
    Ok(())
}

fn interpolate(args: cli::InterpolateArgs) -> anyhow::Result<()> {
    let start = engine::ModelFiles::read_dir(&args.start)?;
    let tuned = engine::ModelFiles::read_dir(&args.tuned)?;
    let device = engine::Device::flex();
    engine::training::interpolate::interpolate_files(&start, &tuned, args.start_share, &device)?
        .write_dir(&args.output)?;
    eprintln!(
        "model written to {}: {:.2} x {} + {:.2} x {}",
        args.output.display(),
        1.0 - args.start_share,
        args.tuned.display(),
        args.start_share,
        args.start.display()
    );
    Ok(())
}

/// The command line, with each `train` setting's default appended to its help.
fn command() -> clap::Command {
    cli::Cli::command().mut_subcommand("train", |mut train| {
        for (name, value) in train::config::TrainConfig::default_values() {
            let id = name.replace('-', "_");
            train = train.mut_arg(id, |arg| {
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                arg.help(format!("{help} [default: {value}]"))
            });
        }
        train
    })
}

fn main() {
    quit_quietly_on_closed_pipe();
    let args = match cli::Cli::from_arg_matches(&command().get_matches()) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    let result = match args.command {
        cli::Command::Embed(a) => embed::run(a),
        cli::Command::Index(a) => search::index(a),
        cli::Command::IndexMerge(a) => search::merge(a),
        cli::Command::Store(a) => store::create(a),
        cli::Command::Search(a) => search::run(a),
        cli::Command::Demo(a) => demo::run(a),
        cli::Command::Eval(a) => eval::run(a),
        cli::Command::Export(a) => export(a),
        cli::Command::Interpolate(a) => interpolate(a),
        cli::Command::Train(a) => train::run(a),
        cli::Command::Lesson(a) => lesson::run(a),
        cli::Command::Synth { command } => synth::run(command),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Restores the default SIGPIPE action, as Unix command-line tools have it: when the reader of
/// stdout goes away (`trainer eval ... | head -1`, a consumer that crashed), the process ends
/// at the next write instead of panicking in `println!` with a backtrace.
fn quit_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: sets a signal disposition at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
