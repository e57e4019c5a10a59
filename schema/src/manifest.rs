//! Action manifests: what each agent can be made to do, as data. One TOML file per agent; the
//! host bundles one for claude, codex, gemini and opencode, and a user adds or overrides actions
//! in `$XDG_CONFIG_HOME/corral/actions/*.toml`.
//!
//! ```toml
//! agent = "claude"
//!
//! [[action]]
//! name = "approve"
//! kind = "keys"
//! keys = ["1"]
//! label = "Yes"
//! requires = { state = "blocked", detail = ["permission"] }
//! ```
//!
//! An action's `kind` says how it fires: `keys` sends the manifest's tmux keys to the pane,
//! `text` sends the caller's text literally (with keys before and after it), `api` calls the
//! agent's own HTTP API at `@agent_api_endpoint`, `hook` answers the request the agent's blocking
//! hook parked (the verdict file: a question's answers, Claude Code's `AskUserQuestion`), and
//! `exec` runs a local command. An `exec` action is never reachable from a device; only
//! `corral act` at the host runs it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vocab::{Action, Detail, Scope, State};

/// One manifest file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionManifest {
    /// The agent the file covers, as `@agent_name` spells it.
    pub agent: String,
    /// The actions; `[[action]]`. Names are unique in a file.
    #[serde(rename = "action", default)]
    pub actions: Vec<ActionSpec>,
}

/// One action of an agent, tagged by `kind`: how it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ActionSpec {
    /// Sends the manifest's tmux keys to the pane.
    Keys(KeysAction),
    /// Sends the caller's text literally, between keys.
    Text(TextAction),
    /// Calls the agent's HTTP API at `@agent_api_endpoint`.
    Api(ApiAction),
    /// Answers the request the agent's blocking hook parked (`@agent_permission_request`), and
    /// nothing else: with no parked request there is nothing to fire.
    Hook(HookAction),
    /// Runs a local command (only `corral act` at the host; never a device).
    Exec(ExecAction),
}

/// Declares the fields every action kind has, then the kind's own.
macro_rules! action_kind {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// The action's name: a dispatch's `action` (`approve`, `deny`, `steer`, ...), or any
            /// name for a local `exec` action. Unique in its file.
            pub name: Action,
            /// The label a card shows for it (`"Yes"`); the name when absent.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub label: Option<String>,
            /// The pane state (and details) the action needs; a dispatch to a pane that does
            /// not meet them is refused `requires-unmet`. For an action a device fires, it is
            /// the protocol's (docs/protocol.md, "Actions"): left out, the host fills it in;
            /// anything else is refused when the manifest loads.
            #[serde(default, skip_serializing_if = "Requires::is_any")]
            pub requires: Requires,
            $($(#[$fmeta])* pub $field: $ty,)*
        }
    };
}

action_kind! {
    /// `kind = "keys"`.
    KeysAction {
        /// The tmux keys, in order (`send-keys` names: `"1"`, `"y"`, `"Escape"`, `"Enter"`, `"C-c"`).
        pub keys: Vec<String>,
    }
}

action_kind! {
    /// `kind = "text"`.
    TextAction {
        /// Keys sent first (`["Escape"]` to interrupt a working turn before steering it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub before: Vec<String>,
        /// Keys sent after the text; `["Enter"]` when absent.
        #[serde(default = "enter")]
        pub submit: Vec<String>,
    }
}

action_kind! {
    /// `kind = "api"`.
    ApiAction {
        /// The HTTP method; `POST` when absent.
        #[serde(default = "post")]
        pub method: String,
        /// The path, with `{permission}` (`@agent_permission_request`), `{question}`
        /// (`@agent_question_request`) and `{session}` (`@agent_session`) replaced.
        pub path: String,
        /// A JSON body; a string value `"{answers}"` becomes the dispatch's answers and
        /// `"{text}"` its text. No body when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub body: Option<BTreeMap<String, Value>>,
    }
}

action_kind! {
    /// `kind = "hook"`: `question_reply` writes an allow carrying the dispatch's answers,
    /// `question_reject` a deny.
    HookAction {}
}

action_kind! {
    /// `kind = "exec"`.
    ExecAction {
        /// The command line, run with `sh -c`.
        pub command: String,
        /// Seconds before it is killed; 60 when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub timeout_s: Option<u64>,
    }
}

