//! The only module that talks to tmux: which server (`Socket`), how a command line is built
//! (`-u`, then the socket selection), and what a failure means (`TmuxError`). Every invocation
//! runs through `process.rs` with a timeout.
//!
//! A hung server (stopped, or stuck) costs one invocation per time-out, never a pile of them:
//! after an invocation times out, none starts for one more time-out, and every call meanwhile
//! fails at once with [`TmuxError::Hung`]. So a loop that asks tmux once per cycle runs at most
//! one stuck invocation at a time, and a request never waits on two of them.
//!
//! Reads live in `read.rs`: one `list-panes -a -F …` reads the whole fleet per cycle, whatever
//! the pane count (docs/protocol.md "The pane-option contract"). Writes (`set-option -p` to stamp a pane,
//! `send-keys` to dispatch, `display-message -c` to notify) go in `write.rs`, beside it.

pub mod read;
pub mod write;

use std::cell::Cell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::process::{self, Invocation, ProcessError};

/// Which tmux server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socket {
    /// `-L name`: a socket of that name in tmux's own socket directory.
    Name(String),
    /// `-S path`: a socket path.
    Path(PathBuf),
}

impl Socket {
    /// A bare name means `-L`, anything with a `/` means `-S`.
    pub fn parse(text: &str) -> Socket {
        if text.contains('/') {
            Socket::Path(PathBuf::from(text))
        } else {
            Socket::Name(text.into())
        }
    }

    /// The text [`Socket::parse`] reads back as this socket (`--tmux-socket` of a child).
    pub fn to_arg(&self) -> OsString {
        match self {
            Socket::Name(name) => name.into(),
            Socket::Path(path) if path.as_os_str().as_encoded_bytes().contains(&b'/') => {
                path.clone().into_os_string()
            }
            Socket::Path(path) => Path::new(".").join(path).into_os_string(),
        }
    }
}

/// How to invoke tmux.
#[derive(Debug, Clone)]
pub struct Tmux {
    bin: OsString,
    socket: Option<Socket>,
    timeout: Duration,
    /// When the last invocation timed out, if the one after it has not succeeded yet.
    hung_at: Cell<Option<Instant>>,
}

/// A copy of a [`Tmux`] that invokes it off the loop ([`Tmux::copy`]).
#[derive(Debug)]
pub struct TmuxCopy {
    /// The copy.
    pub tmux: Tmux,
    /// The verdict it was made with.
    cloned_with: Option<Instant>,
}

/// What one tmux invocation answered: its stdout, or that no server listens on the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// tmux ran the command; its stdout.
    Output(Vec<u8>),
    /// No server listens on the socket (tmux names it): not a failure, a server with no panes.
    NoServer {
        /// The socket path tmux tried.
        socket: String,
    },
}

/// Why a tmux command failed. A server that is not running is not a failure: it has no panes.
#[derive(Debug)]
pub enum TmuxError {
    /// tmux could not be started, or did not answer in time and was killed.
    Process(ProcessError),
    /// An invocation timed out moments ago, so this one was not started.
    Hung {
        /// The time-out the last invocation ran into.
        after: Duration,
    },
    /// tmux exited non-zero.
    Failed {
        /// Exit status as tmux reported it.
        status: String,
        /// First line of its stderr.
        stderr: String,
    },
    /// tmux exited 0 but printed something other than what the command asked for.
    Unreadable {
        /// The first line of what it printed, cut to 80 characters.
        output: String,
    },
}

impl std::fmt::Display for TmuxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TmuxError::Process(err) => write!(f, "{err}"),
            TmuxError::Hung { after } => write!(
                f,
                "tmux did not answer within {after:?} moments ago; not asking it again yet"
            ),
            TmuxError::Failed { status, stderr } => write!(f, "tmux failed ({status}): {stderr}"),
            TmuxError::Unreadable { output } => {
                write!(
                    f,
                    "tmux answered something other than what was asked: {output:?}"
                )
            }
        }
    }
}

impl std::error::Error for TmuxError {}

impl From<ProcessError> for TmuxError {
    fn from(err: ProcessError) -> TmuxError {
        TmuxError::Process(err)
    }
}

