//! Delivering one fire, or one detached action's completion, to every sink in order
//! (docs/protocol.md "Sinks"): the status-line message to every attached client, the bell, OSC 9
//! and OSC 777 on the pane's tty, the command, the log line. A fire's status-line message goes
//! out with the claim of its marker, in the same tmux invocation (`markers.rs`); the sinks here
//! follow it. A sink that fails is logged and skipped; it never stops the sinks after it.

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

impl<T: NotifyTmux> Sinks<'_, T> {
    /// Delivers `fire` (of the pane whose tty is `tty`) at `now` to sinks 2 to 6: its claim
    /// showed the status-line message already.
    pub fn after_claim(&self, tty: &str, fire: &Fire, now: u64) {
        let text = format!("{} {}", fire.agent, fire.state);
        self.terminal(tty, &text, &fire.agent, fire.state.as_str());
        if let Some(command) = command::resolve(self.config, &fire.state) {
            let job = Job {
                command: command.to_owned(),
                stdin: json_line(&payload::payload(fire)),
                env: payload::env(fire),
            };
            self.runner.launch(job, self.launch);
        }
        self.log(&payload::log_line(LogEntry::Fire(fire.clone()), now));
    }

    /// Delivers a detached action's completion: the same sinks, `notify.command` as its
    /// command. A mute does not silence it.
    pub fn completion(&self, tty: &str, completion: &Completion, exit_code: Option<i32>, now: u64) {
        self.status(&payload::completion_text(completion, exit_code));
        let body = format!("{} {}", completion.action, completion.outcome);
        let text = format!("{} {body}", completion.agent);
        self.terminal(tty, &text, &completion.agent, &body);
        if let Some(command) = self
            .config
            .command
            .as_deref()
            .filter(|c| !c.trim().is_empty())
        {
            let job = Job {
                command: command.to_owned(),
                stdin: json_line(&payload::completion_payload(completion, exit_code)),
                env: payload::completion_env(completion, exit_code),
            };
            self.runner.launch(job, self.launch);
        }
        self.log(&payload::log_line(
            LogEntry::Completion(completion.clone()),
            now,
        ));
    }

    /// Sink 1 of a completion: the message on every attached client's status line.
    fn status(&self, message: &str) {
        let shown = self
            .tmux
            .list_clients()
            .and_then(|clients| self.tmux.display_message(&clients, message));
        if let Err(err) = shown {
            tracing::warn!(%err, "the status-line message was not shown");
        }
    }

    /// Sinks 2 to 4: bell, OSC 9 and OSC 777, in that order, in one write.
    fn terminal(&self, tty: &str, osc9_text: &str, title: &str, body: &str) {
        let mut bytes = Vec::new();
        if self.config.bell {
            bytes.extend(terminal::bell());
        }
        if self.config.osc {
            bytes.extend(terminal::osc9(osc9_text));
        }
        if self.config.osc_777 {
            bytes.extend(terminal::osc777(title, body));
        }
        if bytes.is_empty() {
            return;
        }
        if let Err(err) = terminal::write_tty(tty, &bytes) {
            tracing::warn!(%tty, %err, "the pane's tty was not written");
        }
    }

    /// Sink 6: the log line.
    fn log<L: serde::Serialize>(&self, line: &L) {
        if let Some(path) = self.log {
            let line = serde_json::to_string(line).expect("a log line always encodes");
            crate::files::append_log(path, &line);
        }
    }
}

/// A document as one JSON line.
fn json_line<D: serde::Serialize>(document: &D) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(document).expect("a payload always encodes");
    bytes.push(b'\n');
    bytes
}
