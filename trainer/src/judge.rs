//! The LLM judge of INSTFOL (IFIR, seeds-spec §6.4) over any OpenAI-compatible chat endpoint:
//! a G-Eval style prompt, temperature 0, top_p 0.7, top-5 log-probabilities of the score token,
//! and the probability-weighted score of `engine::metrics::instfol::logprob_weighted_score`.
//! Endpoint, model and key come from flags or the environment (`IFIR_JUDGE_BASE_URL`,
//! `IFIR_JUDGE_MODEL`, `IFIR_JUDGE_API_KEY`, else `OPENAI_API_KEY`).

use engine::error::{EngineError, Result};
use engine::metrics::instfol::{logprob_weighted_score, InstructionJudge};
use serde_json::{json, Value};

/// Where and how to ask.
#[derive(Debug, Clone)]
pub struct LlmJudgeConfig {
    /// Base URL, e.g. `https://api.openai.com/v1` (`/chat/completions` is appended).
    pub base_url: String,
    /// Model name, e.g. `gpt-4o-mini`.
    pub model: String,
    /// Bearer token (may be empty for local servers).
    pub api_key: String,
    /// Top of the rubric's scale.
    pub s_max: f64,
}

impl LlmJudgeConfig {
    /// From flags, falling back to the environment.
    pub fn from_env(base_url: Option<String>, model: Option<String>, s_max: f64) -> Result<Self> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let base_url = base_url
            .or_else(|| env("IFIR_JUDGE_BASE_URL"))
            .ok_or_else(|| {
                EngineError::Invalid(
                    "LLM judge: give --judge-url or set IFIR_JUDGE_BASE_URL".into(),
                )
            })?;
        Ok(LlmJudgeConfig {
            base_url,
            model: model
                .or_else(|| env("IFIR_JUDGE_MODEL"))
                .unwrap_or_else(|| "gpt-4o-mini".into()),
            api_key: env("IFIR_JUDGE_API_KEY")
                .or_else(|| env("OPENAI_API_KEY"))
                .unwrap_or_default(),
            s_max,
        })
    }
}

/// Judges (instruction, query, passage) triples with an LLM.
pub struct LlmJudge {
    config: LlmJudgeConfig,
    client: crate::chat::ChatClient,
    /// Number of requests made (for the progress line).
    pub requests: usize,
}

impl LlmJudge {
    /// A judge over the shared chat client (timeouts, retries with backoff).
    pub fn new(config: LlmJudgeConfig) -> Self {
        let mut client = crate::chat::ChatClient::new(&config.base_url, &config.api_key);
        client.attempts = 3;
        LlmJudge {
            config,
            client,
            requests: 0,
        }
    }

    fn prompt(&self, query: &str, instruction: &str, passage: &str) -> Vec<Value> {
        let s_max = self.config.s_max as i64;
        let system = format!(
            "You evaluate whether a retrieved passage satisfies a user's search instruction. \
             Score from 0 to {s_max}: 0 = meets none of the instruction's requirements; \
             {s_max} = fully matches every detailed requirement; intermediate values for partial matches. \
             Answer with JSON only: {{\"score\": <integer 0-{s_max}>, \"reason\": \"<one sentence>\"}}."
        );
        let user = format!("Query: {query}\nInstruction: {instruction}\nPassage: {passage}");
        vec![
            json!({"role": "system", "content": system}),
            json!({"role": "user", "content": user}),
        ]
    }

    fn ask(&mut self, body: &Value) -> Result<Value> {
        self.requests += 1;
        self.client
            .send(body)
            .map_err(|e| EngineError::Invalid(format!("LLM judge {e}")))
    }
}

