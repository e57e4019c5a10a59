//! Delivering one fire, or one detached action's completion, to every sink in order
//! (docs/protocol.md "Sinks", [`Sink`]): the status-line message to every attached client, the
//! bell, OSC 9 and OSC 777 on the pane's tty, the command, the log line. A fire's status-line
//! message goes out with the claim of its marker, in the same tmux invocation (`markers.rs`);
//! the sinks here follow it. A sink that fails is logged and skipped; it never stops the sinks
//! after it.

use std::path::{Path, PathBuf};

use schema::notify::{Completion, Fire, LogEntry};

use super::NotifyTmux;
use super::command::{self, Job, Launch, Runner};
use super::payload;
use super::terminal;
use schema::config::NotifyConfig;

/// The sinks of one `[notify]` config.
#[derive(Debug)]
pub struct Sinks<'a, T> {
    /// The config.
    pub config: &'a NotifyConfig,
    /// tmux, for the status line.
    pub tmux: &'a T,
    /// Runs the command.
    pub runner: &'a Runner,
    /// How this process launches a command.
    pub launch: &'a Launch,
    /// `notify.log`, expanded.
    pub log: Option<&'a Path>,
}

/// `notify.log` with `~` expanded against `home`.
pub fn log_path(config: &NotifyConfig, home: Option<&Path>) -> Option<PathBuf> {
    config
        .log
        .as_deref()
        .filter(|log| !log.is_empty())
        .map(|log| crate::files::expand_home(log, home))
}

/// The sinks, in their spec order (docs/protocol.md "Sinks"): every delivery goes through them
/// in [`Sink::ORDER`]. A fire's status-line message goes out with the claim of its marker, in
/// the same tmux invocation (`markers.rs`, `tmux::write::MarkerClaim`), so its delivery here
/// starts past it; a completion has no claim and shows it here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// 1: the message on every attached client's status line.
    StatusLine,
    /// 2: BEL on the pane's tty (`notify.bell`).
    Bell,
    /// 3: OSC 9 on the pane's tty (`notify.osc`).
    Osc9,
    /// 4: OSC 777 on the pane's tty (`notify.osc_777`).
    Osc777,
    /// 5: the command, payload on stdin (`notify.command`, per trigger).
    Command,
    /// 6: the log line (`notify.log`).
    Log,
}

impl Sink {
    /// Every sink, in the order a delivery goes through them.
    pub const ORDER: [Sink; 6] = [
        Sink::StatusLine,
        Sink::Bell,
        Sink::Osc9,
        Sink::Osc777,
        Sink::Command,
        Sink::Log,
    ];

    /// The sink's number in the spec (1 to 6).
    pub fn number(self) -> usize {
        Sink::ORDER
            .iter()
            .position(|s| *s == self)
            .map_or(0, |at| at + 1)
    }
}

/// What one delivery puts in each sink.
struct Delivery<'t> {
    /// The status-line message; `None` when the claim showed it already.
    status: Option<String>,
    /// The pane's tty.
    tty: &'t str,
    /// OSC 9's text.
    osc9: String,
    /// OSC 777's title and body.
    osc777: (String, String),
    /// The command's job, when a command is configured for it.
    job: Option<Job>,
    /// The log line, encoded.
    log: String,
}

