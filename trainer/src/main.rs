//! `trainer`: the native command-line tool of the project. It stays thin: every model, data
//! format and retrieval concept lives in the `engine` crate; this binary parses arguments,
//! shows progress and prints results.

mod cli;
mod demo;
mod embed;
mod eval;
mod judge;
mod progress;
mod search;

use clap::Parser;

/// `trainer export`: the model's files, weights optionally in F16.
fn export(args: cli::ExportArgs) -> anyhow::Result<()> {
    let files = engine::ModelFiles::read_dir(&args.model)?;
    let files = if args.f16 { files.to_f16()? } else { files };
    files.write_dir(&args.output)?;
    eprintln!(
        "model written to {}{}",
        args.output.display(),
        if args.f16 { " (F16 weights)" } else { "" }
    );
    Ok(())
}

fn main() {
    let args = cli::Cli::parse();
    let result = match args.command {
        cli::Command::Embed(a) => embed::run(a),
        cli::Command::Index(a) => search::index(a),
        cli::Command::Search(a) => search::run(a),
        cli::Command::Demo(a) => demo::run(a),
        cli::Command::Eval(a) => eval::run(a),
        cli::Command::Export(a) => export(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