/// The weighted score from a chat-completions answer: the top log-probabilities of the token
/// that holds the score value, else the score parsed from the message content.
pub fn score_from_answer(answer: &Value, s_max: f64) -> Option<f64> {
    let choice = answer.get("choices")?.get(0)?;
    if let Some(tokens) = choice
        .pointer("/logprobs/content")
        .and_then(|c| c.as_array())
    {
        let mut text = String::new();
        for t in tokens {
            let token = t.get("token").and_then(|v| v.as_str()).unwrap_or("");
            let after_key = text.contains("score") && text.trim_end().ends_with(':');
            text.push_str(token);
            if after_key && token.trim().parse::<f64>().is_ok() {
                let candidates: Vec<(String, f64)> = t
                    .get("top_logprobs")
                    .and_then(|v| v.as_array())
                    .map(|list| {
                        list.iter()
                            .filter_map(|c| {
                                Some((
                                    c.get("token")?.as_str()?.to_string(),
                                    c.get("logprob")?.as_f64()?,
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(s) = logprob_weighted_score(&candidates, s_max) {
                    return Some(s);
                }
            }
        }
    }
    let content = choice.pointer("/message/content")?.as_str()?;
    let start = content.find('{')?;
    let end = content.rfind('}')?;
    let parsed: Value = serde_json::from_str(&content[start..=end]).ok()?;
    let s = parsed.get("score")?.as_f64()?;
    (0.0..=s_max).contains(&s).then_some(s)
}

impl InstructionJudge for LlmJudge {
    fn max_score(&self) -> f64 {
        self.config.s_max
    }

    fn score(
        &mut self,
        qid: &str,
        query: &str,
        instruction: &str,
        doc_id: &str,
        passage: &str,
    ) -> Result<f64> {
        let body = json!({
            "model": self.config.model,
            "messages": self.prompt(query, instruction, passage),
            "temperature": 0.0,
            "top_p": 0.7,
            "logprobs": true,
            "top_logprobs": 5,
            "max_tokens": 120,
        });
        let answer = self.ask(&body)?;
        score_from_answer(&answer, self.config.s_max).ok_or_else(|| {
            // The message, not the whole answer (its log-probabilities run to kilobytes).
            let content = answer
                .pointer("/choices/0/message/content")
                .and_then(|c| c.as_str())
                .map(|c| {
                    let cut: String = c.chars().take(300).collect();
                    if cut.len() < c.len() {
                        format!("{cut}...")
                    } else {
                        cut
                    }
                })
                .unwrap_or_else(|| answer.to_string().chars().take(300).collect());
            EngineError::NoScore {
                query: qid.to_string(),
                document: doc_id.to_string(),
                answer: format!(
                    "{content:?} (expected a JSON object with \"score\" from 0 to {})",
                    self.config.s_max
                ),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};

    fn answer(content_tokens: &[(&str, &[(&str, f64)])]) -> Value {
        let content: String = content_tokens.iter().map(|(t, _)| *t).collect();
        let tokens: Vec<Value> = content_tokens
            .iter()
            .map(|(t, top)| {
                json!({"token": t, "logprob": -0.1,
                       "top_logprobs": top.iter().map(|(tt, p)| json!({"token": tt, "logprob": p})).collect::<Vec<_>>()})
            })
            .collect();
        json!({"choices": [{"message": {"role": "assistant", "content": content}, "logprobs": {"content": tokens}}]})
    }

    #[test]
    fn weighted_score_comes_from_the_score_token() {
        let top: &[(&str, f64)] = &[
            ("2", 0.6f64.ln()),
            ("1", 0.2f64.ln()),
            ("0", 0.1f64.ln()),
            ("3", 0.1f64.ln()),
        ];
        let a = answer(&[
            ("{\"", &[]),
            ("score", &[]),
            ("\":", &[]),
            (" 2", top),
            (", \"reason\": \"ok\"}", &[]),
        ]);
        assert!((score_from_answer(&a, 3.0).unwrap() - 1.7).abs() < 1e-9);
        // Without log-probabilities the content's score is used.
        let plain = json!({"choices": [{"message": {"content": "Sure: {\"score\": 3, \"reason\": \"fits\"}"}}]});
        assert_eq!(score_from_answer(&plain, 3.0), Some(3.0));
        let bad = json!({"choices": [{"message": {"content": "no idea"}}]});
        assert_eq!(score_from_answer(&bad, 3.0), None);
    }

    #[test]
    fn asks_an_openai_compatible_endpoint() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            let mut head = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                head.push_str(&line);
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let top: &[(&str, f64)] = &[("1", 0.5f64.ln()), ("3", 0.5f64.ln())];
            let reply = answer(&[("{\"score\":", &[]), ("1", top), ("}", &[])]).to_string();
            let mut stream = stream;
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}", reply.len()).unwrap();
            (head, String::from_utf8(body).unwrap())
        });
        let mut judge = LlmJudge::new(LlmJudgeConfig {
            base_url: format!("http://127.0.0.1:{port}/v1/"),
            model: "judge-model".into(),
            api_key: "secret".into(),
            s_max: 3.0,
        });
        let s = judge
            .score(
                "q1",
                "laptops",
                "only refurbished",
                "d1",
                "A refurbished ThinkPad",
            )
            .unwrap();
        assert!((s - 2.0).abs() < 1e-9, "{s}");
        let (head, body) = server.join().unwrap();
        assert!(head.starts_with("POST /v1/chat/completions"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("authorization: bearer secret"),
            "{head}"
        );
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["model"], "judge-model");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["top_logprobs"], 5);
        assert!(body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("only refurbished"));
    }
}
