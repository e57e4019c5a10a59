//! Host profiles: everything the kit needs to know about a host under test and nothing the
//! protocol fixes. The protocol fixes the frames, the device store's records and the pane-option
//! contract; a host chooses its tool name, its command lines, the environment variables it reads,
//! where it keeps its files and how its daemon is started. corral's own profile
//! (`golden/profiles/corral.toml`) is the default; `corral-conformance --profile FILE` picks
//! another, and `corral-conformance profile init` writes a commented starting one
//! ([`STARTER`]).
//!
//! A host's action manifests are its own too (the protocol leaves their format to each host):
//! the profile declares, per agent, the actions they cover, how each is fired and the labels a
//! card shows ([`DeclaredAction`]), and the kit checks what reached an agent against that.
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
    /// The actions the host's manifests cover, by agent (as `@agent_name` spells it) then by
    /// action: how each is fired and what a card shows for it. The sessions that dispatch an
    /// action, or show its label, run only when the profile declares it as they need it; what
    /// reached the pane is judged against what is declared here, never against corral's keys.
    /// Absent: the host covers no action (every dispatch is refused at the scope gate).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub actions: BTreeMap<String, BTreeMap<String, DeclaredAction>>,
}

/// One action of an agent as the host's manifest fires it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeclaredAction {
    /// How it is fired (docs/protocol.md, "Actions"): `keys` or `text` to the pane, `api` on the
    /// agent's own HTTP API ("The api lane"), `hook` only as the verdict of a parked request.
    /// A parked request takes an approve or a deny to the hook lane whatever its kind.
    pub kind: FireKind,
    /// What the pane receives when it fires on the screen, in the records `corral-sim pane
    /// input` prints: `{ text = "1" }` (bytes typed), `{ keys = ["Escape"] }` (named keys). A
    /// `text` action's records hold the caller's text as exactly one `{ text = "{text}" }`.
    /// Only for `keys` and `text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<PaneInput>,
    /// The label a permission card shows for it (its option's `name`); required for `approve`
    /// and `deny`, whose options a card offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// How a declared action is fired.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FireKind {
    /// Keys sent to the pane.
    Keys,
    /// The caller's text delivered to the pane, between keys.
    Text,
    /// A request to the agent's own HTTP API.
    Api,
    /// The verdict of the request the agent's hook parked; nothing without one.
    Hook,
}

impl FireKind {
    /// The kind's name, as profiles and sessions write it.
    pub fn as_str(self) -> &'static str {
        match self {
            FireKind::Keys => "keys",
            FireKind::Text => "text",
            FireKind::Api => "api",
            FireKind::Hook => "hook",
        }
    }

    /// Whether it fires on the screen: what reaches the pane is its declared `input`.
    pub fn types_into_the_pane(self) -> bool {
        matches!(self, FireKind::Keys | FireKind::Text)
    }
}

/// One record of what a pane received, as `corral-sim pane input` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum PaneInput {
    /// Bytes typed, as text.
    Text {
        /// The text (`{text}`: the dispatch's own).
        text: String,
    },
    /// Named keys (`Escape`, `Enter`, `C-c`).
    Keys {
        /// The keys, in order.
        keys: Vec<String>,
    },
}

/// What a session needs of one action of the host's declared manifests (its header's
/// `manifests`, by `<agent>.<action>`): declared and fired so, declared however fired, or not
/// declared at all.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Declared, fired as keys into the pane.
    Keys,
    /// Declared, fired as text into the pane.
    Text,
    /// Declared, fired on the agent's own HTTP API.
    Api,
    /// Declared, fired only as a parked request's verdict.
    Hook,
    /// Declared, however it is fired (a case that shows its label, or passes gate 1 with it).
    Covered,
    /// Not declared: the case shows what a host does with an action no manifest of the pane's
    /// agent covers.
    None,
}

