//! Commands that probe or change the server without printing: `has-session`, `kill-pane`,
//! `kill-session`, `kill-server`, `select-pane` (`-T` sets the title), `select-layout` (a no-op),
//! and `send-keys` (logged, nothing runs).

use serde_json::json;

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::Command;
use crate::fake::target;

impl Run<'_> {
    pub(super) fn has_session(&mut self, command: &Command) -> Result<(), CmdError> {
        match command.value('t') {
            Some(t) => target::session(&self.server, t)
                .map(|_| ())
                .map_err(|m| tmux(m.message)),
            None => Ok(()),
        }
    }

    pub(super) fn kill_pane(&mut self, command: &Command) -> Result<(), CmdError> {
        let pos = self.pane_target(command)?;
        self.server.remove_pane(pos);
        self.dirty = true;
        Ok(())
    }

    pub(super) fn kill_session(&mut self, command: &Command) -> Result<(), CmdError> {
        let t = command
            .value('t')
            .ok_or_else(|| unsupported("kill-session needs -t"))?;
        let session = target::session(&self.server, t).map_err(|m| tmux(m.message))?;
        let name = self.server.sessions.remove(session).name;
        self.server.clients.retain(|c| c.session != name);
        self.dirty = true;
        Ok(())
    }

    pub(super) fn kill_server(&mut self) -> Result<(), CmdError> {
        self.stopped = true;
        Ok(())
    }

    pub(super) fn select_pane(&mut self, command: &Command) -> Result<(), CmdError> {
        let pos = self.pane_target(command)?;
        match command.value('T') {
            Some(title) => self.server.pane_mut(pos).title = title.to_owned(),
            None => {
                let id = self.server.pane(pos).id;
                let window = &mut self.server.sessions[pos.session].windows[pos.window];
                if window.active != id {
                    window.last = Some(window.active);
                    window.active = id;
                }
            }
        }
        self.dirty = true;
        Ok(())
    }

    pub(super) fn select_layout(&mut self, command: &Command) -> Result<(), CmdError> {
        if command.has('t') {
            self.pane_target(command)?;
        }
        Ok(())
    }

    pub(super) fn send_keys(&mut self, command: &Command) -> Result<(), CmdError> {
        let pos = self.pane_target(command)?;
        let id = self.server.pane(pos).id;
        self.log.push(
            json!({
                "command": "send-keys",
                "pane": format!("%{id}"),
                "literal": command.has('l'),
                "keys": command.args,
            })
            .to_string(),
        );
        Ok(())
    }
}
