//! A running `corral serve`, driven over its real stdin and stdout: every line it writes must be
//! one canonical response frame.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::command;

use super::checks::{PATIENCE, exit_code_within_patience};

/// A running `corral serve`.
#[derive(Debug)]
pub struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The host's stdout when the test does not read it ([`Host::start_unread`]).
    unread: Option<std::process::ChildStdout>,
    lines: Receiver<String>,
    stderr_lines: Receiver<String>,
    /// Every stdout line received so far, verbatim.
    pub raw: Vec<String>,
}

impl Host {
    /// Starts `command` (a `corral serve`) with its stdin, stdout and stderr on pipes.
    pub fn start(command: Command) -> Host {
        Host::spawn(command, true)
    }

    /// Starts `command` with its stdout on a pipe nobody reads: a client that stopped reading.
    /// [`Host::close_stdout`] closes the pipe's read end.
    pub fn start_unread(command: Command) -> Host {
        Host::spawn(command, false)
    }

    /// Starts `command` with its stderr on `stderr` (a file, `/dev/full`) instead of a pipe:
    /// [`Host::stderr`] is then empty.
    pub fn start_with_stderr(command: Command, stderr: Stdio) -> Host {
        Host::spawn_with(command, true, stderr)
    }

    fn spawn(command: Command, read: bool) -> Host {
        Host::spawn_with(command, read, Stdio::piped())
    }

    fn spawn_with(mut command: Command, read: bool, stderr: Stdio) -> Host {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        let unread = if read {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
            None
        } else {
            Some(stdout)
        };
        let (etx, stderr_lines) = channel();
        if let Some(stderr) = child.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = etx.send(line);
                }
            });
        }
        Host {
            stdin: child.stdin.take(),
            child,
            unread,
            lines,
            stderr_lines,
            raw: Vec::new(),
        }
    }

    /// Writes bytes to the host's stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `lines` from a thread of their own, so a host that stops reading cannot block the
    /// test, and stops at the first failed write. The thread hands stdin back when done: until
    /// the handle is dropped, the host sees no end of input.
    pub fn feed(&mut self, lines: Vec<String>) -> std::thread::JoinHandle<ChildStdin> {
        let mut stdin = self.stdin.take().expect("stdin is open");
        std::thread::spawn(move || {
            for line in lines {
                if stdin.write_all(format!("{line}\n").as_bytes()).is_err() {
                    break;
                }
            }
            stdin
        })
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Says hello and returns the answer.
    pub fn hello(&mut self) -> Value {
        self.send(r#"{"schema":1,"id":"hello","t":"hello","app":"it","app_version":"1","device":"claimed"}"#);
        let reply = self.recv();
        assert_eq!(reply["t"], "hello", "{reply}");
        reply
    }

    /// The next frame; fails the test after [`PATIENCE`]. Every line must be a whole frame.
    pub fn recv(&mut self) -> Value {
        self.recv_within(PATIENCE)
            .unwrap_or_else(|| panic!("no frame within {PATIENCE:?}; stderr:\n{}", self.stderr()))
    }

    /// The next frame, or `None` when none arrives within `wait`.
    pub fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                assert!(line.ends_with('\n'), "a partial line: {line:?}");
                let frame = schema::decode_line::<schema::Response>(&line)
                    .unwrap_or_else(|err| panic!("not a response frame: {line:?}: {err}"));
                assert_eq!(schema::encode_line(&frame), line, "not canonical");
                self.raw.push(line.clone());
                Some(serde_json::from_str(&line).unwrap())
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Asserts nothing arrives for `wait`.
    pub fn silent_for(&mut self, wait: Duration) {
        if let Some(frame) = self.recv_within(wait) {
            panic!("expected silence, got {frame}");
        }
    }

    /// Closes stdin (EOF).
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for the process to exit; its code.
    pub fn exit_code(&mut self) -> i32 {
        exit_code_within_patience(&mut self.child)
            .unwrap_or_else(|| panic!("the host did not exit; stderr:\n{}", self.stderr()))
    }

    /// Waits up to `wait` for the process to exit; its code, or `None` while it runs.
    pub fn exit_within(&mut self, wait: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code().unwrap_or(-1));
            }
            if start.elapsed() >= wait {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes the read end of the host's stdout (started with [`Host::start_unread`]).
    pub fn close_stdout(&mut self) {
        assert!(self.unread.take().is_some(), "stdout is read by the test");
    }

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().to_string();
        assert!(
            command("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// The stderr lines so far (waiting briefly for lines still in flight).
    pub fn stderr(&self) -> String {
        let mut lines = Vec::new();
        while let Ok(line) = self.stderr_lines.recv_timeout(Duration::from_millis(200)) {
            lines.push(line);
        }
        lines.join("\n")
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
