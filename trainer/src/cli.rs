//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Instruction-following retrieval: embed, index and search with a BERT-family encoder.
#[derive(Parser, Debug)]
#[command(name = "trainer", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Embed JSONL texts ({"_id", "text"} per line) into JSONL embeddings.
    Embed(EmbedArgs),
    /// Encode a corpus once into a persistent index file.
    Index(IndexArgs),
    /// Rank a corpus for a query, optionally under an instruction.
    Search(SearchArgs),
    /// Rank the built-in demo corpus under an instruction and its reversal, side by side.
    Demo(DemoArgs),
}

/// Model and device options shared by every command.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Hugging Face style model folder (config.json, tokenizer.json, model.safetensors).
    #[arg(long, env = "IFIR_MODEL", default_value = "models/all-MiniLM-L6-v2")]
    pub model: PathBuf,
    /// Compute device: cpu, wgpu, vulkan or cuda (GPU ones need the matching cargo feature).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Texts per forward pass.
    #[arg(long, default_value_t = engine::encoder::DEFAULT_BATCH_SIZE)]
    pub batch_size: usize,
}

/// `trainer embed`.
#[derive(Args, Debug)]
pub struct EmbedArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Input JSONL: one {"_id": str, "text": str} per line.
    #[arg(long)]
    pub input: PathBuf,
    /// Output JSONL: one {"_id": str, "embedding": [floats]} per line, in input order.
    #[arg(long)]
    pub output: PathBuf,
}

/// `trainer index`.
#[derive(Args, Debug)]
pub struct IndexArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Corpus JSONL ({"_id", "title"?, "text"} per line).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Index file to write.
    #[arg(long)]
    pub output: PathBuf,
}

/// Instruction options shared by search and demo.
#[derive(Args, Debug, Clone)]
pub struct TemplateArgs {
    /// How instruction and query are joined: instruction-first (default, "{instruction} {query}"),
    /// query-first, instruct, or a pattern containing {query} and {instruction}.
    #[arg(long, default_value = "instruction-first")]
    pub template: String,
}

/// `trainer search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub template: TemplateArgs,
    /// Corpus JSONL; needed unless --index points to an existing index.
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Index file: used when it exists (the model must match), else built from --corpus and saved.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// The query.
    #[arg(long)]
    pub query: String,
    /// The instruction (empty: the query alone).
    #[arg(long, default_value = "")]
    pub instruction: String,
    /// Number of results.
    #[arg(long, default_value_t = 10)]
    pub top_k: usize,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `trainer demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub template: TemplateArgs,
    /// Demo query id to show (default: the first three); `all` shows every query.
    #[arg(long)]
    pub query_id: Option<String>,
    /// Rows per ranking.
    #[arg(long, default_value_t = 5)]
    pub top_k: usize,
}

impl ModelArgs {
    /// Loads the encoder on the requested device.
    pub fn load(&self) -> anyhow::Result<engine::Encoder> {
        let kind: engine::BackendKind = self.device.parse()?;
        let device = kind.device()?;
        if !self.model.join("model.safetensors").is_file() && self.model.ends_with("all-MiniLM-L6-v2") && !self.model.exists() {
            anyhow::bail!(
                "{}: default model not found; fetch it with `cargo xtask fetch-model` or pass --model DIR",
                self.model.display()
            );
        }
        let mut encoder = engine::Encoder::load(&self.model, &device)?;
        encoder.batch_size = self.batch_size.max(1);
        Ok(encoder)
    }
}

impl TemplateArgs {
    /// The parsed template.
    pub fn template(&self) -> anyhow::Result<engine::QueryTemplate> {
        Ok(self.template.parse()?)
    }
}
