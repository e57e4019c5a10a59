//! The observers of what a notifier leaves, the same on both backends: `tty watch` (the bytes
//! written to a pane's tty from then on), `options` (a pane's contract options) and `tmux` (one
//! command on the fleet's server); and `record`, the notification command the kit provides.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Sim, command, corral_sim, fixture, split, unique_socket};

/// Brings `notify.toml` up on `backend`; dropping the simulator tears a real server down.
fn up(backend: &str) -> Sim {
    let sim = Sim::new();
    let socket = unique_socket(backend);
    if backend == "real" {
        sim.real_server(&socket);
    }
    let runtime = sim.path().join("run");
    sim.sim(&[
        "up",
        fixture("notify.toml").to_str().unwrap(),
        "--backend",
        backend,
        "--socket",
        &socket,
        "--now-ms",
        "4102444800000",
        "--runtime-dir",
        runtime.to_str().unwrap(),
    ]);
    sim
}

/// Waits until `file` holds `bytes`.
fn holds(file: &std::path::Path, bytes: &[u8]) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let got = std::fs::read(file).unwrap_or_default();
        if got == bytes || start.elapsed() > Duration::from_secs(5) {
            return got;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tty_watch_options_and_tmux_observe_both_backends_alike() {
    for backend in ["fake", "real"] {
        let sim = up(backend);
        let tty = sim.sim(&["tmux", "display-message", "-p", "-t", "%2", "#{pane_tty}"]);
        // Written before the watch: not seen.
        std::fs::OpenOptions::new()
            .append(true)
            .open(tty.trim_end())
            .unwrap()
            .write_all(b"before")
            .unwrap();
        let file = sim.sim(&["tty", "watch", "--pane", "codex-blocked"]);
        assert_eq!(
            file.trim_end(),
            sim.path().join("tty/codex-blocked").to_str().unwrap()
        );
        let bytes = b"\x07\x1bPtmux;\x1b\x1b]9;codex blocked\x07\x1b\\";
        std::fs::OpenOptions::new()
            .append(true)
            .open(tty.trim_end())
            .unwrap()
            .write_all(bytes)
            .unwrap();
        assert_eq!(holds(file.trim_end().as_ref(), bytes), bytes, "{backend}");

        let options = sim.sim(&["options", "--pane", "codex-blocked"]);
        assert_eq!(
            options,
            "{\"@agent_detail\":\"permission\",\"@agent_name\":\"codex\",\"@agent_since\":\"1\",\
             \"@agent_stamped_at\":\"4102444800000\",\"@agent_state\":\"blocked\"}\n",
            "{backend}"
        );
        sim.sim(&[
            "tmux",
            "set-option",
            "-p",
            "-t",
            "%2",
            "@agent_notified_at",
            "1",
        ]);
        assert!(
            sim.sim(&["options", "--pane", "%2"])
                .contains("\"@agent_notified_at\":\"1\"")
        );
        sim.sim(&["tmux", "kill-pane", "-t", "%2"]);
        let (_, err, code) = split(sim.run(corral_sim(), &["options", "--pane", "codex-blocked"]));
        assert_eq!(code, 1, "{backend}: a pane that is gone");
        assert!(err.contains("can't find pane: %2"), "{backend}: {err}");
        let (_, err, code) =
            split(sim.run(corral_sim(), &["tmux", "kill-session", "-t", "nosuch"]));
        assert_eq!(code, 1);
        assert!(err.contains("can't find session"), "{err}");
        sim.sim(&["down"]);
    }
}

#[test]
fn record_keeps_stdin_and_the_notification_environment_then_ends_as_asked() {
    use std::os::unix::process::CommandExt;
    let sim = Sim::new();
    // The first run leads a process group of its own (as every test's child); the second runs
    // under a shell that joins this test's group.
    let run = |stdin: &[u8], args: &[&str], own_group: bool| {
        let mut cmd = if own_group {
            let mut cmd = command(corral_sim());
            cmd.arg("record").args(args);
            cmd
        } else {
            let mut cmd = command("sh");
            cmd.args(["-c", "\"$0\" record \"$@\"; exit $?", corral_sim()])
                .args(args)
                .process_group(rustix::process::getpgrp().as_raw_nonzero().get());
            cmd
        };
        let mut child = cmd
            .env("CORRAL_SIM_DIR", sim.path())
            .env("CORRAL_SIM_NOW_MS", "1")
            .env("CORRAL_CONFIG", "/c")
            .env("CORRAL_AGENT", "codex")
            .env_remove("CORRAL_TITLE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        split(child.wait_with_output().unwrap())
    };
    assert_eq!(
        run(b"{\"schema\":2}\n", &["fire"], true),
        (String::new(), String::new(), 0)
    );
    assert_eq!(
        run(
            b"{\"schema\":2,\"x\":1}\n",
            &["fire", "--exit", "3", "--stderr", "no"],
            false
        ),
        (String::new(), "no".to_owned(), 3)
    );
    let read = |suffix: &str| {
        std::fs::read_to_string(sim.path().join(format!("record/fire.{suffix}"))).unwrap()
    };
    assert_eq!(read("stdin"), "{\"schema\":2}\n{\"schema\":2,\"x\":1}\n");
    assert_eq!(read("env"), "{\"CORRAL_AGENT\":\"codex\"}\n".repeat(2));
    assert_eq!(read("end"), "{\"exit\":0}\n{\"exit\":3}\n");
    assert_eq!(
        read("group"),
        "{\"own_group\":true}\n{\"own_group\":false}\n"
    );
}
