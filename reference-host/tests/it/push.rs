//! The push path end to end: `corral event` run as an agent's hook, with a subscribed `serve` and
//! a `corral daemon` on a cycle far longer than the test (only a push can reach them in time) or
//! on a short one that races the push (the same move seen by both must be one edge, one
//! transition, one ring of the notification), and listeners that are gone or stopped reading.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use stdx::now_ms;

use crate::support::{
    Backend, Fleet, Home, Host, eventually, exit_code_within_patience, fleet_with_phone, hook,
    is_error, json_lines, run_hook, runs,
};

on_both_backends!(
    a_hook_s_move_reaches_a_stream_and_the_daemon_long_before_their_cycle,
    a_move_seen_by_the_push_and_the_cycle_is_one_edge,
    a_move_seen_by_the_push_and_the_cycle_rings_once_and_is_one_transition,
    a_revoked_device_gets_nothing_pushed,
    a_selector_applies_to_pushed_edges,
    a_killed_serve_s_socket_is_skipped_and_removed_by_the_next_hook,
    a_serve_that_stopped_reading_never_holds_the_hook
);

/// A cycle no test waits out: what reaches a stream in time was pushed.
const LONG_CYCLE: &str = "[serve]\nreconcile_interval_ms = 600000\n";

/// The push sockets of `role` (`serve`, `daemon`) in the home's runtime dir, of any server.
pub(crate) fn listeners(home: &Home, role: &str) -> Vec<PathBuf> {
    let Ok(servers) = std::fs::read_dir(home.runtime().join("corral/push")) else {
        return Vec::new();
    };
    servers
        .flatten()
        .filter_map(|server| std::fs::read_dir(server.path()).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{role}-")))
        })
        .collect()
}

/// A `serve` of `phone`, subscribed with `subscribe`'s body, past its baseline: its push socket
/// is there (`others` sockets of other serves already were).
fn subscribed(home: &Home, subscribe: &str, others: usize) -> Host {
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(&format!(
        r#"{{"schema":1,"id":"sub","t":"subscribe",{subscribe}}}"#
    ));
    assert_eq!(host.recv(), json!({"schema":1,"id":"sub","t":"ack"}));
    eventually("the stream's push socket", || {
        listeners(home, "serve").len() == others + 1
    });
    host
}

/// Holds the next `list-panes` on the fake tmux after it ran (its answer waits for `fault
/// release`, or for the reader's tmux time-out), and waits until a cycle's read has met the hold.
fn hold_the_next_read(fleet: &Fleet) {
    fleet.sim(&[
        "fault",
        "add",
        "--command",
        "list-panes",
        "--hang-after-ms",
        "60000",
        "--times",
        "1",
    ]);
    eventually("the next cycle's read held", || fleet.faults_pending() == 0);
}

