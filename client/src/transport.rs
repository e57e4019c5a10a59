//! How a host's `serve` is reached, and the small dumb transport over it: a child's stdin and
//! stdout (ssh, a local `corral`, any argv), or this process's own (the replay harness). A reader
//! thread cuts stdout into lines under a cap and checks they are UTF-8; a writer writes a line
//! whole and flushes it. The host's stderr is kept, its last lines only, to say why it ended.
//!
//! The argv of each [`Target`]: `ssh -T [ssh_options] <dest>` when the destination's forced
//! command picks the device; `ssh [ssh_options] <dest> -- corral serve --stdio --device <fp>`
//! otherwise (every word quoted for the remote shell); `corral serve --stdio --device <fp>`
//! locally. ssh runs with `BatchMode=yes` (a
//! password prompt would wait for a person the client's screen hides) and keep-alives, so a dead
//! link ends within a minute.

use std::collections::VecDeque;
use std::io::{Read, Write};

use std::process::Child;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use stdx::lines::Line;

use crate::config::Target;
use crate::process;

/// The longest line read from a host; a snapshot of a thousand panes is well under it.
pub const LINE_CAP: usize = 16 * 1024 * 1024;

/// How many of the host's last stderr lines are kept.
const STDERR_LINES: usize = 5;

/// The longest stderr line the client keeps; a longer one is said as such.
const STDERR_LINE_CAP: usize = 64 * 1024;

/// How long an ended host's stderr is read on for its last lines.
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// What the reader saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineIn {
    /// One line, without its `\n`.
    Line(String),
    /// Something that is not a line: over the cap, not UTF-8, cut off at the end.
    Bad(String),
    /// The end of the host's stdout.
    Eof,
}

/// The argv that starts a target's `serve`.
pub fn argv(target: &Target) -> Vec<String> {
    let ssh = |destination: &str, options: &[String]| {
        let mut argv: Vec<String> = [
            "ssh",
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "ServerAliveInterval=15",
            "-o",
            "ServerAliveCountMax=3",
        ]
        .map(String::from)
        .to_vec();
        argv.extend(options.iter().cloned());
        argv.push(destination.to_owned());
        argv
    };
    match target {
        Target::Ssh {
            destination,
            device: None,
            options,
            ..
        } => ssh(destination, options),
        Target::Ssh {
            destination,
            device: Some(device),
            corral,
            options,
        } => {
            let mut argv = ssh(destination, options);
            argv.push("--".into());
            let remote = [
                corral.as_deref().unwrap_or("corral"),
                "serve",
                "--stdio",
                "--device",
                device,
            ];
            argv.extend(remote.iter().map(|word| stdx::shell_quote(word)));
            argv
        }
        Target::Local { device, corral } => vec![
            corral.clone().unwrap_or_else(|| "corral".into()),
            "serve".into(),
            "--stdio".into(),
            "--device".into(),
            device.clone(),
        ],
        Target::Command(argv) => argv.clone(),
    }
}

/// Reads `reader` line by line into `sink` until its end, which is reported once: the lines
/// of `stdx::lines`, what the client cannot use said as a fault.
pub fn read_lines(reader: impl Read, cap: usize, mut sink: impl FnMut(LineIn) -> bool) {
    stdx::lines::each_line(reader, cap, |line| {
        sink(match line {
            Line::Text(text) => LineIn::Line(text),
            Line::TooLong => LineIn::Bad(format!("a line longer than {cap} bytes")),
            Line::NotUtf8(_) => LineIn::Bad("a line that is not UTF-8".into()),
            Line::Unterminated(_) => LineIn::Bad("an unterminated line at the end".into()),
            Line::End | Line::Failed(_) => LineIn::Eof,
        })
    });
}

/// The last lines a host wrote to stderr.
#[derive(Debug, Default, Clone)]
pub struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last line, when there is one.
    pub fn last(&self) -> Option<String> {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().rev().find(|l| !l.trim().is_empty()).cloned()
    }
}

/// One open connection to a host.
pub struct Link {
    writer: Option<Box<dyn Write + Send>>,
    child: Option<Child>,
    stderr: Tail,
    stderr_done: Option<mpsc::Receiver<()>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("open", &self.writer.is_some())
            .field("child", &self.child.as_ref().map(Child::id))
            .finish()
    }
}

