//! The only module that starts a child process: tmux today, the notification command and local
//! `exec` actions next. Callers describe what to run as an [`Invocation`] and get its output back;
//! how a child is started, bounded in time, killed and reaped is decided here alone.
//!
//! The policy: each child runs in a process group of its own. Its pipes are read here, polled
//! against one deadline, so no thread ever blocks on a pipe. When the deadline passes (the child
//! has not exited, or something it started still holds its output), the whole group is killed,
//! the child reaped and our ends of the pipes closed: nothing it started is left behind, whatever
//! a wrapper script forked. Only a process that leaves the group on purpose (`setsid`, as a tmux
//! server does when it daemonizes) outlives it.
//!
//! Two ways to run a child: [`run`] waits for its output (tmux); [`start`] puts it in the
//! background in a process group of its own, its stdin fed, its output discarded (the
//! notification command, a detached action, the supervisor of either).
//!
//! This is the host's own runner, not the workspace's `stdx::process` (which every other crate
//! spawns through): a serve loop must never block on a pipe a grandchild holds open, so [`run`]
//! reads the pipes and waits for the exit on one poll (pipes and a pidfd) against one deadline,
//! where `stdx` waits by sleeping on `try_wait` and leaves the pipes to its caller.
//!
//! Rule: clippy's `disallowed-methods` forbids `Command::new` everywhere else in the crate; the
//! `#[allow]`s are on [`run`] and [`start`].

use std::ffi::OsString;
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags, Signal, kill_process_group};

/// The most a child may write on each of its outputs; past it the child is killed. A tmux read of
/// a large fleet is a few MiB.
const OUTPUT_CAP: usize = 64 * 1024 * 1024;

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

    /// The program, then its arguments: the command line as it will run.
    pub fn argv(&self) -> Vec<OsString> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// Why a child did not run to completion. A non-zero exit is not one of these: what an exit
/// status means is the caller's business.
#[derive(Debug)]
pub enum ProcessError {
    /// The program could not be started, or reading from or waiting for it failed.
    Start {
        program: String,
        error: std::io::Error,
    },
    /// It had not finished when the timeout ran out, and was killed with its process group.
    Timeout { program: String, after: Duration },
    /// It wrote more than [`OUTPUT_CAP`] bytes on one output, and was killed with its group.
    TooMuchOutput { program: String },
}

impl std::fmt::Display for ProcessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessError::Start { program, error } => write!(f, "cannot start {program}: {error}"),
            ProcessError::Timeout { program, after } => {
                write!(f, "{program} did not answer within {after:?}")
            }
            ProcessError::TooMuchOutput { program } => {
                write!(f, "{program} wrote more than {OUTPUT_CAP} bytes")
            }
        }
    }
}

impl std::error::Error for ProcessError {}