impl Tmux {
    /// A tmux at `bin` (a path or a name on PATH), on `socket` (tmux's default when `None`).
    pub fn new(bin: impl Into<OsString>, socket: Option<Socket>) -> Tmux {
        Tmux {
            bin: bin.into(),
            socket,
            timeout: Duration::from_secs(5),
            hung_at: Cell::new(None),
        }
    }

    /// The tmux program.
    pub fn bin(&self) -> &std::ffi::OsStr {
        &self.bin
    }

    /// The server selection; `None` for tmux's own default.
    pub fn socket(&self) -> Option<&Socket> {
        self.socket.as_ref()
    }

    /// How long one invocation may take before it is killed.
    pub fn with_timeout(mut self, timeout: Duration) -> Tmux {
        self.timeout = timeout;
        self
    }

    /// The command line for `args`, with the socket selection in front.
    ///
    /// `-u`: without a UTF-8 locale in its environment, tmux replaces every control byte and
    /// non-ASCII character of its output with `_`, which would mangle the record framing, paths
    /// and titles. `-u` makes it write UTF-8 whatever the locale.
    fn invocation(&self, args: &[String]) -> Invocation {
        let invocation = Invocation::new(&self.bin).arg("-u");
        let invocation = match &self.socket {
            Some(Socket::Name(name)) => invocation.arg("-L").arg(name),
            Some(Socket::Path(path)) => invocation.arg("-S").arg(path),
            None => invocation,
        };
        invocation.args(args)
    }

    /// Runs tmux and returns its stdout; a missing server is an empty answer.
    fn run(&self, args: &[String]) -> Result<Vec<u8>, TmuxError> {
        Ok(match self.ask(args)? {
            Answer::Output(stdout) => stdout,
            Answer::NoServer { .. } => Vec::new(),
        })
    }

    /// Runs tmux and says what it answered, a missing server told apart. Within one time-out of
    /// a timed-out invocation, nothing runs: [`TmuxError::Hung`].
    fn ask(&self, args: &[String]) -> Result<Answer, TmuxError> {
        let attempt = self.attempt(args)?;
        if attempt.failed.is_none() {
            return Ok(Answer::Output(attempt.stdout));
        }
        if let Some(socket) = no_server_socket(&attempt.stderr) {
            return Ok(Answer::NoServer { socket });
        }
        Err(attempt.error())
    }

    /// A copy of this tmux for an invocation made elsewhere (a thread's): it starts with this
    /// one's verdict on the server (a time-out not yet followed by a success), and
    /// [`Tmux::adopt_verdict`] takes back what its invocations found.
    pub fn copy(&self) -> TmuxCopy {
        TmuxCopy {
            tmux: self.clone(),
            cloned_with: self.hung_at.get(),
        }
    }

    /// What `copy`'s invocations found of the server, when they changed its verdict (a time-out,
    /// or a success after one): the latest word on tmux, so this tmux's too.
    pub fn adopt_verdict(&self, copy: &TmuxCopy) {
        let found = copy.tmux.hung_at.get();
        if found != copy.cloned_with {
            self.hung_at.set(found);
        }
    }

    /// Runs tmux once and keeps what it printed whether or not it succeeded: a command sequence
    /// that failed part-way says on stdout how far it got. Within one time-out of a timed-out
    /// invocation, nothing runs: [`TmuxError::Hung`].
    fn attempt(&self, args: &[String]) -> Result<Attempt, TmuxError> {
        if let Some(at) = self.hung_at.get()
            && at.elapsed() < self.timeout
        {
            return Err(TmuxError::Hung {
                after: self.timeout,
            });
        }
        let ran = process::run(&self.invocation(args), self.timeout);
        let timed_out = matches!(ran, Err(ProcessError::Timeout { .. }));
        self.hung_at.set(timed_out.then(Instant::now));
        let output = ran?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        Ok(Attempt {
            failed: (!output.status.success()).then(|| output.status.to_string()),
            stdout: output.stdout,
            stderr: stderr.lines().next().unwrap_or("").trim().to_owned(),
        })
    }
}