impl Coverage {
    /// The kind it needs, when it needs one.
    pub fn kind(self) -> Option<FireKind> {
        match self {
            Coverage::Keys => Some(FireKind::Keys),
            Coverage::Text => Some(FireKind::Text),
            Coverage::Api => Some(FireKind::Api),
            Coverage::Hook => Some(FireKind::Hook),
            Coverage::Covered | Coverage::None => None,
        }
    }
}

/// The agent of an action key that stands for any agent (`*.approve`: some agent's manifest
/// covers `approve`, as a dispatch needs to pass gate 1 whatever pane it names).
pub const ANY_AGENT: &str = "*";

/// `<agent>.<action>` split, when it is one: an agent's name (or [`ANY_AGENT`]) and an action of
/// the protocol.
pub fn split_action_key(key: &str) -> Option<(&str, &str)> {
    let (agent, action) = key.rsplit_once('.')?;
    let plain = agent == ANY_AGENT
        || !agent.is_empty()
            && agent
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (plain && schema::Action::KNOWN.contains(&action)).then_some((agent, action))
}

/// The placeholder of a `text` action's input that stands for the dispatch's text.
pub const TEXT_PLACEHOLDER: &str = "{text}";

impl DeclaredAction {
    /// What the pane receives when the action fires with `text` (a `text` action's), as the
    /// JSON lines `corral-sim pane input` prints; `None` for an action that does not type into
    /// the pane.
    pub fn typed(&self, text: Option<&str>) -> Option<Vec<serde_json::Value>> {
        if !self.kind.types_into_the_pane() {
            return None;
        }
        let records = self.input.iter().map(|record| match record {
            PaneInput::Text { text: typed } if typed == TEXT_PLACEHOLDER => {
                serde_json::json!({ "text": text.unwrap_or_default() })
            }
            PaneInput::Text { text } => serde_json::json!({ "text": text }),
            PaneInput::Keys { keys } => serde_json::json!({ "keys": keys }),
        });
        Some(records.collect())
    }
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

    /// The action the profile declares for `agent`, if it does.
    pub fn action(&self, agent: &str, action: &str) -> Option<&DeclaredAction> {
        self.actions.get(agent)?.get(action)
    }

    /// The labels it declares, by `<agent>.<action>`: what sessions bind as
    /// `label.<agent>.<action>`.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::new();
        for (agent, actions) in &self.actions {
            for (action, declared) in actions {
                if let Some(label) = &declared.label {
                    labels.insert(format!("{agent}.{action}"), label.clone());
                }
            }
        }
        labels
    }

    /// Why the profile does not declare the action `key` (`<agent>.<action>`) as a session
    /// needs it, if it does not: the reason the case is skipped.
    pub fn unmet(&self, key: &str, needed: Coverage) -> Option<String> {
        let (agent, action) = split_action_key(key)?;
        if agent == ANY_AGENT {
            let declaring = self
                .actions
                .values()
                .filter_map(|actions| actions.get(action));
            let mut kinds = declaring.map(|declared| declared.kind);
            let met = match needed {
                Coverage::None => kinds.next().is_none(),
                Coverage::Covered => kinds.next().is_some(),
                needed => kinds.any(|kind| Some(kind) == needed.kind()),
            };
            return (!met).then(|| match needed {
                Coverage::None => format!(
                    "the case needs `{action}` covered by no agent's manifest, and the host \
                     profile declares it ([actions])"
                ),
                _ => format!(
                    "the case needs some agent's `{action}` action, and the host profile \
                     declares none as it needs ([actions])"
                ),
            });
        }
        let declared = self.action(agent, action);
        match (needed, declared) {
            (Coverage::None, None) => None,
            (Coverage::None, Some(_)) => Some(format!(
                "the case dispatches `{action}` to a `{agent}` pane as an action no manifest \
                 covers, and the host profile declares it ([actions.{agent}])"
            )),
            (_, None) => Some(format!(
                "the case needs the `{action}` action of `{agent}`, and the host profile \
                 declares none ([actions.{agent}])"
            )),
            (needed, Some(declared)) => match needed.kind() {
                Some(kind) if kind != declared.kind => Some(format!(
                    "the case fires `{action}` for `{agent}` as {}, and the host profile \
                     declares it {} ([actions.{agent}])",
                    kind.as_str(),
                    declared.kind.as_str()
                )),
                _ => None,
            },
        }
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
        for (agent, actions) in &self.actions {
            if !name_ok(agent) {
                return Err(Error::new(format!(
                    "[actions] {agent:?} is not an agent's name (letters, digits, `-`, `_`)"
                )));
            }
            for (name, declared) in actions {
                check_action(name, declared)
                    .map_err(|why| Error::new(format!("[actions.{agent}] `{name}` {why}")))?;
            }
        }
        Ok(())
    }
}

