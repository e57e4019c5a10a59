//! The process driver: one host process per connection, started from the command template
//! through `sh -c` in a process group of its own, its stdout read line by line on a thread (which
//! a session may pause, or make close the runner's end of the pipe), its stderr kept in a file,
//! and a transcript of every line in both directions for failure reports.

use std::io::{ErrorKind, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use stdx::lines::Line;
use stdx::process::{Signal, signal_group};

/// The longest line the kit takes from a host: the protocol caps what a device sends, not what a
/// host answers (a transcript window is a few MiB at most), so this is the kit's own bound on
/// what it holds in memory. A longer line is dropped and fails the case.
pub const HOST_LINE_CAP: usize = 16 * 1024 * 1024;

/// What the reader thread saw on stdout.
#[derive(Debug)]
enum Event {
    Line(Vec<u8>),
    /// Bytes after the last `\n` at end of file.
    Fragment(Vec<u8>),
    /// A line longer than [`HOST_LINE_CAP`], dropped.
    TooLong,
    Eof,
    /// The thread closed the runner's end of the pipe, as asked; nothing follows.
    Closed,
}

/// What the reader thread is asked to do: read, stop reading, or close the pipe and end.
const READING: u8 = 0;
const PAUSED: u8 = 1;
const CLOSING: u8 = 2;

/// How long the reader thread waits for bytes before it looks at what it is asked again.
const POLL: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 10_000_000,
};

/// The reader thread's orders, and whether it has stopped reading.
#[derive(Debug, Default)]
struct Control {
    asked: AtomicU8,
    /// Set by the thread once it has seen `PAUSED` and reads nothing more.
    parked: AtomicBool,
    /// Set by the thread once it has closed the pipe, as asked.
    closed: AtomicBool,
}

/// One line of a connection's transcript.
#[derive(Debug, Clone)]
pub struct Logged {
    /// `→` sent, `←` received.
    pub sent: bool,
    pub text: String,
}

/// What reading the next line gave.
#[derive(Debug)]
pub enum Read {
    Line(Vec<u8>),
    Fragment(Vec<u8>),
    /// A line longer than [`HOST_LINE_CAP`]; its bytes were dropped.
    TooLong,
    Eof,
    Timeout,
}

/// A running (or finished) host process.
#[derive(Debug)]
pub struct HostProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Event>,
    control: Arc<Control>,
    eof: bool,
    status: Option<ExitStatus>,
    /// Every line sent and received, in order.
    pub transcript: Vec<Logged>,
    /// Where its stderr goes.
    pub stderr: PathBuf,
}

/// How a process ended, as a failure says it: `exited with code 2`, `was killed by signal 9`.
pub fn ended(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("ended ({status})"),
    }
}

/// Shows bytes as text, invalid UTF-8 escaped.
pub fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > 400 {
        let head: String = text.chars().take(400).collect();
        format!("{head}… ({} bytes)", bytes.len())
    } else {
        text.into_owned()
    }
}

impl HostProcess {
    /// Starts `sh -c <command>` with the given environment, in its own process group.
    pub fn spawn(
        command: &str,
        env: &[(String, String)],
        remove: &[String],
        cwd: &Path,
        stderr: PathBuf,
    ) -> anyhow::Result<HostProcess> {
        let err_file = std::fs::File::create(&stderr)
            .map_err(|err| anyhow!("creating {}: {err}", stderr.display()))?;
        let mut cmd = stdx::process::command("sh");
        cmd.arg("-c")
            .arg(format!("exec {command}"))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err_file);
        for name in remove {
            cmd.env_remove(name);
        }
        for (name, value) in env {
            cmd.env(name, value);
        }
        let mut child = cmd
            .spawn()
            .map_err(|err| anyhow!("starting the host `{command}`: {err}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = channel();
        let control = Arc::new(Control::default());
        let orders = Arc::clone(&control);
        std::thread::spawn(move || read_lines(stdout, &orders, &tx));
        Ok(HostProcess {
            child,
            stdin,
            lines,
            control,
            eof: false,
            status: None,
            transcript: Vec::new(),
            stderr,
        })
    }

    /// Writes bytes to the host's stdin.
    pub fn send(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.transcript.push(Logged {
            sent: true,
            text: show(bytes.strip_suffix(b"\n").unwrap_or(bytes)),
        });
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(anyhow!("the connection's stdin is already closed"));
        };
        let written = stdin.write_all(bytes).and_then(|()| stdin.flush());
        written.map_err(|err| self.write_failed(&err))
    }