/// Runs `invocation` and collects its exit status, stdout and stderr. Unless it has exited and
/// closed both outputs within `timeout`, its process group is killed and it is a
/// [`ProcessError::Timeout`].
#[allow(clippy::disallowed_methods)]
pub fn run(invocation: &Invocation, timeout: Duration) -> Result<Output, ProcessError> {
    let deadline = Instant::now() + timeout;
    let start_error = |error| ProcessError::Start {
        program: invocation.program(),
        error,
    };
    let mut child = Command::new(&invocation.program)
        .args(&invocation.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(start_error)?;
    let ended = collect(&mut child, deadline);
    if !matches!(ended, Ok(Ended::Exited(..))) {
        // The group's id is the child's pid. Killing the child itself too covers a child that
        // left the group; either may already be gone.
        let group = Pid::from_child(&child);
        let _ = kill_process_group(group, Signal::KILL);
        let _ = child.kill();
        // The pipes were dropped with `collect`; after SIGKILL the wait is immediate.
        let _ = child.wait();
    }
    match ended {
        Ok(Ended::Exited(status, stdout, stderr)) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        Ok(Ended::Late) => Err(ProcessError::Timeout {
            program: invocation.program(),
            after: timeout,
        }),
        Ok(Ended::TooMuchOutput) => Err(ProcessError::TooMuchOutput {
            program: invocation.program(),
        }),
        Err(error) => Err(start_error(error)),
    }
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
    child: Child,
    program: String,
    stdin: Option<std::thread::JoinHandle<()>>,
    stderr: Option<mpsc::Receiver<Vec<u8>>>,
}

/// How a background child ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
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
        (Some(mut pipe), Some(bytes)) => Some(crate::threads::spawn(move || {
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
                    let group = Pid::from_child(&self.child);
                    let _ = kill_process_group(group, Signal::KILL);
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
    crate::threads::spawn(move || {
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

/// How a child's run ended, as far as [`collect`] saw it.
enum Ended {
    /// It exited and closed both outputs: status, stdout, stderr.
    Exited(ExitStatus, Vec<u8>, Vec<u8>),
    /// The deadline passed first.
    Late,
    /// One output passed [`OUTPUT_CAP`].
    TooMuchOutput,
}

/// Reads both of the child's outputs to their end, then waits for it to exit, all before
/// `deadline`. The pipes are taken from `child` and closed on return, whatever happened.
fn collect(child: &mut Child, deadline: Instant) -> std::io::Result<Ended> {
    let mut pipes = [
        Pipe::new(child.stdout.take().map(Source::Out))?,
        Pipe::new(child.stderr.take().map(Source::Err))?,
    ];
    while pipes.iter().any(Pipe::open) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Ended::Late);
        }
        let ready = wait_readable(&pipes, left)?;
        for (pipe, ready) in pipes.iter_mut().zip(ready) {
            if ready {
                pipe.read_available()?;
            }
        }
        if pipes.iter().any(|pipe| pipe.bytes.len() > OUTPUT_CAP) {
            return Ok(Ended::TooMuchOutput);
        }
    }
    // Both outputs are closed; the exit follows at once, unless the child closed them early.
    // Usually the child is still on its way out when its pipes close (they close as it exits,
    // before it can be reaped): its pidfd says the moment it can be, where a sleep would add its
    // whole length to every call.
    let [out, err] = pipes.map(|pipe| pipe.bytes);
    match wait_exit(child, deadline)? {
        Some(status) => Ok(Ended::Exited(status, out, err)),
        None => Ok(Ended::Late),
    }
}

/// Reaps `child` once it has exited, waiting at most until `deadline`; `None` when it has not
/// exited by then. The wait is a poll of the child's pidfd (Linux 5.3); where there is none, a
/// sleep that doubles from 1 ms.
fn wait_exit(child: &mut Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    if let Some(status) = child.try_wait()? {
        return Ok(Some(status));
    }
    // The child is not reaped yet, so its pid still names it.
    let pidfd = rustix::process::pidfd_open(Pid::from_child(child), PidfdFlags::empty()).ok();
    let mut pause = Duration::from_millis(1);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        match &pidfd {
            Some(pidfd) => {
                let mut fds = [PollFd::from_borrowed_fd(pidfd.as_fd(), PollFlags::IN)];
                match poll(&mut fds, Some(&timespec(left))) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(errno) => return Err(errno.into()),
                }
            }
            None => {
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(Duration::from_millis(20));
            }
        }
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
    }
}

/// `wait` as a poll time-out (saturated at `i32::MAX` seconds).
fn timespec(wait: Duration) -> Timespec {
    Timespec::try_from(wait).unwrap_or(Timespec {
        tv_sec: i64::from(i32::MAX),
        tv_nsec: 0,
    })
}

/// Polls the open pipes for up to `wait`; which of them have something to read (data, or their
/// end).
fn wait_readable(pipes: &[Pipe; 2], wait: Duration) -> std::io::Result<[bool; 2]> {
    let open: Vec<usize> = (0..pipes.len()).filter(|&i| pipes[i].open()).collect();
    let mut fds: Vec<PollFd<'_>> = open
        .iter()
        .filter_map(|&i| pipes[i].source.as_ref())
        .map(|source| PollFd::from_borrowed_fd(source.as_fd(), PollFlags::IN))
        .collect();
    match poll(&mut fds, Some(&timespec(wait))) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok([false; 2]),
        Err(errno) => return Err(errno.into()),
    }
    let mut ready = [false; 2];
    for (&i, fd) in open.iter().zip(&fds) {
        ready[i] = !fd.revents().is_empty();
    }
    Ok(ready)
}

/// One of the child's outputs.
enum Source {
    Out(std::process::ChildStdout),
    Err(std::process::ChildStderr),
}

impl Source {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Source::Out(pipe) => pipe.as_fd(),
            Source::Err(pipe) => pipe.as_fd(),
        }
    }
}

impl Read for &mut Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Out(pipe) => pipe.read(buf),
            Source::Err(pipe) => pipe.read(buf),
        }
    }
}

/// Our end of one output pipe, non-blocking, and what came through it; `None` once closed.
struct Pipe {
    source: Option<Source>,
    bytes: Vec<u8>,
}

