//! `trainer synth llm`: the two LLM pipelines of the seeds against any OpenAI-compatible chat
//! endpoint.
//!
//! * `--pipeline inf-ir` (seeds-spec §2.2), from seed `{"query", "positive"}` lines: generate an
//!   instruction I+ for (Q+, P+); poison it into I- and the query into Q-; write the passages
//!   P1- for (I-, Q+) and P2- for (I+, Q-); then a judge model must pick the intended passage
//!   of each of the three tuples among the record's passages plus random distractors. A record
//!   is kept only when all three picks are right. Synthetic instructions and queries are cut at
//!   their first newline (App. B.1).
//! * `--pipeline dual-view` (seeds-spec §3.2), from instruction-negative records: one
//!   complementary instruction per record under which the first instruction negative becomes
//!   relevant; `None` answers are dropped.
//!
//! Prompts are the readable files in `trainer/prompts/` (or `--prompts DIR`). Every answer is
//! cached on disk under a hash of (model, temperature, prompt), so an interrupted job resumes
//! without paying twice; answers that do not parse are rejected, counted and logged to
//! `OUTPUT.rejects.jsonl`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use engine::data::records::InfIrRecord;
use engine::rng::SplitMix64;
use engine::training::TrainingRecord;

use crate::chat::{message_text, ChatClient};

/// Which records `trainer synth llm` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pipeline {
    /// InF-IR records from (query, relevant passage) seeds.
    InfIr,
    /// Dual-view records from instruction-negative records.
    DualView,
}

/// `trainer synth llm`.
#[derive(Args, Debug)]
pub struct LlmArgs {
    /// inf-ir (seed {"query", "positive"} lines) or dual-view (instruction-negative records).
    #[arg(long, value_enum)]
    pub pipeline: Pipeline,
    /// Input JSONL.
    #[arg(long)]
    pub input: PathBuf,
    /// Output JSONL of training records (formats.md §3), in input order.
    #[arg(long)]
    pub output: PathBuf,
    /// OpenAI-compatible base URL (else $IFIR_SYNTH_BASE_URL).
    #[arg(long, env = "IFIR_SYNTH_BASE_URL")]
    pub base_url: String,
    /// Generator model.
    #[arg(long, env = "IFIR_SYNTH_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,
    /// Judge model of the InF-IR validation (the seeds use o3-mini).
    #[arg(long, env = "IFIR_SYNTH_JUDGE_MODEL", default_value = "o3-mini")]
    pub judge_model: String,
    /// API key (else $IFIR_SYNTH_API_KEY, else $OPENAI_API_KEY).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Attempts per request (retries back off exponentially).
    #[arg(long, default_value_t = 5)]
    pub attempts: u32,
    /// Answer cache (default: OUTPUT.cache/).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Folder overriding the built-in prompt files (same names as trainer/prompts/).
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// Random distractor passages shown to the judge besides the record's own.
    #[arg(long, default_value_t = 3)]
    pub distractors: usize,
    /// Sampling temperature of generation (the judge is sent none: reasoning models such as
    /// o3-mini accept only their default).
    #[arg(long, default_value_t = 0.7)]
    pub temperature: f64,
    /// Seed of the distractors and candidate order.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// The prompt files, built in and overridable.
struct Prompts(BTreeMap<&'static str, String>);

const PROMPT_FILES: [(&str, &str); 6] = [
    (
        "inf_ir_instruction",
        include_str!("../../prompts/inf_ir_instruction.txt"),
    ),
    (
        "inf_ir_poison_instruction",
        include_str!("../../prompts/inf_ir_poison_instruction.txt"),
    ),
    (
        "inf_ir_poison_query",
        include_str!("../../prompts/inf_ir_poison_query.txt"),
    ),
    (
        "inf_ir_passage",
        include_str!("../../prompts/inf_ir_passage.txt"),
    ),
    (
        "inf_ir_judge",
        include_str!("../../prompts/inf_ir_judge.txt"),
    ),
    ("dual_view", include_str!("../../prompts/dual_view.txt")),
];

impl Prompts {
    fn load(dir: Option<&Path>) -> anyhow::Result<Self> {
        let mut map = BTreeMap::new();
        for (name, text) in PROMPT_FILES {
            let text = match dir {
                Some(d) if d.join(format!("{name}.txt")).is_file() => {
                    let p = d.join(format!("{name}.txt"));
                    std::fs::read_to_string(&p)
                        .with_context(|| format!("{}: cannot read", p.display()))?
                }
                _ => text.to_string(),
            };
            map.insert(name, text);
        }
        Ok(Prompts(map))
    }

    fn fill(&self, name: &str, fields: &[(&str, &str)]) -> String {
        let mut text = self.0[name].clone();
        for (k, v) in fields {
            text = text.replace(&format!("{{{k}}}"), v);
        }
        text
    }
}

/// Counters of a job.
#[derive(Default)]
struct Stats {
    requests: AtomicUsize,
    cached: AtomicUsize,
    rejected: AtomicUsize,
    judged_out: AtomicUsize,
    none: AtomicUsize,
}

/// The model behind the pipelines: cached, counted chat calls.
/// Answers that do not parse are asked again this many times in all.
const PARSE_ATTEMPTS: usize = 2;

struct Llm<'a> {
    client: ChatClient,
    abort: std::sync::atomic::AtomicBool,
    cache: PathBuf,
    stats: &'a Stats,
    rejects: Mutex<std::fs::File>,
}

impl<'a> Llm<'a> {
    /// The client, answer cache and reject log of a run.
    fn new(args: &LlmArgs, stats: &'a Stats, rejects_path: &Path) -> anyhow::Result<Self> {
        let key = args
            .api_key
            .clone()
            .or_else(|| std::env::var("IFIR_SYNTH_API_KEY").ok())
            .or_else(|| std::env::var("OPENAI_API_KEY").ok())
            .unwrap_or_default();
        let mut client = ChatClient::new(&args.base_url, &key);
        client.attempts = args.attempts.max(1);
        let cache = args
            .cache
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}.cache", args.output.display())));
        let rejects = std::fs::File::create(rejects_path)
            .with_context(|| format!("{}: cannot create", rejects_path.display()))?;
        Ok(Llm {
            client,
            abort: Default::default(),
            cache,
            stats,
            rejects: Mutex::new(rejects),
        })
    }

