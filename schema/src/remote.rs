//! corral-remote's local documents: its config file (`remote.toml`) and, in `--ndjson` mode, the
//! command lines it reads on stdin and the lines it prints on stdout.
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
