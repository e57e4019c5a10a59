//! Frames a device sends to the host, with the selector and the window budget they carry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dispatch::Binder;
use crate::envelope::frame_kinds;
use crate::transcript::Cursor;
use crate::vocab::{Action, StateFilter};

/// A request frame. The first frame of a connection must be `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Request {
    /// Opens the session. Answered with `hello`, or `unsupported-schema`.
    Hello(Hello),
    /// Reads the fleet once. Answered with `snapshot`.
    Snapshot(SnapshotRequest),
    /// Follows the fleet. Answered with `ack`, then a stream of `edge` (events true) or `snapshot`
    /// (events false) frames carrying this request's id.
    Subscribe(Subscribe),
    /// Asks what a blocked pane is asking. Answered with `card`.
    Card(CardRequest),
    /// Pages through a pane's transcript event headers, newest first. Answered with `window`.
    Window(WindowRequest),
    /// Fetches one transcript event with its body. Answered with `event`.
    Event(EventRequest),
    /// Dispatches an action through the three gates. Answered with `receipt`.
    Dispatch(Dispatch),
    /// Looks up receipts in the host's ledger. Answered with `receipts`.
    Receipts(ReceiptsRequest),
}

frame_kinds!(Request, "request", {
    "hello" => Hello(_),
    "snapshot" => Snapshot(_),
    "subscribe" => Subscribe(_),
    "card" => Card(_),
    "window" => Window(_),
    "event" => Event(_),
    "dispatch" => Dispatch(_),
    "receipts" => Receipts(_),
});

/// `hello →`: who is calling. Only the `--device` argument the spawner passed identifies the
/// device; `device` here is the client's own claim, used for a log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hello {
    /// Client name.
    pub app: String,
    /// Client version.
    pub app_version: String,
    /// Device fingerprint as the client claims it.
    pub device: String,
}

/// `snapshot →`: the fleet rows the selector admits.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SnapshotRequest {
    /// Narrows the rows; absent means every row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Selector>,
}

/// `subscribe →`: follow the fleet. A second subscribe on one connection is `bad-request`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Subscribe {
    /// True: stream one `edge` per observed transition. False: stream whole snapshots, skipping
    /// one equal to the last.
    #[serde(default)]
    pub events: bool,
    /// Narrows the rows; absent means every row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Selector>,
}

/// Which fleet rows a snapshot or subscription covers. Every key is optional; keys AND together.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Selector {
    /// Exact tmux session name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Exact repository name (the row's `repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Exact branch name (the row's `branch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Exact agent name (the row's `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// State tokens, ORed together: the states plus `done`. An unknown token matches nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Vec<StateFilter>>,
}

/// `card →`: what is this pane asking?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CardRequest {
    /// Pane id (`%N`).
    pub pane: String,
}

/// `window →`: a page of a pane's transcript event headers, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WindowRequest {
    /// Pane id; the transcript is resolved from the pane, never named by the caller.
    pub pane: String,
    /// How many events at most: absent means 200, clamped to 1..=1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<u32>,
    /// Cursor to page back from, as minted in an earlier window's `older`; absent means the end of
    /// the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Cursor>,
    /// Byte budget; every field is clamped to the host's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
}

/// `event →`: one event with its body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventRequest {
    /// Pane id.
    pub pane: String,
    /// A cursor the host minted in a window's event header.
    pub cursor: Cursor,
}

/// `dispatch →`: an action through the scope gate, the idempotent slot and the binder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Dispatch {
    /// Caller-chosen idempotency key, conventionally `pane:episode_ms:action`. A repeated slot
    /// returns the cached receipt from any serve process, to any device.
    pub slot: String,
    /// Host name; a non-empty name other than this host's is `not-found`.
    pub host: String,
    /// Pane id.
    pub pane: String,
    /// Action name; one outside the scope table is refused `scope-denied`.
    pub action: Action,
    /// What the approval was made against.
    pub binder: Binder,
    /// Text payload, for text actions (steer, deny with a message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Answers payload: one entry per question, each the chosen option labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<Vec<String>>>,
}

/// `receipts →`: ledger entries by slot, by claim time, or both (ANDed).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReceiptsRequest {
    /// Only this slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// Only entries claimed at or after this epoch millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
}

/// A window request's byte budget. A missing field takes the default; every field is clamped to
/// `min(asked, default)`, so a caller can lower a budget but never raise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Budget {
    /// Cap on every string leaf of an event header (default and maximum 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<u32>,
    /// Cap on the transcript bytes one window may scan (default and maximum 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u32>,
    /// Cap on the encoded window frame (default and maximum 32 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_bytes: Option<u32>,
}

/// The limits of a window, after defaults and clamping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowLimits {
    /// Events at most.
    pub last: u32,
    /// Cap per header string leaf.
    pub header_bytes: u32,
    /// Cap on bytes scanned.
    pub read_bytes: u32,
    /// Cap on the encoded frame.
    pub frame_bytes: u32,
}

impl WindowLimits {
    /// The host defaults, which are also the caps.
    pub const DEFAULT: WindowLimits = WindowLimits {
        last: 200,
        header_bytes: 256,
        read_bytes: 1_048_576,
        frame_bytes: 32_768,
    };
    /// The most events a window may ask for.
    pub const LAST_MAX: u32 = 1000;

    /// Applies a request's `last` and budget to the defaults.
    pub fn clamp(last: Option<u32>, budget: Option<Budget>) -> WindowLimits {
        let d = WindowLimits::DEFAULT;
        let budget = budget.unwrap_or_default();
        let cap = |asked: Option<u32>, default: u32| asked.map_or(default, |n| n.min(default));
        WindowLimits {
            last: last.map_or(d.last, |n| n.clamp(1, Self::LAST_MAX)),
            header_bytes: cap(budget.header_bytes, d.header_bytes),
            read_bytes: cap(budget.read_bytes, d.read_bytes),
            frame_bytes: cap(budget.frame_bytes, d.frame_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_limits_default_when_nothing_is_asked() {
        assert_eq!(WindowLimits::clamp(None, None), WindowLimits::DEFAULT);
    }

    #[test]
    fn window_limits_never_rise_above_the_default() {
        let asked = Budget {
            header_bytes: Some(10_000),
            read_bytes: Some(64),
            frame_bytes: None,
        };
        let got = WindowLimits::clamp(Some(5000), Some(asked));
        assert_eq!(
            got,
            WindowLimits {
                last: 1000,
                header_bytes: 256,
                read_bytes: 64,
                frame_bytes: 32_768
            }
        );
        assert_eq!(WindowLimits::clamp(Some(0), None).last, 1);
    }
}
