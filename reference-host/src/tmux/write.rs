//! What the host writes to tmux: keys and text to a pane (dispatch), pane options (the hook's
//! stamps, the notification markers, mute), and status-line messages to clients (notifications).
//! Each call is one tmux invocation; several commands are chained with tmux's `;` separator.
//!
//! tmux reads an argument that *ends* in `;` as the end of a command (tmux 3.3a drops the `;`),
//! and an argument ending in `\;` as a literal `;`. So every argument that carries data (text,
//! option values, messages) goes through [`data`], which turns a final `;` into `\;`; and text is
//! sent after `--`, so a text that starts with `-` is not read as flags.

use super::{Tmux, TmuxError};

/// tmux's command separator, as its own argument.
const THEN: &str = ";";

/// A data argument that tmux will pass through unchanged.
pub fn data(text: &str) -> String {
    match text.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => text.to_owned(),
    }
}

/// What one pane option write does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionWrite<'a> {
    /// `set-option -p -t <pane> <name> <value>`.
    Set(&'a str, &'a str),
    /// `set-option -p -u -t <pane> <name>`.
    Unset(&'a str),
}

/// One piece of what a dispatch sends to a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input<'a> {
    /// tmux key names (`Enter`, `Escape`, `1`, `C-c`).
    Keys(&'a [String]),
    /// Text typed literally.
    Text(&'a str),
}

impl Tmux {
    /// Sends `inputs` to `pane`, in order, in one invocation.
    pub fn send(&self, pane: &str, inputs: &[Input<'_>]) -> Result<(), TmuxError> {
        let mut args: Vec<String> = Vec::new();
        for input in inputs {
            let command = match input {
                Input::Keys([]) => continue,
                Input::Keys(keys) => {
                    let mut command = vec!["send-keys".into(), "-t".into(), pane.into()];
                    command.extend(keys.iter().map(|k| data(k)));
                    command
                }
                Input::Text(text) => vec![
                    "send-keys".into(),
                    "-t".into(),
                    pane.into(),
                    "-l".into(),
                    "--".into(),
                    data(text),
                ],
            };
            if !args.is_empty() {
                args.push(THEN.into());
            }
            args.extend(command);
        }
        if args.is_empty() {
            return Ok(());
        }
        self.run(&args).map(drop)
    }

    /// Sets and unsets options of `pane`, in one invocation.
    pub fn set_pane_options(
        &self,
        pane: &str,
        writes: &[OptionWrite<'_>],
    ) -> Result<(), TmuxError> {
        let mut args: Vec<String> = Vec::new();
        for write in writes {
            if !args.is_empty() {
                args.push(THEN.into());
            }
            match write {
                OptionWrite::Set(name, value) => args.extend([
                    "set-option".into(),
                    "-p".into(),
                    "-t".into(),
                    pane.into(),
                    (*name).into(),
                    data(value),
                ]),
                OptionWrite::Unset(name) => args.extend([
                    "set-option".into(),
                    "-p".into(),
                    "-u".into(),
                    "-t".into(),
                    pane.into(),
                    (*name).into(),
                ]),
            }
        }
        if args.is_empty() {
            return Ok(());
        }
        self.run(&args).map(drop)
    }

    /// Sets option `name` of `pane` to `value` and reads it back, in one invocation: true only
    /// when tmux holds `value` afterwards. A server that went away answers nothing, so a
    /// notification marker is never taken as written when it was not.
    pub fn set_pane_option_confirmed(
        &self,
        pane: &str,
        name: &str,
        value: &str,
    ) -> Result<bool, TmuxError> {
        let out = self.run(&[
            "set-option".into(),
            "-p".into(),
            "-t".into(),
            pane.into(),
            name.into(),
            data(value),
            THEN.into(),
            "show-options".into(),
            "-p".into(),
            "-v".into(),
            "-t".into(),
            pane.into(),
            name.into(),
        ])?;
        let text = String::from_utf8_lossy(&out);
        Ok(text.strip_suffix('\n').unwrap_or(&text) == value)
    }

    /// The names of the clients attached to the server.
    pub fn list_clients(&self) -> Result<Vec<String>, TmuxError> {
        let out = self.run(&["list-clients".into(), "-F".into(), "#{client_name}".into()])?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// Shows `message` on the status line of every client in `clients`, in one invocation.
    /// tmux expands the message as a format: a caller doubles every `#` it means literally.
    pub fn display_message(&self, clients: &[String], message: &str) -> Result<(), TmuxError> {
        let mut args: Vec<String> = Vec::new();
        for client in clients {
            if !args.is_empty() {
                args.push(THEN.into());
            }
            args.extend([
                "display-message".into(),
                "-c".into(),
                client.clone(),
                data(message),
            ]);
        }
        if args.is_empty() {
            return Ok(());
        }
        self.run(&args).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_semicolon_is_escaped_and_nothing_else_changes() {
        assert_eq!(data("abc;"), "abc\\;");
        assert_eq!(data(";"), "\\;");
        assert_eq!(data("a;b"), "a;b");
        assert_eq!(data("z\\;"), "z\\\\;");
        assert_eq!(data("-rf"), "-rf");
    }
}