impl Pipe {
    fn new(source: Option<Source>) -> std::io::Result<Pipe> {
        if let Some(source) = &source {
            rustix::io::ioctl_fionbio(source.as_fd(), true)?;
        }
        Ok(Pipe {
            source,
            bytes: Vec::new(),
        })
    }

    fn open(&self) -> bool {
        self.source.is_some()
    }

    /// Reads what the pipe holds now, straight into `bytes` (no scratch buffer: a call that
    /// reads a few bytes touches no more memory than they need), at most one byte past
    /// [`OUTPUT_CAP`]; at its end, closes it.
    fn read_available(&mut self) -> std::io::Result<()> {
        let Some(source) = self.source.as_mut() else {
            return Ok(());
        };
        let room = (OUTPUT_CAP + 1).saturating_sub(self.bytes.len()) as u64;
        match source.take(room).read_to_end(&mut self.bytes) {
            // Past the cap: the caller stops here.
            Ok(_) if self.bytes.len() > OUTPUT_CAP => Ok(()),
            Ok(_) => {
                self.source = None;
                Ok(())
            }
            Err(err) if err.kind() == ErrorKind::WouldBlock => Ok(()),
            Err(err) => Err(err),
        }
    }
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

    /// More than a pipe holds on both outputs at once: neither stalls the other.
    #[test]
    fn large_outputs_on_both_pipes_are_collected_whole() {
        let output = run(
            &sh("head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2; printf end"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(output.stdout.len(), 300_003);
        assert!(output.stdout.ends_with(b"end"));
        assert_eq!(output.stderr.len(), 200_000);
    }

    #[test]
    fn a_child_writing_without_end_is_killed_at_the_output_cap() {
        let err = run(&sh("exec cat /dev/zero"), Duration::from_secs(30)).unwrap_err();
        assert!(matches!(err, ProcessError::TooMuchOutput { .. }), "{err}");
    }

    /// A child that closes its outputs but does not exit is still bounded by the timeout.
    #[test]
    fn a_child_that_closes_its_outputs_but_lingers_is_killed_at_the_timeout() {
        let err = run(
            &sh("exec >&- 2>&-; exec sleep 300"),
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(matches!(err, ProcessError::Timeout { .. }), "{err}");
    }

    /// Closing its outputs is not the end of a child: one that goes on for a while afterwards is
    /// waited for, and its own exit status kept.
    #[test]
    fn a_child_that_closes_its_outputs_then_exits_is_waited_for() {
        let output = run(
            &sh("printf out; exec >&- 2>&-; sleep 0.3; exit 7"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(output.status.code(), Some(7));
        assert_eq!(output.stdout, b"out");
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

    /// Whether process `pid` has ended (gone, or a zombie waiting for whoever inherited it),
    /// waiting up to 5 s for it to.
    fn gone(pid: &str) -> bool {
        let stat = std::path::Path::new("/proc").join(pid).join("stat");
        let ended = || match std::fs::read_to_string(&stat) {
            // The state follows the command name, which is in parentheses.
            Ok(text) => text
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z')),
            Err(_) => true,
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !ended() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        ended()
    }

    /// A wrapper whose grandchild keeps both pipes open: killing the child alone would leave the
    /// grandchild running, and a reader blocked on the pipe until the grandchild ends.
    #[test]
    fn at_the_timeout_the_whole_process_group_is_killed_and_nothing_waits_on_its_pipes() {
        let tmp = tempfile::tempdir().unwrap();
        let pid_file = tmp.path().join("grandchild");
        let script = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
        let started = Instant::now();
        let err = run(&sh(&script), Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err, ProcessError::Timeout { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the timeout held: {:?}",
            started.elapsed()
        );
        let grandchild = std::fs::read_to_string(&pid_file).unwrap();
        assert!(
            gone(grandchild.trim()),
            "the grandchild {grandchild} was left running"
        );
    }

    /// A child that exits at once but leaves a grandchild holding its stdout: the run ends at the
    /// timeout, not when the grandchild would.
    #[test]
    fn a_grandchild_holding_the_pipe_after_the_child_exits_is_killed_at_the_timeout() {
        let tmp = tempfile::tempdir().unwrap();
        let pid_file = tmp.path().join("grandchild");
        let script = format!("sleep 300 & echo $! > {}; exit 0", pid_file.display());
        let err = run(&sh(&script), Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err, ProcessError::Timeout { .. }), "{err}");
        let grandchild = std::fs::read_to_string(&pid_file).unwrap();
        assert!(
            gone(grandchild.trim()),
            "the grandchild {grandchild} was left running"
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