/// Runs a hook of `agent` in `pane`; it must exit 0.
fn stamp(home: &Home, pane: &str, agent: &str, event: &str, payload: Value) {
    let out = run_hook(home, pane, &[agent, event], &payload);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// A config whose daemon cycles every `interval_ms` and runs, for each `blocked` fire, a command
/// that appends the fire's payload to `payloads`.
fn blocked_fires_to(payloads: &Path, interval_ms: u64) -> String {
    format!(
        "[serve]\nreconcile_interval_ms = {interval_ms}\n\n[notify]\non = [\"blocked\"]\ncommand = \"cat >> {}\"\n",
        payloads.display()
    )
}

/// The payloads of `pane`'s fires so far.
fn fires_of(payloads: &Path, pane: &str) -> Vec<Value> {
    json_lines(payloads)
        .into_iter()
        .filter(|p| p["pane"] == pane)
        .collect()
}

/// `pane`'s transitions in the daemon's ring: from, to, source.
fn moves_of<'a>(ring: &'a Value, pane: &str) -> Vec<(&'a str, &'a str, &'a str)> {
    ring["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["pane"] == pane)
        .map(|t| {
            (
                t["from"].as_str().unwrap(),
                t["to"].as_str().unwrap(),
                t["source"].as_str().unwrap(),
            )
        })
        .collect()
}

/// The next frame, which must be `pane`'s edge `from` → `to` on the stream, observed between
/// `after` and now.
fn expect_edge(host: &mut Host, pane: &str, from: &str, to: &str, after: u64) {
    let edge = host.recv();
    assert_eq!(
        (
            &edge["t"],
            &edge["id"],
            &edge["pane"],
            &edge["from"],
            &edge["to"]
        ),
        (
            &json!("edge"),
            &json!("sub"),
            &json!(pane),
            &json!(from),
            &json!(to)
        ),
        "{edge}"
    );
    let at = edge["at_ms"].as_u64().unwrap();
    assert!(
        (after..=now_ms()).contains(&at),
        "at_ms {at} is when the move was seen, after {after}"
    );
}

fn a_hook_s_move_reaches_a_stream_and_the_daemon_long_before_their_cycle(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let payloads = home.dir.path().join("payloads");
    home.write_config(&format!(
        "{LONG_CYCLE}\n[notify]\non = [\"done\"]\ncommand = \"cat >> {}\"\n",
        payloads.display()
    ));
    let idle = fleet.pane("idle");
    let mut host = subscribed(&home, r#""events":true"#, 0);
    let _daemon = home.daemon();
    assert_eq!(listeners(&home, "daemon").len(), 1);
    let fired = || fires_of(&payloads, &idle).len();
    for round in 0..2 {
        let before = now_ms();
        stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
        expect_edge(&mut host, &idle, "idle", "working", before);
        let before = now_ms();
        stamp(&home, &idle, "claude", "Stop", json!({}));
        expect_edge(&mut host, &idle, "working", "idle", before);
        eventually("the daemon's fire of the turn's end", || {
            fired() == round + 1
        });
    }
    let ring = home.ring();
    let moves: Vec<(&Value, &Value, &Value)> = ring["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (&t["from"], &t["to"], &t["source"]))
        .collect();
    let (working, idle_state, hook) = (json!("working"), json!("idle"), json!("hook"));
    assert_eq!(
        moves,
        [
            (&idle_state, &working, &hook),
            (&working, &idle_state, &hook),
            (&idle_state, &working, &hook),
            (&working, &idle_state, &hook),
        ],
        "{ring}"
    );
    host.close();
    assert_eq!(host.exit_code(), 0);
    eventually("the serve's socket removed as it exits", || {
        listeners(&home, "serve").is_empty()
    });
}

/// Hooks move a pane back and forth under a cycle of 50 ms: the push and the cycle race for each
/// move, and each move is one edge, in order, none twice.
fn a_move_seen_by_the_push_and_the_cycle_is_one_edge(backend: Backend) {
    let (fleet, mut home) = fleet_with_phone(backend);
    home.write_config("[serve]\nreconcile_interval_ms = 50\n");
    home.patient_tmux();
    let idle = fleet.pane("idle");
    let mut host = subscribed(&home, r#""events":true"#, 0);
    let (mut from, mut to) = ("idle", "working");
    for _ in 0..runs(20, 200) {
        let before = now_ms();
        let event = if to == "working" {
            "UserPromptSubmit"
        } else {
            "Stop"
        };
        stamp(&home, &idle, "claude", event, json!({}));
        expect_edge(&mut host, &idle, from, to, before);
        (from, to) = (to, from);
    }
    // Cycles after the last move see nothing new.
    host.silent_for(Duration::from_millis(400));
}

/// Blocked episodes made by hooks under a cycle of 50 ms, with the daemon's push and cycle racing
/// for each: one notification per episode, one transition per move (each the hook's).
fn a_move_seen_by_the_push_and_the_cycle_rings_once_and_is_one_transition(backend: Backend) {
    let fleet = Fleet::up(backend);
    let mut home = fleet.home();
    home.patient_tmux();
    let payloads = home.dir.path().join("payloads");
    home.write_config(&blocked_fires_to(&payloads, 50));
    let idle = fleet.pane("idle");
    let fired = || fires_of(&payloads, &idle);
    stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    let _daemon = home.daemon();
    let episodes = runs(8, 60);
    for n in 1..=episodes {
        let prompt =
            json!({"hook_event_name": "Notification", "notification_type": "permission_prompt"});
        stamp(&home, &idle, "claude", "Notification", prompt);
        eventually("the episode's one fire", || fired().len() == n);
        stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    }
    // Several cycles after the last move: still one fire per episode, each of its own episode.
    std::thread::sleep(Duration::from_millis(400));
    let fired = fired();
    assert_eq!(fired.len(), episodes, "{fired:?}");
    let mut episode_ms: Vec<&Value> = fired.iter().map(|f| &f["episode_ms"]).collect();
    episode_ms.dedup();
    assert_eq!(episode_ms.len(), episodes);
    let ring = home.ring();
    let moves = moves_of(&ring, &idle);
    let expected: Vec<(&str, &str, &str)> = (0..episodes)
        .flat_map(|_| {
            [
                ("working", "blocked", "hook"),
                ("blocked", "working", "hook"),
            ]
        })
        .collect();
    assert_eq!(moves, expected, "{ring}");
}

fn a_revoked_device_gets_nothing_pushed(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    home.write_config(LONG_CYCLE);
    let idle = fleet.pane("idle");
    let mut host = subscribed(&home, r#""events":true"#, 0);
    home.ok(&["device", "revoke", "phone"]);
    stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    let frame = host.recv();
    assert!(is_error(&frame, "sub", "scope-denied"), "{frame}");
    assert_eq!(host.exit_code(), 2);
    assert_eq!(host.raw.len(), 3, "hello, ack, the refusal: {:?}", host.raw);
}

fn a_selector_applies_to_pushed_edges(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    home.write_config(LONG_CYCLE);
    let (idle, blocked) = (fleet.pane("idle"), fleet.pane("blocked"));
    let mut host = subscribed(&home, r#""events":true,"selector":{"agent":"codex"}"#, 0);
    // A move outside the selector, then one inside: the pushes are read in order, so the first
    // frame after both is the codex pane's edge, and nothing came of the claude pane's.
    let before = now_ms();
    stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    stamp(&home, &blocked, "codex", "UserPromptSubmit", json!({}));
    expect_edge(&mut host, &blocked, "blocked", "working", before);
    // Leaving the selector's scope is an edge too: the codex pane becomes a claude pane.
    let before = now_ms();
    stamp(&home, &blocked, "claude", "Stop", json!({}));
    let edge = host.recv();
    assert_eq!(
        (&edge["pane"], &edge["agent"], &edge["to"]),
        (&json!(blocked), &json!("claude"), &json!("idle")),
        "{edge}"
    );
    assert!(edge["at_ms"].as_u64().unwrap() >= before);
    stamp(&home, &blocked, "claude", "UserPromptSubmit", json!({}));
    stamp(&home, &idle, "claude", "Stop", json!({}));
    host.silent_for(Duration::from_millis(500));
}

fn a_killed_serve_s_socket_is_skipped_and_removed_by_the_next_hook(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    home.write_config(LONG_CYCLE);
    let idle = fleet.pane("idle");
    let mut killed = subscribed(&home, r#""events":true"#, 0);
    let stale = listeners(&home, "serve");
    let pid = killed.pid().to_string();
    assert!(
        test_support::command("kill")
            .args(["-KILL", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(killed.exit_code(), -1);
    assert!(stale[0].exists(), "SIGKILL left the socket behind");
    let mut host = subscribed(&home, r#""events":true"#, 1);
    let before = now_ms();
    stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    assert!(!stale[0].exists(), "the hook removed the dead socket");
    expect_edge(&mut host, &idle, "idle", "working", before);
    assert_eq!(listeners(&home, "serve").len(), 1, "the live one stays");
}

/// A `serve` stopped (SIGSTOP) stops reading its socket: its queue fills, and every hook still
/// returns at once, skipping it, while another stream gets every edge. Once it runs again it reads
/// what was queued, coalesced, and publishes the one move it sees.
fn a_serve_that_stopped_reading_never_holds_the_hook(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    home.write_config(LONG_CYCLE);
    let idle = fleet.pane("idle");
    let mut stopped = subscribed(&home, r#""events":true"#, 0);
    let mut live = subscribed(&home, r#""events":true"#, 1);
    let signal = |name: &str| {
        let pid = stopped.pid().to_string();
        assert!(
            test_support::command("kill")
                .args([name, &pid])
                .status()
                .unwrap()
                .success()
        );
    };
    signal("-STOP");
    let (mut from, mut to) = ("idle", "working");
    // An odd count: the pane ends working.
    for _ in 0..31 {
        let event = if to == "working" {
            "UserPromptSubmit"
        } else {
            "Stop"
        };
        let before = now_ms();
        let mut child = hook(&home, &idle, &["claude", event]).spawn().unwrap();
        drop(child.stdin.take());
        let code = exit_code_within_patience(&mut child);
        assert_eq!(
            code,
            Some(0),
            "a hook waited on a listener that stopped reading"
        );
        expect_edge(&mut live, &idle, from, to, before);
        (from, to) = (to, from);
    }
    let resumed = now_ms();
    signal("-CONT");
    let edge = stopped.recv();
    assert_eq!(
        (&edge["pane"], &edge["from"], &edge["to"]),
        (&json!(idle), &json!("idle"), &json!("working")),
        "{edge}"
    );
    assert!(edge["at_ms"].as_u64().unwrap() >= resumed, "{edge}");
    stopped.silent_for(Duration::from_millis(300));
}

/// The daemon reads the fleet off its loop. A cycle's read that tmux holds (a slow server, a
/// thousand panes, a hung one until the time-out) no longer holds a hook's push: the push fires
/// at once. The held read, taken before the move and answered after the push, shows the pane as
/// it was: it neither records the move backwards nor rearms the claimed episode.
#[test]
fn a_push_during_a_held_cycle_read_fires_before_the_read_answers() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    let payloads = home.dir.path().join("payloads");
    // The daemon's tmux time-out is its interval, at most 5 s: the read is held that long.
    home.write_config(&blocked_fires_to(&payloads, 5000));
    let idle = fleet.pane("idle");
    let fired = || fires_of(&payloads, &idle).len();
    stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    let daemon = home.daemon_logging("info,reference_host::notify::daemon=debug");
    daemon.wait_log("notification daemon started");
    // The next cycle's read runs at once and is held before it answers, until released.
    hold_the_next_read(&fleet);
    let prompt =
        json!({"hook_event_name": "Notification", "notification_type": "permission_prompt"});
    stamp(&home, &idle, "claude", "Notification", prompt);
    eventually("the push's fire", || fired() == 1);
    let log = daemon.log();
    assert_eq!(
        log.matches("the cycle's read answered").count(),
        1,
        "only the baseline had answered when the push fired:\n{log}"
    );
    assert!(!log.contains("reading the fleet failed"), "{log}");
    fleet.sim(&["fault", "release"]);
    eventually("the held read answered", || {
        daemon.log().matches("the cycle's read answered").count() == 2
    });
    assert!(
        fleet.option(&idle, "@agent_notified_at").is_some(),
        "the older read rearmed the pushed episode's claim"
    );
    let ring = home.ring();
    assert_eq!(
        moves_of(&ring, &idle),
        [("working", "blocked", "hook")],
        "{ring}"
    );
    assert_eq!(fired(), 1, "one ring for the episode");
}

/// A cycle's read under way when the config is reloaded asked tmux for the old config's fields:
/// it is not used, and the next read starts as soon as it answers, not at the next tick.
#[test]
fn a_read_under_way_at_a_reload_is_dropped_and_read_again_at_once() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    let (before, after) = (
        home.dir.path().join("before"),
        home.dir.path().join("after"),
    );
    home.write_config(&blocked_fires_to(&before, 5000));
    let idle = fleet.pane("idle");
    let daemon = home.daemon_logging("info,reference_host::notify::daemon=debug");
    daemon.wait_log("notification daemon started");
    // Blocked with no hook (no push): only a cycle's read can see it.
    fleet.step(&idle, &["--state", "blocked"]);
    hold_the_next_read(&fleet);
    home.write_config(&blocked_fires_to(&after, 5000));
    daemon.signal("HUP");
    daemon.wait_log("config reloaded");
    fleet.sim(&["fault", "release"]);
    eventually("the fire, on the reloaded config", || {
        fires_of(&after, &idle).len() == 1
    });
    let log = daemon.log();
    let (begun, answered) = (
        log.lines().filter(|l| l.ends_with(": cycle")).count(),
        log.matches("the cycle's read answered").count(),
    );
    assert_eq!(
        (begun, answered),
        (3, 2),
        "the baseline, the held read (dropped) and the read started when it answered:\n{log}"
    );
    assert!(fires_of(&before, &idle).is_empty());
}

/// SIGTERM while a cycle's read is held: the daemon waits for that read (it ends at the reader's
/// tmux time-out, here 5 s) before it exits 0, so no tmux client it started outlives it.
#[test]
fn a_shutdown_waits_for_the_read_under_way() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    home.write_config(&blocked_fires_to(&home.dir.path().join("payloads"), 5000));
    let mut daemon = home.daemon_logging("info,reference_host::notify::daemon=debug");
    daemon.wait_log("notification daemon started");
    hold_the_next_read(&fleet);
    daemon.signal("TERM");
    assert_eq!(daemon.exit_code(), 0);
    let log = daemon.log();
    let (failed, stopped) = (
        log.find("reading the fleet failed"),
        log.find("notification daemon stopped"),
    );
    assert!(
        failed.is_some() && failed < stopped,
        "the held read ended before the daemon did:\n{log}"
    );
}

/// `serve` reads its cycles off its loop too. A push that comes while tmux holds a cycle's read
/// (a slow server, a read of 1000 panes) reaches the stream before that read answers; the read,
/// begun before the hook stamped, shows the pane as it was and takes nothing back: one edge for
/// the move.
#[test]
fn a_push_during_a_held_stream_read_is_an_edge_before_the_read_answers() {
    let (fleet, home) = fleet_with_phone(Backend::Fake);
    // `serve`'s tmux time-out is its interval, at most 5 s: the read is held that long.
    home.write_config("[serve]\nreconcile_interval_ms = 5000\n");
    let idle = fleet.pane("idle");
    stamp(&home, &idle, "claude", "UserPromptSubmit", json!({}));
    let mut host = subscribed(&home, r#""events":true"#, 0);
    let mut log = String::new();
    let mut answered = |host: &Host| {
        log.push_str(&host.stderr());
        log.push('\n');
        (
            log.matches("the cycle's read answered").count(),
            log.clone(),
        )
    };
    // The next cycle's read runs at its time and is held before it answers, until released.
    hold_the_next_read(&fleet);
    let before = now_ms();
    let prompt =
        json!({"hook_event_name": "Notification", "notification_type": "permission_prompt"});
    stamp(&home, &idle, "claude", "Notification", prompt);
    expect_edge(&mut host, &idle, "working", "blocked", before);
    let (count, text) = answered(&host);
    assert_eq!(count, 1, "only the baseline had answered:\n{text}");
    fleet.sim(&["fault", "release"]);
    eventually("the held read answered", || answered(&host).0 == 2);
    host.silent_for(Duration::from_millis(500));
    let (_, text) = answered(&host);
    assert!(!text.contains("reading the fleet failed"), "{text}");
}

/// The tmux clients running now whose command line names `socket` and `command`.
fn tmux_clients(socket: &str, command: &str) -> Vec<String> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect::<Vec<_>>()
        })
        .filter(|args| args.iter().any(|a| a == socket) && args.iter().any(|a| a == command))
        .map(|args| args.join(" "))
        .collect()
}

/// SIGTERM while a stream's cycle read is held: `serve` waits for that read to end (at its tmux
/// time-out, here 5 s) before it exits 0, so the tmux client it started does not outlive it.
#[test]
fn a_serve_s_shutdown_leaves_no_tmux_client_behind() {
    let (fleet, home) = fleet_with_phone(Backend::Fake);
    home.write_config("[serve]\nreconcile_interval_ms = 5000\n");
    let mut host = subscribed(&home, r#""events":true"#, 0);
    hold_the_next_read(&fleet);
    eventually("its tmux client running", || {
        !tmux_clients(&fleet.socket, "list-panes").is_empty()
    });
    host.terminate();
    assert_eq!(host.exit_code(), 0);
    let left = tmux_clients(&fleet.socket, "list-panes");
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `corral daemon --tmux-timeout-ms` (here through `CORRAL_TMUX_TIMEOUT_MS`) is the daemon's tmux
/// time-out, as it is `serve`'s: a held read is killed at 300 ms, not at the cycle's 5 s the
/// daemon takes when none is given (it used to take that whatever it was given).
#[test]
fn the_daemon_s_tmux_time_out_is_the_one_it_was_given() {
    let fleet = Fleet::up(Backend::Fake);
    let mut home = fleet.home();
    home.env
        .push(("CORRAL_TMUX_TIMEOUT_MS".into(), "300".into()));
    home.write_config(&blocked_fires_to(&home.dir.path().join("payloads"), 5000));
    let daemon = home.daemon_logging("info,reference_host::notify::daemon=debug");
    daemon.wait_log("notification daemon started");
    hold_the_next_read(&fleet);
    daemon.wait_log("reading the fleet failed");
    let log = daemon.log();
    assert!(log.contains("did not answer within 300ms"), "{log}");
}
