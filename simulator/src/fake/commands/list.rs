//! Commands that print through a format: `list-panes`, `list-clients`, and `display-message`
//! (printed with `-p`, else logged as a message to a client).

use serde_json::json;

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::Command;
use crate::fake::format::Format;
use crate::fake::state::{Client, PanePos};
use crate::fake::target;

impl Run<'_> {
    pub(super) fn list_panes(&mut self, command: &Command) -> Result<(), CmdError> {
        let format = self.parse_format(command)?;
        let panes = if command.has('a') {
            self.server.all_panes()
        } else if command.has('s') {
            let session = match command.value('t') {
                Some(t) => target::session(&self.server, t).map_err(|m| tmux(m.message))?,
                None => self.server.sessions_sorted()[0],
            };
            self.server.session_panes(session)
        } else {
            let pos = match command.value('t') {
                Some(_) => self.pane_target(command)?,
                None => self
                    .server
                    .session_active_pane(self.server.sessions_sorted()[0])
                    .ok_or_else(|| tmux("no current window"))?,
            };
            let count = self.server.sessions[pos.session].windows[pos.window]
                .panes
                .len();
            (0..count).map(|pane| PanePos { pane, ..pos }).collect()
        };
        // Every line is expanded before any is printed: a failed one prints nothing but its error.
        // tmux numbers `#{line}` within each window's listing.
        let mut lines = Vec::with_capacity(panes.len());
        for pos in panes {
            lines.push(self.expand(command, &format, Some(pos), None, Some(pos.pane))?);
        }
        for line in lines {
            self.print(&line);
        }
        Ok(())
    }

    pub(super) fn list_clients(&mut self, command: &Command) -> Result<(), CmdError> {
        let format = self.parse_format(command)?;
        let only = match command.value('t') {
            Some(t) => Some(
                self.server.sessions
                    [target::session(&self.server, t).map_err(|m| tmux(m.message))?]
                .name
                .clone(),
            ),
            None => None,
        };
        let clients: Vec<Client> = self
            .server
            .clients
            .iter()
            .filter(|c| only.as_ref().is_none_or(|s| *s == c.session))
            .cloned()
            .collect();
        let mut lines = Vec::with_capacity(clients.len());
        for (n, client) in clients.iter().enumerate() {
            let pos = target::find_session(&self.server, &client.session)
                .and_then(|s| self.server.session_active_pane(s));
            lines.push(self.expand(command, &format, pos, Some(client), Some(n))?);
        }
        for line in lines {
            self.print(&line);
        }
        Ok(())
    }

    pub(super) fn display_message(&mut self, command: &Command) -> Result<(), CmdError> {
        let text = match (command.value('F'), command.args.first().map(String::as_str)) {
            (Some(f), None) | (None, Some(f)) => f.to_owned(),
            (Some(_), Some(_)) => return Err(tmux("only one of -F or argument must be given")),
            (None, None) => {
                return Err(unsupported(
                    "display-message without a format (tmux's default format)",
                ));
            }
        };
        let text = strftime(&text)?;
        let format = Format::parse(&text).map_err(|e| unsupported(e.to_string()))?;
        let client = match command.value('c') {
            Some(name) => match self.server.clients.iter().find(|c| c.name == name) {
                Some(client) => Some(client.clone()),
                // tmux does nothing for a client it cannot find.
                None => return Ok(()),
            },
            None => None,
        };
        let pos = match command.value('t') {
            Some(t) => match target::pane(&self.server, t) {
                Ok(pos) => Some(pos),
                Err(missing) => missing.partial,
            },
            None => match &client {
                Some(c) => target::find_session(&self.server, &c.session)
                    .and_then(|s| self.server.session_active_pane(s)),
                None if format.needs_target() => {
                    return Err(unsupported(
                        "display-message needs -t (or -c) for pane, window or session variables",
                    ));
                }
                None => None,
            },
        };
        let line = self.expand(command, &format, pos, client.as_ref(), None)?;
        if command.has('p') {
            self.print(&line);
        } else {
            self.log.push(
                json!({
                    "command": "display-message",
                    "client": client.as_ref().map(|c| c.name.clone()),
                    "text": line,
                })
                .to_string(),
            );
        }
        Ok(())
    }
}

/// tmux runs a `display-message` text through strftime(3) before it expands it as a format: `%%`
/// becomes `%`, and a conversion (`%d`, `%Y`, ...) becomes the time. The fake gives `%%` and
/// leaves a `%` before anything that is no conversion as it is, as tmux 3.3a does (`85% at`
/// stays); it refuses a real conversion, whose output would depend on the clock, so a caller that
/// forgot to double a `%` of its text fails here instead of showing a date.
fn strftime(text: &str) -> Result<String, CmdError> {
    const CONVERSIONS: &str = "aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZ+";
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('%') => {
                chars.next();
                out.push('%');
            }
            Some(next) if CONVERSIONS.contains(next) => {
                return Err(unsupported(format!(
                    "strftime conversion %{next} in a display-message text (double the % for a literal one)"
                )));
            }
            _ => out.push('%'),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::strftime;

    /// What tmux 3.3a printed for `display -p 'a 85% at %% z %Q x 100%'`: `a 85% at % z %Q x 100%`.
    #[test]
    fn percent_signs_go_through_strftime_as_tmux_does() {
        assert_eq!(
            strftime("a 85% at %% z %Q x 100%").unwrap(),
            "a 85% at % z %Q x 100%"
        );
        assert_eq!(strftime("50%%done %%Y").unwrap(), "50%done %Y");
        assert!(strftime("50%done").is_err());
        assert!(strftime("%Y").is_err());
    }
}
