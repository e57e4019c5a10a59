//! The process driver: one host process per connection, started from the command template
//! through `sh -c`, its stdout read line by line on a thread, its stderr kept in a file, and a
//! transcript of every line in both directions for failure reports.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Instant;

use super::process;

/// What the reader thread saw on stdout.
#[derive(Debug)]
enum Event {
    Line(Vec<u8>),
    /// Bytes after the last `\n` at end of file.
    Fragment(Vec<u8>),
    Eof,
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
    Eof,
    Timeout,
}

/// A running (or finished) host process.
#[derive(Debug)]
pub struct HostProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Event>,
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

/// Quotes a value for `sh`.
pub fn shell_quote(value: &str) -> String {
    if !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "%+,-./:=@_".contains(c))
    {
        return value.to_owned();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
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
    ) -> Result<HostProcess, String> {
        let err_file = std::fs::File::create(&stderr)
            .map_err(|err| format!("creating {}: {err}", stderr.display()))?;
        let mut cmd = process::command("sh");
        cmd.arg("-c")
            .arg(format!("exec {command}"))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err_file)
            .process_group(0);
        for name in remove {
            cmd.env_remove(name);
        }
        for (name, value) in env {
            cmd.env(name, value);
        }
        let mut child = cmd
            .spawn()
            .map_err(|err| format!("starting the host `{command}`: {err}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Event::Eof);
                        return;
                    }
                    Ok(_) => {
                        let event = match line.strip_suffix(b"\n") {
                            Some(body) => Event::Line(body.to_vec()),
                            None => Event::Fragment(line),
                        };
                        if tx.send(event).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Ok(HostProcess {
            child,
            stdin,
            lines,
            eof: false,
            status: None,
            transcript: Vec::new(),
            stderr,
        })
    }

    /// Writes bytes to the host's stdin.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.transcript.push(Logged {
            sent: true,
            text: show(bytes.strip_suffix(b"\n").unwrap_or(bytes)),
        });
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("the connection's stdin is already closed".into());
        };
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.flush())
            .map_err(|err| format!("writing to the host's stdin: {err} (has it exited?)"))
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
            Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                Read::Eof
            }
            Err(RecvTimeoutError::Timeout) => Read::Timeout,
        }
    }

    /// Waits for the process to exit until the deadline.
    pub fn wait(&mut self, deadline: Instant) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = process::wait_until(&mut self.child, deadline)
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
        process::signal(self.child.id(), process::Signal::TERM, true);
    }

    /// `kill`: SIGKILL to the host's process group (as [`HostProcess::terminate`]) and its end
    /// within the deadline. Fails when it had already exited, when a line it wrote before was not read
    /// (every frame must have been expected), and when it ended some other way.
    pub fn kill_now(&mut self, deadline: Instant) -> Result<(), String> {
        if let Some(status) = self.wait(Instant::now()) {
            return Err(format!(
                "the host had already ended ({status}) before the kill"
            ));
        }
        process::signal(self.child.id(), process::Signal::KILL, true);
        let _ = self.child.kill();
        match self.next(deadline) {
            Read::Eof => {}
            Read::Timeout => {
                return Err("the host's stdout is still open after SIGKILL".into());
            }
            Read::Line(bytes) | Read::Fragment(bytes) => {
                return Err(format!(
                    "the host wrote a line no step expected before it was killed: {}",
                    show(&bytes)
                ));
            }
        }
        match self.wait(deadline) {
            None => Err("the host is still running after SIGKILL".into()),
            Some(status) if status.signal() == Some(9) => Ok(()),
            Some(status) => Err(format!(
                "the host ended ({status}) before SIGKILL reached it"
            )),
        }
    }

    /// Kills the host's whole process group and reaps the host. The group is killed even when
    /// the host itself has ended: what it started may still run in it (and hold its stdout).
    pub fn kill(&mut self) {
        process::signal(self.child.id(), process::Signal::KILL, true);
        if self.status.is_some() {
            return;
        }
        let _ = self.child.kill();
        self.status = self.child.wait().ok();
    }

    /// The last lines of the host's stderr.
    pub fn stderr_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
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

    #[test]
    fn shell_quoting_leaves_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("SHA256:abc"), "SHA256:abc");
        assert_eq!(shell_quote("/tmp/x y"), "'/tmp/x y'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    fn scripted(script: &str) -> (tempfile::TempDir, HostProcess) {
        let dir = tempfile::tempdir().unwrap();
        let stderr = dir.path().join("host.err");
        let env = [("KIT_GREETING".to_owned(), "hi".to_owned())];
        let process = HostProcess::spawn(script, &env, &[], dir.path(), stderr).unwrap();
        (dir, process)
    }

    fn soon() -> Instant {
        Instant::now() + std::time::Duration::from_secs(10)
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
    fn a_silent_host_times_out_and_is_killed() {
        let (_dir, mut host) = scripted("sleep 30");
        let quick = Instant::now() + std::time::Duration::from_millis(50);
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
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(host.wait(Instant::now()).is_none(), "SIGTERM is ignored");
        host.kill_now(soon()).unwrap();
        assert!(host.finished());
        // One that already ended cannot be killed mid-request.
        let (_dir, mut host) = scripted("exit 0");
        assert!(matches!(host.next(soon()), Read::Eof));
        host.wait(soon());
        let err = host.kill_now(soon()).unwrap_err();
        assert!(err.contains("already ended"), "{err}");
        // A line it wrote that no step read is unexpected.
        let (_dir, mut host) = scripted(r#"sh -c 'echo "{\"late\":1}"; exec sleep 30'"#);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let err = host.kill_now(soon()).unwrap_err();
        assert!(
            err.contains(r#"no step expected before it was killed: {"late":1}"#),
            "{err}"
        );
    }

    #[test]
    fn writing_to_a_closed_stdin_is_an_error() {
        let (_dir, mut host) = scripted("cat");
        host.close();
        assert!(host.send(b"x\n").unwrap_err().contains("already closed"));
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
