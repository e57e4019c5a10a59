//! `if-shell -F`: a format, expanded for the target pane, chooses which of two command strings
//! runs (the first when the result is neither empty nor starts with `0`, as tmux 3.3a tests it).
//! The chosen string is parsed whole first (an unknown command fails `if-shell` and runs nothing
//! of it), then runs as a sequence of its own: an error stops that sequence and makes the exit
//! status 1, and the commands after `if-shell` still run, as tmux runs the commands it inserts.
//! Without `-F` it would run a shell command, which the fake does not.
//!
//! A command the string runs meets its injected fault where it runs: the commands before it have
//! run; a failure prints the fault's output and, unless its exit status is 0, ends the string's
//! sequence; a hang holds the server while it lasts.

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::{self, CliError, Command};
use crate::fake::faults::{self, Effect};
use crate::fake::format::Format;
use crate::fake::target;

impl Run<'_> {
    pub(super) fn if_shell(&mut self, command: &Command) -> Result<(), CmdError> {
        if !command.has('F') {
            return Err(unsupported(
                "if-shell without -F (a shell command) is not supported",
            ));
        }
        let format = Format::parse(&command.args[0]).map_err(|e| unsupported(e.to_string()))?;
        // The target may fail: a pane tmux cannot find expands as no pane at all.
        let pos = match command.value('t') {
            Some(t) => target::pane(&self.server, t).ok(),
            None if format.needs_target() => {
                return Err(unsupported(
                    "if-shell -F needs -t for pane, window or session variables",
                ));
            }
            None => None,
        };
        let value = self.expand(command, &format, pos, None, None)?;
        let chosen = if !value.is_empty() && !value.starts_with('0') {
            command.args.get(1)
        } else {
            command.args.get(2)
        };
        let Some(text) = chosen else {
            return Ok(());
        };
        let mut commands = Vec::new();
        for argv in cli::split_string(text).map_err(cli_error)? {
            commands.push(cli::parse_command(&argv).map_err(cli_error)?);
        }
        for command in &commands {
            if self.stopped {
                break;
            }
            let ran = match self.fault(command)? {
                None => self.command(command),
                Some(Effect::Fail {
                    exit_code,
                    stderr,
                    stdout,
                }) => {
                    if !stdout.is_empty() {
                        self.print(&stdout);
                    }
                    if exit_code == 0 {
                        continue;
                    }
                    if !stderr.is_empty() {
                        self.stderr.extend_from_slice(stderr.as_bytes());
                        self.stderr.push(b'\n');
                    }
                    self.code = exit_code;
                    break;
                }
                Some(Effect::Hang { ms }) => {
                    faults::hang(self.dir, ms);
                    self.command(command)
                }
                Some(Effect::HangAfter { ms }) => {
                    let ran = self.command(command);
                    faults::hang(self.dir, ms);
                    ran
                }
            };
            if let Err(err) = ran {
                self.error(err);
                break;
            }
        }
        Ok(())
    }

    /// The injected fault `command` meets, taken from the list (its `--times` counted down).
    fn fault(&mut self, command: &Command) -> Result<Option<Effect>, CmdError> {
        if !self.faults {
            return Ok(None);
        }
        let read = |e: std::io::Error| unsupported(format!("reading faults: {e}"));
        let mut list = faults::load(self.dir).map_err(read)?;
        let pane = command
            .value('t')
            .and_then(|t| target::pane(&self.server, t).ok())
            .map(|pos| format!("%{}", self.server.pane(pos).id));
        let hit = faults::take(&mut list, command.name, pane.as_deref());
        if hit.is_some() {
            faults::store(self.dir, &list)
                .map_err(|e| unsupported(format!("writing faults: {e}")))?;
        }
        Ok(hit)
    }
}

fn cli_error(err: CliError) -> CmdError {
    match err {
        CliError::Tmux(text) => tmux(text),
        CliError::Unsupported(text) => unsupported(text),
    }
}
