//! The notification subsystem's documents: the payload a notify command reads on stdin (schema
//! 2) for a fire or a detached action's completion, the log line, the record of the last command
//! failure, and the transition ring `corral debug transitions --json` prints.
//!
//! Metadata only, never captured screen content; `title` appears only with `include_title`, and
//! the same writer feeds the command and the log so the two redact together.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::vocab::{
    Action, Detail, NotifyVar, Outcome, State, TransitionSource, Trigger, open_end,
};

/// Version of the notification payload and log line.
pub const NOTIFY_SCHEMA_VERSION: u32 = 2;

/// Version of the transition ring document.
pub const RING_SCHEMA_VERSION: u32 = 1;

/// How many transitions the ring keeps.
pub const RING_CAP: u32 = 256;

/// What a fire is about; shared by the payload and the log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Fire {
    /// Agent name.
    pub agent: String,
    /// Pane id.
    pub pane: String,
    /// The trigger word: `blocked`, `done`, `context_high` or `stall`.
    pub state: Trigger,
    /// The pane's detail, or null.
    pub detail: Option<Detail>,
    /// tmux session name.
    pub session: String,
    /// `session:window.pane`.
    pub locator: String,
    /// The pane title; present only with `include_title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Repository of the pane's working directory, `""` when none.
    pub repo: String,
    /// Branch of the pane's working directory, `""` when none.
    pub branch: String,
    /// How long the episode has lasted, in milliseconds (for `stall`: how long the pane had been
    /// working when it fired).
    pub since_ms: u64,
    /// Episode start, epoch milliseconds.
    pub episode_ms: u64,
    /// Context-window utilisation percent, or null.
    #[schemars(range(max = 100))]
    pub context_pct: Option<u8>,
}

/// The JSON a notify command reads on stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotifyPayload {
    /// Version of this document, 2.
    #[schemars(schema_with = "crate::envelope::document_version_2")]
    pub schema: u32,
    /// The fire.
    #[serde(flatten)]
    pub fire: Fire,
}

/// A detached action's completion, logged where a fire would carry `state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Completion {
    /// Agent name.
    pub agent: String,
    /// Pane id.
    pub pane: String,
    /// The action that completed.
    pub action: Action,
    /// How it ended.
    pub outcome: Outcome,
    /// tmux session name.
    pub session: String,
    /// `session:window.pane`.
    pub locator: String,
    /// Repository, `""` when none.
    pub repo: String,
    /// Branch, `""` when none.
    pub branch: String,
}

/// The JSON a notify command reads on stdin when a detached action completes: the completion
/// as its log line carries it, then the command's exit code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CompletionPayload {
    /// Version of this document, 2.
    #[schemars(schema_with = "crate::envelope::document_version_2")]
    pub schema: u32,
    /// The completion.
    #[serde(flatten)]
    pub completion: Completion,
    /// The action's exit code when it `exited`; null on `timeout` and `error`.
    pub exit_code: Option<i32>,
}

/// The last notification command that failed (`<runtime>/notify/command-failure.json`, and
/// `corral doctor`): written when a command cannot start, exits non-zero or is killed, removed
/// by the next command that exits 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandFailure {
    /// Epoch milliseconds the failure was seen.
    pub at_ms: u64,
    /// The command line, as configured.
    pub command: String,
    /// Why it failed, one line: `exited with status 3`, `cannot start: ...`, ...
    pub reason: String,
}

/// What one log line records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LogEntry {
    /// A notification fired (the line carries `state`).
    Fire(Fire),
    /// A detached action completed (the line carries `action` and `outcome`).
    Completion(Completion),
}

impl<'de> Deserialize<'de> for LogEntry {
    /// A line carrying `action` is a completion; any other is a fire. Reading by key instead of
    /// trying each shape keeps the error about the shape the line claims to be.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let fields = Map::<String, Value>::deserialize(deserializer)?;
        let completion = fields.contains_key("action");
        let fields = Value::Object(fields);
        if completion {
            serde_json::from_value(fields)
                .map(LogEntry::Completion)
                .map_err(D::Error::custom)
        } else {
            serde_json::from_value(fields)
                .map(LogEntry::Fire)
                .map_err(D::Error::custom)
        }
    }
}

/// One line of `notify.log`: the payload with `at` right after `schema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotifyLogLine {
    /// Version, 2.
    #[schemars(schema_with = "crate::envelope::document_version_2")]
    pub schema: u32,
    /// Epoch milliseconds of the fire.
    pub at: u64,
    /// The fire or completion.
    #[serde(flatten)]
    pub entry: LogEntry,
}

