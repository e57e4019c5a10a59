//! The fleet row, in its two views: the wire row of `snapshot`, and the local row of
//! `corral ls --json`, which is the same key set plus `title` after `locator`.
//!
//! One generic struct serves both views, so the two writers cannot drift apart: the only
//! difference is the `view` slot, which holds nothing on the wire and the pane title locally. A
//! pane title is agent-supplied text and never rides a frame leaving the machine; the wire view's
//! schema and decoder both refuse a `title` key.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer, Serialize};

use crate::vocab::{Detail, State};

/// One agent pane as the cycle read it. `V` is the view: [`Wire`] or [`Local`].
///
/// Absent optionals are written as explicit `null`; booleans are always written and default to
/// false on read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{V}Row")]
pub struct Row<V> {
    /// tmux pane id, `%N`.
    pub pane: String,
    /// Agent name from `@agent_name` (`claude`, `codex`, ...).
    pub agent: String,
    /// Pane state from `@agent_state`; a token outside the vocabulary reads as `unknown`.
    pub state: State,
    /// Why the pane is blocked (`@agent_detail`), null when not stamped.
    pub detail: Option<Detail>,
    /// Epoch ms when the current state began (`@agent_since`).
    pub since_ms: Option<u64>,
    /// Episode: max(`@agent_since`, `@agent_turn_at`), the value a binder quotes; 0 when the pane
    /// carries neither stamp.
    pub episode_ms: u64,
    /// `session:window.pane`.
    pub locator: String,
    /// Nothing on the wire; the pane title in the local listing.
    #[serde(flatten)]
    pub view: V,
    /// A finished turn has output nobody has looked at (`@agent_attention` set).
    #[serde(default)]
    pub attention: bool,
    /// Idle with unreviewed output (state idle and attention set).
    #[serde(default)]
    pub done: bool,
    /// tmux session name.
    pub session: String,
    /// Absolute path of the agent's transcript (`@agent_transcript`).
    pub transcript: Option<String>,
    /// Id of the pending permission request (`@agent_permission_request`).
    pub permission_request: Option<String>,
    /// Epoch ms of the latest stamp (`@agent_stamped_at`).
    pub stamped_at_ms: Option<u64>,
    /// Context-window utilisation percent, 0 to 100 (`@agent_context`).
    #[schemars(range(max = 100))]
    pub context: Option<u8>,
    /// Epoch ms the context gauge was read (`@agent_context_at`).
    pub context_at_ms: Option<u64>,
    /// Notifications for this pane are muted (`@agent_mute_until` in the future).
    #[serde(default)]
    pub muted: bool,
    /// Repository name of the pane's working directory (the main worktree's directory name).
    pub repo: Option<String>,
    /// Checked-out branch of the pane's working directory; null when detached or not a repo.
    pub branch: Option<String>,
    /// Top-level directory of the working tree the pane is in.
    pub worktree: Option<String>,
    /// Tool the agent is blocked on (`@agent_pending_tool`).
    pub pending_tool: Option<String>,
    /// Call id the agent is blocked on (`@agent_pending_call`).
    pub pending_call: Option<String>,
    /// tmux server socket path.
    pub server: String,
    /// Host name.
    pub host: String,
}

/// A fleet row as it rides the wire (element of `agents` in a snapshot).
pub type FleetRow = Row<Wire>;

/// A fleet row as `corral ls --json` writes it: the wire row plus `title`.
pub type LsRow = Row<Local>;

/// The wire view: no extra key, and a `title` key is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Wire {}

impl<'de> Deserialize<'de> for Wire {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Probe {
            title: Option<IgnoredAny>,
        }
        match Probe::deserialize(deserializer)?.title {
            Some(_) => Err(serde::de::Error::custom(
                "a wire row never carries a pane title",
            )),
            None => Ok(Wire {}),
        }
    }
}

impl JsonSchema for Wire {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Fleet")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "properties": {
                "title": false
            }
        })
    }
}

/// The local view: the pane title, which only `corral ls` shows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Ls")]
pub struct Local {
    /// The pane title (`pane_title`): agent-supplied text, local only.
    pub title: String,
}

impl<V> Row<V> {
    /// The same row in another view.
    pub fn with_view<W>(self, view: W) -> Row<W> {
        Row {
            pane: self.pane,
            agent: self.agent,
            state: self.state,
            detail: self.detail,
            since_ms: self.since_ms,
            episode_ms: self.episode_ms,
            locator: self.locator,
            view,
            attention: self.attention,
            done: self.done,
            session: self.session,
            transcript: self.transcript,
            permission_request: self.permission_request,
            stamped_at_ms: self.stamped_at_ms,
            context: self.context,
            context_at_ms: self.context_at_ms,
            muted: self.muted,
            repo: self.repo,
            branch: self.branch,
            worktree: self.worktree,
            pending_tool: self.pending_tool,
            pending_call: self.pending_call,
            server: self.server,
            host: self.host,
        }
    }
}

impl LsRow {
    /// The row as it may leave the machine: the title dropped.
    pub fn to_wire(&self) -> FleetRow {
        self.clone().with_view(Wire {})
    }
}

/// The document `corral ls --json` writes: `{"schema":1,"agents":[...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LsDocument {
    /// Version of this document, 1.
    #[schemars(schema_with = "crate::envelope::document_version_1")]
    pub schema: u32,
    /// Every agent pane, wire rows plus `title`.
    pub agents: Vec<LsRow>,
}
