//! The notification subsystem through the `corral` binary, on the fake tmux and on a scratch real
//! tmux server: `corral daemon` (a transition rings once on every sink, a restart does not ring
//! again, one daemon per server, SIGHUP reloads, SIGTERM and SIGINT clear progress and exit 0,
//! a mute silences), `corral debug transitions` over the daemon's socket, `corral mute`,
//! `corral doctor`, `corral debug notify-test`, and a detached action's supervisor.
//!
//! The fixture (`fleet.toml`): shell `%0`, idle `%1` (claude, work), blocked `%2` (codex, work),
//! done `%3` (claude, play). The status line is observed on the fake only, whose attached client
//! is scripted; a real scratch server has no client.

use std::path::PathBuf;

use serde_json::{Value, json};
use stdx::now_ms;

use crate::support::{Backend, CallLog, Fleet, Home, eventually, json_lines};

on_both_backends!(
    a_transition_rings_once_on_every_sink,
    a_fire_makes_one_tmux_call_before_its_command,
    a_restarted_daemon_does_not_ring_again,
    a_daemon_whose_socket_is_there_has_taken_its_baseline,
    a_second_daemon_for_the_server_is_refused,
    sighup_reloads_and_a_broken_config_keeps_the_old,
    sigterm_and_sigint_clear_progress_and_exit_0,
    debug_transitions_reads_the_ring_over_the_socket,
    mute_variants,
    a_muted_pane_rings_nothing,
    doctor_reports_what_stops_notifications,
    notify_test_runs_the_command_and_records_its_failure,
    a_detached_action_s_completion_reaches_every_sink,
);

