//! `corral serve --stdio` over real pipes, every scenario on the fake tmux and on a scratch real
//! tmux server, both brought up from `fleet.toml` by `corral-sim`.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Backend, CallLog, Home, Host, fleet_with_phone, is_error, row};

fn panes(frame: &Value) -> Vec<String> {
    let mut panes: Vec<String> = frame["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pane"].as_str().unwrap().to_owned())
        .collect();
    panes.sort();
    panes
}

on_both_backends!(
    handshake,
    downgrade,
    bad_input,
    snapshot_and_selectors,
    edges,
    snapshot_stream,
    revocation_mid_stream,
    revocation_on_request,
    unknown_device,
    connection_cap,
    two_devices,
    title_canary,
    pane_not_found,
    a_pane_request_reads_that_pane_alone,
    sigterm,
    tmux_flags,
    failing_tmux,
    logs_go_to_stderr,
);

fn handshake(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    let reply = host.hello();
    assert_eq!(reply["id"], "hello");
    assert_eq!(
        reply["scopes"],
        json!(["read", "act:answer"]),
        "scopes come from the store"
    );
    assert_eq!(reply["reconcile_interval_ms"], 100);
    assert_eq!(reply["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(reply["host"].as_str().is_some_and(|h| !h.is_empty()));
    host.close();
    assert_eq!(host.exit_code(), 0, "EOF is a clean exit");
}

fn downgrade(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
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

fn bad_input(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
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
    host.send(r#"{"schema":1,"id":"wt2","t":"card","pane":42}"#);
    assert!(
        is_error(&host.recv(), "wt2", "bad-request"),
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
        11,
        "one answer per line, nothing else on stdout"
    );
}

fn snapshot_and_selectors(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let [idle, blocked, done] = ["idle", "blocked", "done"].map(|n| fleet.pane(n));
    let mut host = home.serve("fp-phone");
    host.hello();

    host.send(r#"{"schema":1,"id":"all","t":"snapshot"}"#);
    let all = host.recv();
    let mut want = vec![idle.clone(), blocked.clone(), done.clone()];
    want.sort();
    assert_eq!(panes(&all), want, "the plain pane is not an agent pane");
    let blocked_row = row(&all, &blocked);
    assert_eq!(blocked_row["state"], "blocked");
    assert_eq!(blocked_row["detail"], "permission");
    assert_eq!(blocked_row["permission_request"], "req-blocked");
    assert_eq!(blocked_row["locator"], "work:0.2");
    assert_eq!(blocked_row["repo"], "web");
    assert_eq!(blocked_row["branch"], "develop");
    assert!(
        blocked_row["worktree"]
            .as_str()
            .unwrap()
            .ends_with("/repos/web")
    );
    assert!(
        blocked_row["server"]
            .as_str()
            .unwrap()
            .ends_with(&fleet.socket)
    );
    let done_row = row(&all, &done);
    assert_eq!(
        (done_row["attention"].as_bool(), done_row["done"].as_bool()),
        (Some(true), Some(true))
    );

    for (selector, want) in [
        (json!({"session": "play"}), vec![done.clone()]),
        (json!({"agent": "codex"}), vec![blocked.clone()]),
        (json!({"repo": "api"}), vec![idle.clone(), done.clone()]),
        (json!({"branch": "develop"}), vec![blocked.clone()]),
        (json!({"state": ["done"]}), vec![done.clone()]),
        (
            json!({"state": ["blocked", "done"]}),
            vec![blocked.clone(), done.clone()],
        ),
        (json!({"state": ["asleep"]}), vec![]),
        (
            json!({"session": "work", "state": ["idle"]}),
            vec![idle.clone()],
        ),
    ] {
        host.send(&json!({"schema":1,"id":"sel","t":"snapshot","selector":selector}).to_string());
        let mut want = want;
        want.sort();
        assert_eq!(panes(&host.recv()), want, "selector {selector}");
    }
}

fn edges(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let idle = fleet.pane("idle");
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    assert_eq!(host.recv(), json!({"schema":1,"id":"sub","t":"ack"}));
    host.silent_for(Duration::from_millis(350));

    fleet.step(&idle, &["--state", "blocked", "--detail", "permission"]);
    let edge = host.recv();
    assert_eq!(edge["t"], "edge");
    assert_eq!(edge["id"], "sub", "streamed frames carry the subscribe id");
    assert_eq!(
        (
            edge["pane"].as_str(),
            edge["from"].as_str(),
            edge["to"].as_str()
        ),
        (Some(idle.as_str()), Some("idle"), Some("blocked"))
    );
    assert_eq!(
        (edge["detail"].as_str(), edge["locator"].as_str()),
        (Some("permission"), Some("work:0.1"))
    );
    assert_eq!(
        (edge["repo"].as_str(), edge["branch"].as_str()),
        (Some("api"), Some("main"))
    );

    fleet.step(&idle, &["--detail", "plan"]);
    host.silent_for(Duration::from_millis(350));

    // A request is answered while the stream runs.
    host.send(r#"{"schema":1,"id":"snap","t":"snapshot"}"#);
    let reply = host.recv();
    assert_eq!(
        (reply["t"].as_str(), reply["id"].as_str()),
        (Some("snapshot"), Some("snap"))
    );

    let added = fleet.add("newcomer", "work", "gemini", "working");
    let appear = host.recv();
    assert_eq!(
        (
            appear["pane"].as_str(),
            appear["from"].as_str(),
            appear["to"].as_str()
        ),
        (Some(added.as_str()), Some(""), Some("working"))
    );
    fleet.kill(&added);
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
    assert!(
        is_error(&host.recv(), "again", "bad-request"),
        "a second subscribe"
    );
}

fn snapshot_stream(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
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
    assert_eq!(first["agents"].as_array().unwrap().len(), 2);
    host.silent_for(Duration::from_millis(350));
    fleet.step(&fleet.pane("blocked"), &["--state", "working"]);
    host.silent_for(Duration::from_millis(350));
    fleet.step(&fleet.pane("idle"), &["--state", "working"]);
    let next = host.recv();
    assert_eq!(row(&next, &fleet.pane("idle"))["state"], "working");
}

fn revocation_mid_stream(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
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

fn revocation_on_request(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    host.hello();
    home.ok(&["device", "revoke", "phone"]);
    host.send(r#"{"schema":1,"id":"next","t":"snapshot"}"#);
    assert!(is_error(&host.recv(), "next", "scope-denied"));
    assert_eq!(host.exit_code(), 2);
}

fn unknown_device(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-stranger");
    let frame = host.recv();
    assert!(is_error(&frame, "0", "scope-denied"), "{frame}");
    assert_eq!(host.exit_code(), 2);
    assert_eq!(host.raw.len(), 1, "nothing else before the refusal");
}

fn connection_cap(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
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

fn two_devices(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
    home.enrol("tablet", "fp-tablet", &["read"]);
    let mut phone = home.serve("fp-phone");
    let mut tablet = home.serve("fp-tablet");
    assert_eq!(phone.hello()["scopes"], json!(["read", "act:answer"]));
    assert_eq!(tablet.hello()["scopes"], json!(["read"]));
    home.ok(&["device", "revoke", "tablet"]);
    tablet.send(r#"{"schema":1,"id":"t","t":"snapshot"}"#);
    assert!(is_error(&tablet.recv(), "t", "scope-denied"));
    assert_eq!(tablet.exit_code(), 2);
    phone.send(r#"{"schema":1,"id":"p","t":"snapshot"}"#);
    assert_eq!(
        phone.recv()["t"],
        "snapshot",
        "the other device is unaffected"
    );
}

fn title_canary(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    host.recv();
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":false}"#);
    host.recv();
    host.recv();
    fleet.step(
        &fleet.pane("idle"),
        &["--title", "TITLE-CANARY-changed", "--state", "working"],
    );
    host.recv();
    for line in &host.raw {
        assert!(!line.contains("TITLE-CANARY"), "{line}");
    }
    let ls = home.ok(&["ls", "--json"]);
    assert!(
        ls.contains("TITLE-CANARY-changed") && ls.contains("TITLE-CANARY-done"),
        "ls does show titles"
    );
}

/// A request about one pane reads that pane's window, not the whole fleet: one `list-panes -t
/// <pane>`, with the same format. A pane tmux does not have is `not-found`; so is an id no pane
/// can have (not `%<digits>`), which costs no tmux call at all.
fn a_pane_request_reads_that_pane_alone(backend: Backend) {
    let (fleet, mut home) = fleet_with_phone(backend);
    let calls = CallLog::install(&mut home);
    let mut host = home.serve("fp-phone");
    host.hello();
    let blocked = fleet.pane("blocked");
    let ask = |host: &mut Host, request: Value| {
        calls.clear();
        host.send(&request.to_string());
        (host.recv(), calls.calls())
    };
    let (card, read) = ask(
        &mut host,
        json!({"schema":1,"id":"k","t":"card","pane":blocked}),
    );
    assert_eq!(card["t"], "card", "{card}");
    assert_eq!(read.len(), 1, "{read:#?}");
    assert!(
        read[0].contains(" list-panes -F ") && read[0].ends_with(&format!(" -t {blocked}")),
        "{read:#?}"
    );
    assert!(!read[0].contains(" -a "), "not the whole fleet: {read:#?}");
    let (gone, read) = ask(
        &mut host,
        json!({"schema":1,"id":"g","t":"window","pane":"%404"}),
    );
    assert!(is_error(&gone, "g", "not-found"), "{gone}");
    assert_eq!(read.len(), 1, "{read:#?}");
    for id in ["work", "%", "%2x", "2", "%-1", ""] {
        let (frame, read) = ask(&mut host, json!({"schema":1,"id":"n","t":"card","pane":id}));
        assert!(is_error(&frame, "n", "not-found"), "{id:?}: {frame}");
        assert!(read.is_empty(), "{id:?} asked tmux: {read:#?}");
    }
    host.close();
}

fn pane_not_found(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    host.hello();
    for request in [
        json!({"schema":1,"id":"c","t":"card","pane":"%404"}),
        json!({"schema":1,"id":"w","t":"window","pane":"%404"}),
        json!({"schema":1,"id":"e","t":"event","pane":"%404","cursor":"x"}),
        json!({"schema":1,"id":"p","t":"card","pane":fleet.pane("shell")}),
    ] {
        host.send(&request.to_string());
        let id = request["id"].as_str().unwrap();
        assert!(is_error(&host.recv(), id, "not-found"), "{request}");
    }
    // A dispatch to a pane this host does not have passes the scope and slot gates, so its
    // answer is a receipt: the pane is gone.
    let dispatch = json!({"schema":1,"id":"d","t":"dispatch","slot":"s","host":"","pane":"%404","action":"approve","binder":{"expect_episode_ms":0}});
    host.send(&dispatch.to_string());
    let receipt = host.recv();
    assert_eq!(
        (&receipt["t"], &receipt["outcome"], &receipt["reason"]),
        (&json!("receipt"), &json!("vanished"), &json!("pane-gone")),
        "{receipt}"
    );
    host.send(&json!({"schema":1,"id":"k","t":"card","pane":fleet.pane("blocked")}).to_string());
    let card = host.recv();
    assert_eq!(
        (&card["card"], &card["lane"], &card["extraction"]),
        (&json!("permission"), &json!("hook"), &json!("exact")),
        "the parked request makes a hook card: {card}"
    );
    assert_eq!(card["options"][0]["option_id"], "req-blocked");
}

fn sigterm(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    host.hello();
    host.terminate();
    assert_eq!(host.exit_code(), 0);
}

fn tmux_flags(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let out = home
        .corral()
        .env("CORRAL_TMUX_SOCKET", "no-such-socket")
        .env("CORRAL_TMUX_BIN", "/nonexistent/tmux")
        .args(["ls", "--json", "--tmux-bin"])
        .arg(&fleet.tmux_bin)
        .args(["--tmux-socket", &fleet.socket])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("\"pane\":\"{}\"", fleet.pane("idle"))),
        "{text}"
    );
}

/// A failing tmux is a typed answer on a request and a skipped cycle on a stream, never a crash.
fn failing_tmux(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    host.hello();
    if backend == Backend::Real {
        // Faults are the fake's; on real tmux, a server that goes away is an empty fleet.
        fleet.sim(&["down"]);
        host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
        assert_eq!(
            host.recv(),
            json!({"schema":1,"id":"s","t":"snapshot","agents":[]})
        );
        return;
    }
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    host.recv();
    host.silent_for(Duration::from_millis(250));
    fleet.sim(&[
        "fault",
        "add",
        "--command",
        "list-panes",
        "--fail",
        "--stderr",
        "lost server",
        "--times",
        "3",
    ]);
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    assert!(is_error(&host.recv(), "s", "internal"));
    fleet.step(&fleet.pane("idle"), &["--state", "working"]);
    let edge = host.recv();
    assert_eq!(
        (edge["t"].as_str(), edge["to"].as_str()),
        (Some("edge"), Some("working")),
        "the stream lived on"
    );
    drop(host);

    // A hung tmux is killed after the read timeout (1 s here): had the host waited the 3 s out,
    // the read would have succeeded and answered a snapshot.
    let mut host = home.serve("fp-phone");
    host.hello();
    fleet.sim(&[
        "fault",
        "add",
        "--command",
        "list-panes",
        "--hang-ms",
        "3000",
        "--times",
        "1",
    ]);
    host.send(r#"{"schema":1,"id":"h","t":"snapshot"}"#);
    let asked = Instant::now();
    assert!(
        is_error(&host.recv(), "h", "internal"),
        "a hung tmux is cut off"
    );
    // For one more time-out tmux is not asked (tmux/mod.rs tests that), then it is, and answers.
    loop {
        host.send(r#"{"schema":1,"id":"ok","t":"snapshot"}"#);
        if host.recv()["t"] == "snapshot" {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "tmux is asked again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn no_tmux_server_is_an_empty_fleet() {
    let socket = test_support::unique("corral-absent");
    let home = Home::new(&socket);
    home.enrol("phone", "fp-phone", &["read"]);
    let mut host = home.serve("fp-phone");
    host.hello();
    for id in ["s1", "s2"] {
        host.send(&json!({"schema":1,"id":id,"t":"snapshot"}).to_string());
        assert_eq!(
            host.recv(),
            json!({"schema":1,"id":id,"t":"snapshot","agents":[]})
        );
    }
    // Said in the log, once however many reads meet it, naming the socket.
    let uid = std::fs::metadata(home.dir.path()).unwrap().uid();
    let path = home.dir.path().join(format!("tmux-{uid}/{socket}"));
    let said = format!(
        "no tmux server is running on {}: the fleet is empty",
        path.display()
    );
    let stderr = host.stderr();
    assert_eq!(stderr.matches(&said).count(), 1, "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains(&said)),
        "{stderr}"
    );
}

/// A slot file that cannot be used (a directory took its name) does not block the free slots;
/// when it is the only one left, serve fails to start and its log names the file.
#[test]
fn an_unusable_slot_file_is_passed_over_and_named() {
    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let slot = home.runtime().join("corral/serve/slot-0.lock");
    std::fs::create_dir_all(&slot).unwrap();
    home.write_config("[serve]\nmax_connections = 2\n");
    let mut first = home.serve("fp-phone");
    first.hello();
    let mut second = home.serve("fp-phone");
    let frame = second.recv();
    assert!(is_error(&frame, "0", "internal"), "{frame}");
    assert_eq!(second.exit_code(), 1);
    let stderr = second.stderr();
    assert!(stderr.contains(&slot.display().to_string()), "{stderr}");
}

/// A hello whose `device` claim differs from `--device` is logged once, as a warning, at the
/// default log level; a matching claim is not, nor are the hellos that are refused.
#[test]
fn a_hello_claiming_another_device_is_logged_once() {
    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let hello = |schema: u32, id: &str, claim: &str| {
        json!({"schema":schema,"id":id,"t":"hello","app":"it","app_version":"1","device":claim})
            .to_string()
    };
    let start = || {
        let mut command = home.serve_command("fp-phone");
        command.env_remove("RUST_LOG");
        Host::start(command)
    };

    let mut host = start();
    host.send(&hello(2, "h0", "fp-other"));
    assert!(is_error(&host.recv(), "h0", "unsupported-schema"));
    host.send(&hello(1, "h1", "fp-other"));
    assert_eq!(host.recv()["scopes"], json!(["read"]), "the store decides");
    host.send(&hello(1, "h2", "fp-other"));
    assert!(is_error(&host.recv(), "h2", "bad-request"));
    host.close();
    assert_eq!(host.exit_code(), 0);
    let stderr = host.stderr();
    let logged: Vec<&str> = stderr.lines().filter(|l| l.contains("fp-other")).collect();
    assert_eq!(logged.len(), 1, "{stderr}");
    assert!(
        logged[0].contains("WARN") && logged[0].contains("fp-phone"),
        "{stderr}"
    );

    let mut host = start();
    host.send(&hello(1, "h", "fp-phone"));
    host.recv();
    host.close();
    assert_eq!(host.exit_code(), 0);
    assert_eq!(host.stderr(), "", "a matching claim is not worth a line");
}

#[test]
fn a_broken_config_is_a_start_up_failure() {
    let home = Home::new("unused");
    home.enrol("phone", "fp-phone", &["read"]);
    home.write_config("[serve]\nmax_connections = \"many\"\n");
    let mut host = home.serve("fp-phone");
    assert!(is_error(&host.recv(), "0", "internal"));
    assert_eq!(host.exit_code(), 1);
    assert!(host.stderr().contains("max_connections"));
}

/// One tmux invocation reads the whole fleet: a snapshot costs exactly one `list-panes -a`, and a
/// stream's cycles run nothing else (no per-pane commands), whatever the pane count.
#[test]
fn one_tmux_invocation_per_read() {
    let (fleet, home) = fleet_with_phone(Backend::Fake);
    let mut host = home.serve("fp-phone");
    host.hello();
    let before = fleet.fake_calls().len();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    host.recv();
    let calls = fleet.fake_calls();
    assert_eq!(calls.len() - before, 1, "{:?}", &calls[before..]);
    let call = &calls[before];
    assert!(
        call.iter().any(|a| a == "list-panes") && call.iter().any(|a| a == "-a"),
        "{call:?}"
    );

    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    host.recv();
    let start = fleet.fake_calls().len();
    host.silent_for(Duration::from_millis(500));
    let calls = fleet.fake_calls();
    let during = &calls[start..];
    assert!(!during.is_empty(), "the stream's cycles read tmux");
    for call in during {
        assert!(
            call.iter().any(|a| a == "list-panes") && call.iter().any(|a| a == "-a"),
            "a cycle runs nothing but the one whole-fleet read: {call:?}"
        );
    }
}

/// Logs go to stderr only: with `RUST_LOG=debug` the host logs the hello and a refused line on
/// stderr, while stdout carries exactly one frame per request and nothing more (every line
/// `recv` takes must decode as a frame).
fn logs_go_to_stderr(backend: Backend) {
    let (_fleet, home) = fleet_with_phone(backend);
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    assert_eq!(host.recv()["t"], "snapshot");
    host.send("{not json");
    assert!(is_error(&host.recv(), "0", "bad-request"));
    host.close();
    assert_eq!(host.exit_code(), 0);
    assert_eq!(
        host.recv_within(Duration::from_millis(200)),
        None,
        "nothing after the answers"
    );
    assert_eq!(host.raw.len(), 3, "one line per request on stdout");
    let stderr = host.stderr();
    assert!(
        stderr.contains("hello") && stderr.contains("device=fp-phone"),
        "the hello is logged on stderr: {stderr}"
    );
    assert!(
        stderr.contains("refused a line"),
        "the bad line is logged on stderr: {stderr}"
    );
}

/// The runtime dir (serve slots live there) is `$XDG_RUNTIME_DIR/corral`, else
/// `$TMPDIR/corral-<uid>`, and serve makes it mode 0700, tightening one it finds open.
#[test]
fn the_runtime_dir_is_xdg_runtime_dir_else_tmpdir() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let uid = std::fs::metadata(home.dir.path()).unwrap().uid();
    let tmpdir = home.dir.path().join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();

    // Serves one hello with `configure` applied; the runtime dir it used must be `want`.
    let check = |configure: &dyn Fn(&mut std::process::Command), want: &std::path::Path| {
        let mut command = home.serve_command("fp-phone");
        configure(&mut command);
        let mut host = Host::start(command);
        host.hello();
        let meta =
            std::fs::metadata(want).unwrap_or_else(|err| panic!("{}: {err}", want.display()));
        assert!(meta.is_dir(), "{}", want.display());
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o700,
            "{}",
            want.display()
        );
        assert!(
            want.join("serve").is_dir(),
            "the serve slots are in {}",
            want.display()
        );
        host.close();
        assert_eq!(host.exit_code(), 0);
    };

    // An existing dir that others may read is made private.
    let xdg = home.runtime().join("corral");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::set_permissions(&xdg, std::fs::Permissions::from_mode(0o755)).unwrap();
    check(
        &|c| {
            c.env("TMPDIR", &tmpdir);
        },
        &xdg,
    );

    let fallback = tmpdir.join(format!("corral-{uid}"));
    assert!(
        !fallback.exists(),
        "with XDG_RUNTIME_DIR set, TMPDIR is not used"
    );
    check(
        &|c| {
            c.env_remove("XDG_RUNTIME_DIR").env("TMPDIR", &tmpdir);
        },
        &fallback,
    );
}
