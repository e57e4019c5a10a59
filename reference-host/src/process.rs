//! The only module that starts a child process: tmux today, the notification command and local
//! `exec` actions next. Callers describe what to run as an [`Invocation`] and get its output back;
//! how a child is started, bounded in time, killed and reaped is decided here alone, so a change
//! of that policy (say, a process group per child, killed and reaped whole at the timeout) touches
//! no caller.
//!
//! Rule: clippy's `disallowed-methods` forbids `Command::new` everywhere else in the crate; the
//! one `#[allow]` is on [`run`].

use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A program and its arguments. It runs with stdin from `/dev/null` and both outputs captured.
#[derive(Debug, Clone)]
pub struct Invocation {
    program: OsString,
    args: Vec<OsString>,
}

impl Invocation {
    /// `program` (a path, or a name looked up on `PATH`) with no arguments yet.
    pub fn new(program: impl Into<OsString>) -> Invocation {
        Invocation {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Invocation {
        self.args.push(arg.into());
        self
    }

    /// More arguments, in order.
    pub fn args<A: Into<OsString>>(mut self, args: impl IntoIterator<Item = A>) -> Invocation {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }
}

/// Why a child did not run to completion. A non-zero exit is not one of these: what an exit
/// status means is the caller's business.
#[derive(Debug)]
pub enum ProcessError {
    /// The program could not be started, or waiting for it failed.
    Start {
        program: String,
        error: std::io::Error,
    },
    /// It had not finished when the timeout ran out, and was killed.
    Timeout { program: String, after: Duration },
}

impl std::fmt::Display for ProcessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessError::Start { program, error } => write!(f, "cannot start {program}: {error}"),
            ProcessError::Timeout { program, after } => {
                write!(f, "{program} did not answer within {after:?}")
            }
        }
    }
}

impl std::error::Error for ProcessError {}

/// Runs `invocation` and collects its exit status, stdout and stderr; kills it when its stdout
/// has not closed within `timeout`.
#[allow(clippy::disallowed_methods)]
pub fn run(invocation: &Invocation, timeout: Duration) -> Result<Output, ProcessError> {
    let start_error = |error| ProcessError::Start {
        program: invocation.program(),
        error,
    };
    let mut child = Command::new(&invocation.program)
        .args(&invocation.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(start_error)?;
    // Each pipe is drained on its own thread, so a child that fills one pipe while the other is
    // being read cannot stall, and the wait for stdout can be bounded.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let Ok(stdout) = stdout.recv_timeout(timeout) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ProcessError::Timeout {
            program: invocation.program(),
            after: timeout,
        });
    };
    let left = deadline.saturating_duration_since(Instant::now());
    let stderr = stderr
        .recv_timeout(left.max(Duration::from_millis(50)))
        .unwrap_or_default();
    let status = child.wait().map_err(start_error)?;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Reads a pipe to its end on a thread of its own; the bytes arrive on the channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Invocation {
        Invocation::new("sh").arg("-c").arg(script)
    }

    #[test]
    fn status_and_both_outputs_are_collected() {
        let output = run(
            &sh("printf out; printf err >&2; exit 3"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out");
        assert_eq!(output.stderr, b"err");
    }

    #[test]
    fn a_child_past_its_timeout_is_killed() {
        // Waited out, the sleep would have ended with status 0 and been an `Ok`.
        let err = run(&sh("exec sleep 30"), Duration::from_millis(100)).unwrap_err();
        assert!(
            matches!(err, ProcessError::Timeout { after, .. } if after == Duration::from_millis(100)),
            "{err}"
        );
    }

    #[test]
    fn a_program_that_does_not_exist_cannot_start() {
        let err = run(
            &Invocation::new("/nonexistent/program").args(["a", "b"]),
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(matches!(err, ProcessError::Start { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("cannot start /nonexistent/program: "),
            "{err}"
        );
    }
}
