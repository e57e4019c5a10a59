//! corral-remote's local documents: its config file (`remote.toml`, [`RemoteConfig`]) and, in
//! `--ndjson` mode, the command lines it reads on stdin ([`RemoteCommand`]) and the lines it
//! prints on stdout ([`RemoteLine`]).
//!
//! `remote.toml` (`--config FILE`, else `$XDG_CONFIG_HOME/corral/remote.toml`, else
//! `~/.config/corral/remote.toml`): a `[notify]` table and `[[host]]` tables. An unknown key
//! anywhere is an error naming the key and its line. A host has exactly one of `ssh`,
//! `local = true` and `command`; `ssh_options` goes with `ssh`; `local` needs `device`;
//! `command` takes neither `device` nor `corral`; names are unique, printable, without spaces.
//! Those rules span several keys, so the client checks them after reading, naming the line of the
//! host at fault: the type is generic over how a host is held ([`RemoteConfig<H>`]), so that a
//! reader can keep each host's place in the file (`toml::Spanned<RemoteHost>`) without a second
//! type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::card::Card;
use crate::dispatch::{Binder, Receipt};
use crate::request::{Budget, Selector};
use crate::response::Edge;
use crate::row::FleetRow;
use crate::transcript::{EventHeader, Window};
use crate::vocab::{Detail, ErrorCode, Scope};

/// `remote.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "RemoteConfig")]
pub struct RemoteConfig<H = RemoteHost> {
    /// What a ring does besides showing the pane.
    pub notify: RemoteNotify,
    /// The hosts, in the order they are shown: `[[host]]` tables.
    #[serde(rename = "host")]
    pub hosts: Vec<H>,
}

impl<H> Default for RemoteConfig<H> {
    fn default() -> Self {
        RemoteConfig {
            notify: RemoteNotify::default(),
            hosts: Vec::new(),
        }
    }
}

/// `[notify]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteNotify {
    /// Write BEL to the terminal when a pane blocks (the TUI only; default true).
    pub bell: bool,
    /// Run `sh -c <command>` on every ring, with the host's notification payload
    /// (`notify-payload.schema.json`) on stdin and its `CORRAL_*` variables, plus `CORRAL_HOST`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl Default for RemoteNotify {
    fn default() -> Self {
        RemoteNotify {
            bell: true,
            command: None,
        }
    }
}

/// One `[[host]]` table: exactly one of `ssh`, `local = true` and `command`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoteHost {
    /// The label shown on every line and used by headless commands: unique, no spaces.
    pub name: String,
    /// An ssh destination (`user@host`, or a `Host` of `~/.ssh/config`), run as
    /// `ssh -T -o BatchMode=yes` with keep-alives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<String>,
    /// ssh's own options, put before the destination (`-p`, `-i`, `-o Name=value`); with `ssh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_options: Option<Vec<String>>,
    /// `true`: `corral serve --stdio --device <device>` on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<bool>,
    /// An argv to start instead (a wrapper, another host, the demo's `connect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// With `ssh`: the fingerprint to serve when the key has no forced command; with `local`:
    /// required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The `corral` program to run there (default `corral`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corral: Option<String>,
}

