//! Embedding throughput of the engine.
//!
//! `cargo run --release -p engine --example embed_throughput -- MODEL_DIR TEXTS.jsonl BATCH [REPEATS] [flex|ndarray|wgpu|vulkan|cuda] [f32|int8]`
//!
//! (`ndarray` needs `--features ndarray`; it exists only to compare the two CPU backends. The
//! GPU backends need their cargo feature; the GPU benchmark script `engine/benches/gpu.sh` runs
//! this example built with `--features vulkan`.)
//!
//! Reads `{"_id", "text"}` lines (title + text for corpora), embeds them all `REPEATS` times
//! after one warm-up batch, and prints one JSON line with passages per second. `cargo xtask
//! bench` runs it beside sentence-transformers on the same texts.

use std::path::PathBuf;
use std::time::Instant;

use engine::data::{read_corpus, Passage};
use engine::Encoder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: embed_throughput MODEL_DIR TEXTS.jsonl BATCH [REPEATS] [flex|ndarray] [f32|int8]");
        std::process::exit(2);
    }
    let model = PathBuf::from(&args[0]);
    let passages: Vec<Passage> = read_corpus(&PathBuf::from(&args[1]))?;
    let batch: usize = args[2].parse()?;
    let repeats: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let backend = args.get(4).map(String::as_str).unwrap_or("flex");
    let device = match backend {
        #[cfg(feature = "ndarray")]
        "ndarray" => engine::Device::ndarray(),
        other => other.parse::<engine::backend::BackendKind>()?.device()?,
    };
    let precision: engine::Precision = args.get(5).map_or(Ok(Default::default()), |s| s.parse())?;
    let mut encoder = Encoder::load(&model, &device)?;
    encoder.set_precision(precision)?;
    encoder.batch_size = batch;
    let texts: Vec<String> = passages.iter().map(|p| p.encoder_text()).collect();
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    encoder.encode(&refs[..batch.min(refs.len())])?; // warm-up
    let start = Instant::now();
    for _ in 0..repeats {
        encoder.encode(&refs)?;
    }
    let secs = start.elapsed().as_secs_f64();
    let total = refs.len() * repeats;
    println!(
        "{}",
        serde_json::json!({"system": format!("engine (burn-{backend}, {precision})"), "passages": total, "seconds": secs, "passages_per_s": total as f64 / secs})
    );
    Ok(())
}