/// ESC P tmux ; <seq, ESC doubled> ESC \
fn wrapped(seq: &[u8]) -> Vec<u8> {
    let mut out = b"\x1bPtmux;".to_vec();
    for &b in seq {
        if b == 0x1b {
            out.push(0x1b);
        }
        out.push(b);
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// A fleet and a home whose config is `[serve]` at a 100 ms cycle plus `notify`; `{home}`
/// in `notify` is the home dir.
fn setup(backend: Backend, notify: &str) -> (Fleet, Home) {
    let fleet = Fleet::up(backend);
    fleet.attach_client_on_fake();
    let home = fleet.home();
    write_config(&home, notify);
    (fleet, home)
}

fn write_config(home: &Home, notify: &str) {
    let notify = notify.replace("{home}", home.dir.path().to_str().unwrap());
    home.write_config(&format!("[serve]\nreconcile_interval_ms = 100\n\n{notify}"));
}

fn path(home: &Home, name: &str) -> PathBuf {
    home.dir.path().join(name)
}

/// The panes of the log lines so far, with their states.
fn logged(home: &Home) -> Vec<(String, String)> {
    json_lines(&path(home, "logs/notify.log"))
        .iter()
        .map(|l| {
            (
                l["pane"].as_str().unwrap().to_owned(),
                l["state"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Waits until the daemon's ring shows `pane` moving to `to`: it has cycled past that move.
fn wait_transition(home: &Home, pane: &str, to: &str) {
    eventually(&format!("{pane} -> {to} in the ring"), || {
        home.ring()["transitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["pane"] == pane && t["to"] == to)
    });
}

const EVERY_SINK: &str = "[notify]\nosc = true\nosc_777 = true\n\
    command = \"cat >> {home}/payloads\"\nlog = \"~/logs/notify.log\"\n";

fn a_transition_rings_once_on_every_sink(backend: Backend) {
    let (fleet, home) = setup(backend, EVERY_SINK);
    let tty = fleet.tty("%1");
    let daemon = home.daemon();
    // The fixture's blocked pane was never announced: the first cycle announces it.
    eventually("%2 announced", || {
        logged(&home) == [("%2".into(), "blocked".into())]
    });
    fleet.step("%1", &["--state", "working"]);
    wait_transition(&home, "%1", "working");
    fleet.step("%1", &["--state", "blocked", "--detail", "permission"]);
    eventually("%1 announced", || logged(&home).len() == 2);
    assert_eq!(logged(&home)[1], ("%1".into(), "blocked".into()));
    let episode = fleet.option("%1", "@agent_notified_at").unwrap();
    let line = &json_lines(&path(&home, "logs/notify.log"))[1];
    assert_eq!(
        line["episode_ms"].to_string(),
        episode,
        "the marker is the episode"
    );
    assert_eq!(line["schema"], 2);
    assert!(line["at"].is_u64());
    eventually("the command ran", || {
        json_lines(&path(&home, "payloads")).len() == 2
    });
    let payload = &json_lines(&path(&home, "payloads"))[1];
    assert_eq!(payload["pane"], "%1");
    assert_eq!(payload["detail"], "permission");
    // The daemon's cycle read has no directory: the claim printed it.
    assert_eq!(
        (&payload["repo"], &payload["branch"]),
        (&json!("api"), &json!("main"))
    );
    assert!(
        payload.get("title").is_none(),
        "no title without include_title"
    );
    let mut expected = b"\x07".to_vec();
    expected.extend(wrapped(b"\x1b]9;claude blocked\x07"));
    expected.extend(wrapped(b"\x1b]777;notify;claude;blocked\x07"));
    eventually("the tty was written", || tty.bytes() == expected);
    if backend == Backend::Fake {
        assert!(
            fleet.messages().contains(&(
                "/dev/pts/40".into(),
                "corral: claude blocked (permission) at work:0.1".into()
            )),
            "{:?}",
            fleet.messages()
        );
    }
    // More cycles, the same episode: nothing more.
    fleet.step("%3", &["--state", "working"]);
    wait_transition(&home, "%3", "working");
    assert_eq!(logged(&home).len(), 2, "exactly once");
    assert_eq!(tty.bytes(), expected);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(path(&home, "logs/notify.log"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    drop(daemon);
}

/// What a fire costs in tmux: after the read that sees the transition, one invocation (the
/// claim, which shows the status-line message too), then the command; nothing after it.
fn a_fire_makes_one_tmux_call_before_its_command(backend: Backend) {
    let fleet = Fleet::up(backend);
    fleet.attach_client_on_fake();
    let mut home = fleet.home();
    let calls = CallLog::install(&mut home);
    write_config(
        &home,
        &format!(
            "[notify]\nosc = true\ncommand = \"printf 'command %s\\\\n' $CORRAL_PANE >> '{}'\"\nlog = \"~/logs/notify.log\"\n",
            calls.path().display()
        ),
    );
    let daemon = home.daemon();
    eventually("%2 announced", || logged(&home).len() == 1);
    eventually("its command ran", || {
        calls.calls().iter().any(|l| l == "command %2")
    });
    calls.clear();
    fleet.step("%1", &["--state", "blocked", "--detail", "permission"]);
    eventually("%1's command ran", || {
        calls.calls().iter().any(|l| l == "command %1")
    });
    // A few more cycles: nothing but reads of the fleet.
    let reads = |lines: &[String]| lines.iter().filter(|l| l.contains(" list-panes ")).count();
    let seen = reads(&calls.calls());
    eventually("three more reads", || reads(&calls.calls()) >= seen + 3);
    let lines = calls.calls();
    let fire: Vec<&String> = lines
        .iter()
        .filter(|l| !l.contains(" list-panes "))
        .collect();
    assert_eq!(fire.len(), 2, "{lines:#?}");
    assert!(
        fire[0].starts_with("-u -L ") && fire[0].contains(" if-shell -F -t %1 "),
        "the claim: {lines:#?}"
    );
    assert!(fire[0].contains("@agent_notified_at"), "{}", fire[0]);
    assert_eq!(fire[1], "command %1", "{lines:#?}");
    assert!(
        lines
            .iter()
            .all(|l| !l.contains(" list-panes ") || l.contains(" list-clients ")),
        "the daemon's read lists the clients with the panes: {lines:#?}"
    );
    if backend == Backend::Fake {
        assert!(
            fleet.messages().contains(&(
                "/dev/pts/40".into(),
                "corral: claude blocked (permission) at work:0.1".into()
            )),
            "the status line went with the claim: {:?}",
            fleet.messages()
        );
    }
    drop(daemon);
}

fn a_restarted_daemon_does_not_ring_again(backend: Backend) {
    let (fleet, home) = setup(backend, &format!("{EVERY_SINK}include_title = true\n"));
    let mut first = home.daemon();
    eventually("%2 announced", || logged(&home).len() == 1);
    // With include_title the daemon reads titles, and payload and log carry them together.
    let line = &json_lines(&path(&home, "logs/notify.log"))[0];
    assert_eq!(line["title"], "TITLE-CANARY-blocked");
    eventually("the command ran", || {
        json_lines(&path(&home, "payloads")).len() == 1
    });
    assert_eq!(
        json_lines(&path(&home, "payloads"))[0]["title"],
        "TITLE-CANARY-blocked"
    );
    first.signal("TERM");
    assert_eq!(first.exit_code(), 0);
    let _second = home.daemon();
    fleet.step("%1", &["--state", "working"]);
    wait_transition(&home, "%1", "working");
    assert_eq!(
        logged(&home).len(),
        1,
        "the announced episode did not ring again"
    );
}

/// The socket takes its name only after the first read: a move made the moment the socket is
/// there is a transition, never folded into the baseline. Five starts, each moving at once.
fn a_daemon_whose_socket_is_there_has_taken_its_baseline(backend: Backend) {
    let (fleet, home) = setup(backend, "[notify]\non = []\n");
    let socket = |home: &Home| {
        std::fs::read_dir(home.runtime().join("corral/notify"))
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.starts_with("daemon-"))
                    .filter(|name| name.ends_with(".sock"))
                    .count()
            })
            .unwrap_or(0)
    };
    for (n, state) in ["working", "idle", "working", "idle", "working"]
        .into_iter()
        .enumerate()
    {
        let mut daemon = home.daemon();
        assert_eq!(socket(&home), 1, "start {n}: the socket is there");
        fleet.step("%1", &["--state", state]);
        wait_transition(&home, "%1", state);
        daemon.signal("TERM");
        assert_eq!(daemon.exit_code(), 0);
        assert_eq!(
            socket(&home),
            0,
            "start {n}: the socket went with its daemon"
        );
    }
}

fn a_second_daemon_for_the_server_is_refused(backend: Backend) {
    let (_fleet, home) = setup(backend, "");
    let _first = home.daemon();
    let out = home.corral().arg("daemon").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("a notification daemon already runs for the tmux server"),
        "{stderr}"
    );
}

fn sighup_reloads_and_a_broken_config_keeps_the_old(backend: Backend) {
    let (fleet, home) = setup(backend, "[notify]\non = []\nlog = \"~/logs/notify.log\"\n");
    let daemon = home.daemon();
    fleet.step("%1", &["--state", "working"]);
    wait_transition(&home, "%1", "working");
    assert!(logged(&home).is_empty(), "nothing fires with on = []");
    write_config(&home, "[notify]\nlog = \"~/logs/notify.log\"\n");
    daemon.signal("HUP");
    daemon.wait_log("config reloaded");
    eventually("%2 announced after the reload", || logged(&home).len() == 1);
    write_config(
        &home,
        "[notify]\nlog = \"~/logs/notify.log\"\nbel = false\n",
    );
    daemon.signal("HUP");
    daemon.wait_log("config reload failed, keeping the old config");
    assert!(daemon.log().contains("`bel`"), "{}", daemon.log());
    assert!(daemon.log().contains("line 6,"), "{}", daemon.log());
    fleet.step("%1", &["--state", "blocked"]);
    eventually("%1 announced on the old config", || {
        logged(&home).len() == 2
    });
}

/// A SIGHUP that is pending when a cycle is due is handled first, every time. Each round the
/// daemon is stopped just after a cycle (the ring has just shown that cycle's move, so its next
/// tick is most of a cycle away), the config changes, SIGHUP is sent and a pane blocks; it is
/// resumed past its next tick, so the reload and the tick are due at once. The fire must go to
/// the new config's log. On a loaded machine the test can reach the daemon late, when its next
/// cycle has already begun: that cycle rightly runs on the config it began with, so such a round
/// (its fire's cycle was logged before the stop) proves nothing and another is run.
#[test]
fn a_reload_pending_when_a_cycle_is_due_is_handled_first() {
    let config = |log: &str| {
        format!("[serve]\nreconcile_interval_ms = 400\n\n[notify]\nlog = \"~/logs/{log}\"\n")
    };
    let (fleet, home) = setup(Backend::Fake, "");
    let recorded = |n: u64| {
        eventually(&format!("the ring recorded {n}"), || {
            home.ring()["recorded"] == n
        });
    };
    let lines = |round: u64| json_lines(&path(&home, &format!("logs/round-{round}.log"))).len();
    // The daemon logs `cycle` as each cycle begins and `claimed pane=…` after it.
    let cycles_begun = |log: &str| log.lines().filter(|l| l.ends_with(": cycle")).count();
    let cycle_of_last_fire = |log: &str| {
        let upto = log
            .rfind("claimed pane=%1 ")
            .expect("a fire of %1 was logged");
        cycles_begun(&log[..upto])
    };
    home.write_config(&config("round-0.log"));
    let daemon = home.daemon_logging("info,reference_host::notify::daemon=debug");
    eventually("%2 announced", || lines(0) == 1);
    let (mut proved, mut round) = (0, 0u64);
    while proved < 4 {
        round += 1;
        assert!(
            round <= 12,
            "only {proved} of {round} rounds stopped the daemon between cycles"
        );
        fleet.step("%1", &["--state", "working"]);
        recorded(2 * round - 1);
        daemon.signal("STOP");
        home.write_config(&config(&format!("round-{round}.log")));
        daemon.signal("HUP");
        fleet.step(
            "%1",
            &["--state", "blocked", "--since", &format!("+{round}s")],
        );
        let old_before = lines(round - 1);
        std::thread::sleep(std::time::Duration::from_millis(600));
        // No cycle begins while it is stopped, and its stderr has been read by now.
        let begun = cycles_begun(&daemon.log());
        daemon.signal("CONT");
        recorded(2 * round);
        let (old, new) = (lines(round - 1) - old_before, lines(round));
        if (old, new) == (1, 0) && cycle_of_last_fire(&daemon.log()) <= begun {
            continue;
        }
        assert_eq!(
            (old, new),
            (0, 1),
            "round {round}: the fire went to the old config's log"
        );
        let log = path(&home, &format!("logs/round-{round}.log"));
        assert_eq!(json_lines(&log)[0]["pane"], "%1", "round {round}");
        proved += 1;
    }
}

fn sigterm_and_sigint_clear_progress_and_exit_0(backend: Backend) {
    let progress_on = wrapped(b"\x1b]9;4;3;0\x07");
    let progress_off = wrapped(b"\x1b]9;4;0;0\x07");
    for signal in ["TERM", "INT"] {
        let (fleet, home) = setup(
            backend,
            "[notify]\non = []\nbell = false\nosc_progress = true\n",
        );
        let tty = fleet.tty("%1");
        let mut daemon = home.daemon();
        fleet.step("%1", &["--state", "working"]);
        eventually("progress shown", || tty.bytes() == progress_on);
        daemon.signal(signal);
        assert_eq!(daemon.exit_code(), 0, "{signal}");
        let mut expected = progress_on.clone();
        expected.extend(&progress_off);
        eventually("progress cleared", || tty.bytes() == expected);
        assert!(
            !home
                .runtime()
                .join("corral/notify")
                .read_dir()
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".sock")),
            "the socket is gone"
        );
    }
}

fn debug_transitions_reads_the_ring_over_the_socket(backend: Backend) {
    let (fleet, home) = setup(backend, "[notify]\non = []\n");
    let out = home
        .corral()
        .args(["debug", "transitions"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no notification daemon runs"),
        "{out:?}"
    );
    let _daemon = home.daemon();
    let empty = home.ring();
    assert_eq!(
        empty,
        serde_json::json!({"schema":1,"cap":256,"recorded":0,"transitions":[]})
    );
    fleet.step("%1", &["--state", "working"]);
    wait_transition(&home, "%1", "working");
    fleet.kill("%3");
    wait_transition(&home, "%3", "");
    let ring = home.ring();
    let moves: Vec<(Value, Value, Value, Value)> = ring["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["pane"].clone(),
                t["from"].clone(),
                t["to"].clone(),
                t["source"].clone(),
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("%1".into(), "idle".into(), "working".into(), "poll".into()),
            ("%3".into(), "idle".into(), "".into(), "poll".into()),
        ],
        "oldest first, fired or not"
    );
    let text = home.ok(&["debug", "transitions"]);
    assert!(text.starts_with("2 transitions recorded"), "{text}");
    assert!(text.contains("idle -> working"), "{text}");
    let socket = home
        .runtime()
        .join("corral/notify")
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .unwrap();
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(socket).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
}

fn mute_variants(backend: Backend) {
    let (fleet, home) = setup(backend, "");
    let until_cleared = "99999999999999";
    home.ok(&["mute", "--pane", "%1"]);
    assert_eq!(
        fleet.option("%1", "@agent_mute_until").as_deref(),
        Some(until_cleared)
    );
    home.ok(&["mute", "--pane", "%1", "--clear"]);
    assert_eq!(fleet.option("%1", "@agent_mute_until"), None);

    let before = now_ms();
    let out = home.ok(&["mute", "--pane", "%2", "--for", "30m"]);
    assert_eq!(out, "%2: muted for 30m\n");
    let until: u64 = fleet
        .option("%2", "@agent_mute_until")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (before + 1_800_000..=now_ms() + 1_800_000).contains(&until),
        "{until}"
    );

    let out = home
        .corral()
        .args(["mute"])
        .env("TMUX_PANE", "%3")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fleet.option("%3", "@agent_mute_until").as_deref(),
        Some(until_cleared)
    );

    home.ok(&["mute", "--session", "work", "--for", "1d"]);
    for pane in ["%1", "%2"] {
        assert!(fleet.option(pane, "@agent_mute_until").is_some(), "{pane}");
    }
    assert_eq!(
        fleet.option("%0", "@agent_mute_until"),
        None,
        "not an agent pane"
    );
    home.ok(&["mute", "--clear", "--session", "work"]);
    for pane in ["%1", "%2"] {
        assert_eq!(fleet.option(pane, "@agent_mute_until"), None, "{pane}");
    }
    let listing: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    assert_eq!(crate::support::row(&listing, "%3")["muted"], true);

    for (args, why) in [
        (
            vec!["mute", "--pane", "%1", "--for", "30x"],
            "not a duration",
        ),
        (
            vec!["mute", "--pane", "%1", "--for", "0s"],
            "not a duration",
        ),
        (
            vec!["mute", "--pane", "%1", "--clear", "--for", "5m"],
            "cannot be used with",
        ),
        (
            vec!["mute", "--pane", "%1", "--session", "work"],
            "cannot be used with",
        ),
        (vec!["mute"], "not inside a tmux pane"),
        (vec!["mute", "--session", "nosuch"], "no agent pane"),
    ] {
        let out = home.corral().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

fn a_muted_pane_rings_nothing(backend: Backend) {
    let (fleet, home) = setup(backend, EVERY_SINK);
    home.ok(&["mute", "--pane", "%1"]);
    let tty = fleet.tty("%1");
    let _daemon = home.daemon();
    eventually("%2 announced", || logged(&home).len() == 1);
    fleet.step("%1", &["--state", "blocked"]);
    wait_transition(&home, "%1", "blocked");
    eventually("the muted episode claimed", || {
        fleet.option("%1", "@agent_notified_at").is_some()
    });
    home.ok(&["mute", "--pane", "%1", "--clear"]);
    fleet.step("%3", &["--state", "working"]);
    wait_transition(&home, "%3", "working");
    assert_eq!(
        logged(&home),
        [("%2".into(), "blocked".into())],
        "nothing for %1"
    );
    assert!(tty.bytes().is_empty());
    assert_eq!(json_lines(&path(&home, "payloads")).len(), 1);
    if backend == Backend::Fake {
        assert!(
            fleet
                .messages()
                .iter()
                .all(|(_, m)| !m.contains("work:0.1"))
        );
    }
    fleet.step("%1", &["--state", "blocked"]);
    eventually("the next episode rings", || logged(&home).len() == 2);
}

fn doctor_reports_what_stops_notifications(backend: Backend) {
    let (fleet, home) = setup(backend, "[notify]\nosc = true\ncommand = \"exit 3\"\n");
    let out = home.corral().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "passthrough is off");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warn  daemon"), "{text}");
    assert!(text.contains("FAIL  passthrough"), "{text}");
    assert!(text.contains("ok    notify-command"), "{text}");
    fleet.tmux(&["set-option", "-g", "allow-passthrough", "on"]);
    let report: Value = serde_json::from_str(&home.ok(&["doctor", "--json"])).unwrap();
    assert_eq!(report["schema"], 1);
    assert_eq!(report["last_failure"], Value::Null);
    let status = |report: &Value, check: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == check)
            .unwrap_or_else(|| panic!("no {check} in {report}"))["status"]
            .clone()
    };
    assert_eq!(status(&report, "passthrough"), "ok");
    assert_eq!(status(&report, "config"), "ok");
    assert_eq!(status(&report, "runtime-dir"), "ok");
    assert_eq!(status(&report, "device-store"), "ok");

    let _daemon = home.daemon();
    eventually("the blocked pane's command failed", || {
        home.runtime()
            .join("corral/notify/command-failure.json")
            .exists()
    });
    let out = home.corral().args(["doctor", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status(&report, "daemon"), "ok");
    assert_eq!(status(&report, "notify-command"), "fail");
    assert_eq!(report["last_failure"]["reason"], "exited with status 3");
    assert_eq!(report["last_failure"]["command"], "exit 3");
    assert!(report["last_failure"]["age_ms"].is_u64());

    write_config(&home, "[notify]\nbogus = 1\n");
    let out = home.corral().args(["doctor", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status(&report, "config"), "fail");
    std::fs::write(home.dir.path().join("config/corral/devices.toml"), "").unwrap();
    let devices = home.dir.path().join("config/corral/devices.toml");
    std::fs::set_permissions(
        &devices,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let report: Value = serde_json::from_str(&String::from_utf8_lossy(
        &home
            .corral()
            .args(["doctor", "--json"])
            .output()
            .unwrap()
            .stdout,
    ))
    .unwrap();
    assert_eq!(status(&report, "device-store"), "fail");
}

fn notify_test_runs_the_command_and_records_its_failure(backend: Backend) {
    let (_fleet, home) = setup(
        backend,
        "[notify]\ninclude_title = true\ncommand = \"cat > {home}/got; echo complaint >&2\"\n\
         [notify.stall]\nthreshold_s = 60\ncommand = \"exit 5\"\n",
    );
    let out = home
        .corral()
        .args(["debug", "notify-test", "--trigger", "blocked"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("exit code: 0"), "{text}");
    assert!(text.contains("complaint"), "{text}");
    assert!(text.contains("result: delivered"), "{text}");
    let got: Value =
        serde_json::from_str(&std::fs::read_to_string(path(&home, "got")).unwrap()).unwrap();
    assert_eq!(got["state"], "blocked");
    assert_eq!(got["title"], "corral notify-test", "with include_title");
    assert!(text.contains(&format!("payload: {got}")), "{text}");

    let out = home
        .corral()
        .args(["debug", "notify-test", "--trigger", "stall"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("command: exit 5"), "{text}");
    assert!(text.contains("exit code: 5"), "{text}");
    assert!(text.contains("\"since_ms\":61000"), "{text}");
    let doctor = home.corral().arg("doctor").output().unwrap();
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("exited with status 5"));

    home.ok(&["debug", "notify-test", "--trigger", "done"]);
    assert!(
        !home
            .runtime()
            .join("corral/notify/command-failure.json")
            .exists(),
        "a clean run clears the record"
    );
    let out = home
        .corral()
        .args(["debug", "notify-test", "--trigger", "sideways"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    write_config(
        &home,
        "[notify]\ncommand_timeout_s = 1\ncommand = \"sleep 30\"\n",
    );
    let out = home
        .corral()
        .args(["debug", "notify-test", "--trigger", "done"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("did not finish within 1s and was killed"),
        "the configured time-out: {text}"
    );
    write_config(&home, "[notify]\n");
    let out = home
        .corral()
        .args(["debug", "notify-test", "--trigger", "done"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no command resolves"));
}

fn a_detached_action_s_completion_reaches_every_sink(backend: Backend) {
    let (fleet, home) = setup(
        backend,
        "[notify]\nosc = true\ncommand = \"cat > {home}/completion\"\nlog = \"~/logs/notify.log\"\n",
    );
    home.ok(&["mute", "--pane", "%1"]);
    let tty = fleet.tty("%1");
    let tty_path = fleet
        .tmux(&["display-message", "-p", "-t", "%1", "#{pane_tty}"])
        .trim_end()
        .to_owned();
    let out = home
        .corral()
        .args([
            "internal",
            "exec-action",
            "--command",
            "pwd > where; exit 4",
            "--timeout-s",
            "10",
        ])
        .args(["--pane", "%1", "--action", "run-tests", "--agent", "claude"])
        .args([
            "--session",
            "work",
            "--locator",
            "work:0.1",
            "--repo",
            "api",
            "--branch",
            "main",
        ])
        .args([
            "--tty",
            &tty_path,
            "--cwd",
            home.dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        path(&home, "where").exists(),
        "it ran in the pane's directory"
    );
    let payload: Value =
        serde_json::from_str(&std::fs::read_to_string(path(&home, "completion")).unwrap()).unwrap();
    assert_eq!(payload["outcome"], "exited");
    assert_eq!(payload["exit_code"], 4);
    assert_eq!(payload["action"], "run-tests");
    let line = &json_lines(&path(&home, "logs/notify.log"))[0];
    assert_eq!(
        (&line["action"], &line["outcome"]),
        (&"run-tests".into(), &"exited".into())
    );
    let mut expected = b"\x07".to_vec();
    expected.extend(wrapped(b"\x1b]9;claude run-tests exited\x07"));
    eventually("the tty was written though the pane is muted", || {
        tty.bytes() == expected
    });
    if backend == Backend::Fake {
        assert!(fleet.messages().contains(&(
            "/dev/pts/40".into(),
            "corral: claude run-tests exited 4 at work:0.1".into()
        )));
    }
}

/// The supervisor an agent's event hook launches its notification command through: payload on
/// stdin, the command's environment inherited, the failure recorded and then cleared.
#[test]
fn the_notify_command_supervisor_runs_the_command_and_records_how_it_ended() {
    use std::io::Write;

    let home = Home::new("unused");
    let run_for = |timeout_s: &str, command: &str| {
        let mut child = home
            .corral()
            .args(["internal", "notify-command", "--timeout-s", timeout_s])
            .args(["--command", command])
            .env("CORRAL_STATE", "blocked")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"{\"schema\":2}\n")
            .unwrap();
        child.wait().unwrap().code()
    };
    let run = |command: &str| run_for("60", command);
    let got = path(&home, "got");
    let command = format!("{{ cat; echo $CORRAL_STATE; }} > {}", got.display());
    assert_eq!(run(&command), Some(0));
    assert_eq!(
        std::fs::read_to_string(&got).unwrap(),
        "{\"schema\":2}\nblocked\n"
    );
    let record = home.runtime().join("corral/notify/command-failure.json");
    assert_eq!(run("exit 9"), Some(1));
    let failure: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(failure["reason"], "exited with status 9");
    assert_eq!(run("true"), Some(0));
    assert!(!record.exists());
    // The time-out comes from the process that launched the supervisor.
    let started = std::time::Instant::now();
    assert_eq!(run_for("1", "sleep 30"), Some(1));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let failure: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(failure["reason"], "did not finish within 1s and was killed");
}
