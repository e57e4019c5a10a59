//! The exec lane of `corral act`: a local `exec` action runs detached. Its supervisor,
//! `corral internal exec-action` (`notify/completion.rs`), is started in a process group of its
//! own with everything it needs on its command line (the command, the time-out, the pane's
//! facts, the tmux to report through), and the dispatch answers `spawned` at once; the
//! completion is reported through the notification sinks when the command ends. Devices never
//! reach this lane: the scope gate refuses `exec` to them.

use std::path::PathBuf;

use schema::Action;

use crate::fleet::Pane;
use crate::process::{self, Invocation, ProcessError};
use crate::tmux::Tmux;

/// An `exec` action's time-out when its manifest gives none, in seconds.
pub const DEFAULT_TIMEOUT_S: u64 = 60;

/// How this process starts a detached action's supervisor.
#[derive(Debug, Clone)]
pub struct Exec {
    /// The `corral` binary.
    pub exe: PathBuf,
    /// The tmux the completion is reported through.
    pub tmux: Tmux,
}

impl Exec {
    /// Supervisors made of this very binary, reporting through `tmux`.
    pub fn current(tmux: Tmux) -> std::io::Result<Exec> {
        Ok(Exec {
            exe: std::env::current_exe()?,
            tmux,
        })
    }

    /// Starts the supervisor of `pane`'s `action` running `command` for at most `timeout_s`
    /// seconds, and lets it go.
    pub fn spawn(
        &self,
        pane: &Pane,
        action: &Action,
        command: &str,
        timeout_s: u64,
    ) -> Result<(), ProcessError> {
        let row = &pane.row;
        let mut invocation = Invocation::new(&self.exe)
            .args(["internal", "exec-action", "--command"])
            .arg(command)
            .arg("--timeout-s")
            .arg(timeout_s.to_string())
            .args(["--pane", &row.pane, "--action", action.as_str()])
            .args(["--agent", &row.agent, "--session", &row.session])
            .args(["--locator", &row.locator])
            .args(["--repo", row.repo.as_deref().unwrap_or_default()])
            .args(["--branch", row.branch.as_deref().unwrap_or_default()])
            .args(["--tty", &pane.facts.tty])
            .arg("--tmux-bin")
            .arg(self.tmux.bin());
        if !pane.facts.cwd.is_empty() {
            invocation = invocation.args(["--cwd", &pane.facts.cwd]);
        }
        if let Some(socket) = self.tmux.socket() {
            invocation = invocation.arg("--tmux-socket").arg(socket.to_arg());
        }
        process::start(&invocation, process::Spawn::default()).map(process::Background::detach)
    }
}
