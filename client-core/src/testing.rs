//! Builders of plain rows and cards, for the tests of the core and of its front-ends.

use schema::{
    Binder, Card, CardOption, Extraction, FleetRow, Lane, OptionKind, PermissionCard, State, Wire,
};

/// A row of pane `pane` in `state`, every other field plain.
pub fn row(pane: &str, state: State) -> FleetRow {
    FleetRow {
        pane: pane.into(),
        agent: "claude".into(),
        state,
        detail: None,
        since_ms: Some(1),
        episode_ms: 1,
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
        server: "/tmp/tmux".into(),
        host: "vm".into(),
    }
}

/// A hook-lane permission card of `pane` in `episode`, with allow-once and reject-once.
pub fn permission_card(pane: &str, episode: u64) -> Card {
    let option = |kind, name: &str| CardOption {
        kind,
        name: name.into(),
        option_id: Some("req-1".into()),
    };
    Card::Permission(PermissionCard {
        pane: pane.into(),
        agent: "claude".into(),
        lane: Lane::Hook,
        options: vec![
            option(OptionKind::AllowOnce, "Yes"),
            option(OptionKind::RejectOnce, "No"),
        ],
        extraction: Extraction::Exact,
        pending_call: None,
        binder: Binder {
            expect_episode_ms: episode,
            expect_permission_request: Some("req-1".into()),
        },
    })
}
