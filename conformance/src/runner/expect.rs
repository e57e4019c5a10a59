//! What the host sends, judged: the next frame against an `expect` pattern, the next frames
//! against `expect_unordered` patterns as a whole assignment, nothing (silence, handled by the
//! caller with [`Case::receive`]), and the end of its stdout with an exit code. With `--bless`, a
//! failing expectation is rewritten from what was received instead.

use std::time::{Duration, Instant};

use golden::pattern;
use golden::session::limits::{EXIT_MS, EXPECT_MS};
use golden::session::{Located, Step, StepLine, canonical};
use serde_json::Value;

use super::diff::{diff, frame_diff, pretty};
use super::received::{Received, check, in_pattern_order};
use super::{Case, StepError, StepResult};
use crate::assign;
use crate::host::{self, Read};
use crate::outcome::Found;

impl Case<'_> {
    /// Receives the next line and checks it; `None` when the deadline passes first. A line that
    /// breaks a kit-level rule (JSON, schema, canonical form, canaries) is still returned, with
    /// its problems, so the caller can show it beside the frame it expected.
    pub(super) fn receive(
        &mut self,
        conn: &str,
        deadline: Instant,
    ) -> Result<Option<Received>, StepError> {
        let ctx = self.ctx;
        let canaries = self.canaries.clone();
        let process = self.conn(conn)?;
        let bytes = match process.next(deadline) {
            Read::Timeout => return Ok(None),
            Read::Line(bytes) => bytes,
            Read::Fragment(bytes) => {
                return Err(StepError::new(format!(
                    "the host ended stdout in the middle of a line: {}",
                    host::show(&bytes)
                )));
            }
            Read::TooLong => {
                return Err(StepError::new(format!(
                    "the host wrote a line longer than the {} bytes the kit reads",
                    host::HOST_LINE_CAP
                ))
                .on(conn));
            }
            Read::Eof => {
                let status = process.wait(Instant::now() + Duration::from_millis(500));
                let how = match status {
                    Some(status) => host::ended(status),
                    None => "closed its stdout and still runs".to_owned(),
                };
                return Err(
                    StepError::new(format!("the host {how} instead of sending a frame")).on(conn),
                );
            }
        };
        Ok(Some(check(
            bytes,
            &ctx.responses,
            &canaries,
            &ctx.profile.version_key,
        )))
    }

    /// `expect` (and a barrier's answer): the next frame matches the pattern, binding its
    /// captures; with `--bless`, a mismatch rewrites the line instead of failing.
    pub(super) fn expect(&mut self, conn: &str, pattern: &Value, located: &Located) -> StepResult {
        let deadline = Instant::now() + self.timeout(&located.step, EXPECT_MS);
        let Some(received) = self.receive(conn, deadline)? else {
            let waited = self.timeout(&located.step, EXPECT_MS).as_millis();
            // A host that died while something it started still holds its stdout: say how it
            // ended, not only that nothing came (its stderr's tail follows in the failure).
            let ended = self.conn(conn)?.wait(Instant::now());
            return Err(StepError::new(match ended {
                Some(status) => format!(
                    "no frame arrived within {waited} ms: the host {} (a process it started \
                     still holds its stdout)",
                    host::ended(status)
                ),
                None => format!("no frame arrived within {waited} ms"),
            })
            .found(Found::Missing)
            .on(conn));
        };
        let now = self.frame_window(located);
        let Some(frame) = &received.frame else {
            let expected = pattern::render_expected(pattern, None, &self.captures, now);
            return Err(StepError {
                message: received.problems.join("\n"),
                diff: Some(diff(&pretty(&expected), &format!("{}\n", received.text))),
                conn: None,
                found: None,
            });
        };
        let mut notes = received.notes.clone();
        let frame = &in_pattern_order(frame, pattern, &mut notes);
        let mut trial = self.captures.clone();
        match pattern::matches_tolerating(pattern, frame, &mut trial, now, &received.unknown_keys) {
            Ok(()) => {
                self.captures = trial;
                self.note(located, &notes);
                received.fail_on_problems()
            }
            Err(_) if self.ctx.bless && matches!(located.step.step, Step::Expect(_)) => {
                let blessed = pattern::bless(pattern, frame);
                let _ = pattern::matches(&blessed, frame, &mut self.captures, now);
                self.record_bless(located, Step::Expect(blessed));
                received.fail_on_problems()
            }
            Err(mismatch) => {
                let mut message = format!("the frame does not match: {mismatch}");
                for problem in &received.problems {
                    message.push_str(&format!("\nalso: {problem}"));
                }
                Err(StepError::mismatch(
                    message,
                    frame_diff(pattern, frame, &self.captures, now),
                    &mismatch,
                    &received.text,
                ))
            }
        }
    }

    /// Keeps a received frame's strict-grade notes, with the golden line it answered.
    fn note(&mut self, located: &Located, notes: &[String]) {
        let shown = self.ctx.shown(&self.session.path);
        for note in notes {
            self.notes.push(format!("{shown}:{}: {note}", located.line));
        }
    }

    /// Keeps a step's rewritten line for `--bless`.
    fn record_bless(&mut self, located: &Located, step: Step) {
        let line = StepLine {
            step,
            ..located.step.clone()
        };
        self.blessed.push((located.line, canonical(&line)));
    }

    /// `expect_unordered`: the next frames match the patterns under one assignment of frames
    /// to patterns, captures included.
    pub(super) fn expect_unordered(
        &mut self,
        conn: &str,
        patterns: &[Value],
        located: &Located,
    ) -> StepResult {
        let deadline = Instant::now() + self.timeout(&located.step, EXPECT_MS);
        let mut received = Vec::new();
        while received.len() < patterns.len() {
            match self.receive(conn, deadline)? {
                Some(line) if line.frame.is_none() => return line.fail_on_problems(),
                Some(line) => received.push(line),
                None => {
                    return Err(StepError::new(format!(
                        "{} of {} frames arrived within {} ms: {}",
                        received.len(),
                        patterns.len(),
                        self.timeout(&located.step, EXPECT_MS).as_millis(),
                        received
                            .iter()
                            .map(|r| r.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ))
                    .found(Found::Missing));
                }
            }
        }
        let now = self.frame_window(located);
        let frames: Vec<Value> = received.iter().filter_map(|r| r.frame.clone()).collect();
        let tolerated: Vec<Vec<String>> = received.iter().map(|r| r.unknown_keys.clone()).collect();
        let mut trial = self.captures.clone();
        match assign::assign(patterns, &frames, &tolerated, &mut trial, now) {
            Ok(_) => {
                self.captures = trial;
                for line in &received {
                    self.note(located, &line.notes);
                }
            }
            Err(none) if self.ctx.bless => {
                let blessed: Vec<Value> = patterns
                    .iter()
                    .zip(&none.pairing)
                    .map(|(pattern, frame)| match frames.get(*frame) {
                        Some(frame) => pattern::bless(pattern, frame),
                        None => pattern.clone(),
                    })
                    .collect();
                let _ = assign::assign(&blessed, &frames, &tolerated, &mut self.captures, now);
                self.record_bless(located, Step::ExpectUnordered(blessed));
            }
            Err(none) => {
                let shown_at = none.pairing[none.pattern];
                let shown = frames.get(shown_at).cloned().unwrap_or(Value::Null);
                let mut message = format!(
                    "no assignment of the {} received frames to the patterns exists; pattern {} \
                     (shown beside its most similar frame) fails {}",
                    frames.len(),
                    none.pattern + 1,
                    none.mismatch
                );
                for problem in received.iter().flat_map(|r| &r.problems) {
                    message.push_str(&format!("\nalso: {problem}"));
                }
                let received = received.get(shown_at).map_or("", |r| r.text.as_str());
                return Err(StepError::mismatch(
                    message,
                    frame_diff(&patterns[none.pattern], &shown, &self.captures, now),
                    &none.mismatch,
                    received,
                ));
            }
        }
        for line in received {
            line.fail_on_problems()?;
        }
        Ok(())
    }

    /// Drains the connection to end of file (every frame left is unexpected) and checks the
    /// exit code.
    pub(super) fn exit(&mut self, conn: &str, code: i32, deadline: Instant) -> StepResult {
        let process = self.conn(conn)?;
        if process.paused() {
            // The session stopped reading: the host must end all the same, and what it wrote
            // meanwhile stays unread (dropped with the runner's end of its stdout).
            if process.wait(deadline).is_none() {
                return Err(StepError::new(format!(
                    "expected the host to exit with {code} while its stdout was not read; it is \
                     still running"
                )));
            }
            process.close_stdout().map_err(StepError::new)?;
        }
        match process.next(deadline) {
            Read::Eof => {}
            Read::Timeout => {
                return Err(StepError::new(format!(
                    "expected the host to exit with {code}; it is still running"
                )));
            }
            Read::Line(bytes) | Read::Fragment(bytes) => {
                return Err(StepError::new(format!(
                    "expected the host to exit with {code}, but it sent another line: {}",
                    host::show(&bytes)
                ))
                .found(Found::Unexpected {
                    received: String::from_utf8_lossy(&bytes).into_owned(),
                }));
            }
            Read::TooLong => {
                return Err(StepError::new(format!(
                    "expected the host to exit with {code}, but it sent another line, longer \
                     than the {} bytes the kit reads",
                    host::HOST_LINE_CAP
                )));
            }
        }
        match process.wait(deadline) {
            None => Err(StepError::new(format!(
                "expected the host to exit with {code}; it closed stdout but is still running"
            ))),
            Some(status) => match status.code() {
                Some(got) if got == code => Ok(()),
                Some(got) => Err(StepError::new(format!(
                    "expected exit code {code}, the host exited with {got}"
                ))
                .found(Found::ExitCode {
                    expected: code,
                    got: Some(got),
                })),
                None => Err(StepError::new(format!(
                    "expected exit code {code}, the host was killed by a signal ({status})"
                ))
                .found(Found::ExitCode {
                    expected: code,
                    got: None,
                })),
            },
        }
    }

    /// Closes every connection no `exit` step ended and expects each to exit 0 without another
    /// frame.
    pub(super) fn finish(&mut self) -> StepResult {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let process = self.conns.get_mut(&name).expect("listed");
            if process.finished() {
                continue;
            }
            process.close();
            let deadline = Instant::now() + self.ctx.scaled(EXIT_MS);
            self.exit(&name, 0, deadline).map_err(|err| err.on(&name))?;
        }
        Ok(())
    }
}
