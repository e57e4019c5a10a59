//! The one module that builds child processes (tmux, git, the host's `corral event`); everything
//! else asks it for a `Command`. Keeps clippy's `disallowed_methods` rule to a single exception in
//! this crate.

use std::ffi::OsStr;
use std::process::Command;

/// A `Command` for `program` with nothing inherited from the caller's tmux: `TMUX` and
/// `TMUX_PANE` are removed so a child tmux never talks to a developer's own server.
#[allow(clippy::disallowed_methods)]
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_remove("TMUX").env_remove("TMUX_PANE");
    command
}