impl<T: NotifyTmux> Sinks<'_, T> {
    /// Delivers `fire` (of the pane whose tty is `tty`) at `now` to every sink after the status
    /// line: its claim showed the status-line message already.
    pub fn after_claim(&self, tty: &str, fire: &Fire, now: u64) {
        let job = command::resolve(self.config, &fire.state).map(|command| Job {
            command: command.to_owned(),
            stdin: json_line(&payload::payload(fire)),
            env: schema::NotifyEnv::of_fire(fire),
        });
        self.deliver(Delivery {
            status: None,
            tty,
            osc9: format!("{} {}", fire.agent, fire.state),
            osc777: (fire.agent.clone(), fire.state.as_str().to_owned()),
            job,
            log: encoded(&payload::log_line(LogEntry::Fire(fire.clone()), now)),
        });
    }

    /// Delivers a detached action's completion: the same sinks, `notify.command` as its
    /// command. A mute does not silence it.
    pub fn completion(&self, tty: &str, completion: &Completion, exit_code: Option<i32>, now: u64) {
        let body = format!("{} {}", completion.action, completion.outcome);
        let job = self
            .config
            .command
            .as_deref()
            .filter(|c| !c.trim().is_empty())
            .map(|command| Job {
                command: command.to_owned(),
                stdin: json_line(&payload::completion_payload(completion, exit_code)),
                env: schema::NotifyEnv::of_completion(completion, exit_code),
            });
        self.deliver(Delivery {
            status: Some(payload::completion_text(completion, exit_code)),
            tty,
            osc9: format!("{} {body}", completion.agent),
            osc777: (completion.agent.clone(), body),
            job,
            log: encoded(&payload::log_line(
                LogEntry::Completion(completion.clone()),
                now,
            )),
        });
    }

    /// Goes through every sink in [`Sink::ORDER`]. The terminal sinks (bell, OSC 9, OSC 777)
    /// reach the tty in one write, made at the last of them. A sink that fails is logged and
    /// skipped.
    fn deliver(&self, delivery: Delivery<'_>) {
        let Delivery {
            status,
            tty,
            osc9,
            osc777: (title, body),
            mut job,
            log,
        } = delivery;
        let mut terminal_bytes = Vec::new();
        for sink in Sink::ORDER {
            match sink {
                Sink::StatusLine => {
                    if let Some(message) = &status {
                        self.status(message);
                    }
                }
                Sink::Bell => {
                    if self.config.bell {
                        terminal_bytes.extend(terminal::bell());
                    }
                }
                Sink::Osc9 => {
                    if self.config.osc {
                        terminal_bytes.extend(terminal::osc9(&osc9));
                    }
                }
                Sink::Osc777 => {
                    if self.config.osc_777 {
                        terminal_bytes.extend(terminal::osc777(&title, &body));
                    }
                    self.write_terminal(tty, &terminal_bytes);
                }
                Sink::Command => {
                    if let Some(job) = job.take() {
                        self.runner.launch(job, self.launch);
                    }
                }
                Sink::Log => {
                    if let Some(path) = self.log {
                        crate::files::append_log(path, &log);
                    }
                }
            }
        }
    }

    /// The status line: the message on every attached client's status line.
    fn status(&self, message: &str) {
        let shown = self
            .tmux
            .list_clients()
            .and_then(|clients| self.tmux.display_message(&clients, message));
        if let Err(err) = shown {
            tracing::warn!(sink = Sink::StatusLine.number(), %err, "the status-line message was not shown");
        }
    }

    /// The terminal sinks' bytes, in one write to the pane's tty (nothing when none is on).
    fn write_terminal(&self, tty: &str, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Err(err) = terminal::write_tty(tty, bytes) {
            tracing::warn!(sink = Sink::Bell.number(), %tty, %err, "the pane's tty was not written");
        }
    }
}

/// A log line, encoded.
fn encoded<L: serde::Serialize>(line: &L) -> String {
    serde_json::to_string(line).expect("a log line always encodes")
}

/// A document as one JSON line.
fn json_line<D: serde::Serialize>(document: &D) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(document).expect("a payload always encodes");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words docs/protocol.md's "Sinks" list opens the sink's line with.
    fn spec_words(sink: Sink) -> &'static str {
        match sink {
            Sink::StatusLine => "the tmux status-line message",
            Sink::Bell => "the bell",
            Sink::Osc9 => "OSC 9",
            Sink::Osc777 => "OSC 777",
            Sink::Command => "the command",
            Sink::Log => "the log",
        }
    }

    #[test]
    fn the_sinks_are_numbered_as_the_protocol_lists_them() {
        let doc = include_str!("../../../docs/protocol.md");
        let list = doc
            .split("### Sinks")
            .nth(1)
            .expect("docs/protocol.md has a Sinks section");
        for sink in Sink::ORDER {
            let line = format!("{}. {}", sink.number(), spec_words(sink));
            assert!(list.contains(&line), "docs/protocol.md lists no `{line}`");
        }
    }
}
