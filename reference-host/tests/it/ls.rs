//! `corral ls [--json]`: the local listing, and its relation to the wire row.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{Backend, Fleet};

#[test]
fn the_ls_key_set_is_the_wire_key_set_plus_title() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    home.enrol("phone", "fp", &["read"]);

    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    assert_eq!(ls["schema"], 1);
    // tmux lists sessions by name: `play` (done) before `work`.
    let ls_row = &ls["agents"][0];
    assert_eq!(ls_row["pane"], fleet.pane("done").as_str());
    assert_eq!(ls_row["title"], "TITLE-CANARY-done");

    let mut host = home.serve("fp");
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
