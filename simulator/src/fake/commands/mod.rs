//! The fake's commands: the dispatcher that sends each parsed command to its implementation, and
//! the working set one invocation's commands share (the loaded server, the output, the log
//! lines). The implementations are grouped by kind, in reading order: `list` (output through a
//! format: `list-panes`, `list-clients`, `display-message`), `options` (`show-options`,
//! `set-option`), `create` (`new-session`, `new-window`, `split-window`, `respawn-pane`),
//! `control` (`has-session`, `kill-*`, `select-*`, `send-keys`) and `flow` (`if-shell -F`,
//! which runs a command string of its own).

mod control;
mod create;
mod flow;
mod list;
mod options;

use super::PREFIX;
use super::cli::Command;
use super::escape;
use super::format::{Format, FormatError, Var};
use super::state::{Client, PanePos, Server, ServerDir};
use super::target;
use super::vars::Context;

/// An error from one command: tmux's own text, or the fake's refusal of what it does not
/// implement.
#[derive(Debug)]
enum CmdError {
    Tmux(String),
    Unsupported(String),
}

fn tmux(text: impl Into<String>) -> CmdError {
    CmdError::Tmux(text.into())
}

fn unsupported(text: impl Into<String>) -> CmdError {
    CmdError::Unsupported(text.into())
}

/// What an invocation's commands left behind.
#[derive(Debug)]
pub struct Ran {
    /// The server's state after them.
    pub server: Server,
    /// Whether the server stopped (`kill-server`).
    pub stopped: bool,
    /// Whether the state changed and must be written back.
    pub dirty: bool,
    /// Bytes for stdout.
    pub stdout: Vec<u8>,
    /// Bytes for stderr: each error's line.
    pub stderr: Vec<u8>,
    /// Exit status.
    pub code: i32,
    /// Lines for the observable log (`send-keys`, `display-message -c`).
    pub log: Vec<String>,
}

/// Runs the commands in order against a loaded server, stopping at the first error as tmux
/// does. `starts` says the invocation creates the server (its state is new, so written back);
/// `faults` says whether a command run by `if-shell` meets its injected fault (the top-level
/// commands met theirs before this).
pub fn run(
    dir: &ServerDir,
    server: Server,
    commands: &[Command],
    utf8: bool,
    starts: bool,
    faults: bool,
) -> Ran {
    let mut run = Run {
        dir,
        server,
        utf8,
        dirty: starts,
        stopped: false,
        stdout: Vec::new(),
        stderr: Vec::new(),
        code: 0,
        log: Vec::new(),
        host: None,
        faults,
    };
    run.sequence(commands);
    Ran {
        server: run.server,
        stopped: run.stopped,
        dirty: run.dirty,
        stdout: run.stdout,
        stderr: run.stderr,
        code: run.code,
        log: run.log,
    }
}

/// One invocation's working set.
struct Run<'a> {
    dir: &'a ServerDir,
    server: Server,
    /// Whether output lines pass unsanitized (a UTF-8 client).
    utf8: bool,
    dirty: bool,
    stopped: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// The exit status so far: 1 after an error.
    code: i32,
    log: Vec<String>,
    host: Option<String>,
    /// Whether commands run by `if-shell` meet injected faults.
    faults: bool,
}

