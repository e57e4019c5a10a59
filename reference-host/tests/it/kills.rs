//! A dispatching process killed (SIGKILL) at each point between its claim and its receipt: its
//! claim written and the pane's lock not yet taken, inside the pane read, inside the fire, and
//! after the fire with the receipt not yet written. Each time the ledger stays readable, the slot
//! resolves `error`/`fired-unknown` for every later asker (at the host and from a device), the
//! action reached the agent at most once (exactly once when the kill came after the fire), and
//! another slot on the same pane goes through: the kernel released the dead process's pane lock.
//!
//! The process is stopped where it must be by what another host process could do (hold the pane
//! lock, hold the ledger lock) or, inside a tmux call, by the fake's hang fault.

use std::path::PathBuf;
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::dispatch::{act, home_with_act_log, stdout};
use crate::support::{
    Backend, Fleet, Home, Host, eventually, hold, json_lines, marked_processes, unique,
};

on_both_backends!(
    killed_after_its_claim_before_the_pane_read,
    killed_after_the_keys_before_the_receipt,
    killed_after_the_verdict_before_the_receipt,
);

/// Where the dispatching process is when it is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// Its claim is written; it waits for the pane's lock, which the test holds.
    Claimed,
    /// Inside the pane read: the fake's `list-panes` hangs.
    Reading,
    /// Inside the fire: the fake's `send-keys` hangs, and delivers after the kill.
    Firing,
    /// Fired (its act log line is written); it waits for the ledger's lock, which the test
    /// holds, to write the receipt.
    Fired,
}

/// How an action reaches the agent: keys typed into the idle pane by `corral act`, or the
/// verdict of the blocked pane's parked request, dispatched by a device over `serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    Keys,
    Hook,
}

const SLOT: &str = "doomed";

/// The process being killed.
enum Dispatching {
    Act(Child),
    Serve(Host),
}

impl Dispatching {
    fn running(&mut self) -> bool {
        match self {
            Dispatching::Act(child) => child.try_wait().unwrap().is_none(),
            Dispatching::Serve(host) => host.exit_within(std::time::Duration::ZERO).is_none(),
        }
    }

    fn kill(self) {
        match self {
            Dispatching::Act(mut child) => {
                child.kill().unwrap();
                child.wait().unwrap();
            }
            // Dropping a host kills it (SIGKILL) and reaps it.
            Dispatching::Serve(host) => drop(host),
        }
    }
}

fn killed_after_its_claim_before_the_pane_read(backend: Backend) {
    killed_at(backend, Point::Claimed, Lane::Keys);
}

fn killed_after_the_keys_before_the_receipt(backend: Backend) {
    killed_at(backend, Point::Fired, Lane::Keys);
}

fn killed_after_the_verdict_before_the_receipt(backend: Backend) {
    killed_at(backend, Point::Fired, Lane::Hook);
}

#[test]
fn killed_inside_the_pane_read() {
    killed_at(Backend::Fake, Point::Reading, Lane::Keys);
}

#[test]
fn killed_inside_the_fire() {
    killed_at(Backend::Fake, Point::Firing, Lane::Keys);
}