/// The daemon's memory of recent transitions, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TransitionRing {
    /// Version of this document, 1.
    #[schemars(schema_with = "crate::envelope::document_version_1")]
    pub schema: u32,
    /// How many transitions the ring keeps (256).
    pub cap: u32,
    /// How many transitions were recorded since the daemon started (may exceed `cap`).
    pub recorded: u64,
    /// The kept transitions, oldest first, including those that fired nothing.
    pub transitions: Vec<Transition>,
}

/// One observed transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Transition {
    /// Pane id.
    pub pane: String,
    /// State before, `""` when the pane appeared.
    #[serde(with = "open_end")]
    #[schemars(schema_with = "open_end::schema")]
    pub from: Option<State>,
    /// State after, `""` when the pane vanished.
    #[serde(with = "open_end")]
    #[schemars(schema_with = "open_end::schema")]
    pub to: Option<State>,
    /// Epoch milliseconds it was observed.
    pub at: u64,
    /// Which detection path observed it.
    pub source: TransitionSource,
}
/// The `CORRAL_*` environment of a notification command (docs/protocol.md, "Notification
/// environment"): the variables with a value are set, in this order; every other variable of the
/// set is removed from what the command inherits, so it never sees one left by whoever started
/// the process that runs it. The host's sinks and corral-remote's ring command both build it here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotifyEnv {
    /// Set, in this order.
    pub set: Vec<(NotifyVar, String)>,
    /// Removed.
    pub remove: Vec<NotifyVar>,
}

impl NotifyEnv {
    /// Sets `var` to `value`; an absent or empty value removes it instead.
    pub fn put(&mut self, var: NotifyVar, value: Option<String>) {
        self.set.retain(|(v, _)| *v != var);
        self.remove.retain(|v| *v != var);
        match value.filter(|v| !v.is_empty()) {
            Some(value) => self.set.push((var, value)),
            None => self.remove.push(var),
        }
    }

    /// A fire's: the twelve of a fire, the title only when the fire carries it.
    pub fn of_fire(fire: &Fire) -> NotifyEnv {
        let mut env = NotifyEnv::default();
        env.put(NotifyVar::Agent, Some(fire.agent.clone()));
        env.put(NotifyVar::Pane, Some(fire.pane.clone()));
        env.put(NotifyVar::State, Some(fire.state.to_string()));
        env.put(NotifyVar::Locator, Some(fire.locator.clone()));
        env.put(NotifyVar::Repo, Some(fire.repo.clone()));
        env.put(NotifyVar::Branch, Some(fire.branch.clone()));
        env.put(
            NotifyVar::Detail,
            fire.detail.as_ref().map(ToString::to_string),
        );
        env.put(NotifyVar::Session, Some(fire.session.clone()));
        env.put(NotifyVar::SinceMs, Some(fire.since_ms.to_string()));
        env.put(NotifyVar::EpisodeMs, Some(fire.episode_ms.to_string()));
        env.put(
            NotifyVar::ContextPct,
            fire.context_pct.map(|p| p.to_string()),
        );
        env.put(NotifyVar::Title, fire.title.clone());
        env
    }

    /// A detached action's completion: the fire's names where they apply, its action, outcome
    /// and exit code (when it exited); the rest removed.
    pub fn of_completion(completion: &Completion, exit_code: Option<i32>) -> NotifyEnv {
        let mut env = NotifyEnv::default();
        env.put(NotifyVar::Agent, Some(completion.agent.clone()));
        env.put(NotifyVar::Pane, Some(completion.pane.clone()));
        env.put(NotifyVar::Action, Some(completion.action.to_string()));
        env.put(NotifyVar::Outcome, Some(completion.outcome.to_string()));
        env.put(NotifyVar::ExitCode, exit_code.map(|c| c.to_string()));
        env.put(NotifyVar::Locator, Some(completion.locator.clone()));
        env.put(NotifyVar::Repo, Some(completion.repo.clone()));
        env.put(NotifyVar::Branch, Some(completion.branch.clone()));
        env.put(NotifyVar::Session, Some(completion.session.clone()));
        for var in [
            NotifyVar::State,
            NotifyVar::Detail,
            NotifyVar::SinceMs,
            NotifyVar::EpisodeMs,
            NotifyVar::ContextPct,
            NotifyVar::Title,
        ] {
            env.put(var, None);
        }
        env
    }
}
