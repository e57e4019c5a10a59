//! Playing a script: the app's lines come in on a reader thread, the host's frames go out whole
//! and flushed, and every app frame gets one verdict line as it is judged. Timing is not judged:
//! the app's frames are read in order when the script reaches the next `send`, so an app may send
//! ahead of the answers it waits for; only the order and the content of its frames count.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use golden::session::limits::EXPECT_MS;
use golden::validate::FrameSchema;
use schema::encode_line;
use serde::Serialize;
use serde_json::Value;
use stdx::lines::Line;

use super::judge::{self, judge};
use super::script::{Action, LINE_CAP, Receive, Script};

/// The longest line the replayer holds. The protocol caps a device's line at [`LINE_CAP`], and
/// the judge says by how much a line breaks it up to this size; a longer one is dropped as it is
/// read (and fails as too long), so an app that never ends its line cannot fill the replayer's
/// memory.
pub const READ_CAP: usize = 16 * LINE_CAP;

/// What the reader thread reports.
#[derive(Debug)]
enum Input {
    /// A whole line (1-based number, bytes without `\n`).
    Line(usize, Vec<u8>),
    /// A line longer than [`READ_CAP`] (1-based number); its bytes were dropped.
    TooLong(usize),
    /// Bytes after the last `\n` when the input ended.
    Fragment(usize, Vec<u8>),
    /// The input ended.
    End,
    /// Reading failed.
    Failed(String),
}

/// The app's lines, numbered, through `stdx`'s splitter capped at [`READ_CAP`].
fn read_lines(input: impl Read, to: mpsc::Sender<Input>) {
    let mut number = 0;
    stdx::lines::each_line(input, READ_CAP, |line| {
        let mut numbered = || {
            number += 1;
            number
        };
        let report = match line {
            Line::Text(text) => Input::Line(numbered(), text.into_bytes()),
            Line::NotUtf8(bytes) => Input::Line(numbered(), bytes),
            Line::TooLong => Input::TooLong(numbered()),
            Line::Unterminated(bytes) => Input::Fragment(numbered(), bytes),
            Line::End => Input::End,
            Line::Failed(err) => Input::Failed(err),
        };
        to.send(report).is_ok()
    });
}

/// One verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// `pass` or `fail`.
    pub verdict: &'static str,
    /// The app's line (1-based), when the verdict is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The golden line the verdict is about.
    pub golden_line: usize,
    /// What passed, or why it failed.
    pub message: String,
    /// For a failed frame: the frame the session expected, with the app's own values filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// For a failed frame: what the app sent (lossy UTF-8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
}

impl Verdict {
    /// The verdict as its stderr line.
    pub fn render(&self) -> String {
        let word = if self.verdict == "pass" {
            "PASS"
        } else {
            "FAIL"
        };
        let mut text = match self.line {
            Some(line) => format!("{word} line {line}: {}", self.message),
            None => format!("{word}: {}", self.message),
        };
        if let Some(expected) = &self.expected {
            text.push_str(&format!("; expected {expected}"));
        }
        text
    }
}

/// How a replay ended: the `--report` document.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The session file.
    pub session: String,
    /// Its case id.
    pub case: String,
    /// The connection played.
    pub conn: String,
    /// App frames that passed.
    pub passed: usize,
    /// Failures: app frames, and the script's own (an early end, a timeout).
    pub failed: usize,
    /// Whether the script ran to its end (or its `exit`).
    pub complete: bool,
    /// Every verdict, in order.
    pub verdicts: Vec<Verdict>,
}

impl Outcome {
    /// The final stderr line.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }

    /// Whether every app frame passed and the script completed.
    pub fn success(&self) -> bool {
        self.failed == 0 && self.complete
    }
}

/// The player's settings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Multiplies every wait and silence.
    pub scale: f64,
}