impl ActionSpec {
    /// The kind's name, as written in `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            ActionSpec::Keys(_) => "keys",
            ActionSpec::Text(_) => "text",
            ActionSpec::Api(_) => "api",
            ActionSpec::Hook(_) => "hook",
            ActionSpec::Exec(_) => "exec",
        }
    }

    /// The action's name.
    pub fn name(&self) -> &Action {
        match self {
            ActionSpec::Keys(a) => &a.name,
            ActionSpec::Text(a) => &a.name,
            ActionSpec::Api(a) => &a.name,
            ActionSpec::Hook(a) => &a.name,
            ActionSpec::Exec(a) => &a.name,
        }
    }

    /// The label a card shows.
    pub fn label(&self) -> &str {
        let label = match self {
            ActionSpec::Keys(a) => &a.label,
            ActionSpec::Text(a) => &a.label,
            ActionSpec::Api(a) => &a.label,
            ActionSpec::Hook(a) => &a.label,
            ActionSpec::Exec(a) => &a.label,
        };
        label.as_deref().unwrap_or_else(|| self.name().as_str())
    }

    /// What the pane must be.
    pub fn requires(&self) -> &Requires {
        match self {
            ActionSpec::Keys(a) => &a.requires,
            ActionSpec::Text(a) => &a.requires,
            ActionSpec::Api(a) => &a.requires,
            ActionSpec::Hook(a) => &a.requires,
            ActionSpec::Exec(a) => &a.requires,
        }
    }

    /// What the pane must be, to fill in where a manifest left it out.
    pub fn requires_mut(&mut self) -> &mut Requires {
        match self {
            ActionSpec::Keys(a) => &mut a.requires,
            ActionSpec::Text(a) => &mut a.requires,
            ActionSpec::Api(a) => &mut a.requires,
            ActionSpec::Hook(a) => &mut a.requires,
            ActionSpec::Exec(a) => &mut a.requires,
        }
    }
}

/// What a pane must be for an action to fire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// The pane's state; any state when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// The pane's detail must be one of these; any detail when absent or empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<Detail>,
}

impl Requires {
    /// True when anything goes.
    pub fn is_any(&self) -> bool {
        self.state.is_none() && self.detail.is_empty()
    }
}

/// What `corral actions --json` prints: every loaded action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActionList {
    /// Version of this document, 1.
    #[schemars(schema_with = "crate::envelope::document_version_1")]
    pub schema: u32,
    /// The actions, by agent, in load order.
    pub actions: Vec<ActionListing>,
}

/// One loaded action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActionListing {
    /// The agent it is for.
    pub agent: String,
    /// The action's name.
    pub name: Action,
    /// `keys`, `text`, `api` or `exec`.
    pub kind: String,
    /// The scope a device needs to dispatch it; null when no device may (an `exec` action, or a
    /// name outside the scope table).
    pub scope: Option<Scope>,
    /// The label a card shows.
    pub label: String,
    /// Where it was loaded from: a file path, or `bundled:<name>.toml`.
    pub source: String,
}

fn enter() -> Vec<String> {
    vec!["Enter".to_owned()]
}

fn post() -> String {
    "POST".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_from_toml_shaped_json() {
        let manifest: ActionManifest = serde_json::from_value(serde_json::json!({
            "agent": "opencode",
            "action": [
                {"name": "approve", "kind": "keys", "keys": ["1"], "label": "Yes",
                 "requires": {"state": "blocked", "detail": ["permission"]}},
                {"name": "steer_now", "kind": "text", "before": ["Escape"]},
                {"name": "question_reply", "kind": "api", "path": "/question/{question}/reply",
                 "body": {"answers": "{answers}"}},
                {"name": "run-tests", "kind": "exec", "command": "cargo test"}
            ]
        }))
        .unwrap();
        let kinds: Vec<&str> = manifest.actions.iter().map(ActionSpec::kind).collect();
        assert_eq!(kinds, ["keys", "text", "api", "exec"]);
        let ActionSpec::Text(steer) = &manifest.actions[1] else {
            panic!("{:?}", manifest.actions[1]);
        };
        assert_eq!(steer.before, ["Escape"]);
        assert_eq!(steer.submit, ["Enter"], "submit defaults to Enter");
        assert_eq!(manifest.actions[0].label(), "Yes");
        assert_eq!(
            manifest.actions[1].label(),
            "steer_now",
            "the name by default"
        );
        assert!(manifest.actions[3].name().is_other(), "a local name");
    }

    #[test]
    fn an_unknown_key_or_kind_is_refused() {
        let typo = serde_json::json!({"agent": "a", "action": [
            {"name": "approve", "kind": "keys", "kyes": ["1"]}]});
        assert!(serde_json::from_value::<ActionManifest>(typo).is_err());
        let kind = serde_json::json!({"agent": "a", "action": [
            {"name": "approve", "kind": "telepathy"}]});
        assert!(serde_json::from_value::<ActionManifest>(kind).is_err());
    }
}