    /// The answer text for `prompt` from `model`, from the cache when asked before. A nonzero
    /// `attempt` asks again (another cache entry) after an answer that did not parse. Without
    /// a temperature the server's default is used (reasoning models accept no other).
    fn ask(
        &self,
        model: &str,
        temperature: Option<f64>,
        prompt: &str,
        attempt: usize,
    ) -> anyhow::Result<String> {
        let mut h = Sha256::new();
        h.update(model.as_bytes());
        h.update([0]);
        h.update(format!("{temperature:?}#{attempt}").as_bytes());
        h.update([0]);
        h.update(prompt.as_bytes());
        let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let path = self.cache.join(&key[..2]).join(format!("{key}.txt"));
        if let Ok(text) = std::fs::read_to_string(&path) {
            self.stats.cached.fetch_add(1, Ordering::Relaxed);
            return Ok(text);
        }
        if self.abort.load(Ordering::Relaxed) {
            anyhow::bail!("stopped: an earlier request was refused by the server");
        }
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let mut body = json!({
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
        });
        if let Some(t) = temperature {
            body["temperature"] = json!(t);
        }
        let answer = self.client.send(&body).map_err(|e| {
            if e.fatal {
                self.abort.store(true, Ordering::Relaxed);
            }
            anyhow::anyhow!(e)
        })?;
        let text = message_text(&answer)
            .with_context(|| {
                format!(
                    "{}: answer without choices[0].message.content",
                    self.client.url()
                )
            })?
            .to_string();
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        engine::atomic::write_unique(&path, text.as_bytes())?;
        Ok(text)
    }