/// One command line `corral-remote --ndjson` reads on stdin. `host` is the configured name,
/// `pane` the pane id. An answer (`approve`, `deny`, `answer`, `reject`) quotes, in `binder`, the
/// binder of the `card` line it answers, as printed (`card.binder`): a script answers only what
/// it read, and nothing fetches a card on an answer's behalf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum RemoteCommand {
    /// Fetch what the pane asks (a `card` line answers).
    Card {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
    },
    /// Allow the card's permission once.
    Approve {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card line answered.
        binder: Binder,
    },
    /// Reject the card's permission; with `text`, telling the agent why.
    Deny {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card line answered.
        binder: Binder,
        /// Why, for the agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// Answer the card's questions: one list of chosen labels (or free text) per question.
    Answer {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card line answered.
        binder: Binder,
        /// The answers.
        answers: Vec<Vec<String>>,
    },
    /// Dismiss the card's questions.
    Reject {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card line answered.
        binder: Binder,
    },
    /// Send a line of text to the pane.
    Steer {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The line.
        text: String,
        /// Interrupt first (`steer_now`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        now: bool,
    },
    /// Interrupt the pane.
    Interrupt {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
    },
    /// The newest page of the pane's transcript, or with `older` the page before the last one.
    Window {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// Page back from the last page.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        older: bool,
        /// Events at most.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last: Option<u32>,
        /// Byte budget, as on the wire.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<Budget>,
    },
    /// One event in full: the `index`-th of the last page (0: the newest), or by `cursor`.
    Event {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// Its place in the last page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<usize>,
        /// A cursor the host minted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<String>,
    },
    /// Read the host's fleet again.
    Snapshot {
        /// Host name.
        host: String,
        /// As on the wire.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        selector: Option<Selector>,
    },
    /// Subscribe to edges again (follow mode already did; a host refuses a second one).
    Subscribe {
        /// Host name.
        host: String,
        /// As on the wire.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        selector: Option<Selector>,
    },
    /// Look receipts up in the host's ledger.
    Receipts {
        /// Host name.
        host: String,
        /// Only this slot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        slot: Option<String>,
        /// Only those claimed since (epoch ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_ms: Option<u64>,
    },
    /// Print the rows as the TUI shows them (a `fleet` line).
    Fleet {
        /// Only this host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// Only these states: `idle`, `working`, `blocked`, `unknown`, `done`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Vec<String>>,
        /// Only this agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// Close every connection and exit.
    Quit {},
}

/// One line `corral-remote --ndjson` prints on stdout; `ev` says which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum RemoteLine {
    /// A host's link changed.
    Host {
        /// Host name.
        host: String,
        /// The link, and what goes with it.
        #[serde(flatten)]
        link: LinkLine,
    },
    /// A line the client could not use, or an error nothing asked for.
    Fault {
        /// Host name.
        host: String,
        /// What was wrong.
        message: String,
        /// How many faults this host showed so far.
        count: u32,
    },
    /// A row was added, changed or removed.
    Row {
        /// Host name.
        host: String,
        /// What happened.
        change: RowChangeWord,
        /// The wire row (the last one seen, for a removed pane).
        row: FleetRow,
    },
    /// The host streamed a transition.
    Edge {
        /// Host name.
        host: String,
        /// The edge.
        edge: Edge,
    },
    /// A snapshot was answered.
    Snapshot {
        /// Host name.
        host: String,
        /// How many rows.
        rows: usize,
        /// Not narrowed by a selector.
        whole: bool,
    },
    /// The subscription was acknowledged.
    Subscribed {
        /// Host name.
        host: String,
    },
    /// A card: its `binder` is what an answer quotes.
    Card {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The card.
        card: Card,
    },
    /// A card read earlier no longer stands: its pane moved on.
    CardChanged {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card that changed.
        binder: Option<Binder>,
        /// How the pane moved on.
        reason: Option<String>,
    },
    /// A dispatch's receipt; `retry` when a locked one goes again.
    Receipt {
        /// Host name.
        host: String,
        /// The receipt.
        receipt: Receipt,
        /// The attempt that follows a `locked` refusal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry: Option<u32>,
    },
    /// A transcript page.
    Window {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// It pages back from an earlier one.
        older: bool,
        /// The page.
        window: Window,
    },
    /// One event in full.
    Event {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The event, its body populated.
        event: EventHeader,
    },
    /// Receipts looked up.
    Receipts {
        /// Host name.
        host: String,
        /// The entries.
        receipts: Vec<Receipt>,
    },
    /// A request refused or not sent.
    Failed {
        /// Host name.
        host: String,
        /// The pane the request named.
        pane: Option<String>,
        /// What failed: a request's name (`card`, `dispatch`, ...) or `ring command`.
        request: String,
        /// The host's error code, when it answered with one.
        code: Option<ErrorCode>,
        /// Why.
        message: String,
    },
    /// A pane became blocked: the ring, once per episode.
    Attention {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// Agent name.
        agent: String,
        /// What it waits on.
        detail: Option<Detail>,
        /// The episode that rang.
        episode_ms: u64,
        /// `session:window.pane`.
        locator: String,
        /// Its repository.
        repo: Option<String>,
        /// Its branch.
        branch: Option<String>,
    },
    /// The answer to `fleet`.
    Fleet {
        /// Every host: its link and counts.
        hosts: Vec<FleetHostLine>,
        /// The rows as shown: blocked first, filtered.
        rows: Vec<FleetRowLine>,
    },
    /// A command line that could not be used.
    Error {
        /// Why.
        message: String,
        /// The line (its first 200 characters).
        line: String,
    },
}

