//! Argument groups that several commands flatten, and the value parsers they share: the
//! model to load (with its device, batch size and arithmetic) and counts that must be at
//! least 1. Kept apart from `cli.rs` so that the commands' own modules (`synth`, `eval`) use
//! them without depending on the whole command line.

use std::path::PathBuf;

use clap::Args;

/// Model and device options shared by every command.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Hugging Face style model folder (config.json, tokenizer.json, model.safetensors).
    #[arg(long, env = "IFIR_MODEL", default_value = "models/all-MiniLM-L6-v2")]
    pub model: PathBuf,
    #[command(flatten)]
    pub compute: ComputeArgs,
}

/// Where and how a model computes: what `trainer eval` takes beside its own model flags.
#[derive(Args, Debug, Clone)]
pub struct ComputeArgs {
    /// Compute device: cpu, wgpu, vulkan or cuda (GPU ones need the matching cargo feature).
    #[arg(long, default_value = "cpu")]
    pub device: engine::BackendKind,
    /// Texts per forward pass (at most, on the CPU: texts sorted by length are cut where
    /// padding would cost more than another pass).
    #[arg(long, default_value_t = engine::encoder::DEFAULT_BATCH_SIZE, value_parser = positive)]
    pub batch_size: usize,
    /// Arithmetic of the dense layers: f32, int8 (8-bit products on the CPU, embeddings
    /// within the quantisation's error; faster than f32 on x86-64: about 2x with AVX-512
    /// VNNI, 1.2x with AVX2; slower elsewhere, where a portable kernel runs) or f16 (the
    /// whole transformer in half precision on a GPU backend).
    #[arg(long, default_value = "f32")]
    pub precision: engine::Precision,
    /// How far each batch is padded: longest (to its longest text) or buckets (to a few fixed
    /// lengths, so a GPU build with `gpu-autotune` tunes its kernels once per length; its
    /// default on a GPU). The embeddings are the same.
    #[arg(long)]
    pub padding: Option<engine::tokenize::Padding>,
    /// When a GPU's results are read back: pipelined (while the next batch computes) or
    /// each-batch; for measuring the difference (BENCHMARKS.md, "GPU").
    #[arg(long, default_value = "pipelined", hide = true)]
    pub readback: engine::Readback,
    /// How self-attention is computed: decomposed, or fused (burn's attention operation:
    /// flash attention where a GPU build with autotuning measures it faster); for measuring.
    #[arg(long, default_value = "decomposed", hide = true)]
    pub attention: engine::bert::AttentionKernel,
}

impl ModelArgs {
    /// Loads the encoder on the requested device.
    pub fn load(&self) -> anyhow::Result<engine::Encoder> {
        let compute = &self.compute;
        let device = compute.device.device()?;
        if !self.model.join("model.safetensors").is_file()
            && self.model.ends_with("all-MiniLM-L6-v2")
            && !self.model.exists()
        {
            anyhow::bail!(
                "{}: default model not found; fetch it with `cargo xtask fetch-model` or pass --model DIR",
                self.model.display()
            );
        }
        let mut encoder = engine::Encoder::load(&self.model, &device)?;
        encoder.set_precision(compute.precision)?;
        encoder.batch_size = compute.batch_size;
        if let Some(padding) = compute.padding {
            encoder.padding = padding;
        }
        encoder.readback = compute.readback;
        encoder.set_attention(compute.attention);
        Ok(encoder)
    }
}

/// A count that must be at least 1 (`--batch-size`, `--top-k`): 0 would silently mean 1 or
/// nothing.
pub fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
