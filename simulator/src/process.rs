//! How the simulator builds a child process (tmux, git, the host's `corral event`): through
//! `stdx::process` (a process group of its own), with nothing inherited from the caller's tmux.

use std::ffi::OsStr;
use std::process::Command;

/// A `Command` for `program` with nothing inherited from the caller's tmux: `TMUX` and
/// `TMUX_PANE` are removed so a child tmux never talks to a developer's own server.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = stdx::process::command(program);
    command.env_remove("TMUX").env_remove("TMUX_PANE");
    command
}