    /// Asks until `parse` accepts the answer, at most [`PARSE_ATTEMPTS`] times; each rejected
    /// answer is counted and logged.
    fn ask_parsed<T>(
        &self,
        item: usize,
        step: &str,
        model: &str,
        temperature: Option<f64>,
        prompt: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> anyhow::Result<Option<T>> {
        for attempt in 0..PARSE_ATTEMPTS {
            let text = self.ask(model, temperature, prompt, attempt)?;
            match parse(&text) {
                Ok(v) => return Ok(Some(v)),
                Err(reason) => self.reject(item, step, &reason, &text),
            }
        }
        Ok(None)
    }

    fn reject(&self, item: usize, step: &str, reason: &str, text: &str) {
        self.stats.rejected.fetch_add(1, Ordering::Relaxed);
        let line = json!({"item": item, "step": step, "reason": reason, "answer": text});
        if let Ok(mut f) = self.rejects.lock() {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// The text after `label:` on the first line that starts with it, cut at the newline (the
/// InF-IR rule-based filter). `multiline` keeps everything after the label instead.
pub fn labelled(text: &str, label: &str, multiline: bool) -> Option<String> {
    let prefix = format!("{label}:");
    let start = text
        .lines()
        .position(|l| l.trim_start().starts_with(&prefix))?;
    let lines: Vec<&str> = text.lines().collect();
    let first = lines[start].trim_start()[prefix.len()..].trim().to_string();
    let value = if multiline {
        std::iter::once(first.as_str())
            .chain(lines[start + 1..].iter().copied())
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string()
    } else {
        first
    };
    let value = value.trim_matches('"').trim().to_string();
    (!value.is_empty()).then_some(value)
}

/// The dual-view answer: `Some(Some(instruction))`, `Some(None)` for an explicit `None`, or
/// `None` when the answer has no well-formed `<answer>` block.
pub fn dual_view_answer(text: &str) -> Option<Option<String>> {
    let start = text.rfind("<answer>")? + "<answer>".len();
    let end = start + text[start..].find("</answer>")?;
    let inner = text[start..end].trim();
    if inner == "None" {
        return Some(None);
    }
    let open = "<new_instruction>";
    let s = inner.find(open)? + open.len();
    let e = s + inner[s..].find("</new_instruction>")?;
    let instruction = inner[s..e]
        .trim()
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    (!instruction.is_empty()).then_some(Some(instruction))
}

/// Runs the job.
pub fn run(args: LlmArgs) -> anyhow::Result<()> {
    let inputs = read_inputs(&args)?;
    let stats = Stats::default();
    let rejects_path = PathBuf::from(format!("{}.rejects.jsonl", args.output.display()));
    let llm = Llm::new(&args, &stats, &rejects_path)?;
    let prompts = Prompts::load(args.prompts.as_deref())?;
    let (kept, errors) = synthesize(&args, &inputs, &llm, &prompts);
    engine::data::write_jsonl(&args.output, &kept)?;
    eprintln!(
        "{} of {} records kept in {}; {} requests, {} cached answers, {} rejected answers (see {}), {} failed validation, {} None answers, {} errors",
        kept.len(),
        inputs.len(),
        args.output.display(),
        stats.requests.load(Ordering::Relaxed),
        stats.cached.load(Ordering::Relaxed),
        stats.rejected.load(Ordering::Relaxed),
        rejects_path.display(),
        stats.judged_out.load(Ordering::Relaxed),
        stats.none.load(Ordering::Relaxed),
        errors.len()
    );
    if let Some(first) = errors.first() {
        anyhow::bail!("{} inputs failed (their answers so far are cached; run again to resume); first: {first}", errors.len());
    }
    Ok(())
}

/// Every input line, validated before any request is paid for: `(line number, input)`.
fn read_inputs(args: &LlmArgs) -> anyhow::Result<Vec<(usize, Input)>> {
    let text = engine::data::read_text(&args.input)?;
    let mut inputs = Vec::new();
    for (n, line) in engine::data::record_lines(&text) {
        let at = |e: &dyn std::fmt::Display| anyhow::anyhow!("{}:{n}: {e}", args.input.display());
        let v: Value = serde_json::from_str(line).map_err(|e| at(&e))?;
        inputs.push((n, Input::parse(args.pipeline, &v).map_err(|e| at(&e))?));
    }
    anyhow::ensure!(
        !inputs.is_empty(),
        "{}: no input lines",
        args.input.display()
    );
    Ok(inputs)
}

/// Runs every input on `--concurrency` threads: the records kept, in input order, and the
/// inputs that failed.
fn synthesize(
    args: &LlmArgs,
    inputs: &[(usize, Input)],
    llm: &Llm,
    prompts: &Prompts,
) -> (Vec<Value>, Vec<String>) {
    let pool: Vec<String> = inputs
        .iter()
        .map(|(_, i)| i.positive().to_string())
        .collect();
    let results: Vec<Mutex<Option<Value>>> = inputs.iter().map(|_| Mutex::new(None)).collect();
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let bar = crate::progress::bar(inputs.len(), "synthesizing");
    std::thread::scope(|s| {
        for _ in 0..args.concurrency.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= inputs.len() {
                    break;
                }
                let mut rng = SplitMix64::for_stream(args.seed, i as u64);
                let job = Job {
                    llm,
                    prompts,
                    args,
                    pool: &pool,
                    item: i,
                };
                match job.process(&inputs[i].1, &mut rng) {
                    Ok(record) => *results[i].lock().expect("not poisoned") = record,
                    Err(e) => errors
                        .lock()
                        .expect("not poisoned")
                        .push(format!("input line {}: {e:#}", inputs[i].0)),
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let kept = results
        .into_iter()
        .filter_map(|m| m.into_inner().expect("not poisoned"))
        .collect();
    (kept, errors.into_inner().expect("not poisoned"))
}

/// One validated input line.
enum Input {
    Seed { query: String, positive: String },
    Record(engine::data::records::InstructionNegativeRecord),
}

impl Input {
    fn parse(pipeline: Pipeline, v: &Value) -> Result<Self, String> {
        let field = |k: &str| -> Result<String, String> {
            v.get(k)
                .and_then(|x| x.as_str())
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
                .ok_or_else(|| format!("missing or empty field '{k}'"))
        };
        if pipeline == Pipeline::InfIr {
            return Ok(Input::Seed {
                query: field("query")?,
                positive: field("positive")?,
            });
        }
        match TrainingRecord::parse(&v.to_string())? {
            TrainingRecord::InstructionNegative(r) if !r.instruction_negatives.is_empty() => {
                Ok(Input::Record(r))
            }
            TrainingRecord::InstructionNegative(_) => Err(
                "the dual-view pipeline needs at least one entry in 'instruction_negatives'".into(),
            ),
            TrainingRecord::InfIr(_) => Err(
                "the dual-view pipeline reads instruction-negative records, not InF-IR records"
                    .into(),
            ),
        }
    }

    fn positive(&self) -> &str {
        match self {
            Input::Seed { positive, .. } => positive,
            Input::Record(r) => &r.positive,
        }
    }
}

struct Job<'a> {
    llm: &'a Llm<'a>,
    prompts: &'a Prompts,
    args: &'a LlmArgs,
    pool: &'a [String],
    item: usize,
}

impl Job<'_> {
    fn generate(
        &self,
        prompt: &str,
        step: &str,
        label: &str,
        multiline: bool,
    ) -> anyhow::Result<Option<String>> {
        self.llm.ask_parsed(
            self.item,
            step,
            &self.args.model,
            Some(self.args.temperature),
            prompt,
            |text| labelled(text, label, multiline).ok_or_else(|| format!("no '{label}:' line")),
        )
    }

    fn process(&self, input: &Input, rng: &mut SplitMix64) -> anyhow::Result<Option<Value>> {
        match input {
            Input::Seed { query, positive } => self.inf_ir(query, positive, rng),
            Input::Record(r) => self.dual_view(r),
        }
    }

    /// One InF-IR record from a seed (query, relevant passage): generated, then validated.
    fn inf_ir(
        &self,
        query: &str,
        positive: &str,
        rng: &mut SplitMix64,
    ) -> anyhow::Result<Option<Value>> {
        let Some(record) = self.inf_ir_texts(query, positive)? else {
            return Ok(None);
        };
        Ok(self.inf_ir_valid(&record, rng)?.then(|| record.to_json()))
    }

    /// The instruction, its poisoned twin, the poisoned query and the two passages they call
    /// for; None when a step gave no answer or a poisoned text equals its original.
    fn inf_ir_texts(&self, query: &str, positive: &str) -> anyhow::Result<Option<InfIrRecord>> {
        let Some((i_pos, i_neg, q_neg)) = self.inf_ir_poisoned(query, positive)? else {
            return Ok(None);
        };
        let Some((p1, p2)) = self.inf_ir_passages(query, positive, &i_pos, (&i_neg, &q_neg))?
        else {
            return Ok(None);
        };
        // A poisoned text equal to its original makes no negative.
        if i_neg == i_pos || q_neg == query || p1 == positive || p2 == positive || p1 == p2 {
            self.llm.reject(
                self.item,
                "poisoning",
                "a poisoned instruction, query or passage equals its original",
                &format!("{i_neg}\n{q_neg}"),
            );
            return Ok(None);
        }
        Ok(Some(InfIrRecord {
            query_positive: query.to_string(),
            instruction_positive: i_pos,
            document_positive: positive.to_string(),
            instruction_negative: i_neg,
            hard_negative_document_1: p1,
            query_negative: q_neg,
            hard_negative_document_2: p2,
        }))
    }

    /// The instruction for `positive`, its poisoned twin and the poisoned query (InF-IR's
    /// first three steps); None when a step gave no answer.
    fn inf_ir_poisoned(
        &self,
        query: &str,
        positive: &str,
    ) -> anyhow::Result<Option<(String, String, String)>> {
        let p = self.prompts;
        let instruction_prompt = p.fill(
            "inf_ir_instruction",
            &[("query", query), ("passage", positive)],
        );
        let Some(i_pos) =
            self.generate(&instruction_prompt, "instruction", "Instruction", false)?
        else {
            return Ok(None);
        };
        let fields = [
            ("query", query),
            ("instruction", i_pos.as_str()),
            ("passage", positive),
        ];
        let poison = p.fill("inf_ir_poison_instruction", &fields);
        let Some(i_neg) = self.generate(&poison, "poison-instruction", "Instruction", false)?
        else {
            return Ok(None);
        };
        let poison = p.fill("inf_ir_poison_query", &fields);
        let Some(q_neg) = self.generate(&poison, "poison-query", "Query", false)? else {
            return Ok(None);
        };
        Ok(Some((i_pos, i_neg, q_neg)))
    }

    /// The two hard-negative passages, as long as `positive`: one for the query under the
    /// poisoned instruction, one for the poisoned query under the instruction; None when a
    /// step gave no answer.
    fn inf_ir_passages(
        &self,
        query: &str,
        positive: &str,
        i_pos: &str,
        (i_neg, q_neg): (&str, &str),
    ) -> anyhow::Result<Option<(String, String)>> {
        let words = positive
            .split_whitespace()
            .count()
            .clamp(30, 200)
            .to_string();
        let passage = |instruction: &str, q: &str| {
            self.prompts.fill(
                "inf_ir_passage",
                &[
                    ("query", q),
                    ("instruction", instruction),
                    ("passage", positive),
                    ("words", words.as_str()),
                ],
            )
        };
        let Some(p1) = self.generate(&passage(i_neg, query), "passage-1", "Passage", true)? else {
            return Ok(None);
        };
        let Some(p2) = self.generate(&passage(i_pos, q_neg), "passage-2", "Passage", true)? else {
            return Ok(None);
        };
        Ok(Some((p1, p2)))
    }

    /// Validation: each tuple's intended passage must be picked by the judge among the
    /// record's three passages plus distractors.
    fn inf_ir_valid(&self, r: &InfIrRecord, rng: &mut SplitMix64) -> anyhow::Result<bool> {
        let (positive, p1, p2) = (
            r.document_positive.as_str(),
            r.hard_negative_document_1.as_str(),
            r.hard_negative_document_2.as_str(),
        );
        let mut candidates: Vec<&str> = vec![positive, p1, p2];
        for _ in 0..self.args.distractors {
            let d = &self.pool[rng.below(self.pool.len())];
            if !candidates.contains(&d.as_str()) {
                candidates.push(d);
            }
        }
        rng.shuffle(&mut candidates);
        let listing: String = candidates
            .iter()
            .enumerate()
            .map(|(k, c)| format!("[{}] {c}\n", k + 1))
            .collect();
        for (instruction, q, intended) in [
            (&r.instruction_positive, &r.query_positive, positive),
            (&r.instruction_negative, &r.query_positive, p1),
            (&r.instruction_positive, &r.query_negative, p2),
        ] {
            let prompt = self.prompts.fill(
                "inf_ir_judge",
                &[
                    ("query", q.as_str()),
                    ("instruction", instruction.as_str()),
                    ("candidates", listing.as_str()),
                ],
            );
            let Some(k) = self.judge_pick(&prompt, candidates.len())? else {
                return Ok(false);
            };
            if candidates[k - 1] != intended {
                self.llm.stats.judged_out.fetch_add(1, Ordering::Relaxed);
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The judge's pick among `n` numbered candidates (1-based), None when it gave none.
    fn judge_pick(&self, prompt: &str, n: usize) -> anyhow::Result<Option<usize>> {
        self.llm.ask_parsed(
            self.item,
            "judge",
            &self.args.judge_model,
            None,
            prompt,
            |text| {
                labelled(text, "Answer", false)
                    .and_then(|a| {
                        let digits: String = a
                            .trim_start_matches('[')
                            .chars()
                            .take_while(|c| c.is_ascii_digit())
                            .collect();
                        digits.parse::<usize>().ok()
                    })
                    .filter(|k| (1..=n).contains(k))
                    .ok_or_else(|| "no valid 'Answer: <number>' line".to_string())
            },
        )
    }

    fn dual_view(
        &self,
        r: &engine::data::records::InstructionNegativeRecord,
    ) -> anyhow::Result<Option<Value>> {
        let others: String = r.instruction_negatives[1..]
            .iter()
            .enumerate()
            .map(|(k, t)| format!("[{}] {t}\n", k + 1))
            .collect();
        let others = if others.is_empty() {
            "(none)".to_string()
        } else {
            others
        };
        let prompt = self.prompts.fill(
            "dual_view",
            &[
                ("query", &r.query),
                ("instruction", &r.instruction),
                ("positive", &r.positive),
                ("negative", &r.instruction_negatives[0]),
                ("others", &others),
            ],
        );
        let answer = self.llm.ask_parsed(
            self.item,
            "dual-view",
            &self.args.model,
            Some(self.args.temperature),
            &prompt,
            |text| dual_view_answer(text).ok_or_else(|| "no <answer> block".to_string()),
        )?;
        match answer {
            Some(Some(instruction)) => {
                let mut out = r.clone();
                out.instruction_reversed = Some(instruction);
                Ok(Some(out.to_json()))
            }
            Some(None) => {
                self.llm.stats.none.fetch_add(1, Ordering::Relaxed);
                Ok(None)
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_lines_are_parsed_strictly() {
        assert_eq!(
            labelled(
                "Sure!\nInstruction: Only recent work.\nmore",
                "Instruction",
                false
            )
            .as_deref(),
            Some("Only recent work.")
        );
        assert_eq!(labelled("Instruction:   ", "Instruction", false), None);
        assert_eq!(labelled("no label here", "Instruction", false), None);
        assert_eq!(
            labelled("Passage: line one\nline two", "Passage", true).as_deref(),
            Some("line one\nline two")
        );
        assert_eq!(
            labelled("Query: \"quoted\"", "Query", false).as_deref(),
            Some("quoted")
        );
    }

    #[test]
    fn dual_view_answers() {
        assert_eq!(dual_view_answer("thinking...\n<answer><new_instruction> Only code in Rust. </new_instruction></answer>"), Some(Some("Only code in Rust.".into())));
        assert_eq!(dual_view_answer("<answer>None</answer>"), Some(None));
        assert_eq!(
            dual_view_answer("<answer><new_instruction></new_instruction></answer>"),
            None
        );
        assert_eq!(dual_view_answer("no tags"), None);
    }
}
