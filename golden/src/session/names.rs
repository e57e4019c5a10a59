//! The names a session may use before anything in it binds them, and the captures a player binds
//! for them before the first step: the host's tool name (`host_tool`, as its profile says: a
//! runtime dir outside `$XDG_RUNTIME_DIR` is `$TMPDIR/${host_tool}-${uid}`), the machine's (`host_name`,
//! `uid`), the case's places
//! (`socket_path`, `sim_dir`, `run_dir`, `config_dir`, `home_dir`; `tmux_socket`, the socket as
//! the hosts are given it: a name, `-L`), the host's files where its
//! profile puts them (`runtime_dir`, `device_store`, `config_file`), the tmux server's key
//! (`server_key`, which names a notification daemon's lock and socket), `pane.<name>` (each
//! fixture pane's id), `transcript.<name>` (the transcript the simulator wrote for a fixture
//! pane) and `label.<agent>.<action>` (the label the host's profile declares for an action: what a
//! permission card's option is named).

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::pattern::Captures;

/// The names of [`Prebound`]'s values but the fixture panes', as a session writes them
/// (`${run_dir}`).
pub const NAMES: [&str; 13] = [
    "host_tool",
    "host_name",
    "uid",
    "socket_path",
    "tmux_socket",
    "sim_dir",
    "run_dir",
    "config_dir",
    "home_dir",
    "runtime_dir",
    "device_store",
    "config_file",
    "server_key",
];

