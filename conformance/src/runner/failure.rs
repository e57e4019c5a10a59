//! A step error as a reader sees it: the golden file and line, the step, the message and diff,
//! the connection's last lines sent (`→`) and received (`←`), the tail of the host's stderr, and
//! the command that reruns the case.

use golden::session::{Session, Step};

use super::{Case, StepError};
use crate::outcome::{Failure, LOG_LINE_CAP};

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
        let checking = checking(self.session, line);
        Failure {
            location: format!("{shown}:{line}"),
            checking,
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

/// What the step on golden line `line` checks, in the session's words: the comment heading the
/// part of the session it is in (the nearest `comment` step before it).
fn checking(session: &Session, line: usize) -> Option<String> {
    session
        .steps
        .iter()
        .take_while(|located| located.line < line)
        .filter_map(|located| match &located.step.step {
            Step::Comment(text) => Some(text.clone()),
            _ => None,
        })
        .last()
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn a_step_checks_what_the_comment_heading_its_part_says() {
        let text = concat!(
            r#"{"case":"x","suite":"wire","about":"a","requirements":["a.b"],"fixture":"small"}"#,
            "\n",
            r#"{"spawn":{"device":"d"}}"#,
            "\n",
            r#"{"comment":"The cards first."}"#,
            "\n",
            r#"{"barrier":"1"}"#,
            "\n",
            r#"{"comment":"Then the window."}"#,
            "\n",
            r#"{"barrier":"2"}"#,
            "\n",
        );
        let session = golden::session::parse(Path::new("x.ndjson"), text).unwrap();
        assert_eq!(checking(&session, 2), None);
        assert_eq!(checking(&session, 4).as_deref(), Some("The cards first."));
        assert_eq!(checking(&session, 6).as_deref(), Some("Then the window."));
    }
}
