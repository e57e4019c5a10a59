//! `corral ls [--json]`: the local listing, and its relation to the wire row.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{Backend, Fleet, fleet_with_phone, row};

#[test]
fn the_ls_key_set_is_the_wire_key_set_plus_title() {
    let (fleet, home) = fleet_with_phone(Backend::Fake);

    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    assert_eq!(ls["schema"], 1);
    // tmux lists sessions by name: `play` (done) before `work`.
    let ls_row = &ls["agents"][0];
    assert_eq!(ls_row["pane"], fleet.pane("done").as_str());
    assert_eq!(ls_row["title"], "TITLE-CANARY-done");

    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    let wire_row = host.recv()["agents"][0].clone();

    let keys = |v: &Value| {
        v.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    let mut expected = keys(ls_row);
    expected.remove("title");
    assert_eq!(keys(&wire_row), expected);
    let mut stripped = ls_row.clone();
    stripped.as_object_mut().unwrap().remove("title");
    assert_eq!(wire_row, stripped, "the same row, but the title");
}

#[test]
fn the_table_shows_each_agent_pane() {
    let fleet = Fleet::up(Backend::Real);
    let home = fleet.home();
    let table = home.ok(&["ls"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("PANE"), "{table}");
    assert_eq!(lines.len(), 4, "header plus three agent panes: {table}");
    let done = lines
        .iter()
        .find(|l| l.starts_with(&fleet.pane("done")))
        .unwrap();
    assert!(
        done.contains("claude") && done.contains("done") && done.contains("TITLE-CANARY-done"),
        "{table}"
    );
}

/// The listing is `{"schema":1,"agents":[...]}`, each row the wire row's keys in wire-details
/// order with `title` right after `locator`, as `corral ls --json` actually prints it.
#[test]
fn the_ls_document_has_title_right_after_locator() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    let top: Vec<&String> = ls.as_object().unwrap().keys().collect();
    assert_eq!(top, ["schema", "agents"]);
    assert_eq!(ls["schema"], 1);
    let rows = ls["agents"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "the three agent panes of the fleet");
    let order = [
        "pane",
        "agent",
        "state",
        "detail",
        "since_ms",
        "episode_ms",
        "locator",
        "title",
        "attention",
        "done",
        "session",
        "transcript",
        "permission_request",
        "stamped_at_ms",
        "context",
        "context_at_ms",
        "muted",
        "repo",
        "branch",
        "worktree",
        "pending_tool",
        "pending_call",
        "server",
        "host",
    ];
    for row in rows {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(keys, order, "{row}");
    }
}

/// A pane whose `@agent_mute_until` is in the future is listed `muted: true`; one whose deadline
/// passed, and an unmuted one, `muted: false`. The table says `(muted)`.
#[test]
fn a_muted_pane_is_listed_muted() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    let [idle, blocked, done] = ["idle", "blocked", "done"].map(|n| fleet.pane(n));
    fleet.step(&idle, &["--mute-until", "+30m"]);
    fleet.step(&blocked, &["--mute-until", "-1m"]);

    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    let muted = |pane: &str| row(&ls, pane)["muted"].clone();
    assert_eq!(muted(&idle), true);
    assert_eq!(muted(&blocked), false, "a deadline in the past is no mute");
    assert_eq!(muted(&done), false);

    let table = home.ok(&["ls"]);
    let line = |pane: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{pane} ")))
            .unwrap_or_else(|| panic!("no line for {pane}: {table}"))
            .to_owned()
    };
    assert!(line(&idle).contains("(muted)"), "{table}");
    assert!(!line(&blocked).contains("(muted)"), "{table}");
}