struct Player<'a, W: Write, V: Write> {
    script: &'a Script,
    requests: &'a FrameSchema,
    settings: Settings,
    input: Receiver<Input>,
    output: W,
    verdicts: V,
    /// The session's ids → the app's.
    ids: BTreeMap<String, String>,
    /// The number of the last line the app sent.
    last_line: usize,
    ended: bool,
    outcome: Outcome,
}

/// Why the script stopped before its end.
struct Abort;

/// Plays a script: reads the app's lines from `input`, writes frames to `output` and verdict
/// lines to `verdicts` (the summary last).
pub fn play(
    script: &Script,
    requests: &FrameSchema,
    settings: Settings,
    input: impl Read + Send + 'static,
    output: impl Write,
    verdicts: impl Write,
) -> Outcome {
    let (to, from) = mpsc::channel();
    std::thread::spawn(move || read_lines(input, to));
    let mut player = Player {
        script,
        requests,
        settings,
        input: from,
        output,
        verdicts,
        ids: BTreeMap::new(),
        last_line: 0,
        ended: false,
        outcome: Outcome {
            session: script.path.display().to_string(),
            case: script.case.clone(),
            conn: script.conn.clone(),
            passed: 0,
            failed: 0,
            complete: false,
            verdicts: Vec::new(),
        },
    };
    player.outcome.complete = player.run().is_ok();
    let summary = player.outcome.summary();
    let _ = writeln!(player.verdicts, "{summary}");
    let _ = player.verdicts.flush();
    player.outcome
}

