//! `show-options` and `set-option`: pane user options (`@name`) with tmux's quoting (and, set
//! only, window, session and global ones, which formats read), and the
//! server options the fake stores without interpreting them. With `-q`, tmux 3.3a is quiet about
//! a pane that does not exist too: the command does nothing and succeeds.

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::Command;
use crate::fake::escape;
use crate::fake::state::PanePos;
use crate::fake::target;

impl Run<'_> {
    pub(super) fn show_options(&mut self, command: &Command) -> Result<(), CmdError> {
        if command.has('g') || command.has('s') || command.has('w') {
            let name = command.args.first().map(String::as_str);
            if name != Some("allow-passthrough") {
                return Err(unsupported(
                    "show-options -g/-s/-w is only supported for allow-passthrough",
                ));
            }
            let value = self
                .server
                .options
                .get("allow-passthrough")
                .cloned()
                .unwrap_or_else(|| "off".into());
            let line = if command.has('v') {
                value
            } else {
                format!("allow-passthrough {value}")
            };
            self.print(&line);
            return Ok(());
        }
        if !command.has('p') {
            return Err(unsupported("show-options needs -p (pane options)"));
        }
        let Some(pos) = self.quiet_target(command)? else {
            return Ok(());
        };
        let options = self.server.pane(pos).options.clone();
        let lines: Vec<String> = match command.args.first() {
            Some(name) => {
                if !name.starts_with('@') {
                    return Err(unsupported(format!(
                        "show-options -p {name}: only user options (@name) are supported"
                    )));
                }
                match options.get(name) {
                    Some(value) => vec![show_line(name, value, command.has('v'))],
                    None if command.has('q') => Vec::new(),
                    None => return Err(tmux(format!("invalid option: {name}"))),
                }
            }
            None => options
                .iter()
                .map(|(name, value)| show_line(name, value, command.has('v')))
                .collect(),
        };
        for line in lines {
            self.print(&line);
        }
        Ok(())
    }

    pub(super) fn set_option(&mut self, command: &Command) -> Result<(), CmdError> {
        let name = command.args[0].clone();
        let value = command.args.get(1).cloned();
        if !name.starts_with('@') && !command.has('p') {
            // Server, session and window options are stored, not interpreted.
            match (command.has('u'), value) {
                (true, _) => self.server.options.remove(&name),
                (false, Some(v)) => self.server.options.insert(name, v),
                (false, None) => return Err(tmux("empty value")),
            };
            self.dirty = true;
            return Ok(());
        }
        if !name.starts_with('@') {
            return Err(unsupported(format!(
                "set-option -p {name}: only user options (@name) are supported on panes"
            )));
        }
        if !command.has('p') {
            return self.set_scoped_user_option(command, name, value);
        }
        let Some(pos) = self.quiet_target(command)? else {
            return Ok(());
        };
        let pane = self.server.pane_mut(pos);
        if command.has('u') {
            pane.options.remove(&name);
        } else {
            let value = value.ok_or_else(|| tmux("empty value"))?;
            pane.options.insert(name, value);
        }
        self.dirty = true;
        Ok(())
    }
}

impl Run<'_> {
    /// A user option of a window (`-w`), the server (`-g`, `-s`) or a session (neither), which a
    /// format finds after the pane's own.
    fn set_scoped_user_option(
        &mut self,
        command: &Command,
        name: String,
        value: Option<String>,
    ) -> Result<(), CmdError> {
        let options = if command.has('g') || command.has('s') {
            &mut self.server.options
        } else {
            let pos = match command.value('t') {
                Some(t) => match target::pane(&self.server, t) {
                    Ok(pos) => pos,
                    Err(_) if command.has('q') => return Ok(()),
                    Err(missing) => return Err(tmux(missing.message)),
                },
                None => self
                    .server
                    .sessions_sorted()
                    .first()
                    .and_then(|s| self.server.session_active_pane(*s))
                    .ok_or_else(|| tmux("no current session"))?,
            };
            let session = &mut self.server.sessions[pos.session];
            if command.has('w') {
                &mut session.windows[pos.window].options
            } else {
                &mut session.options
            }
        };
        if command.has('u') {
            options.remove(&name);
        } else {
            options.insert(name, value.ok_or_else(|| tmux("empty value"))?);
        }
        self.dirty = true;
        Ok(())
    }

    /// The pane an options command targets; with `-q`, a target that does not exist is `None`:
    /// tmux 3.3a then does nothing, prints nothing and succeeds (the next chained command runs).
    fn quiet_target(&self, command: &Command) -> Result<Option<PanePos>, CmdError> {
        match self.options_target(command) {
            Ok(pos) => Ok(Some(pos)),
            Err(CmdError::Tmux(_)) if command.has('q') => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// One line of `show-options`: the value alone with `-v`, else the name and the value quoted.
fn show_line(name: &str, value: &str, value_only: bool) -> String {
    if value_only {
        value.to_owned()
    } else {
        format!("{name} {}", escape::args_escape(value))
    }
}