impl Run<'_> {
    /// Runs a command sequence in order; an error ends it (tmux runs no command of a sequence
    /// after one that failed) and makes the invocation's exit status 1.
    fn sequence(&mut self, commands: &[Command]) {
        for command in commands {
            if self.stopped {
                break;
            }
            if let Err(err) = self.command(command) {
                self.error(err);
                break;
            }
        }
    }

    /// Records a command's error: its line on stderr, exit status 1.
    fn error(&mut self, err: CmdError) {
        let line = match err {
            CmdError::Tmux(text) => text,
            CmdError::Unsupported(text) => format!("{PREFIX}: {text}"),
        };
        if self.utf8 {
            self.stderr.extend_from_slice(line.as_bytes());
        } else {
            self.stderr.extend(escape::sanitize(line.as_bytes()));
        }
        self.stderr.push(b'\n');
        self.code = 1;
    }

    /// Sends a command to its implementation.
    fn command(&mut self, command: &Command) -> Result<(), CmdError> {
        match command.name {
            "if-shell" => self.if_shell(command),
            "list-panes" => self.list_panes(command),
            "display-message" => self.display_message(command),
            "list-clients" => self.list_clients(command),
            "show-options" => self.show_options(command),
            "set-option" => self.set_option(command),
            "new-session" => self.new_session(command),
            "new-window" => self.new_window(command),
            "split-window" => self.split_window(command),
            "respawn-pane" => self.respawn_pane(command),
            "has-session" => self.has_session(command),
            "kill-pane" => self.kill_pane(command),
            "kill-session" => self.kill_session(command),
            "kill-server" => self.kill_server(),
            "select-pane" => self.select_pane(command),
            "select-layout" => self.select_layout(command),
            "send-keys" => self.send_keys(command),
            other => Err(unsupported(format!("{other} is not supported"))),
        }
    }

    fn print(&mut self, line: &str) {
        if self.utf8 {
            self.stdout.extend_from_slice(line.as_bytes());
        } else {
            self.stdout.extend(escape::sanitize(line.as_bytes()));
        }
        self.stdout.push(b'\n');
    }

    fn host(&mut self) -> String {
        self.host.get_or_insert_with(crate::env::hostname).clone()
    }

    /// Expands a format for a pane and client; `line` is the line number in a listing.
    fn expand(
        &mut self,
        command: &Command,
        format: &Format,
        pos: Option<PanePos>,
        client: Option<&Client>,
        line: Option<usize>,
    ) -> Result<String, CmdError> {
        let host = self.host();
        let socket_path = self.dir.path.display().to_string();
        let context = Context {
            server: &self.server,
            dir: self.dir,
            socket_path: &socket_path,
            host: &host,
            pos,
            client,
            command: command.name,
            line,
        };
        format
            .expand(|var| match var {
                Var::Option(name) => Ok(context.option(name)),
                Var::TmuxOption(name) => context.server_option(name).map(Some).ok_or_else(|| {
                    FormatError {
                        message: format!(
                            "tmux option #{{{name}}} is not modelled by the fake (only options set with set-option are)"
                        ),
                    }
                }),
                Var::Builtin(variable) => variable.value(&context).map_err(|missing| FormatError {
                    message: format!(
                        "format variable #{{{}}} is not modelled by the fake{}{}",
                        missing.name,
                        if missing.why.is_empty() { "" } else { " " },
                        missing.why
                    ),
                }),
            })
            .map_err(|e| unsupported(e.to_string()))
    }

    fn pane_target(&self, command: &Command) -> Result<PanePos, CmdError> {
        let t = command
            .value('t')
            .ok_or_else(|| unsupported(format!("{} needs -t in the fake", command.name)))?;
        target::pane(&self.server, t).map_err(|m| tmux(m.message))
    }

    fn options_target(&self, command: &Command) -> Result<PanePos, CmdError> {
        let t = command
            .value('t')
            .ok_or_else(|| unsupported(format!("{} -p needs -t in the fake", command.name)))?;
        target::pane(&self.server, t).map_err(|_| tmux(format!("no such pane: {t}")))
    }

    fn parse_format(&self, command: &Command) -> Result<Format, CmdError> {
        let text = command.value('F').ok_or_else(|| {
            unsupported(format!(
                "{} without -F (tmux's default format)",
                command.name
            ))
        })?;
        Format::parse(text).map_err(|e| unsupported(e.to_string()))
    }

    fn next_pid(&mut self) -> u32 {
        self.server.next_pid += 1;
        self.server.next_pid
    }
}