/// What one tmux invocation printed, and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Attempt {
    /// Its exit status, when it was not a success.
    failed: Option<String>,
    stdout: Vec<u8>,
    /// The first line of its stderr.
    stderr: String,
}

impl Attempt {
    /// The failure it was, as an error.
    fn error(self) -> TmuxError {
        TmuxError::Failed {
            status: self.failed.unwrap_or_else(|| "exit status: 0".to_owned()),
            stderr: self.stderr,
        }
    }
}

/// tmux's two ways of saying no server is listening on the socket, and the socket they name:
/// `no server running on PATH` (a socket file nobody listens on) and `error connecting to PATH
/// (No such file or directory)` (no socket file).
fn no_server_socket(stderr_line: &str) -> Option<String> {
    if let Some(socket) = stderr_line.strip_prefix("no server running on ") {
        return Some(socket.trim().to_owned());
    }
    let socket = stderr_line
        .strip_prefix("error connecting to ")?
        .strip_suffix(" (No such file or directory)")?;
    Some(socket.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_selection_follows_the_name_or_path_rule() {
        assert_eq!(
            Socket::parse("corral-test"),
            Socket::Name("corral-test".into())
        );
        assert_eq!(Socket::parse("/tmp/s"), Socket::Path("/tmp/s".into()));
        assert_eq!(Socket::parse("./s"), Socket::Path("./s".into()));
        for text in ["corral-test", "/tmp/s", "./s"] {
            let socket = Socket::parse(text);
            assert_eq!(Socket::parse(socket.to_arg().to_str().unwrap()), socket);
        }
        assert_eq!(Socket::Path("s".into()).to_arg(), "./s");
    }

    /// A tmux that hangs: each invocation adds a line to a counter file, then sleeps.
    fn hanging_tmux(dir: &Path) -> (Tmux, PathBuf) {
        let count = dir.join("count");
        let bin = dir.join("tmux");
        std::fs::write(
            &bin,
            format!("#!/bin/sh\necho x >> {}\nexec sleep 300\n", count.display()),
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let tmux = Tmux::new(&bin, None).with_timeout(Duration::from_millis(300));
        (tmux, count)
    }

    fn invocations(count: &Path) -> usize {
        std::fs::read_to_string(count).map_or(0, |text| text.lines().count())
    }

    #[test]
    fn after_a_time_out_no_invocation_starts_for_one_more_time_out() {
        let tmp = tempfile::tempdir().unwrap();
        let (tmux, count) = hanging_tmux(tmp.path());
        let err = tmux.run(&["list-panes".into()]).unwrap_err();
        assert!(
            matches!(err, TmuxError::Process(ProcessError::Timeout { .. })),
            "{err}"
        );
        assert_eq!(invocations(&count), 1);

        let asked = Instant::now();
        let err = tmux.run(&["list-panes".into()]).unwrap_err();
        assert!(matches!(err, TmuxError::Hung { .. }), "{err}");
        assert!(
            asked.elapsed() < Duration::from_millis(300),
            "answered at once, not after another time-out"
        );
        assert_eq!(invocations(&count), 1, "nothing was started");

        std::thread::sleep(Duration::from_millis(300));
        let err = tmux.run(&["list-panes".into()]).unwrap_err();
        assert!(
            matches!(err, TmuxError::Process(ProcessError::Timeout { .. })),
            "after the pause tmux is asked again: {err}"
        );
        assert_eq!(invocations(&count), 2);
    }

    #[test]
    fn tmux_no_server_messages_are_recognised_with_their_socket() {
        assert_eq!(
            no_server_socket("no server running on /tmp/tmux-0/x").as_deref(),
            Some("/tmp/tmux-0/x")
        );
        assert_eq!(
            no_server_socket("error connecting to /tmp/tmux-0/x (No such file or directory)")
                .as_deref(),
            Some("/tmp/tmux-0/x")
        );
        assert_eq!(
            no_server_socket("error connecting to /tmp/tmux-0/x (Permission denied)"),
            None
        );
        assert_eq!(no_server_socket("can't find pane: %9"), None);
    }
}
