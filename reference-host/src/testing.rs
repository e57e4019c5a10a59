//! Builders the unit tests share: a fleet row, a pane as tmux reports it, and an enrolled device,
//! each with plain defaults that a test overrides field by field.

use schema::{DeviceRecord, FleetRow, Row, Scope, State, Wire};

use crate::devices::{DeviceFile, StoreError};
use crate::tmux::read::{AgentOptions, PaneRead};

/// The wire row of a `claude` agent in pane `pane` at `work:0.0` of host `studio`, in `state`;
/// every optional field empty.
pub fn row(pane: &str, state: State) -> FleetRow {
    Row {
        pane: pane.into(),
        agent: "claude".into(),
        state,
        detail: None,
        since_ms: None,
        episode_ms: 0,
        locator: "work:0.0".into(),
        view: Wire {},
        attention: false,
        done: false,
        session: "work".into(),
        transcript: None,
        permission_request: None,
        stamped_at_ms: None,
        context: None,
        context_at_ms: None,
        muted: false,
        repo: None,
        branch: None,
        worktree: None,
        pending_tool: None,
        pending_call: None,
        server: "/s".into(),
        host: "studio".into(),
    }
}

/// Pane `id` at `work:1.2` of the server at `/tmp/tmux-0/s`, with `options` stamped on it.
pub fn pane(id: &str, options: AgentOptions) -> PaneRead {
    PaneRead {
        pane_id: id.into(),
        session_name: "work".into(),
        window_index: "1".into(),
        pane_index: "2".into(),
        socket_path: "/tmp/tmux-0/s".into(),
        options,
        ..PaneRead::default()
    }
}

/// Enrols device `name` with fingerprint `id` and `scopes` in the store at `file`, through a
/// locked update; returns its record.
pub fn enrol(file: &DeviceFile, name: &str, id: &str, scopes: &[Scope]) -> DeviceRecord {
    let record = DeviceRecord {
        id: id.into(),
        name: name.into(),
        scopes: scopes.to_vec(),
        paired_at_ms: 1,
    };
    file.update(|store| {
        store.devices.push(record.clone());
        Ok::<_, StoreError>(())
    })
    .unwrap();
    record
}