    /// Why a write to the host's stdin failed: a host that ended (its pipe closed: EPIPE) is said
    /// with how it ended, as a read that met its end says it, whatever the race between the
    /// runner's write and the host's exit; the write's own error otherwise.
    fn write_failed(&mut self, err: &std::io::Error) -> anyhow::Error {
        // A host gone on a loaded machine may take a while to be reaped: give it a moment.
        match self.wait(Instant::now() + Duration::from_secs(2)) {
            Some(status) => anyhow!(
                "the host {} instead of reading its input (writing to its stdin: {err})",
                ended(status)
            ),
            None => anyhow!("writing to the host's stdin: {err} (it still runs)"),
        }
    }

    /// Writes lines (each with its `\n`) to the host's stdin in one write, logging each.
    pub fn send_lines(&mut self, lines: &[Vec<u8>]) -> anyhow::Result<()> {
        for line in lines {
            self.transcript.push(Logged {
                sent: true,
                text: show(line.strip_suffix(b"\n").unwrap_or(line)),
            });
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(anyhow!("the connection's stdin is already closed"));
        };
        let written = stdin
            .write_all(&lines.concat())
            .and_then(|()| stdin.flush());
        written.map_err(|err| self.write_failed(&err))
    }

    /// Closes the host's stdin (end of file).
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// The next stdout line, waiting until the deadline.
    pub fn next(&mut self, deadline: Instant) -> Read {
        if self.eof {
            return Read::Eof;
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Event::Line(line)) => {
                self.transcript.push(Logged {
                    sent: false,
                    text: show(&line),
                });
                Read::Line(line)
            }
            Ok(Event::Fragment(bytes)) => {
                self.transcript.push(Logged {
                    sent: false,
                    text: format!("{} (no newline)", show(&bytes)),
                });
                Read::Fragment(bytes)
            }
            Ok(Event::TooLong) => {
                self.transcript.push(Logged {
                    sent: false,
                    text: format!("(a line longer than {HOST_LINE_CAP} bytes, dropped)"),
                });
                Read::TooLong
            }
            Ok(Event::Eof | Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                Read::Eof
            }
            Err(RecvTimeoutError::Timeout) => Read::Timeout,
        }
    }

    /// Stops reading the host's stdout: once this returns, the runner takes no more bytes from
    /// the pipe (what it had taken stays queued for later reads), so what the host writes waits.
    pub fn pause(&mut self) {
        self.control.asked.store(PAUSED, Ordering::SeqCst);
        // The thread parks within one poll; it has ended when the host's stdout has.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.control.parked.load(Ordering::SeqCst)
            && Arc::strong_count(&self.control) > 1
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Reads the host's stdout again after [`HostProcess::pause`].
    pub fn resume(&mut self) {
        self.control.asked.store(READING, Ordering::SeqCst);
    }

    /// Whether the runner has stopped reading the host's stdout (paused, not closed).
    pub fn paused(&self) -> bool {
        self.control.asked.load(Ordering::SeqCst) == PAUSED && !self.eof
    }

    /// Closes the runner's end of the host's stdout, as a client that went away: the host's
    /// next write meets a closed pipe. What was received and not read yet is dropped; their
    /// count is returned. Reads give end of file from then on.
    pub fn close_stdout(&mut self) -> anyhow::Result<usize> {
        self.control.asked.store(CLOSING, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut dropped = 0;
        while !self.eof {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(wait) {
                Ok(Event::Line(_) | Event::Fragment(_) | Event::TooLong) => dropped += 1,
                Ok(Event::Eof | Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    self.eof = true;
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(anyhow!(
                        "the runner's end of the host's stdout did not close"
                    ));
                }
            }
        }
        Ok(dropped)
    }

    /// Waits for the process to exit until the deadline.
    pub fn wait(&mut self, deadline: Instant) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = stdx::process::wait_until(&mut self.child, deadline)
                .ok()
                .flatten();
        }
        self.status
    }

    /// Whether its stdout reached end of file and its exit status was collected.
    pub fn finished(&self) -> bool {
        self.eof && self.status.is_some()
    }

    /// Sends SIGTERM to the host's process group: the process `sh` exec'd into, and whatever it
    /// started in its group (a host launched through a wrapper or a script gets the signal where
    /// it runs).
    pub fn terminate(&self) {
        signal_group(self.child.id(), Signal::TERM);
    }

    /// `kill`: SIGKILL to the host's process group (as [`HostProcess::terminate`]) and its end
    /// within the deadline. Fails when it had already exited, when a line it wrote before was not read
    /// (every frame must have been expected), and when it ended some other way.
    pub fn kill_now(&mut self, deadline: Instant) -> anyhow::Result<()> {
        if let Some(status) = self.wait(Instant::now()) {
            return Err(anyhow!(
                "the host had already ended ({status}) before the kill"
            ));
        }
        signal_group(self.child.id(), Signal::KILL);
        let _ = self.child.kill();
        if self.paused() {
            // What it wrote meanwhile was never read, as the session said: dropped.
            self.close_stdout()?;
        }
        match self.next(deadline) {
            Read::Eof => {}
            Read::Timeout => {
                return Err(anyhow!("the host's stdout is still open after SIGKILL"));
            }
            Read::Line(bytes) | Read::Fragment(bytes) => {
                return Err(anyhow!(
                    "the host wrote a line no step expected before it was killed: {}",
                    show(&bytes)
                ));
            }
            Read::TooLong => {
                return Err(anyhow!(
                    "the host wrote a line no step expected (longer than {HOST_LINE_CAP} bytes) \
                     before it was killed"
                ));
            }
        }
        match self.wait(deadline) {
            None => Err(anyhow!("the host is still running after SIGKILL")),
            Some(status) if status.signal() == Some(9) => Ok(()),
            Some(status) => Err(anyhow!(
                "the host ended ({status}) before SIGKILL reached it"
            )),
        }
    }

    /// Kills the host's whole process group and reaps the host. The group is killed even when
    /// the host itself has ended: what it started may still run in it (and hold its stdout).
    pub fn kill(&mut self) {
        signal_group(self.child.id(), Signal::KILL);
        if self.status.is_some() {
            return;
        }
        let _ = self.child.kill();
        self.status = self.child.wait().ok();
    }

    /// Everything the host has written to stderr so far.
    pub fn stderr_text(&self) -> anyhow::Result<String> {
        std::fs::read(&self.stderr)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|err| anyhow!("reading {}: {err}", self.stderr.display()))
    }

    /// The last lines of the host's stderr.
    pub fn stderr_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// The reader thread: lines from the host's stdout (`stdx`'s splitter, capped at
