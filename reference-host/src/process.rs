//! The only module that starts a child process: tmux today, the notification command and local
//! `exec` actions next. Callers describe what to run as an [`Invocation`] and get its output back;
//! how a child is started, bounded in time, killed and reaped is decided here alone, so a change
//! of that policy (say, a process group per child, killed and reaped whole at the timeout) touches
//! no caller.
//!
//! Two ways to run a child: [`run`] waits for its output (tmux); [`start`] puts it in the
//! background in a process group of its own, its stdin fed, its output discarded (the
//! notification command, a detached action, the supervisor of either).
//!
//! Rule: clippy's `disallowed-methods` forbids `Command::new` everywhere else in the crate; the
//! `#[allow]`s are on [`run`] and [`start`].

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

/// How a background child is started (see [`start`]): what it gets beyond the invocation.
#[derive(Debug, Clone, Default)]
pub struct Spawn {
    /// Variables set in its environment.
    pub env: Vec<(OsString, OsString)>,
    /// Variables removed from the environment it inherits.
    pub env_remove: Vec<OsString>,
    /// Its working directory; this process's when `None`.
    pub dir: Option<std::path::PathBuf>,
    /// Bytes written to its stdin, which is then closed; `/dev/null` when `None`.
    pub stdin: Option<Vec<u8>>,
    /// Keep its stderr (the first [`STDERR_CAP`] bytes); discarded otherwise. Stdout is always
    /// discarded.
    pub capture_stderr: bool,
}

/// The most stderr a background child's [`Finished`] keeps.
pub const STDERR_CAP: usize = 64 * 1024;

/// A child running in the background, in a process group of its own.
#[derive(Debug)]
pub struct Background {
    child: std::process::Child,
    program: String,
    stdin: Option<std::thread::JoinHandle<()>>,
    stderr: Option<mpsc::Receiver<Vec<u8>>>,
}

/// How a background child ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: std::process::ExitStatus,
    /// Its stderr, when it was captured.
    pub stderr: Vec<u8>,
}

/// Starts `invocation` in the background and returns at once.
///
/// The child leads a process group of its own: a time-out kills the group, so whatever a
/// `sh -c` command started dies with it, and a Ctrl-C aimed at this process's terminal group
/// does not reach it. Stdin is written on a thread, so a child that never reads cannot hold the
/// caller.
#[allow(clippy::disallowed_methods)]
pub fn start(invocation: &Invocation, spawn: Spawn) -> Result<Background, ProcessError> {
    use std::os::unix::process::CommandExt;

    let mut command = Command::new(&invocation.program);
    command
        .args(&invocation.args)
        .envs(spawn.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spawn.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(if spawn.capture_stderr {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .process_group(0);
    for name in &spawn.env_remove {
        command.env_remove(name);
    }
    if let Some(dir) = &spawn.dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn().map_err(|error| ProcessError::Start {
        program: invocation.program(),
        error,
    })?;
    let stdin = match (child.stdin.take(), spawn.stdin) {
        (Some(mut pipe), Some(bytes)) => Some(std::thread::spawn(move || {
            use std::io::Write;
            // A child that exits without reading is its own business (EPIPE).
            let _ = pipe.write_all(&bytes);
        })),
        _ => None,
    };
    let stderr = child
        .stderr
        .take()
        .map(|pipe| drain_capped(pipe, STDERR_CAP));
    Ok(Background {
        child,
        program: invocation.program(),
        stdin,
        stderr,
    })
}

impl Background {
    /// Waits for the child to exit, at most `timeout`; past it, kills the child's whole process
    /// group and answers [`ProcessError::Timeout`].
    pub fn wait(mut self, timeout: Duration) -> Result<Finished, ProcessError> {
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(None) => {
                    let group = rustix::process::Pid::from_child(&self.child);
                    let _ =
                        rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(ProcessError::Timeout {
                        program: self.program,
                        after: timeout,
                    });
                }
                Err(error) => {
                    return Err(ProcessError::Start {
                        program: self.program,
                        error,
                    });
                }
            }
        };
        if let Some(writer) = self.stdin.take() {
            let _ = writer.join();
        }
        // The stderr pipe stays open while something the child started still holds it.
        let stderr = self
            .stderr
            .take()
            .and_then(|rx| rx.recv_timeout(Duration::from_millis(200)).ok())
            .unwrap_or_default();
        Ok(Finished { status, stderr })
    }

    /// Lets the child run on unwatched, once its stdin has been written: for a short-lived
    /// caller whose child supervises itself. The caller exits soon; init reaps the child.
    pub fn detach(mut self) {
        if let Some(writer) = self.stdin.take() {
            let _ = writer.join();
        }
    }
}

/// Reads a pipe to its end on a thread of its own, keeping the first `cap` bytes.
fn drain_capped(pipe: impl Read + Send + 'static, cap: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        let mut pipe = pipe;
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        let _ = tx.send(kept);
    });
    rx
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
    fn a_background_child_reads_its_stdin_and_its_environment() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let script = format!(
            "cat > {}; printf \"$CORRAL_X${{HOME-none}}\" >&2; exit 4",
            out.display()
        );
        let child = start(
            &sh(&script),
            Spawn {
                env: vec![("CORRAL_X".into(), "x".into())],
                env_remove: vec!["HOME".into()],
                stdin: Some(b"payload".to_vec()),
                capture_stderr: true,
                ..Spawn::default()
            },
        )
        .unwrap();
        let finished = child.wait(Duration::from_secs(10)).unwrap();
        assert_eq!(finished.status.code(), Some(4));
        assert_eq!(finished.stderr, b"xnone");
        assert_eq!(std::fs::read(&out).unwrap(), b"payload");
    }

    #[test]
    fn a_background_child_past_its_timeout_is_killed_with_its_group() {
        let tmp = tempfile::tempdir().unwrap();
        let marker = tmp.path().join("late");
        // The shell's own child would outlive a kill of the shell alone.
        let script = format!("(sleep 1; touch {}) & wait", marker.display());
        let err = start(&sh(&script), Spawn::default())
            .unwrap()
            .wait(Duration::from_millis(100))
            .unwrap_err();
        assert!(matches!(err, ProcessError::Timeout { .. }), "{err}");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "the group was killed");
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
