//! The `repeat` step: one `send` and its `expect` for each value of a counter, pipelined. Up to
//! [`AHEAD`] requests (at most [`AHEAD_BYTES`] of them) are written before their answers are read,
//! in order, so a run of thousands costs the host's own time and little more: the writes stay
//! within what a pipe holds, and answers are matched as they come.

use std::collections::{BTreeSet, VecDeque};
use std::time::Instant;

use golden::pattern::{self, Captures};
use golden::session::limits::EXPECT_MS;
use golden::session::{Located, Repeat};
use serde_json::Value;

use super::diff::{diff, frame_diff, pretty};
use super::{Case, StepError, StepResult};
use crate::outcome::Found;

/// Requests written ahead of the answers read.
const AHEAD: usize = 64;
/// Bytes of requests written ahead: well within a pipe's 64 KiB, so a write never waits long.
const AHEAD_BYTES: usize = 32 * 1024;

impl Case<'_> {
    /// `repeat`: every iteration's frame sent, and with an `expect`, every answer matched in
    /// order within the step's limit of the one before.
    pub(super) fn repeat(&mut self, conn: &str, repeat: &Repeat, located: &Located) -> StepResult {
        let limit = self.timeout(&located.step, EXPECT_MS);
        let last = repeat.from + (repeat.times - 1);
        let mut next = repeat.from;
        // Counters sent and not answered yet, with their frames' sizes.
        let mut waiting: VecDeque<(u64, usize)> = VecDeque::new();
        let mut ahead_bytes = 0;
        let mut notes = BTreeSet::new();
        loop {
            if waiting.len() <= AHEAD / 2 {
                let mut batch = Vec::new();
                while next <= last
                    && (repeat.expect.is_none()
                        || (waiting.len() < AHEAD && ahead_bytes < AHEAD_BYTES))
                {
                    let line = self.iteration_line(repeat, next)?;
                    if repeat.expect.is_some() {
                        waiting.push_back((next, line.len()));
                        ahead_bytes += line.len();
                    }
                    batch.push(line);
                    next += 1;
                    if batch.len() == AHEAD {
                        break;
                    }
                }
                if !batch.is_empty() {
                    self.conn(conn)?
                        .send_lines(&batch)
                        .map_err(StepError::new)?;
                }
            }
            let (Some(expect), Some((n, size))) = (&repeat.expect, waiting.pop_front()) else {
                if next > last {
                    break;
                }
                continue;
            };
            ahead_bytes -= size;
            self.iteration_answer(conn, repeat, expect, n, Instant::now() + limit, &mut notes)?;
        }
        let shown = self.ctx.shown(&self.session.path);
        for note in notes {
            self.notes.push(format!("{shown}:{}: {note}", located.line));
        }
        Ok(())
    }

    /// The captures of one iteration: the case's, and the counter.
    fn iteration_captures(&self, repeat: &Repeat, n: u64) -> Captures {
        let mut captures = self.captures.clone();
        captures.insert(repeat.counter.clone(), Value::from(n));
        captures
    }

    /// The line one iteration sends: its frame with every `${name}` replaced (the counter too),
    /// checked against the request schema, and its `\n`.
    fn iteration_line(&self, repeat: &Repeat, n: u64) -> Result<Vec<u8>, StepError> {
        let at = |message: String| StepError::new(format!("{} = {n}: {message}", repeat.counter));
        let captures = self.iteration_captures(repeat, n);
        let frame =
            pattern::instantiate(&repeat.send, &captures).map_err(|err| at(err.to_string()))?;
        self.ctx
            .requests
            .validate(&frame)
            .map_err(|err| at(format!("the golden frame we send {err}")))?;
        let mut line = serde_json::to_vec(&frame).expect("values encode");
        line.push(b'\n');
        Ok(line)
    }

    /// One iteration's answer: the next frame, matched against the pattern with the iteration's
    /// captures, which are dropped after it.
    fn iteration_answer(
        &mut self,
        conn: &str,
        repeat: &Repeat,
        expect: &Value,
        n: u64,
        deadline: Instant,
        notes: &mut BTreeSet<String>,
    ) -> StepResult {
        let at = |message: String| {
            format!(
                "{} = {n} (iteration {} of {}): {message}",
                repeat.counter,
                n - repeat.from + 1,
                repeat.times
            )
        };
        let Some(received) = self.receive(conn, deadline)? else {
            return Err(StepError::new(at("no frame arrived in time".into()))
                .found(Found::Missing)
                .on(conn));
        };
        let mut captures = self.iteration_captures(repeat, n);
        let now = self.window();
        let Some(frame) = &received.frame else {
            let expected = pattern::render_expected(expect, None, &captures, now);
            return Err(StepError {
                message: at(received.problems.join("\n")),
                diff: Some(diff(&pretty(&expected), &format!("{}\n", received.text))),
                conn: None,
                found: None,
            });
        };
        if let Err(mismatch) =
            pattern::matches_tolerating(expect, frame, &mut captures, now, &received.unknown_keys)
        {
            return Err(StepError::mismatch(
                at(format!("the frame does not match: {mismatch}")),
                frame_diff(expect, frame, &captures, now),
                &mismatch,
                &received.text,
            ));
        }
        notes.extend(received.notes.iter().cloned());
        received
            .fail_on_problems()
            .map_err(|err| StepError::new(at(err.message)))
    }
}