/// [`HOST_LINE_CAP`]) to the channel, reading only while asked to, closing the pipe when asked
/// to ([`Paced`]).
fn read_lines(stdout: ChildStdout, control: &Control, tx: &Sender<Event>) {
    let paced = Paced {
        stdout: Some(stdout),
        control,
    };
    stdx::lines::each_line(paced, HOST_LINE_CAP, |line| {
        let closed = control.closed.load(Ordering::SeqCst);
        let event = match line {
            Line::Text(text) => Event::Line(text.into_bytes()),
            Line::NotUtf8(bytes) => Event::Line(bytes),
            Line::TooLong => Event::TooLong,
            // What was left of a line when the runner closed the pipe was never the host's end.
            Line::Unterminated(_) if closed => return true,
            Line::Unterminated(bytes) => Event::Fragment(bytes),
            Line::End | Line::Failed(_) if closed => Event::Closed,
            Line::End | Line::Failed(_) => Event::Eof,
        };
        tx.send(event).is_ok()
    });
}

/// The host's stdout as the reader thread reads it: a read waits for bytes a poll at a time, so
/// an order is seen within [`POLL`] even when the host writes nothing; asked to pause, it parks
/// (and takes nothing from the pipe) until asked to read again; asked to close, it closes the
/// runner's end of the pipe and reads as the end.
struct Paced<'a> {
    stdout: Option<ChildStdout>,
    control: &'a Control,
}