/// What a declared action must say: a protocol action a device can dispatch, an input exactly
/// where it types into the pane (a `text` action's with one `{text}`), a label for `approve`
/// and `deny`.
fn check_action(name: &str, declared: &DeclaredAction) -> Result<(), String> {
    if !schema::Action::KNOWN.contains(&name) {
        return Err(format!(
            "is no action of the protocol ({})",
            schema::Action::KNOWN.join(", ")
        ));
    }
    let placeholders = declared
        .input
        .iter()
        .filter(|record| matches!(record, PaneInput::Text { text } if text == TEXT_PLACEHOLDER))
        .count();
    match declared.kind {
        FireKind::Keys | FireKind::Text if declared.input.is_empty() => {
            return Err(format!(
                "is fired as {}: its `input` says what the pane receives",
                declared.kind.as_str()
            ));
        }
        FireKind::Api | FireKind::Hook if !declared.input.is_empty() => {
            return Err(format!(
                "is fired as {}, not into the pane: it has no `input`",
                declared.kind.as_str()
            ));
        }
        FireKind::Text if placeholders != 1 => {
            return Err(format!(
                "is a text action: its `input` holds the text as exactly one                  {{ text = \"{TEXT_PLACEHOLDER}\" }}"
            ));
        }
        FireKind::Keys if placeholders != 0 => {
            return Err(format!(
                "is a keys action: it takes no text, so no {TEXT_PLACEHOLDER}"
            ));
        }
        _ => {}
    }
    if let Some(PaneInput::Keys { keys }) = declared
        .input
        .iter()
        .find(|record| matches!(record, PaneInput::Keys { keys } if keys.is_empty()))
    {
        return Err(format!("has an input record with no keys ({keys:?})"));
    }
    if ["approve", "deny"].contains(&name) && declared.label.is_none() {
        return Err("needs the `label` a permission card shows for it".to_owned());
    }
    Ok(())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `template` with each `{name}` replaced by its value, shell-quoted; a `{name}` with no value
/// stays as it is.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), &stdx::shell_quote(value));
    }
    out
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
            "[actions.",
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
    fn corrals_declared_actions_say_what_reaches_the_pane() {
        let profile = HostProfile::corral();
        let approve = profile.action("claude", "approve").unwrap();
        assert_eq!(approve.kind, FireKind::Keys);
        assert_eq!(approve.label.as_deref(), Some("Yes"));
        assert_eq!(
            approve.typed(None),
            Some(vec![serde_json::json!({"text": "1"})])
        );
        let steer_now = profile.action("codex", "steer_now").unwrap();
        assert_eq!(
            steer_now.typed(Some("Stop.")),
            Some(vec![
                serde_json::json!({"keys": ["Escape"]}),
                serde_json::json!({"text": "Stop."}),
                serde_json::json!({"keys": ["Enter"]}),
            ])
        );
        let reply = profile.action("opencode", "question_reply").unwrap();
        assert_eq!((reply.kind, reply.typed(None)), (FireKind::Api, None));
        assert!(profile.action("gemini", "question_reply").is_none());
        assert!(profile.action("cursor", "approve").is_none());
    }

    #[test]
    fn a_case_runs_only_where_the_profile_declares_what_it_needs() {
        let profile = HostProfile::corral();
        assert_eq!(profile.unmet("claude.approve", Coverage::Keys), None);
        assert_eq!(profile.unmet("claude.approve", Coverage::Covered), None);
        assert_eq!(profile.unmet("gemini.question_reply", Coverage::None), None);
        let kind = profile.unmet("opencode.approve", Coverage::Keys).unwrap();
        assert!(
            kind.contains("as keys, and the host profile declares it api"),
            "{kind}"
        );
        let none = profile.unmet("cursor.approve", Coverage::Covered).unwrap();
        assert!(none.contains("declares none ([actions.cursor])"), "{none}");
        let covered = profile.unmet("claude.approve", Coverage::None).unwrap();
        assert!(covered.contains("no manifest covers"), "{covered}");
        assert_eq!(
            split_action_key("claude.approve"),
            Some(("claude", "approve"))
        );
        assert_eq!(split_action_key("claude.compact"), None);
        assert_eq!(split_action_key(".approve"), None);
        assert_eq!(split_action_key("*.approve"), Some(("*", "approve")));
        assert_eq!(profile.unmet("*.question_reply", Coverage::Covered), None);
        assert_eq!(profile.unmet("*.question_reply", Coverage::Hook), None);
        assert!(profile.unmet("*.steer", Coverage::Api).is_some());
        assert!(profile.unmet("*.approve", Coverage::None).is_some());
        let bare = HostProfile::parse(&CORRAL[..CORRAL.find("\n[actions.").unwrap()], "bare.toml")
            .unwrap();
        assert_eq!(bare.unmet("*.approve", Coverage::None), None);
        let needs = bare.unmet("*.approve", Coverage::Covered).unwrap();
        assert!(needs.contains("some agent's `approve`"), "{needs}");
    }

    #[test]
    fn a_declared_action_must_say_how_it_reaches_the_agent() {
        let with = |actions: &str| {
            HostProfile::parse(&format!("{CORRAL}\n[actions.herd]\n{actions}\n"), "p.toml")
                .map(|profile| profile.actions["herd"].len())
                .map_err(|err| err.to_string())
        };
        assert_eq!(
            with(
                r#"steer = { kind = "text", input = [{ text = "{text}" }, { keys = ["Enter"] }] }"#
            ),
            Ok(1)
        );
        for (actions, says) in [
            (
                r#"approve = { kind = "keys", input = [{ text = "1" }] }"#,
                "needs the `label`",
            ),
            (
                r#"steer = { kind = "text", input = [{ keys = ["Enter"] }] }"#,
                "exactly one",
            ),
            (
                r#"interrupt = { kind = "keys", input = [{ text = "{text}" }] }"#,
                "takes no text",
            ),
            (
                r#"interrupt = { kind = "keys" }"#,
                "its `input` says what the pane receives",
            ),
            (
                r#"interrupt = { kind = "keys", input = [{ keys = [] }] }"#,
                "no keys",
            ),
            (
                r#"deny = { kind = "api", input = [{ text = "n" }], label = "No" }"#,
                "no `input`",
            ),
            (
                r#"compact = { kind = "keys", input = [{ text = "c" }] }"#,
                "is no action of the protocol",
            ),
            (
                r#"interrupt = { kind = "screen", input = [{ text = "c" }] }"#,
                "screen",
            ),
            (
                r#"interrupt = { kind = "keys", input = [{ text = "c", keys = ["x"] }] }"#,
                "input",
            ),
        ] {
            let err = with(actions).unwrap_err();
            assert!(
                err.starts_with("p.toml: ") && err.contains(says),
                "{actions}: {err}"
            );
            assert!(!err.contains('\n'), "{err}");
        }
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
