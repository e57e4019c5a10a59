//! `corral ls [--json]`: the local listing, and its relation to the wire row.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{Home, ScratchTmux};

#[test]
fn the_ls_key_set_is_the_wire_key_set_plus_title() {
    let tmux = ScratchTmux::start();
    let home = Home::new(&tmux.socket);
    home.enrol("phone", "fp", &["read"]);
    let pane = tmux.agent("work", "claude", "blocked", home.dir.path());
    tmux.title(&pane, "TITLE-CANARY-ls");

    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    assert_eq!(ls["schema"], 1);
    let ls_row = &ls["agents"][0];
    assert_eq!(ls_row["title"], "TITLE-CANARY-ls");

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
}

#[test]
fn the_table_shows_each_agent_pane() {
    let tmux = ScratchTmux::start();
    let home = Home::new(&tmux.socket);
    let pane = tmux.agent("work", "codex", "idle", home.dir.path());
    tmux.set(&pane, "@agent_attention", "1");
    let table = home.ok(&["ls"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("PANE"), "{table}");
    assert_eq!(lines.len(), 2, "header plus the one agent pane: {table}");
    assert!(
        lines[1].contains(&pane) && lines[1].contains("codex") && lines[1].contains("done"),
        "{table}"
    );
}
