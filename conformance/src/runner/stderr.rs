//! The `stderr` step: what a connection's host has written to stderr so far (the runner keeps it
//! in the case's `logs/host-<conn>.err`), judged as a text and by counting the lines that hold
//! given data, at once or, with the step's `timeout_ms`, until it holds.

use std::time::{Duration, Instant};

use golden::pattern;
use golden::session::{LineCount, StderrCheck};

use super::content::Judge;
use super::{Case, StepError, StepResult};

impl Case<'_> {
    /// `stderr`: the check, once or until `timeout` passes.
    pub(super) fn stderr(
        &mut self,
        conn: &str,
        check: &StderrCheck,
        timeout: Option<Duration>,
    ) -> StepResult {
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        loop {
            let text = self.conn(conn)?.stderr_text().map_err(StepError::new)?;
            let mut trial = self.captures.clone();
            let judged = match &check.content {
                Some(content) => Judge {
                    what: "the host's stderr",
                    document: None,
                    now: self.window(),
                }
                .judge(Some(content), &text, &mut trial),
                None => Ok(()),
            }
            .and_then(|()| {
                check
                    .lines
                    .iter()
                    .try_for_each(|count| self.count_lines(count, &text))
            });
            match judged {
                Ok(()) => {
                    self.captures = trial;
                    return Ok(());
                }
                Err(_) if deadline.is_some_and(|d| Instant::now() < d) => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => return Err(err.on(conn)),
            }
        }
    }

    /// The lines of `text` that hold every text of `count.with` must be `count.count`.
    fn count_lines(&self, count: &LineCount, text: &str) -> StepResult {
        let with = count
            .with
            .iter()
            .map(|part| pattern::instantiate_text(part, &self.captures))
            .collect::<Result<Vec<_>, _>>()
            .map_err(StepError::new)?;
        let holding: Vec<&str> = text
            .lines()
            .filter(|line| with.iter().all(|part| line.contains(part.as_str())))
            .collect();
        if holding.len() as u64 == count.count {
            return Ok(());
        }
        let mut message = format!(
            "{} line(s) of the host's stderr hold {}, {} expected",
            holding.len(),
            with.iter()
                .map(|part| format!("{part:?}"))
                .collect::<Vec<_>>()
                .join(" and "),
            count.count
        );
        for line in holding.iter().take(10) {
            message.push_str(&format!("\n  {line}"));
        }
        Err(StepError::new(message))
    }
}
