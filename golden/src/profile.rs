//! Host profiles: everything the kit needs to know about a host under test and nothing the
//! protocol fixes. The protocol fixes the frames, the device store's records and the pane-option
//! contract; a host chooses its tool name, its command lines, the environment variables it reads,
//! where it keeps its files and how its daemon is started. corral's own profile
//! (`golden/profiles/corral.toml`) is the default; `corral-conformance --profile FILE` picks
//! another, and `corral-conformance profile init` writes a commented starting one
//! ([`STARTER`]).
//!
//! Templates: `{cli}` is the host's command line (`--host-cli`), `{device}` a device id,
//! `{pane}`, `{name}`, `{key}`, `{scope}`, `{trigger}` an operation's arguments, each
//! shell-quoted where it is replaced; `${config_dir}`, `${run_dir}`, `${home_dir}` and
//! `${server_key}` are the case's places as sessions name them.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Error;

/// The hello's host-version key when a profile names none.
pub const DEFAULT_VERSION_KEY: &str = "tool_version";

/// corral's profile, the default.
pub const CORRAL: &str = include_str!("../profiles/corral.toml");

/// A commented starting profile for another host (`corral-conformance profile init`).
pub const STARTER: &str = include_str!("../profiles/starter.toml");

/// What the kit needs to know about a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostProfile {
    /// The tool's name (`corral`, `herd`): reports name the host by it. Only the profile named
    /// `corral` runs the `corral-cli` suite.
    pub tool: String,
    /// The key of `hello`'s answer that carries the host's version: `tool_version` unless the
    /// host follows the original interface's `<tool>_version`.
    #[serde(default = "default_version_key")]
    pub version_key: String,
    /// The command that starts `serve` for one device, its frames on stdin and stdout:
    /// `{cli}` and `{device}` are replaced. `--host` replaces it.
    pub serve: String,
    /// The command an agent's hook runs, before the agent's name and the hook's (`{cli} event`
    /// for corral: `corral event claude PreToolUse`), the hook's payload on stdin. Absent: the
    /// host has no hook entry, and the cases whose agents run one are skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// The names of the environment variables the host reads.
    pub env: ProfileEnv,
    /// Where the host keeps its files, in the case's places.
    pub paths: ProfilePaths,
    /// How its notification daemon runs; absent when it has none (the `notify` suite is then
    /// skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<ProfileDaemon>,
    /// The host's command lines for the operations sessions need, by operation; an operation it
    /// has no command for skips the cases that need it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cli: BTreeMap<Operation, String>,
}

fn default_version_key() -> String {
    DEFAULT_VERSION_KEY.to_owned()
}

/// The environment variables a host reads, by what they say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileEnv {
    /// The tmux binary the host runs (the kit's fake tmux or a real one).
    pub tmux_bin: String,
    /// The tmux socket: a bare name means `-L NAME`, a path `-S PATH`.
    pub tmux_socket: String,
    /// The path of the host's config file, when the host reads one from a variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// Where a host keeps its files, as templates over the case's places (`${config_dir}` is the
/// hosts' `$XDG_CONFIG_HOME`, `${run_dir}` their `$XDG_RUNTIME_DIR`, `${home_dir}` their
/// `$HOME`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfilePaths {
    /// The config file the kit writes a session's `config` into (TOML).
    pub config_file: String,
    /// The device store (the protocol's record format), which the kit writes and revokes in.
    pub device_store: String,
    /// The host's runtime dir, shared by its processes (`${runtime_dir}` in sessions).
    pub runtime_dir: String,
}

/// How a host's notification daemon runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileDaemon {
    /// The command that runs it in the foreground for the case's tmux server; SIGTERM stops it.
    pub start: String,
    /// A path whose appearance means it is ready (a socket, a pid file), as a template over the
    /// case's places.
    pub ready: String,
}

/// An operation a session asks of the host's own command line.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Print the daemon's transition ring (`transition-ring.schema.json`) as JSON: `{cli}`.
    Transitions,
    /// Mute the pane `{pane}`'s notifications.
    Mute,
    /// Clear the pane `{pane}`'s mute.
    Unmute,
    /// Run the notification command for the trigger `{trigger}` with a representative payload.
    NotifyTest,
    /// Report the host's health as JSON (`doctor.schema.json`).
    Doctor,
    /// Enrol a device named `{name}` with the public key file `{key}` and the scope `{scope}`.
    Enrol,
    /// Grant the device `{device}` the scope `{scope}`.
    Grant,
    /// Revoke the device `{device}`.
    Revoke,
}

impl HostProfile {
    /// corral's profile.
    pub fn corral() -> HostProfile {
        HostProfile::parse(CORRAL, "golden/profiles/corral.toml").expect("corral's profile reads")
    }

    /// Reads a profile from its text; `shown` names it in errors.
    pub fn parse(text: &str, shown: &str) -> Result<HostProfile, Error> {
        let profile: HostProfile = toml::from_str(text)
            .map_err(|err| Error::in_file(shown, one_line(&err.to_string())))?;
        profile
            .check()
            .map_err(|err| Error::in_file(shown, err.message))?;
        Ok(profile)
    }

