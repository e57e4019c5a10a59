//! `corral serve --stdio` over real pipes, against a scratch tmux server.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Home, ScratchTmux};

fn is_error(frame: &Value, id: &str, code: &str) -> bool {
    frame["t"] == "error"
        && frame["id"] == id
        && frame["code"] == code
        && frame["message"].is_string()
}

/// A scratch server with one agent pane `%1` (idle) beside the non-agent first pane, a home with a
/// fast cycle, and a device `phone` with read.
fn fleet() -> (ScratchTmux, Home, String) {
    let tmux = ScratchTmux::start();
    let home = Home::new(&tmux.socket);
    home.write_config("[serve]\nreconcile_interval_ms = 100\n");
    home.enrol("phone", "fp-phone", &["read", "act:answer"]);
    let pane = tmux.agent("work", "claude", "idle", home.dir.path());
    (tmux, home, pane)
}

#[test]
fn handshake_answers_hello_with_the_stores_scopes() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-phone");
    let reply = host.hello();
    assert_eq!(reply["id"], "hello");
    assert_eq!(reply["scopes"], json!(["read", "act:answer"]));
    assert_eq!(reply["reconcile_interval_ms"], 100);
    assert_eq!(reply["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(reply["host"].as_str().is_some_and(|h| !h.is_empty()));
    host.close();
    assert_eq!(host.exit_code(), 0, "EOF is a clean exit");
}

#[test]
fn a_newer_schema_is_refused_and_the_same_connection_downgrades() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-phone");
    host.send(r#"{"schema":2,"id":"h2","t":"hello","app":"it","app_version":"2","device":"d","caps":["x"]}"#);
    assert!(is_error(&host.recv(), "h2", "unsupported-schema"));
    host.hello();
    host.send(r#"{"schema":2,"id":"s2","t":"snapshot"}"#);
    assert!(
        is_error(&host.recv(), "s2", "unsupported-schema"),
        "every frame's schema is checked"
    );
}

#[test]
fn bad_input_gets_typed_answers_and_loses_nothing() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-phone");
    host.send(r#"{"schema":1,"id":"early","t":"snapshot"}"#);
    assert!(
        is_error(&host.recv(), "early", "bad-request"),
        "hello must come first"
    );
    host.hello();

    host.send("{this is not json");
    assert!(is_error(&host.recv(), "0", "bad-request"));
    let mut long = format!(
        r#"{{"schema":1,"id":"long","t":"snapshot","pad":"{}"}}"#,
        "x".repeat(100 * 1024)
    );
    long.push('\n');
    host.send_bytes(long.as_bytes());
    assert!(is_error(&host.recv(), "0", "bad-request"), "a 100 KiB line");
    host.send_bytes(b"{\"schema\":1,\"id\":\"u\",\"t\":\"snapshot\",\"x\":\"\xff\xfe\"}\n");
    assert!(is_error(&host.recv(), "0", "bad-request"), "invalid UTF-8");
    host.send("");
    assert!(is_error(&host.recv(), "0", "bad-request"), "an empty line");
    host.send(r#"{"schema":1,"id":"tp","t":"teleport"}"#);
    assert!(
        is_error(&host.recv(), "tp", "bad-request"),
        "unknown t answered with its id"
    );
    host.send(r#"{"schema":1,"id":"wt","t":"subscribe","events":"yes"}"#);
    assert!(
        is_error(&host.recv(), "wt", "bad-request"),
        "a wrong field type"
    );
    host.send(r#"{"schema":1,"id":"h2","t":"hello","app":"it","app_version":"1","device":"d"}"#);
    assert!(
        is_error(&host.recv(), "h2", "bad-request"),
        "a second hello"
    );

    // Nothing was lost: the connection still answers, in order.
    host.send(r#"{"schema":1,"id":"after","t":"snapshot"}"#);
    let snapshot = host.recv();
    assert_eq!(
        (snapshot["t"].as_str(), snapshot["id"].as_str()),
        (Some("snapshot"), Some("after"))
    );
    assert_eq!(
        host.raw.len(),
        10,
        "one answer per line, nothing else on stdout"
    );
}

#[test]
fn snapshot_reads_the_fleet_and_applies_selectors() {
    let (tmux, home, idle) = fleet();
    let blocked = tmux.agent("work", "codex", "blocked", home.dir.path());
    tmux.set(&blocked, "@agent_detail", "permission");
    let other = tmux.agent("play", "claude", "idle", home.dir.path());
    tmux.set(&other, "@agent_attention", "1");
    let mut host = home.serve("fp-phone");
    host.hello();

    host.send(r#"{"schema":1,"id":"all","t":"snapshot"}"#);
    let all = host.recv();
    let panes: Vec<&str> = all["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pane"].as_str().unwrap())
        .collect();
    assert_eq!(
        panes.len(),
        3,
        "the plain first pane is not an agent pane: {all}"
    );
    for pane in [&idle, &blocked, &other] {
        assert!(panes.contains(&pane.as_str()), "{pane} in {panes:?}");
    }
    let row = all["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pane"] == blocked.as_str())
        .unwrap();
    assert_eq!(row["detail"], "permission");
    assert_eq!(
        row["locator"].as_str().unwrap().split(':').next(),
        Some("work")
    );
    assert!(row["server"].as_str().unwrap().ends_with(&tmux.socket));

    for (selector, want) in [
        (json!({"session": "play"}), vec![other.clone()]),
        (json!({"agent": "codex"}), vec![blocked.clone()]),
        (json!({"state": ["done"]}), vec![other.clone()]),
        (
            json!({"state": ["blocked", "done"]}),
            vec![blocked.clone(), other.clone()],
        ),
        (json!({"state": ["asleep"]}), vec![]),
        (
            json!({"session": "work", "state": ["idle"]}),
            vec![idle.clone()],
        ),
    ] {
        host.send(&json!({"schema":1,"id":"sel","t":"snapshot","selector":selector}).to_string());
        let reply = host.recv();
        let mut got: Vec<String> = reply["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["pane"].as_str().unwrap().to_owned())
            .collect();
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want, "selector {selector}");
    }
}

#[test]
fn edges_follow_real_set_option_transitions_after_a_silent_baseline() {
    let (tmux, home, pane) = fleet();
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    assert_eq!(host.recv(), json!({"schema":1,"id":"sub","t":"ack"}));
    host.silent_for(Duration::from_millis(350));

    tmux.set(&pane, "@agent_detail", "permission");
    tmux.set(&pane, "@agent_state", "blocked");
    let edge = host.recv();
    assert_eq!(edge["t"], "edge");
    assert_eq!(edge["id"], "sub", "streamed frames carry the subscribe id");
    assert_eq!(
        (
            edge["pane"].as_str(),
            edge["from"].as_str(),
            edge["to"].as_str()
        ),
        (Some(pane.as_str()), Some("idle"), Some("blocked"))
    );
    assert_eq!(edge["detail"], "permission");

    tmux.set(&pane, "@agent_detail", "plan");
    host.silent_for(Duration::from_millis(350));

    // A request is answered while the stream runs.
    host.send(r#"{"schema":1,"id":"snap","t":"snapshot"}"#);
    let reply = host.recv();
    assert_eq!(
        (reply["t"].as_str(), reply["id"].as_str()),
        (Some("snapshot"), Some("snap"))
    );

    let added = tmux.agent("work", "gemini", "working", home.dir.path());
    let appear = host.recv();
    assert_eq!(
        (
            appear["pane"].as_str(),
            appear["from"].as_str(),
            appear["to"].as_str()
        ),
        (Some(added.as_str()), Some(""), Some("working"))
    );
    tmux.kill_pane(&added);
    let vanish = host.recv();
    assert_eq!(
        (
            vanish["pane"].as_str(),
            vanish["from"].as_str(),
            vanish["to"].as_str()
        ),
        (Some(added.as_str()), Some("working"), Some(""))
    );

    host.send(r#"{"schema":1,"id":"again","t":"subscribe","events":false}"#);
    let refused = host.recv();
    assert!(
        is_error(&refused, "again", "bad-request"),
        "a second subscribe: {refused}"
    );
}

#[test]
fn snapshot_streams_send_the_fleet_then_only_changes() {
    let (tmux, home, pane) = fleet();
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(
        r#"{"schema":1,"id":"sub","t":"subscribe","events":false,"selector":{"agent":"claude"}}"#,
    );
    assert_eq!(host.recv()["t"], "ack");
    let first = host.recv();
    assert_eq!(
        (first["t"].as_str(), first["id"].as_str()),
        (Some("snapshot"), Some("sub"))
    );
    host.silent_for(Duration::from_millis(350));
    tmux.set(&pane, "@agent_state", "working");
    let next = host.recv();
    assert_eq!(next["agents"][0]["state"], "working");
}

#[test]
fn revocation_mid_stream_ends_the_process_within_one_cycle() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    host.recv();
    let revoked = Instant::now();
    home.ok(&["device", "revoke", "phone"]);
    let frame = host.recv();
    assert!(is_error(&frame, "sub", "scope-denied"), "{frame}");
    assert_eq!(host.exit_code(), 2);
    assert!(
        revoked.elapsed() < Duration::from_secs(5),
        "exit came with the next cycle"
    );
}

#[test]
fn revocation_refuses_the_next_request() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-phone");
    host.hello();
    home.ok(&["device", "revoke", "phone"]);
    host.send(r#"{"schema":1,"id":"next","t":"snapshot"}"#);
    assert!(is_error(&host.recv(), "next", "scope-denied"));
    assert_eq!(host.exit_code(), 2);
}

#[test]
fn an_unknown_device_is_refused_before_anything_else() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-stranger");
    let frame = host.recv();
    assert!(is_error(&frame, "0", "scope-denied"), "{frame}");
    assert_eq!(host.exit_code(), 2);
}

#[test]
fn the_connection_cap_holds_across_processes_and_reclaims_dead_slots() {
    let (_tmux, home, _) = fleet();
    home.write_config("[serve]\nreconcile_interval_ms = 100\nmax_connections = 2\n");
    let mut first = home.serve("fp-phone");
    first.hello();
    let mut second = home.serve("fp-phone");
    second.hello();
    let mut third = home.serve("fp-phone");
    let frame = third.recv();
    assert!(is_error(&frame, "0", "too-many-connections"), "{frame}");
    assert_eq!(third.exit_code(), 2);

    drop(first); // killed: its slot is reclaimed without cleanup
    let mut fourth = home.serve("fp-phone");
    fourth.hello();
}

#[test]
fn two_devices_at_once_see_their_own_scopes() {
    let (_tmux, home, _) = fleet();
    home.enrol("tablet", "fp-tablet", &["read"]);
    let mut phone = home.serve("fp-phone");
    let mut tablet = home.serve("fp-tablet");
    assert_eq!(phone.hello()["scopes"], json!(["read", "act:answer"]));
    assert_eq!(tablet.hello()["scopes"], json!(["read"]));
    home.ok(&["device", "revoke", "tablet"]);
    tablet.send(r#"{"schema":1,"id":"t","t":"snapshot"}"#);
    assert!(is_error(&tablet.recv(), "t", "scope-denied"));
    phone.send(r#"{"schema":1,"id":"p","t":"snapshot"}"#);
    assert_eq!(
        phone.recv()["t"],
        "snapshot",
        "the other device is unaffected"
    );
}

#[test]
fn a_title_canary_never_reaches_stdout() {
    let (tmux, home, pane) = fleet();
    tmux.title(&pane, "TITLE-CANARY-7f3a");
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    host.recv();
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":false}"#);
    host.recv();
    host.recv();
    host.send(r#"{"schema":1,"id":"c","t":"card","pane":"%99"}"#);
    host.recv();
    for line in &host.raw {
        assert!(!line.contains("TITLE-CANARY"), "{line}");
    }
    assert!(
        home.ok(&["ls", "--json"]).contains("TITLE-CANARY-7f3a"),
        "ls does show it"
    );
}

#[test]
fn pane_requests_answer_not_found_for_a_pane_the_host_does_not_have() {
    let (_tmux, home, pane) = fleet();
    let mut host = home.serve("fp-phone");
    host.hello();
    for request in [
        json!({"schema":1,"id":"c","t":"card","pane":"%404"}),
        json!({"schema":1,"id":"w","t":"window","pane":"%404"}),
        json!({"schema":1,"id":"e","t":"event","pane":"%404","cursor":"x"}),
        json!({"schema":1,"id":"d","t":"dispatch","slot":"s","host":"","pane":"%404","action":"approve","binder":{"expect_episode_ms":0}}),
    ] {
        host.send(&request.to_string());
        let id = request["id"].as_str().unwrap();
        assert!(is_error(&host.recv(), id, "not-found"), "{request}");
    }
    host.send(&json!({"schema":1,"id":"k","t":"card","pane":pane}).to_string());
    assert!(
        is_error(&host.recv(), "k", "internal"),
        "not built yet, typed"
    );
}

#[test]
fn sigterm_is_a_clean_exit() {
    let (_tmux, home, _) = fleet();
    let mut host = home.serve("fp-phone");
    host.hello();
    host.terminate();
    assert_eq!(host.exit_code(), 0);
}

#[test]
fn no_tmux_server_is_an_empty_fleet() {
    let home = Home::new(&crate::support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    assert_eq!(
        host.recv(),
        json!({"schema":1,"id":"s","t":"snapshot","agents":[]})
    );
}

#[test]
fn a_broken_config_is_a_start_up_failure() {
    let (_tmux, home, _) = fleet();
    home.write_config("[serve]\nmax_connections = \"many\"\n");
    let mut host = home.serve("fp-phone");
    assert!(is_error(&host.recv(), "0", "internal"));
    assert_eq!(host.exit_code(), 1);
    assert!(host.stderr().contains("max_connections"));
}

#[test]
fn the_tmux_flags_override_the_environment() {
    let (tmux, home, pane) = fleet();
    let out = home
        .corral()
        .env("CORRAL_TMUX_SOCKET", "no-such-socket")
        .env("CORRAL_TMUX_BIN", "/nonexistent/tmux")
        .args([
            "ls",
            "--json",
            "--tmux-bin",
            "tmux",
            "--tmux-socket",
            &tmux.socket,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains(&format!("\"pane\":\"{pane}\""))
    );
}