impl std::io::Read for Paced<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.control.asked.load(Ordering::SeqCst) {
                CLOSING => {
                    if self.stdout.take().is_some() {
                        self.control.closed.store(true, Ordering::SeqCst);
                    }
                    return Ok(0);
                }
                PAUSED => {
                    self.control.parked.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                _ => self.control.parked.store(false, Ordering::SeqCst),
            }
            let Some(stdout) = self.stdout.as_mut() else {
                return Ok(0);
            };
            let mut fds = [PollFd::new(&*stdout, PollFlags::IN)];
            match poll(&mut fds, Some(&POLL)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) | Err(_) => {}
            }
            match std::io::Read::read(stdout, buf) {
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                read => return read,
            }
        }
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripted(script: &str) -> (tempfile::TempDir, HostProcess) {
        let dir = tempfile::tempdir().unwrap();
        let stderr = dir.path().join("host.err");
        let env = [("KIT_GREETING".to_owned(), "hi".to_owned())];
        let process = HostProcess::spawn(script, &env, &[], dir.path(), stderr).unwrap();
        (dir, process)
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    #[test]
    fn a_scripted_host_answers_lines_and_its_exit_code_is_read() {
        let (_dir, mut host) = scripted(
            r#"sh -c 'read line; printf "{\"got\":\"%s\",\"env\":\"%s\"}\n" "$line" "$KIT_GREETING"; echo oops >&2; exit 3'"#,
        );
        host.send(b"ping\n").unwrap();
        match host.next(soon()) {
            Read::Line(line) => assert_eq!(line, br#"{"got":"ping","env":"hi"}"#),
            other => panic!("expected a line, got {other:?}"),
        }
        assert!(matches!(host.next(soon()), Read::Eof));
        assert_eq!(host.wait(soon()).and_then(|s| s.code()), Some(3));
        assert!(host.finished());
        assert_eq!(host.stderr_tail(5), "oops");
        let shown: Vec<_> = host
            .transcript
            .iter()
            .map(|l| (l.sent, l.text.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                (true, "ping".to_owned()),
                (false, r#"{"got":"ping","env":"hi"}"#.to_owned())
            ]
        );
    }

    #[test]
    fn a_line_without_its_newline_at_eof_is_a_fragment() {
        let (_dir, mut host) = scripted("printf 'half'");
        assert!(matches!(host.next(soon()), Read::Fragment(bytes) if bytes == b"half"));
    }

    #[test]
    fn a_line_past_the_cap_is_too_long_and_the_next_is_read() {
        let (_dir, mut host) = scripted(&format!(
            "sh -c 'head -c {} /dev/zero | tr \"\\\\0\" x; echo; echo after'",
            HOST_LINE_CAP + 1
        ));
        assert!(matches!(host.next(soon()), Read::TooLong));
        assert!(matches!(host.next(soon()), Read::Line(line) if line == b"after"));
        assert!(matches!(host.next(soon()), Read::Eof));
        assert!(host.transcript[0].text.contains("dropped"));
    }

    #[test]
    fn a_silent_host_times_out_and_is_killed() {
        let (_dir, mut host) = scripted("sleep 30");
        let quick = Instant::now() + Duration::from_millis(50);
        assert!(matches!(host.next(quick), Read::Timeout));
        host.kill();
        assert!(host.wait(soon()).is_some_and(|s| !s.success()));
    }

    #[test]
    fn a_kill_ends_a_host_that_ignores_sigterm_and_judges_what_it_left() {
        // A host that ignores SIGTERM and is busy: SIGKILL ends it all the same.
        let (_dir, mut host) =
            scripted(r#"sh -c 'trap "" TERM; read line; echo ready; exec sleep 30'"#);
        host.send(b"x\n").unwrap();
        assert!(matches!(host.next(soon()), Read::Line(line) if line == b"ready"));
        host.terminate();
        std::thread::sleep(Duration::from_millis(100));
        assert!(host.wait(Instant::now()).is_none(), "SIGTERM is ignored");
        host.kill_now(soon()).unwrap();
        assert!(host.finished());
        // One that already ended cannot be killed mid-request.
        let (_dir, mut host) = scripted("exit 0");
        assert!(matches!(host.next(soon()), Read::Eof));
        host.wait(soon());
        let err = host.kill_now(soon()).unwrap_err().to_string();
        assert!(err.contains("already ended"), "{err}");
        // A line it wrote that no step read is unexpected.
        let (_dir, mut host) = scripted(r#"sh -c 'echo "{\"late\":1}"; exec sleep 30'"#);
        std::thread::sleep(Duration::from_millis(300));
        let err = host.kill_now(soon()).unwrap_err().to_string();
        assert!(
            err.contains(r#"no step expected before it was killed: {"late":1}"#),
            "{err}"
        );
    }

    #[test]
    fn a_paused_reader_takes_nothing_until_it_resumes_and_lines_keep_their_order() {
        // A host that writes a line per input line: paused, its lines wait in the pipe.
        let (_dir, mut host) = scripted("sh -c 'while read line; do echo \"$line\"; done'");
        host.pause();
        assert!(host.paused());
        host.send_lines(&[b"a\n".to_vec(), b"b\n".to_vec()])
            .unwrap();
        let quick = Instant::now() + Duration::from_millis(200);
        assert!(matches!(host.next(quick), Read::Timeout), "nothing is read");
        host.resume();
        assert!(!host.paused());
        for want in [&b"a"[..], b"b"] {
            assert!(matches!(host.next(soon()), Read::Line(line) if line == want));
        }
        let sent: Vec<_> = host.transcript.iter().filter(|l| l.sent).collect();
        assert_eq!(sent.len(), 2, "each line of a batch is logged");
    }

    #[test]
    fn a_closed_read_end_drops_what_was_unread_and_the_writer_meets_a_closed_pipe() {
        // A host that writes until its stdout is closed, then says so on stderr and exits 0.
        let (_dir, mut host) = scripted(
            "sh -c 'trap \"\" PIPE; while echo tick 2>/dev/null; do sleep 0.01; done; echo gone >&2'",
        );
        assert!(matches!(host.next(soon()), Read::Line(line) if line == b"tick"));
        host.close_stdout().unwrap();
        assert!(matches!(host.next(soon()), Read::Eof));
        assert_eq!(host.wait(soon()).and_then(|s| s.code()), Some(0));
        assert_eq!(host.stderr_text().unwrap(), "gone\n");
        // A paused reader closes as well, and a killed host's unread lines are dropped.
        let (_dir, mut host) = scripted("sh -c 'echo one; exec sleep 30'");
        std::thread::sleep(Duration::from_millis(200));
        host.pause();
        host.kill_now(soon()).unwrap();
        assert!(host.finished());
    }

    #[test]
    fn writing_to_a_closed_stdin_is_an_error() {
        let (_dir, mut host) = scripted("cat");
        host.close();
        assert!(
            host.send(b"x\n")
                .unwrap_err()
                .to_string()
                .contains("already closed")
        );
        assert!(matches!(host.next(soon()), Read::Eof));
        assert_eq!(host.wait(soon()).and_then(|s| s.code()), Some(0));
    }

    #[test]
    fn long_lines_are_shortened_for_display() {
        let shown = show(&[b'a'; 1000]);
        assert!(shown.ends_with("… (1000 bytes)"), "{shown}");
        assert_eq!(show(b"\xff{}"), "\u{fffd}{}");
    }
}
