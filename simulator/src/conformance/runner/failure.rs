//! A step error as a reader sees it: the golden file and line, the step, the message and diff,
//! the connection's last lines sent (`→`) and received (`←`), the tail of the host's stderr, and
//! the command that reruns the case.

use super::{Case, StepError};
use crate::conformance::outcome::{Failure, LOG_LINE_CAP};

impl Case<'_> {
    /// The failure of the step on golden line `line` (its text `step`).
    pub(super) fn failure(&self, line: usize, step: &str, error: StepError) -> Failure {
        let shown = self.ctx.shown(&self.session.path);
        let (transcript, stderr) = match error.conn.as_deref().and_then(|c| self.conns.get(c)) {
            Some(process) => {
                let lines = &process.transcript;
                let start = lines.len().saturating_sub(12);
                (
                    lines[start..]
                        .iter()
                        .map(|l| format!("{} {}", if l.sent { "→" } else { "←" }, l.text))
                        .collect(),
                    process.stderr_tail(10),
                )
            }
            None => (Vec::new(), String::new()),
        };
        let step = if step.chars().count() > 600 {
            format!(
                "{}… ({} bytes)",
                step.chars().take(600).collect::<String>(),
                step.len()
            )
        } else {
            step.to_owned()
        };
        Failure {
            location: format!("{shown}:{line}"),
            step,
            message: error.message,
            diff: error.diff,
            found: error.found.map(|found| *found),
            transcript,
            stderr,
            rerun: format!("{} --case {}", self.ctx.rerun, self.session.header.case),
        }
    }
}

impl Case<'_> {
    /// Every connection's lines, connection by connection in name order, each line cut at
    /// [`LOG_LINE_CAP`] characters: the wire log a report shows for the case.
    pub(super) fn log(&self) -> Vec<String> {
        let mut log = Vec::new();
        for (name, process) in &self.conns {
            for line in &process.transcript {
                let arrow = if line.sent { "→" } else { "←" };
                let text: String = line.text.chars().take(LOG_LINE_CAP).collect();
                let cut = if text.len() < line.text.len() {
                    format!("… ({} bytes)", line.text.len())
                } else {
                    String::new()
                };
                log.push(format!("{name} {arrow} {text}{cut}"));
            }
        }
        log
    }
}
