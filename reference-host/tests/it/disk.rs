//! A full disk under the runtime dir (the ledger, the verdicts) and under the logs: a 64 KiB tmpfs
//! mounted for the test, filled to the last page, then emptied. A claim that cannot be written is
//! refused `internal` and nothing fires; a receipt that cannot be written is still answered, the
//! claim stays, and every later asker gets `error`/`fired-unknown`, never a second fire; a verdict
//! that cannot be written leaves no file behind to block the request's next answer; an act log or
//! notification log that cannot be written is skipped.
//!
//! Mounting needs root (CI runs as root on a fresh VM). Where the mount is refused, each test
//! records a skip saying why and returns: there is no other way to make a write fail for lack
//! of space. `cargo test` shows the skip; `.ci/run` lists it and, as root, fails.
//! Logs on stderr need no mount: `/dev/full` fails every write with ENOSPC, for anyone.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use test_support::command;

use crate::support::{
    Backend, Fleet, Home, Host, eventually, fleet_with_phone, hold, is_error, json_lines,
};

on_both_backends!(a_full_runtime_dir_never_fires_twice_nor_forgets_a_claim);

/// A tmpfs of 64 KiB mounted on a temp dir, unmounted (lazily, if something still holds it) and
/// the dir removed on drop, whatever the test did.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts one; `None` where this machine does not let the test, the skip recorded
    /// ([`test_support::skipped`]: said on stderr, counted by CI, which fails on it as root) at
    /// the test's call.
    #[track_caller]
    fn mount() -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = command("mount")
            .args(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Tmpfs { dir }),
            Ok(out) => {
                test_support::skipped(format!(
                    "mounting a tmpfs was refused ({}); a full disk cannot be made here",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
                None
            }
            Err(err) => {
                test_support::skipped(format!(
                    "cannot run mount ({err}); a full disk cannot be made here"
                ));
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills every free page with a file of zeros.
    fn fill(&self) {
        let mut filler = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path().join("filler"))
            .unwrap();
        let page = [0u8; 4096];
        loop {
            if let Err(err) = filler.write_all(&page) {
                assert_eq!(err.kind(), std::io::ErrorKind::StorageFull, "{err}");
                return;
            }
        }
    }

    /// Frees what [`Tmpfs::fill`] took.
    fn free(&self) {
        std::fs::remove_file(self.path().join("filler")).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = command("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = command("umount").arg("-l").arg(self.dir.path()).status();
        }
    }
}

/// A home reading `fleet` whose runtime dir and act log are on `disk`.
fn home_on(fleet: &Fleet, disk: &Tmpfs) -> Home {
    let mut home = fleet.home();
    home.patient_tmux();
    home.runtime_dir = disk.path().join("runtime");
    home.write_config(&format!(
        "[serve]\nreconcile_interval_ms = 100\n\n[act]\nlog = \"{}\"\n",
        disk.path().join("logs/act.log").display()
    ));
    home.enrol("phone", "fp-phone", &["read", "act:answer", "act:steer"]);
    home
}

fn steer(id: &str, pane: &str, slot: &str, text: &str) -> String {
    json!({"schema":1,"id":id,"t":"dispatch","slot":slot,"host":"","pane":pane,
           "action":"steer","text":text,"binder":{"expect_episode_ms":0}})
    .to_string()
}

fn a_full_runtime_dir_never_fires_twice_nor_forgets_a_claim(backend: Backend) {
    let Some(disk) = Tmpfs::mount() else {
        return;
    };
    let fleet = Fleet::up(backend);
    let home = home_on(&fleet, &disk);
    let idle = fleet.pane("idle");
    let act_log = disk.path().join("logs/act.log");
    let mut phone = home.serve("fp-phone");
    phone.hello();

    // A claim that cannot be written: `internal`, nothing typed, and the connection lives.
    disk.fill();
    let out = home
        .corral()
        .args(["act", &idle, "steer", "--text", "first", "--slot", "first"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ledger"), "{stderr}");
    phone.send(&steer("d1", &idle, "second", "second"));
    let frame = phone.recv();
    assert!(is_error(&frame, "d1", "internal"), "{frame}");
    assert!(
        frame["message"]
            .as_str()
            .is_some_and(|m| m.contains("ledger") && m.contains("nothing was fired")),
        "a message that says what failed: {frame}"
    );
    phone.send(r#"{"schema":1,"id":"r1","t":"receipts"}"#);
    assert_eq!(phone.recv()["receipts"], json!([]), "nothing was claimed");
    assert_eq!(
        fleet.typed(&idle, "first") + fleet.typed(&idle, "second"),
        0
    );

    // A receipt that cannot be written. The claim is written with room to spare; the disk fills
    // while the dispatch waits for the pane's lock. The slot is longer than a page, so its
    // receipt needs a page the disk no longer has (tmpfs allocates whole pages).
    disk.free();
    let long = format!("long-{}", "x".repeat(5000));
    let pane_lock = hold(
        &home
            .runtime()
            .join(format!("corral/locks/pane-_{}.lock", &idle[1..])),
    );
    phone.send(&steer("d2", &idle, &long, "third"));
    let ledger = home.runtime().join("corral/ledger.jsonl");
    eventually("the claim is written", || {
        json_lines(&ledger).iter().any(|line| line["slot"] == long)
    });
    disk.fill();
    drop(pane_lock);
    let receipt = phone.recv();
    assert_eq!(
        (&receipt["t"], &receipt["outcome"], &receipt["cached"]),
        (&json!("receipt"), &json!("sent"), &json!(false)),
        "what was fired is answered: {receipt}"
    );
    assert_eq!(fleet.typed(&idle, "third"), 1);
    assert!(
        json_lines(&act_log).is_empty(),
        "the act log was skipped, and the dispatch went on"
    );
    // The claim stays, and the host no longer waits for a receipt it could not write: the same
    // connection asks again and is answered at once, `internal` while the disk is full.
    phone.send(&steer("d3", &idle, &long, "third"));
    let frame = phone.recv();
    assert!(is_error(&frame, "d3", "internal"), "{frame}");

    // Room again: every asker gets `fired-unknown`, and nothing fires twice.
    disk.free();
    phone.send(&steer("d4", &idle, &long, "third"));
    let receipt = phone.recv();
    assert_eq!(
        (&receipt["outcome"], &receipt["reason"], &receipt["cached"]),
        (&json!("error"), &json!("fired-unknown"), &json!(true)),
        "{receipt}"
    );
    let out = home
        .corral()
        .args(["act", &idle, "steer", "--text", "third", "--slot", &long])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("error/fired-unknown"));
    // The slot whose claim failed was never claimed: it fires now, once.
    phone.send(&steer("d5", &idle, "second", "second"));
    assert_eq!(phone.recv()["outcome"], "sent");
    assert_eq!(fleet.typed(&idle, "third"), 1, "fired once");
    assert_eq!(fleet.typed(&idle, "second"), 1);
    assert_eq!(
        json_lines(&act_log)
            .iter()
            .map(|line| line["slot"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>(),
        ["second"]
    );
    for line in json_lines(&ledger) {
        assert!(line["slot"] == long || line["slot"] == "second", "{line}");
    }
    phone.close();
    assert_eq!(phone.exit_code(), 0);
}

/// A verdict the full disk cannot hold is answered `fired-unknown`, and its file does not stay
/// behind: with room again, the parked request is answered by the next approve.
#[test]
fn a_verdict_that_cannot_be_written_leaves_the_request_answerable() {
    let Some(disk) = Tmpfs::mount() else {
        return;
    };
    let (fleet, _) = fleet_with_phone(Backend::Fake);
    let home = home_on(&fleet, &disk);
    let blocked = fleet.pane("blocked");
    let requests = home.runtime().join("corral/requests");
    std::fs::create_dir_all(&requests).unwrap();
    let parked = fleet
        .sim_dir
        .path()
        .join("runtime/corral/requests/req-blocked.json");
    std::fs::copy(parked, requests.join("req-blocked.json")).unwrap();
    let approve = |slot: &str| {
        home.corral()
            .args(["act", &blocked, "approve", "--slot", slot])
            .output()
            .unwrap()
    };

    // A refused dispatch starts the ledger: its page has room for the next claim and receipt
    // when the disk is full, and no page is left for a verdict file.
    let idle = fleet.pane("idle");
    let out = home
        .corral()
        .args(["act", &idle, "approve", "--slot", "warm-up"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    disk.fill();
    let out = approve("one");
    let verdict: PathBuf = home.runtime().join("corral/verdicts/req-blocked");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.starts_with("error/fired-unknown"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!verdict.exists(), "no empty verdict is left behind");
    disk.free();
    let out = approve("two");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(&verdict).unwrap()).unwrap(),
        json!({"decision": "allow", "request": "req-blocked"})
    );
}

/// The notification daemon with its runtime dir and its log on a full disk: the announcement
/// goes out on the other sinks, the log is skipped, and the daemon runs on.
#[test]
fn a_notification_log_on_a_full_disk_is_skipped() {
    let Some(disk) = Tmpfs::mount() else {
        return;
    };
    let fleet = Fleet::up(Backend::Fake);
    let mut home = fleet.home();
    home.runtime_dir = disk.path().join("runtime");
    let log = disk.path().join("logs/notify.log");
    let payloads = home.dir.path().join("payloads");
    home.write_config(&format!(
        "[serve]\nreconcile_interval_ms = 100\n\n[notify]\ncommand = \"cat >> {}\"\nlog = \"{}\"\n",
        payloads.display(),
        log.display()
    ));
    disk.fill();
    let daemon = home.daemon();
    eventually("the blocked pane announced", || {
        json_lines(&payloads).len() == 1
    });
    assert!(json_lines(&log).is_empty(), "the log was skipped");
    let idle = fleet.pane("idle");
    fleet.step(&idle, &["--state", "blocked", "--detail", "permission"]);
    eventually("the next announcement", || json_lines(&payloads).len() == 2);
    assert_eq!(json_lines(&payloads)[1]["pane"], idle.as_str());
    drop(daemon);
}

/// `serve` and `corral act` whose stderr, with every debug line on, is `/dev/full` (each write
/// fails for lack of space): every request is answered as before, a dispatch fires once, and the
/// process ends with the code it would have (a failed log write once crashed it: exit 101).
#[test]
fn logs_on_a_full_disk_stop_nothing() {
    let (fleet, mut home) = fleet_with_phone(Backend::Fake);
    home.patient_tmux();
    home.enrol("steerer", "fp-steerer", &["read", "act:steer"]);
    let idle = fleet.pane("idle");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut command = home.serve_command("fp-steerer");
    command.env("RUST_LOG", "trace");
    let mut host = Host::start_with_stderr(command, full().into());
    host.hello();
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    assert_eq!(host.recv()["agents"].as_array().unwrap().len(), 3);
    host.send(&steer("d", &idle, "full-log", "full-log"));
    assert_eq!(host.recv()["outcome"], "sent");
    host.send(r#"{"schema":1,"id":"bad","t":"card"}"#);
    assert!(is_error(&host.recv(), "bad", "bad-request"));
    host.close();
    assert_eq!(host.exit_code(), 0);

    let out = home
        .corral()
        .args(["act", &idle, "steer", "--text", "again", "--slot", "again"])
        .env("RUST_LOG", "trace")
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fleet.typed(&idle, "full-log") + fleet.typed(&idle, "again"),
        2
    );

    // Refusals and failures that say why on stderr exit with their own codes, not a crash's.
    let out = home
        .corral()
        .args(["act", &idle, "steer", "--slot", "no-text"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage refusal");
    home.write_config("[serve]\nno_such_key = 1\n");
    let out = home
        .corral()
        .args(["serve", "--stdio", "--device", "fp-phone"])
        .stdin(std::process::Stdio::null())
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a start-up failure");
}
