//! One client for OpenAI-compatible chat endpoints (`POST {base}/chat/completions`), shared by
//! INSTFOL's LLM judge and `trainer synth llm`: bearer key, timeout, and retries with
//! exponential backoff on rate limits (429), server errors (5xx) and dropped connections.

use std::time::Duration;

use serde_json::Value;

/// Where to send chat requests.
#[derive(Debug, Clone)]
pub struct ChatClient {
    url: String,
    api_key: String,
    agent: ureq::Agent,
    /// Attempts per request (1 = no retry).
    pub attempts: u32,
    /// First backoff; doubled after each failed attempt.
    pub backoff: Duration,
}

impl ChatClient {
    /// A client for `base_url` (e.g. `https://api.openai.com/v1`), 120 s timeout, 5 attempts.
    pub fn new(base_url: &str, api_key: &str) -> Self {
        ChatClient {
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key: api_key.to_string(),
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(120))
                .build(),
            attempts: 5,
            backoff: Duration::from_millis(500),
        }
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends `body` (a chat-completions request) and returns the JSON answer.
    pub fn send(&self, body: &Value) -> Result<Value, ChatError> {
        self.send_inner(body)
            .map_err(|(message, fatal)| ChatError { message, fatal })
    }

    fn send_inner(&self, body: &Value) -> Result<Value, (String, bool)> {
        let mut last = String::new();
        let mut wait = self.backoff;
        for attempt in 0..self.attempts.max(1) {
            if attempt > 0 {
                std::thread::sleep(wait);
                wait *= 2;
            }
            let mut req = self.agent.post(&self.url);
            if !self.api_key.is_empty() {
                req = req.set("Authorization", &format!("Bearer {}", self.api_key));
            }
            match req.send_json(body.clone()) {
                Ok(resp) => {
                    return resp
                        .into_json::<Value>()
                        .map_err(|e| (format!("{}: unreadable answer: {e}", self.url), false))
                }
                Err(ureq::Error::Status(code, resp)) if code == 429 || code >= 500 => {
                    last = format!("HTTP {code}: {}", resp.into_string().unwrap_or_default());
                }
                Err(ureq::Error::Status(code, resp)) => {
                    // A request the server refuses (bad key, unknown model, bad parameter)
                    // fails the same way every time: fatal for the whole job.
                    return Err((
                        format!(
                            "{}: HTTP {code}: {}",
                            self.url,
                            resp.into_string().unwrap_or_default()
                        ),
                        true,
                    ));
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err((
            format!(
                "{}: gave up after {} attempts: {last}",
                self.url, self.attempts
            ),
            false,
        ))
    }
}

/// A failed chat request.
#[derive(Debug, Clone)]
pub struct ChatError {
    /// What happened, with the URL.
    pub message: String,
    /// The server refused the request itself (HTTP 4xx other than 429): retrying or sending
    /// more requests like it cannot succeed.
    pub fatal: bool,
}

impl std::fmt::Display for ChatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ChatError {}

/// The assistant message text of a chat-completions answer.
pub fn message_text(answer: &Value) -> Option<&str> {
    answer.pointer("/choices/0/message/content")?.as_str()
}
