//! A `barrier` step's two frames: the `snapshot` it sends and the empty answer it expects next,
//! proving everything before was processed and nothing else was sent, without sleeping.

use serde_json::Value;

/// The tmux session a barrier's snapshot selects; no fixture has a session of that name, so the
/// answer has no rows.
pub const BARRIER_SESSION: &str = "corral-kit-barrier";

/// The request a `barrier` step sends: a `snapshot` with the barrier's id selecting
/// [`BARRIER_SESSION`].
pub fn barrier_request(id: &str) -> Value {
    serde_json::json!({"schema": 1, "id": id, "t": "snapshot",
                       "selector": {"session": BARRIER_SESSION}})
}

/// The answer a `barrier` step expects next: a `snapshot` with the barrier's id and no rows.
pub fn barrier_answer(id: &str) -> Value {
    serde_json::json!({"schema": 1, "id": id, "t": "snapshot", "agents": []})
}