impl Link {
    /// Starts `argv`; its stdout lines go to `sink` from a thread of their own.
    pub fn spawn(
        argv: &[String],
        sink: impl FnMut(LineIn) -> bool + Send + 'static,
    ) -> std::io::Result<Link> {
        let mut child = process::spawn_piped(argv)?;
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let writer = child.stdin.take().expect("piped");
        std::thread::spawn(move || read_lines(stdout, LINE_CAP, sink));
        let tail = Tail::default();
        let lines = tail.clone();
        let (done, stderr_done) = mpsc::channel();
        std::thread::spawn(move || {
            stdx::lines::each_text_line(stderr, STDERR_LINE_CAP, |line| {
                lines.push(line);
                true
            });
            let _ = done.send(());
        });
        Ok(Link {
            writer: Some(Box::new(writer)),
            child: Some(child),
            stderr: tail,
            stderr_done: Some(stderr_done),
        })
    }

    /// This process's own stdin and stdout.
    pub fn stdio(sink: impl FnMut(LineIn) -> bool + Send + 'static) -> Link {
        std::thread::spawn(move || read_lines(std::io::stdin(), LINE_CAP, sink));
        Link {
            writer: Some(Box::new(std::io::stdout())),
            child: None,
            stderr: Tail::default(),
            stderr_done: None,
        }
    }

    /// Writes one line (its `\n` included) whole, and flushes it.
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the connection is closed"))?;
        writer.write_all(line.as_bytes())?;
        writer.flush()
    }

    /// The host's last stderr line.
    pub fn stderr(&self) -> Option<String> {
        self.stderr.last()
    }

    /// Ends the connection: closes the host's stdin (`serve` exits 0 at its end), waits up to
    /// `grace` for it to exit, then kills its group. Its exit code, when it exited by itself.
    pub fn finish(&mut self, grace: Duration) -> Option<i32> {
        self.writer = None;
        let code = self
            .child
            .as_mut()
            .and_then(|child| stdx::process::wait_or_kill(child, grace).and_then(|s| s.code()));
        self.child = None;
        // Its last words: read them before saying why it ended (a grandchild holding stderr open
        // is not waited for long).
        if let Some(done) = self.stderr_done.take() {
            let _ = done.recv_timeout(STDERR_WAIT);
        }
        code
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            stdx::process::kill_group(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &[u8], cap: usize) -> Vec<LineIn> {
        let mut got = Vec::new();
        read_lines(data, cap, |line| {
            got.push(line);
            true
        });
        got
    }

    #[test]
    fn what_the_client_cannot_use_is_said_as_a_fault() {
        let data = b"{\"a\":1}\n0123456789ABCDEF\n\xff\xfe\nok\npartial";
        assert_eq!(
            lines(data, 10),
            [
                LineIn::Line("{\"a\":1}".into()),
                LineIn::Bad("a line longer than 10 bytes".into()),
                LineIn::Bad("a line that is not UTF-8".into()),
                LineIn::Line("ok".into()),
                LineIn::Bad("an unterminated line at the end".into()),
                LineIn::Eof,
            ]
        );
        assert_eq!(lines(b"", 10), [LineIn::Eof]);
    }

    #[test]
    fn each_target_has_its_argv() {
        let ssh = argv(&Target::Ssh {
            destination: "ana@studio".into(),
            device: None,
            corral: None,
            options: vec!["-p".into(), "2222".into()],
        });
        assert_eq!(ssh[0], "ssh");
        assert_eq!(ssh[1], "-T");
        assert_eq!(ssh[ssh.len() - 3..], ["-p", "2222", "ana@studio"]);
        let named = argv(&Target::Ssh {
            destination: "ci@build".into(),
            device: Some("SHA256:ab+/cd=".into()),
            corral: Some("/opt/my corral".into()),
            options: Vec::new(),
        });
        let remote: Vec<&str> = named
            .iter()
            .skip_while(|w| *w != "--")
            .skip(1)
            .map(String::as_str)
            .collect();
        assert_eq!(
            remote,
            [
                "'/opt/my corral'",
                "serve",
                "--stdio",
                "--device",
                "SHA256:ab+/cd="
            ]
        );
        assert_eq!(
            argv(&Target::Local {
                device: "SHA256:x".into(),
                corral: None
            }),
            ["corral", "serve", "--stdio", "--device", "SHA256:x"]
        );
    }
}
