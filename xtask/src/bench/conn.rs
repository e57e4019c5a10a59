//! One `corral serve` connection driven as a device drives it: frames written to its stdin, lines
//! read from its stdout on the calling thread (a poll against a deadline, so a timing includes
//! no thread hand-off and a hung host fails the measure instead of hanging the bench).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use serde_json::Value;

/// How long any one answer may take before the measure fails.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// A running `serve` process and what it has written that was not read yet.
#[derive(Debug)]
pub struct Conn {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    pending: Vec<u8>,
    /// Where its stderr goes, for an error message.
    log: PathBuf,
}

impl Conn {
    /// Starts `cmd` with piped stdin and stdout and its stderr appended to `log`.
    pub fn spawn(mut cmd: Command, log: &Path) -> anyhow::Result<Conn> {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("opening {}", log.display()))?;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("starting {:?}", cmd.get_program()))?;
        let stdin = child.stdin.take().context("no stdin pipe")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        Ok(Conn {
            child,
            stdin: Some(stdin),
            stdout,
            pending: Vec::new(),
            log: log.to_owned(),
        })
    }

    /// The process id (for `/proc/<pid>/status`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line (a `\n` is added).
    pub fn send(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin is closed")?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .map_err(|err| self.failure(&format!("writing to serve: {err}")))
    }

    /// The next line the host wrote, without its `\n`; an error at EOF or after `limit`.
    pub fn recv(&mut self, limit: Duration) -> anyhow::Result<String> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return String::from_utf8(line[..end].to_vec())
                    .map_err(|_| self.failure("serve wrote a line that is not UTF-8"));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.failure(&format!("serve did not answer within {limit:?}")));
            }
            let mut fds = [PollFd::new(&self.stdout, PollFlags::IN)];
            let timeout = Timespec::try_from(left).context("a poll timeout")?;
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(errno) => return Err(self.failure(&format!("polling serve: {errno}"))),
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self
                .stdout
                .read(&mut chunk)
                .map_err(|err| self.failure(&format!("reading serve: {err}")))?;
            if n == 0 {
                return Err(self.failure("serve closed its stdout"));
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }

    /// The next frame, decoded.
    pub fn frame(&mut self, limit: Duration) -> anyhow::Result<Value> {
        let line = self.recv(limit)?;
        serde_json::from_str(&line)
            .with_context(|| format!("serve wrote a line that is not JSON: {line:.200}"))
    }

    /// Says hello as device `device` and checks the answer.
    pub fn hello(&mut self, device: &str) -> anyhow::Result<()> {
        self.send(&hello_line(device))?;
        let answer = self.frame(ANSWER_LIMIT)?;
        expect_kind(&answer, "hello")
    }

    /// Closes stdin and waits for the process to exit (killed after five seconds).
    pub fn close(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(status) = self.child.try_wait()? {
                if !status.success() {
                    return Err(self.failure(&format!("serve exited with {status}")));
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(self.failure("serve did not exit within 5 s of EOF"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// An error saying `what`, with the last lines serve wrote to stderr.
    fn failure(&self, what: &str) -> anyhow::Error {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(3).collect();
        if tail.is_empty() {
            anyhow::anyhow!("{what}")
        } else {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            anyhow::anyhow!("{what}; its stderr ends: {}", tail.join(" | "))
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        stdx::process::kill_group(&mut self.child);
    }
}

/// The hello frame of device `device`.
pub fn hello_line(device: &str) -> String {
    serde_json::json!({
        "schema": 1, "id": "hello", "t": "hello", "app": "corral-bench", "app_version": "1",
        "device": device,
    })
    .to_string()
}

/// Fails unless `frame` is of kind `t` (an error frame's code and message say why).
pub fn expect_kind(frame: &Value, t: &str) -> anyhow::Result<()> {
    match frame["t"].as_str() {
        Some(kind) if kind == t => Ok(()),
        Some("error") => bail!(
            "serve answered error {}: {}",
            frame["code"],
            frame["message"]
        ),
        _ => bail!(
            "serve answered {:.200} where a {t} was due",
            frame.to_string()
        ),
    }
}