fn killed_at(backend: Backend, point: Point, lane: Lane) {
    let fleet = Fleet::up(backend);
    let home = home_with_act_log(&fleet);
    home.enrol(
        "phone",
        "fp-phone",
        &["read", "act:answer", "act:steer"],
    );
    let pane = fleet.pane(match lane {
        Lane::Keys => "idle",
        Lane::Hook => "blocked",
    });
    let corral = home.runtime().join("corral");
    let hang = |command: &str| {
        fleet.sim(&[
            "fault", "add", "--command", command, "--hang-ms", "1500", "--times", "1",
        ]);
    };
    match point {
        Point::Reading => hang("list-panes"),
        Point::Firing => hang("send-keys"),
        Point::Claimed | Point::Fired => {}
    }
    let pane_lock = matches!(point, Point::Claimed | Point::Fired)
        .then(|| hold(&corral.join(format!("locks/pane-_{}.lock", &pane[1..]))));

    let mark = unique("killed");
    let mut dispatching = start(&home, &pane, lane, &mark);
    eventually("the claim is written", || {
        json_lines(&corral.join("ledger.jsonl"))
            .iter()
            .any(|line| line["slot"] == SLOT)
    });
    let mut ledger_lock = None;
    match point {
        Point::Claimed => {}
        Point::Reading | Point::Firing => {
            eventually("the hung invocation started", || fleet.faults_left() == 0);
        }
        Point::Fired => {
            ledger_lock = Some(hold(&corral.join("ledger.lock")));
            drop(pane_lock);
            let log = home.dir.path().join("act.log");
            eventually("the action fired", || {
                json_lines(&log).iter().any(|line| line["slot"] == SLOT)
            });
        }
    }
    assert!(dispatching.running(), "{point:?}: it answered before the kill");
    dispatching.kill();
    drop(ledger_lock);
    // A hung invocation outlives the process that started it, then runs: wait for it.
    eventually("the dead dispatcher's tmux calls end", || {
        marked_processes(&mark).is_empty()
    });

    let fired = usize::from(matches!(point, Point::Firing | Point::Fired));
    assert_eq!(fires(&fleet, &home, &pane, lane), fired, "{point:?}");
    for _ in 0..2 {
        let out = act_on(&home, &dispatch_args(&pane, lane, SLOT));
        assert_eq!(out.status.code(), Some(1), "{point:?}: {}", stdout(&out));
        assert!(
            stdout(&out).starts_with("error/fired-unknown") && stdout(&out).ends_with(", cached\n"),
            "{point:?}: {}",
            stdout(&out)
        );
    }
    let mut phone = home.serve("fp-phone");
    phone.hello();
    phone.send(&frame(&pane, lane, SLOT).to_string());
    let receipt = phone.recv();
    assert_eq!(
        (&receipt["outcome"], &receipt["reason"], &receipt["cached"]),
        (&json!("error"), &json!("fired-unknown"), &json!(true)),
        "{point:?}: {receipt}"
    );
    phone.send(r#"{"schema":1,"id":"r","t":"receipts"}"#);
    let listed = phone.recv();
    assert_eq!(listed["receipts"][0]["slot"], SLOT, "{listed}");
    assert_eq!(listed["receipts"][0]["reason"], "fired-unknown", "{listed}");
    assert_eq!(fires(&fleet, &home, &pane, lane), fired, "{point:?}: fired again");
    // Every line of the ledger parses, and the slot's last one is its fired-unknown receipt.
    let ledger = json_lines(&corral.join("ledger.jsonl"));
    let last = ledger.iter().rev().find(|line| line["slot"] == SLOT).unwrap();
    assert_eq!(last["receipt"]["reason"], "fired-unknown", "{ledger:?}");

    // Another slot on the same pane: the dead process's pane lock is free.
    let out = act_on(&home, &dispatch_args(&pane, lane, "after"));
    match lane {
        Lane::Keys => {
            assert_eq!(out.status.code(), Some(0), "{point:?}: {}", stdout(&out));
            assert_eq!(fleet.typed(&pane, "after"), 1);
        }
        // The request was answered once: its verdict is not written again.
        Lane::Hook => {
            assert!(
                stdout(&out).starts_with("vanished/request-gone"),
                "{}",
                stdout(&out)
            );
        }
    }
    assert_eq!(fires(&fleet, &home, &pane, lane), fired, "{point:?}");
}

/// Starts the dispatch of [`SLOT`] that will be killed, its process and every process it starts
/// marked with `mark`.
fn start(home: &Home, pane: &str, lane: Lane, mark: &str) -> Dispatching {
    match lane {
        Lane::Keys => Dispatching::Act(
            home.corral()
                .arg("act")
                .args(dispatch_args(pane, lane, SLOT))
                .env("CORRAL_IT_MARK", mark)
                .env("CORRAL_TMUX_TIMEOUT_MS", "60000")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        ),
        Lane::Hook => {
            let mut command = home.serve_command("fp-phone");
            command
                .env("CORRAL_IT_MARK", mark)
                .env("CORRAL_TMUX_TIMEOUT_MS", "60000");
            let mut host = Host::start(command);
            host.hello();
            host.send(&frame(pane, lane, SLOT).to_string());
            Dispatching::Serve(host)
        }
    }
}

fn act_on(home: &Home, args: &[String]) -> std::process::Output {
    act(home, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `corral act` arguments: a steer typing `slot`, or an approve.
fn dispatch_args(pane: &str, lane: Lane, slot: &str) -> Vec<String> {
    let mut args = vec![pane.to_owned()];
    match lane {
        Lane::Keys => args.extend(["steer".into(), "--text".into(), slot.into()]),
        Lane::Hook => args.push("approve".into()),
    }
    args.extend(["--slot".into(), slot.into()]);
    args
}

/// The same dispatch from a device.
fn frame(pane: &str, lane: Lane, slot: &str) -> Value {
    let mut frame = json!({"schema":1,"id":"d","t":"dispatch","slot":slot,"host":"",
        "pane":pane,"binder":{"expect_episode_ms":0}});
    match lane {
        Lane::Keys => {
            frame["action"] = json!("steer");
            frame["text"] = json!(slot);
        }
        Lane::Hook => frame["action"] = json!("approve"),
    }
    frame
}

/// How many times [`SLOT`]'s action reached the agent: the text typed into the pane, or the
/// verdict file (created exclusively: once at most, and its content the one approve).
fn fires(fleet: &Fleet, home: &Home, pane: &str, lane: Lane) -> usize {
    match lane {
        Lane::Keys => fleet.typed(pane, SLOT),
        Lane::Hook => {
            let verdict: PathBuf = home.runtime().join("corral/verdicts/req-blocked");
            match std::fs::read(&verdict) {
                Ok(bytes) => {
                    let verdict: Value = serde_json::from_slice(&bytes).unwrap();
                    assert_eq!(
                        verdict,
                        json!({"decision": "allow", "request": "req-blocked"})
                    );
                    1
                }
                Err(_) => 0,
            }
        }
    }
}