    /// Reads a profile file.
    pub fn load(path: &Path) -> Result<HostProfile, Error> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            Error::in_file(path, err.to_string()).what("reading the host profile")
        })?;
        HostProfile::parse(&text, &path.display().to_string())
    }

    /// Whether this is corral's own profile: only it runs the `corral-cli` suite.
    pub fn is_corral(&self) -> bool {
        self.tool == "corral"
    }

    /// What a profile must say beyond its shape: a tool name and version key a frame can carry,
    /// a `serve` that names the device, environment names a shell can set.
    fn check(&self) -> Result<(), Error> {
        let name_ok = |name: &str| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if !name_ok(&self.tool) {
            return Err(Error::new(format!(
                "`tool` must be a plain name (letters, digits, `-`, `_`), not {:?}",
                self.tool
            )));
        }
        if !name_ok(&self.version_key) || !self.version_key.ends_with("_version") {
            return Err(Error::new(format!(
                "`version_key` must be a key ending in `_version` (`tool_version`, `{}_version`), \
                 not {:?}",
                self.tool, self.version_key
            )));
        }
        if !self.serve.contains("{device}") {
            return Err(Error::new(
                "`serve` must name the device it serves with `{device}`",
            ));
        }
        let env_ok = |name: &str| {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        let names = [
            Some(&self.env.tmux_bin),
            Some(&self.env.tmux_socket),
            self.env.config.as_ref(),
        ];
        if let Some(bad) = names.into_iter().flatten().find(|name| !env_ok(name)) {
            return Err(Error::new(format!(
                "[env] {bad:?} is not an environment variable's name"
            )));
        }
        Ok(())
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `template` with each `{name}` replaced by its value, shell-quoted; a `{name}` with no value
/// stays as it is.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), &shell_quote(value));
    }
    out
}

/// Quotes a value for `sh` (left bare when it has nothing `sh` would read specially).
pub fn shell_quote(value: &str) -> String {
    if !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "%+,-./:=@_".contains(c))
    {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrals_profile_reads_and_is_corral() {
        let profile = HostProfile::corral();
        assert!(profile.is_corral());
        assert_eq!(profile.version_key, "tool_version");
        assert_eq!(profile.env.tmux_socket, "CORRAL_TMUX_SOCKET");
        assert_eq!(profile.paths.runtime_dir, "${run_dir}/corral");
        assert_eq!(
            profile.cli[&Operation::Transitions],
            "{cli} debug transitions --json"
        );
    }

    #[test]
    fn the_starter_reads_and_says_what_each_key_is() {
        let starter = HostProfile::parse(STARTER, "starter").unwrap();
        assert!(!starter.is_corral());
        assert_eq!(starter.version_key, "mytool_version");
        for key in [
            "tool",
            "version_key",
            "serve",
            "hook",
            "[env]",
            "[paths]",
            "[daemon]",
            "[cli]",
        ] {
            let said = STARTER
                .lines()
                .any(|line| line.trim_start().starts_with(key));
            assert!(said, "the starter has no {key}");
        }
        // Every line but the keys is a comment: a reader is told what each one is.
        assert!(STARTER.matches("\n#").count() > 30);
    }

    #[test]
    fn a_bad_profile_is_one_line_naming_what_is_wrong() {
        let with = |from: &str, to: &str| {
            assert!(CORRAL.contains(from), "{from}");
            HostProfile::parse(&CORRAL.replace(from, to), "p.toml")
                .unwrap_err()
                .to_string()
        };
        let err = with("tool = \"corral\"", "tool = \"my tool\"");
        assert!(
            err.starts_with("p.toml: `tool` must be a plain name"),
            "{err}"
        );
        let err = with(
            "version_key = \"tool_version\"",
            "version_key = \"version\"",
        );
        assert!(
            err.contains("`version_key` must be a key ending in `_version`"),
            "{err}"
        );
        let err = with("--device {device}", "--device x");
        assert!(err.contains("`serve` must name the device"), "{err}");
        let err = with("tmux_bin = \"CORRAL_TMUX_BIN\"", "tmux_bin = \"TMUX BIN\"");
        assert!(err.contains("not an environment variable's name"), "{err}");
        let err = with("[paths]", "[paths]\nsurprise = 1");
        assert!(
            err.starts_with("p.toml: ") && err.contains("surprise"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        let err = with("transitions = ", "transitionz = ");
        assert!(err.contains("transitionz"), "{err}");
    }

    #[test]
    fn a_version_key_defaults_and_templates_fill_quoted() {
        let profile =
            HostProfile::parse(&CORRAL.replace("version_key = \"tool_version\"\n", ""), "p")
                .unwrap();
        assert_eq!(profile.version_key, DEFAULT_VERSION_KEY);
        assert_eq!(
            fill(
                "{cli} serve --device {device}",
                &[("cli", "/opt/my host"), ("device", "SHA256:ab/c+d=")]
            ),
            "'/opt/my host' serve --device SHA256:ab/c+d="
        );
        assert_eq!(
            fill("{cli} mute --pane {pane}", &[("pane", "%3")]),
            "{cli} mute --pane %3"
        );
    }
}
