//! Progress of long work on stderr: a bar on a terminal; without one (CI, `nohup`, a pipe) a
//! plain log line every few seconds, so that a long run shows it is alive.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Seconds between log lines when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// A progress report: an indicatif bar on a terminal, periodic log lines otherwise.
pub struct Progress {
    bar: ProgressBar,
    log: Option<Mutex<PlainLog>>,
}

/// The state of the plain log: what is counted, and when the last line went out.
struct PlainLog {
    what: String,
    started: Instant,
    last: Instant,
    message: String,
}

/// A bar counting `total` items of `what`.
pub fn bar(total: usize, what: &str) -> Progress {
    Progress::new(
        total,
        what,
        &format!("{{spinner}} {what} {{bar:30}} {{pos}}/{{len}} ({{per_sec}}, eta {{eta}})"),
    )
}

/// The training bar: steps, loss and pairs/s (in the message), ETA.
pub fn train_bar(total_steps: usize) -> Progress {
    Progress::new(
        total_steps,
        "training: step",
        "{spinner} training {bar:30} step {pos}/{len} {msg} (eta {eta})",
    )
}

impl Progress {
    fn new(total: usize, what: &str, template: &str) -> Self {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
        let log = (!std::io::stderr().is_terminal()).then(|| {
            let now = Instant::now();
            Mutex::new(PlainLog {
                what: what.to_string(),
                started: now,
                last: now,
                message: String::new(),
            })
        });
        Progress { bar, log }
    }

    /// Sets the count done.
    pub fn set_position(&self, done: u64) {
        self.bar.set_position(done);
        self.maybe_log();
    }

    /// Adds to the count done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        self.maybe_log();
    }

    /// Sets the total.
    pub fn set_length(&self, total: u64) {
        self.bar.set_length(total);
    }

    /// Sets the text shown after the count (loss, rate).
    pub fn set_message(&self, message: String) {
        if let Some(log) = &self.log {
            log.lock().expect("progress log").message = message.clone();
        }
        self.bar.set_message(message);
    }

    /// Prints a line above the bar (or as a log line without a terminal).
    pub fn println(&self, line: String) {
        if self.log.is_some() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// Removes the bar (the log needs no clearing).
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }

    /// Without a terminal: one line when [`LOG_EVERY`] has passed since the last.
    fn maybe_log(&self) {
        let Some(log) = &self.log else { return };
        let total = self.bar.length().unwrap_or(0);
        let line =
            log.lock()
                .expect("progress log")
                .due_line(self.bar.position(), total, Instant::now());
        if let Some(line) = line {
            eprintln!("{line}");
        }
    }
}

impl PlainLog {
    /// The line to print at `now`, if [`LOG_EVERY`] has passed since the last one.
    fn due_line(&mut self, done: u64, total: u64, now: Instant) -> Option<String> {
        if now.duration_since(self.last) < LOG_EVERY {
            return None;
        }
        self.last = now;
        let secs = now.duration_since(self.started).as_secs_f64();
        Some(
            format!(
                "{}: {done}/{total} ({:.1}/s, {secs:.0} s) {}",
                self.what,
                done as f64 / secs.max(1e-9),
                self.message
            )
            .trim_end()
            .to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_a_line_goes_out_every_few_seconds() {
        let start = Instant::now();
        let mut log = PlainLog {
            what: "embedding".into(),
            started: start,
            last: start,
            message: String::new(),
        };
        assert_eq!(log.due_line(10, 100, start + Duration::from_secs(1)), None);
        let line = log
            .due_line(50, 100, start + Duration::from_secs(5))
            .unwrap();
        assert_eq!(line, "embedding: 50/100 (10.0/s, 5 s)");
        assert_eq!(log.due_line(60, 100, start + Duration::from_secs(7)), None);
        log.message = "loss 0.5".into();
        let line = log
            .due_line(100, 100, start + Duration::from_secs(10))
            .unwrap();
        assert_eq!(line, "embedding: 100/100 (10.0/s, 10 s) loss 0.5");
    }
}
