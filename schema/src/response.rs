//! Frames the host sends: answers to requests, and the frames a subscription streams.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::card::Card;
use crate::dispatch::{Receipt, Receipts};
use crate::envelope::frame_kinds;
use crate::row::FleetRow;
use crate::transcript::{EventReply, Window};
use crate::vocab::{Detail, ErrorCode, Scope, State, open_end};

/// A response or streamed frame.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Response {
    /// Answers `hello`.
    Hello(HelloReply),
    /// Answers `snapshot`; also streamed after `subscribe` with events false.
    Snapshot(Snapshot),
    /// Streamed after `subscribe` with events true: one pane's transition.
    Edge(Edge),
    /// Answers `card`.
    Card(Card),
    /// Answers `window`.
    Window(Window),
    /// Answers `event`.
    Event(EventReply),
    /// Answers `dispatch`.
    Receipt(Receipt),
    /// Answers `receipts`.
    Receipts(Receipts),
    /// Request accepted; no body of its own (answers `subscribe`).
    Ack,
    /// A typed refusal.
    Error(ErrorFrame),
}

frame_kinds!(Response, "response", {
    "hello" => Hello(_),
    "snapshot" => Snapshot(_),
    "edge" => Edge(_),
    "card" => Card(_),
    "window" => Window(_),
    "event" => Event(_),
    "receipt" => Receipt(_),
    "receipts" => Receipts(_),
    "ack" => Ack,
    "error" => Error(_),
});

impl Response {
    /// An error frame body.
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Response {
        Response::Error(ErrorFrame {
            code,
            message: message.into(),
        })
    }
}

/// `← hello`: who the host is and what this device may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HelloReply {
    /// Host name.
    pub host: String,
    /// corral version of the host.
    pub tool_version: String,
    /// Cadence of the host's cycle and of the subscription stream, in milliseconds.
    pub reconcile_interval_ms: u64,
    /// Scopes granted to this device, from the host's device store (never from the request).
    pub scopes: Vec<Scope>,
}

/// `← snapshot`: the fleet rows in scope.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    /// The rows the selector admits, in tmux's pane order.
    pub agents: Vec<FleetRow>,
}

/// `← edge`: one pane's state transition as the cycle observed it. A detail change without a
/// state change is no edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Edge {
    /// Epoch milliseconds of the cycle that observed it.
    pub at_ms: u64,
    /// Pane id.
    pub pane: String,
    /// Agent name.
    pub agent: String,
    /// State before; `""` when the pane appeared after the baseline.
    #[serde(with = "open_end")]
    #[schemars(schema_with = "open_end::schema")]
    pub from: Option<State>,
    /// State after; `""` when the pane vanished.
    #[serde(with = "open_end")]
    #[schemars(schema_with = "open_end::schema")]
    pub to: Option<State>,
    /// The pane's detail after the transition (before it, for a vanish), or null.
    pub detail: Option<Detail>,
    /// `session:window.pane`.
    pub locator: String,
    /// Repository name, or null.
    pub repo: Option<String>,
    /// Branch, or null.
    pub branch: Option<String>,
}

/// `← error`: a typed refusal. Clients branch on `code` only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorFrame {
    /// What went wrong.
    pub code: ErrorCode,
    /// One human sentence.
    pub message: String,
}
