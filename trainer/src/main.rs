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

fn main() {
    let args = cli::Cli::parse();
    let result = match args.command {
        cli::Command::Embed(a) => embed::run(a),
        cli::Command::Index(a) => search::index(a),
        cli::Command::Search(a) => search::run(a),
        cli::Command::Demo(a) => demo::run(a),
        cli::Command::Eval(a) => eval::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