impl<W: Write, V: Write> Player<'_, W, V> {
    fn scaled(&self, ms: u64) -> Duration {
        Duration::from_millis((ms as f64 * self.settings.scale).round() as u64)
    }

    fn record(&mut self, verdict: Verdict) {
        if verdict.verdict == "pass" {
            self.outcome.passed += 1;
        } else {
            self.outcome.failed += 1;
        }
        let _ = writeln!(self.verdicts, "{}", verdict.render());
        let _ = self.verdicts.flush();
        self.outcome.verdicts.push(verdict);
    }

    fn fail(&mut self, line: Option<usize>, golden_line: usize, message: String) {
        self.record(Verdict {
            verdict: "fail",
            line,
            golden_line,
            message,
            expected: None,
            received: None,
        });
    }

    /// The next input before `deadline`; `None` on timeout.
    fn next(&mut self, deadline: Instant) -> Option<Input> {
        if self.ended {
            return Some(Input::End);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        let input = match self.input.recv_timeout(wait) {
            Ok(input) => input,
            Err(RecvTimeoutError::Timeout) => return None,
            Err(RecvTimeoutError::Disconnected) => Input::End,
        };
        match &input {
            Input::Line(number, _) | Input::TooLong(number) | Input::Fragment(number, _) => {
                self.last_line = *number;
            }
            Input::End | Input::Failed(_) => {}
        }
        if !matches!(input, Input::Line(..) | Input::TooLong(_)) {
            self.ended = true;
        }
        Some(input)
    }

    fn after_line(&self) -> String {
        match self.last_line {
            0 => "before the app sent a line".to_owned(),
            n => format!("after line {n}"),
        }
    }

    fn run(&mut self) -> Result<(), Abort> {
        let script = self.script;
        let mut last_golden = 0;
        for action in &script.actions {
            match action {
                Action::Receive(receive) => {
                    last_golden = receive.line;
                    self.receive(receive)?;
                }
                Action::Write { line, frames } => {
                    last_golden = *line;
                    for frame in frames {
                        let mut frame = frame.clone();
                        if let Some(app_id) = self.ids.get(&frame.id) {
                            frame.id = app_id.clone();
                        }
                        let written = self
                            .output
                            .write_all(encode_line(&frame).as_bytes())
                            .and_then(|()| self.output.flush());
                        if let Err(err) = written {
                            self.fail(
                                None,
                                *line,
                                format!(
                                    "the app stopped reading ({err}) while golden line {line} \
                                     was written"
                                ),
                            );
                            return Err(Abort);
                        }
                    }
                }
                Action::Silence { line, ms } => {
                    last_golden = *line;
                    std::thread::sleep(self.scaled(*ms));
                }
                Action::Close { line, wait_ms } => {
                    last_golden = *line;
                    let reason = format!("golden line {line} expects the app to close its end");
                    if !self.drain(*line, *wait_ms, &reason) {
                        self.fail(
                            None,
                            *line,
                            format!(
                                "the app did not close its end within {} ms (golden line {line})",
                                self.scaled(*wait_ms).as_millis()
                            ),
                        );
                    }
                }
                Action::Exit { .. } => return Ok(()),
            }
        }
        let reason =
            format!("the script ended at golden line {last_golden}; nothing more was expected");
        self.drain(last_golden, EXPECT_MS, &reason);
        Ok(())
    }

    /// Waits for the end of input, failing every line that comes first; true when the input
    /// ended in time.
    fn drain(&mut self, golden_line: usize, wait_ms: u64, reason: &str) -> bool {
        let deadline = Instant::now() + self.scaled(wait_ms);
        loop {
            match self.next(deadline) {
                None => return false,
                Some(Input::End) => return true,
                Some(Input::Line(number, bytes) | Input::Fragment(number, bytes)) => {
                    self.record(Verdict {
                        verdict: "fail",
                        line: Some(number),
                        golden_line,
                        message: format!("unexpected frame: {reason}"),
                        expected: None,
                        received: Some(String::from_utf8_lossy(&bytes).into_owned()),
                    });
                }
                Some(Input::TooLong(number)) => {
                    self.record(Verdict {
                        verdict: "fail",
                        line: Some(number),
                        golden_line,
                        message: format!(
                            "unexpected frame (more than {READ_CAP} bytes, unread): {reason}"
                        ),
                        expected: None,
                        received: None,
                    });
                }
                Some(Input::Failed(err)) => {
                    self.fail(None, golden_line, format!("reading the app's lines: {err}"));
                    return true;
                }
            }
        }
    }

    fn receive(&mut self, receive: &Receive) -> Result<(), Abort> {
        let deadline = Instant::now() + self.scaled(receive.wait_ms);
        let pending = format!(
            "golden line {} (a `{}` frame) was pending",
            receive.line, receive.t
        );
        let (number, bytes, unterminated) = match self.next(deadline) {
            Some(Input::Line(number, bytes)) => (number, Some(bytes), false),
            Some(Input::TooLong(number)) => (number, None, false),
            Some(Input::Fragment(number, bytes)) => (number, Some(bytes), true),
            Some(Input::End) => {
                let message = format!("the app's input ended {}; {pending}", self.after_line());
                self.fail(None, receive.line, message);
                return Err(Abort);
            }
            Some(Input::Failed(err)) => {
                let message = format!("reading the app's lines: {err}; {pending}");
                self.fail(None, receive.line, message);
                return Err(Abort);
            }
            None => {
                let message = format!(
                    "no frame within {} ms {}; {pending}",
                    self.scaled(receive.wait_ms).as_millis(),
                    self.after_line()
                );
                self.fail(None, receive.line, message);
                return Err(Abort);
            }
        };
        let judged = match &bytes {
            Some(bytes) => judge(bytes, receive, self.requests),
            None => judge::too_long(receive, READ_CAP),
        };
        if let Some(app_id) = &judged.app_id {
            self.ids.insert(receive.session_id.clone(), app_id.clone());
        }
        let failure = match (judged.failure, unterminated) {
            (Some(failure), _) => Some(failure),
            (None, true) => Some("the line has no `\\n` (the input ended first)".to_owned()),
            (None, false) => None,
        };
        let verdict = match failure {
            None => Verdict {
                verdict: "pass",
                line: Some(number),
                golden_line: receive.line,
                message: format!("{} (golden line {})", receive.t, receive.line),
                expected: None,
                received: None,
            },
            Some(failure) => Verdict {
                verdict: "fail",
                line: Some(number),
                golden_line: receive.line,
                message: format!("{failure} (golden line {})", receive.line),
                expected: Some(judged.expected),
                received: bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
            },
        };
        self.record(verdict);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::replay::script;

    const SESSION: &str = concat!(
        r#"{"case":"x","suite":"wire","about":"a","requirements":["a.b"],"fixture":"small"}"#,
        "\n",
        r#"{"spawn":{"device":"d"}}"#,
        "\n",
        r#"{"send":{"schema":1,"id":"1","t":"snapshot"}}"#,
        "\n",
        r#"{"expect":{"schema":1,"id":"1","t":"snapshot","agents":[]}}"#,
        "\n"
    );

    fn run(input: &'static [u8], output: impl Write) -> (Outcome, String) {
        run_from(input, output)
    }

    fn run_from(input: impl Read + Send + 'static, output: impl Write) -> (Outcome, String) {
        let requests = FrameSchema::generated("requests.schema.json").unwrap();
        let responses = FrameSchema::generated("responses.schema.json").unwrap();
        let session = golden::session::parse(Path::new("x.ndjson"), SESSION).unwrap();
        let script = script::script(&session, "main", &requests, &responses).unwrap();
        let mut verdicts = Vec::new();
        let outcome = play(
            &script,
            &requests,
            Settings { scale: 1.0 },
            input,
            output,
            &mut verdicts,
        );
        (outcome, String::from_utf8(verdicts).unwrap())
    }

    #[test]
    fn the_answer_carries_the_apps_id() {
        let mut output = Vec::new();
        let (outcome, verdicts) = run(
            b"{\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\"}\n",
            &mut output,
        );
        assert!(outcome.success(), "{verdicts}");
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "{\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\",\"agents\":[]}\n"
        );
        assert_eq!(
            verdicts,
            "PASS line 1: snapshot (golden line 3)\n1 passed, 0 failed\n"
        );
    }

    #[test]
    fn a_last_line_without_its_newline_fails_but_is_answered() {
        let mut output = Vec::new();
        let (outcome, verdicts) = run(
            b"{\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\"}",
            &mut output,
        );
        assert_eq!(
            verdicts,
            "FAIL line 1: the line has no `\\n` (the input ended first) (golden line 3); expected \
             {\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\"}\n0 passed, 1 failed\n"
        );
        assert!(outcome.complete);
        assert!(!outcome.success());
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "{\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\",\"agents\":[]}\n"
        );
    }

    #[test]
    fn a_line_past_what_the_replayer_reads_fails_unread_and_the_next_is_judged() {
        let mut input = vec![b'x'; READ_CAP + 1];
        input.extend_from_slice(b"\n{\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\"}\n");
        let (outcome, verdicts) = run_from(std::io::Cursor::new(input), Vec::new());
        assert_eq!(
            verdicts,
            "FAIL line 1: the line has more than 1048576 bytes, over the 65536-byte cap a host \
             enforces (golden line 3); expected {\"schema\":1,\"id\":\"$string\",\"t\":\"snapshot\"}\n\
             FAIL line 2: unexpected frame: the script ended at golden line 4; nothing more was \
             expected\n0 passed, 2 failed\n"
        );
        assert!(outcome.complete);
        assert_eq!(outcome.verdicts[0].received, None);
    }

    /// A writer whose reader is gone.
    struct Gone;

    impl Write for Gone {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_app_that_stops_reading_ends_the_replay() {
        let (outcome, verdicts) = run(b"{\"schema\":1,\"id\":\"mine\",\"t\":\"snapshot\"}\n", Gone);
        assert!(!outcome.complete);
        assert!(
            verdicts.contains(
                "FAIL: the app stopped reading (broken pipe) while golden line 4 was written\n"
            ),
            "{verdicts}"
        );
        assert_eq!(outcome.verdicts.len(), 2);
    }
}