/// A host's link on a `host` line, with what goes with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "link", rename_all = "snake_case")]
pub enum LinkLine {
    /// Starting its process, or saying hello.
    Connecting,
    /// The handshake was answered.
    Connected {
        /// The scopes the host granted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scopes: Option<Vec<Scope>>,
        /// The host's own name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host_name: Option<String>,
        /// The host's version.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_version: Option<String>,
    },
    /// Dropped: why, and when the next attempt starts.
    Disconnected {
        /// Why.
        reason: String,
        /// In how long the next attempt starts; null when none is planned.
        retry_in_ms: Option<u64>,
    },
    /// The host refused the device (`scope-denied`, exit 2): not retried.
    Revoked {
        /// The host's message.
        reason: String,
    },
}

/// The link of a host, as a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkWord {
    /// Starting, or saying hello.
    Connecting,
    /// Answered its handshake.
    Connected,
    /// Dropped.
    Disconnected,
    /// Refused the device.
    Revoked,
}

/// What happened to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RowChangeWord {
    /// A pane the client did not have.
    Added,
    /// A pane whose row differs.
    Changed,
    /// A pane that is gone.
    Removed,
}

/// A host on a `fleet` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FleetHostLine {
    /// Host name.
    pub host: String,
    /// Its link.
    pub link: LinkWord,
    /// When it last said anything (epoch ms).
    pub last_news_ms: Option<u64>,
    /// Its agents.
    pub agents: usize,
    /// Blocked.
    pub blocked: usize,
    /// Working.
    pub working: usize,
    /// Idle.
    pub idle: usize,
    /// Unknown.
    pub unknown: usize,
    /// Idle with output nobody has looked at.
    pub done: usize,
}

/// A row on a `fleet` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetRowLine {
    /// Host name.
    pub host: String,
    /// How long a blocked row has waited.
    pub waited_ms: Option<u64>,
    /// Its host is not connected: the row is what it last said.
    pub stale: bool,
    /// The wire row.
    pub row: FleetRow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_tables_is_the_default_and_hosts_keep_their_order() {
        let empty: RemoteConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, RemoteConfig::default());
        assert!(empty.notify.bell);
        let two: RemoteConfig = serde_json::from_value(serde_json::json!({
            "host": [{"name": "b", "ssh": "b.lan"}, {"name": "a", "local": true, "device": "d"}]
        }))
        .unwrap();
        let names: Vec<&str> = two.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(two.hosts[1].local, Some(true));
    }

    #[test]
    fn headless_lines_read_back_as_written() {
        let command: RemoteCommand = serde_json::from_str(
            r#"{"cmd":"approve","host":"a","pane":"%1","binder":{"expect_episode_ms":5}}"#,
        )
        .unwrap();
        assert!(
            matches!(command, RemoteCommand::Approve { ref binder, .. } if binder.expect_episode_ms == 5)
        );
        assert_eq!(
            serde_json::to_string(&command).unwrap(),
            r#"{"cmd":"approve","host":"a","pane":"%1","binder":{"expect_episode_ms":5}}"#
        );
        for bad in [
            r#"{"cmd":"approve","host":"a","pane":"%1","binder":{"expect_episode_ms":5},"force":true}"#,
            r#"{"cmd":"fly"}"#,
            r#"{"cmd":"quit","now":1}"#,
        ] {
            assert!(serde_json::from_str::<RemoteCommand>(bad).is_err(), "{bad}");
        }
        let down = RemoteLine::Host {
            host: "a".into(),
            link: LinkLine::Disconnected {
                reason: "gone".into(),
                retry_in_ms: None,
            },
        };
        let text = serde_json::to_string(&down).unwrap();
        assert_eq!(
            text,
            r#"{"ev":"host","host":"a","link":"disconnected","reason":"gone","retry_in_ms":null}"#
        );
        assert_eq!(serde_json::from_str::<RemoteLine>(&text).unwrap(), down);
        assert_eq!(
            serde_json::to_string(&RemoteLine::Host {
                host: "a".into(),
                link: LinkLine::Connecting
            })
            .unwrap(),
            r#"{"ev":"host","host":"a","link":"connecting"}"#
        );
    }

    #[test]
    fn an_unknown_key_is_refused_at_every_level() {
        for json in [
            r#"{"hosts":[]}"#,
            r#"{"notify":{"bel":true}}"#,
            r#"{"host":[{"name":"a","ssh":"x","port":22}]}"#,
        ] {
            let err = serde_json::from_str::<RemoteConfig>(json).unwrap_err();
            assert!(
                err.to_string().starts_with("unknown field"),
                "{json}: {err}"
            );
        }
    }
}