/// The key of the tmux server at `socket_path` (docs/protocol.md "The notification daemon"):
/// the first 16 hex digits of the path's SHA-256. A daemon's files are
/// `<runtime>/notify/daemon-<key>.lock` and `.sock`.
pub fn server_key(socket_path: &str) -> String {
    Sha256::digest(socket_path.as_bytes())[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Prefix of the names of fixture panes' ids (`pane.worker` = `%1`).
pub const PANE_PREFIX: &str = "pane.";

/// Prefix of the names of the transcripts the simulator wrote for fixture panes
/// (`transcript.worker`, an absolute path).
pub const TRANSCRIPT_PREFIX: &str = "transcript.";

/// Prefix of the names of the labels a host's profile declares for its actions
/// (`label.claude.approve`, the name of a permission card's approve option).
pub const LABEL_PREFIX: &str = "label.";

/// Whether a name is bound before the first step. Any `pane.` and `transcript.` name is: which
/// panes exist, and which have a transcript, is the fixture's business, known when the session is
/// played. So is a `label.` name the header's `manifests` needs declared (the loader checks that).
pub fn is_prebound(name: &str) -> bool {
    NAMES.contains(&name) || names_fixture_pane(name) || name.starts_with(LABEL_PREFIX)
}

/// Whether a name stands for something of a fixture pane (its id, its transcript).
pub fn names_fixture_pane(name: &str) -> bool {
    name.starts_with(PANE_PREFIX) || name.starts_with(TRANSCRIPT_PREFIX)
}

/// What a player binds before the first step. The runner binds the case's own; the replayer,
/// which has no case, fixed stand-ins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prebound {
    /// `host_tool`: the host's tool name (`corral`), from its profile.
    pub host_tool: String,
    /// `host_name`: this machine's name, which a host reports in `hello` and in every row.
    pub host_name: String,
    /// `uid`: the user id the hosts run as (a runtime dir outside `$XDG_RUNTIME_DIR` is
    /// `$TMPDIR/corral-${uid}`).
    pub uid: String,
    /// `socket_path`: the tmux socket's path, the rows' `server`.
    pub socket_path: String,
    /// `tmux_socket`: the tmux socket as the hosts are given it (the profile's `tmux_socket`
    /// variable): a name (`-L`), whose path `socket_path` ends in.
    pub tmux_socket: String,
    /// `sim_dir`: the simulator's state, `$CORRAL_SIM_DIR`.
    pub sim_dir: String,
    /// `run_dir`: the hosts' `$XDG_RUNTIME_DIR` (their runtime dir is `${run_dir}/corral`).
    pub run_dir: String,
    /// `config_dir`: the hosts' `$XDG_CONFIG_HOME` (the device store is
    /// `${config_dir}/corral/devices.toml`).
    pub config_dir: String,
    /// `home_dir`: the hosts' `$HOME`.
    pub home_dir: String,
    /// `runtime_dir`: the host's runtime dir, where its profile puts it (corral's:
    /// `${run_dir}/corral`).
    pub runtime_dir: String,
    /// `device_store`: the device store's path (corral's: `${config_dir}/corral/devices.toml`).
    pub device_store: String,
    /// `config_file`: the host's config file (corral's: `${config_dir}/corral/config.toml`).
    pub config_file: String,
    /// `pane.<name>`: each fixture pane's id by its name.
    pub panes: BTreeMap<String, String>,
    /// `transcript.<name>`: the path of the transcript the simulator wrote for a fixture pane,
    /// by the pane's name (the `@agent_transcript` it stamped, or the file a store walk finds).
    pub transcripts: BTreeMap<String, String>,
    /// `label.<agent>.<action>`: the label the host's profile declares for each action it
    /// declares one for.
    pub labels: BTreeMap<String, String>,
}

impl Prebound {
    /// The captures, each place under its name (and `server_key`, the key of
    /// `socket_path`) and each pane under `pane.<name>`.
    pub fn captures(&self) -> Captures {
        let key = server_key(&self.socket_path);
        let values = [
            &self.host_tool,
            &self.host_name,
            &self.uid,
            &self.socket_path,
            &self.tmux_socket,
            &self.sim_dir,
            &self.run_dir,
            &self.config_dir,
            &self.home_dir,
            &self.runtime_dir,
            &self.device_store,
            &self.config_file,
            &key,
        ];
        let mut captures: Captures = NAMES
            .iter()
            .zip(values)
            .map(|(name, value)| ((*name).to_owned(), Value::from(value.as_str())))
            .collect();
        for (name, id) in &self.panes {
            captures.insert(format!("{PANE_PREFIX}{name}"), Value::from(id.as_str()));
        }
        for (name, path) in &self.transcripts {
            captures.insert(
                format!("{TRANSCRIPT_PREFIX}{name}"),
                Value::from(path.as_str()),
            );
        }
        for (key, label) in &self.labels {
            captures.insert(format!("{LABEL_PREFIX}{key}"), Value::from(label.as_str()));
        }
        captures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_prebound_is_what_prebound_binds() {
        let prebound = Prebound {
            host_tool: "herd".into(),
            host_name: "studio".into(),
            uid: "1000".into(),
            socket_path: "/tmp/tmux-1/s".into(),
            tmux_socket: "s".into(),
            sim_dir: "/case/sim".into(),
            run_dir: "/case/run".into(),
            config_dir: "/case/config".into(),
            home_dir: "/case/home".into(),
            runtime_dir: "/case/run/herd".into(),
            device_store: "/case/config/herd/devices.toml".into(),
            config_file: "/case/config/herd/config.toml".into(),
            panes: BTreeMap::from([("worker".to_owned(), "%1".to_owned())]),
            transcripts: BTreeMap::from([("worker".to_owned(), "/case/t.jsonl".to_owned())]),
            labels: BTreeMap::from([("claude.approve".to_owned(), "Yes".to_owned())]),
        };
        let captures = prebound.captures();
        assert_eq!(captures["pane.worker"], Value::from("%1"));
        assert_eq!(captures["transcript.worker"], Value::from("/case/t.jsonl"));
        assert_eq!(captures["run_dir"], Value::from("/case/run"));
        assert_eq!(captures["tmux_socket"], Value::from("s"));
        assert_eq!(captures["runtime_dir"], Value::from("/case/run/herd"));
        assert_eq!(
            captures["device_store"],
            Value::from("/case/config/herd/devices.toml")
        );
        assert_eq!(captures["host_name"], Value::from("studio"));
        assert_eq!(captures["host_tool"], Value::from("herd"));
        // sha256("/tmp/tmux-1/s") = 686eb2f4d2dc31c8…
        assert_eq!(captures["server_key"], Value::from("686eb2f4d2dc31c8"));
        assert_eq!(captures["label.claude.approve"], Value::from("Yes"));
        assert_eq!(captures.len(), NAMES.len() + 3);
        assert!(captures.keys().all(|name| is_prebound(name)));
        assert!(is_prebound("pane.anything"));
        assert!(!is_prebound("host"));
    }
}
