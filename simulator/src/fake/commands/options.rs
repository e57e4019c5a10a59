//! `show-options` and `set-option`: pane user options (`@name`) with tmux's quoting, and the
//! server options the fake stores without interpreting them. With `-q`, tmux 3.3a is quiet about
//! a pane that does not exist too: the command does nothing and succeeds.

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::Command;
use crate::fake::escape;
use crate::fake::state::PanePos;

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
            return Err(unsupported(
                "set-option of a user option needs -p (only pane options are modelled)",
            ));
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
