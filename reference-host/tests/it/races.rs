//! Processes racing to dispatch, on the fake tmux and on a scratch real tmux server, counted on
//! the agent's side (what the pane received): twenty on one slot fire it once; twenty on one
//! pane with a slot each fire each slot once, one at a time inside the pane's lock, and every
//! receipt resolves.

use std::collections::BTreeMap;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::dispatch::{act, act_log, home_with_act_log, stdout};
use crate::support::{Backend, Fleet, Home, json_lines};

on_both_backends!(
    racing_processes_fire_a_slot_once,
    racing_processes_on_one_pane_fire_each_slot_once,
);

const RACERS: usize = 20;
/// How long a dispatch waits for a pane's lock before it is refused `locked`.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Starts `corral act <args>` once per entry of `runs`, all at once; each one's output and how
/// long it ran.
fn race(home: &Home, runs: Vec<Vec<String>>) -> Vec<(Output, Duration)> {
    let children: Vec<_> = runs
        .into_iter()
        .map(|args| {
            let started = Instant::now();
            let child = home
                .corral()
                .arg("act")
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::spawn(move || {
                let out = child.wait_with_output().unwrap();
                (out, started.elapsed())
            })
        })
        .collect();
    children.into_iter().map(|t| t.join().unwrap()).collect()
}

fn racing_processes_fire_a_slot_once(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = home_with_act_log(&fleet);
    let idle = fleet.pane("idle");
    let steer = ["act", &idle, "steer", "--text", "once", "--slot", "race"];
    let outputs = race(
        &home,
        vec![steer[1..].iter().map(|a| (*a).to_owned()).collect(); RACERS],
    );
    for (out, _) in &outputs {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let fresh = outputs
        .iter()
        .filter(|(o, _)| !stdout(o).contains("cached"))
        .count();
    assert_eq!(
        fresh, 1,
        "one process fired; the others got the cached receipt"
    );
    assert_eq!(act_log(&home).len(), 1, "one fire in the act log");
    assert_eq!(
        fleet.typed(&idle, "once"),
        1,
        "the text reached the pane once"
    );
    assert_eq!(
        fleet.input(&idle).len(),
        2,
        "the text and its Enter, once: {:?}",
        fleet.input(&idle)
    );
}

fn racing_processes_on_one_pane_fire_each_slot_once(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = home_with_act_log(&fleet);
    let idle = fleet.pane("idle");
    let calls_before = fleet.fake_calls().len();
    let args = |i: usize| -> Vec<String> {
        [
            &idle,
            "steer",
            "--text",
            &format!("t{i:02}"),
            "--slot",
            &format!("s{i:02}"),
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let outputs = race(&home, (0..RACERS).map(args).collect());

    // A dispatch is refused `locked` only when it waited the pane lock's 2 s out; the claim is
    // released, so the same slot is dispatched again.
    let mut locked = Vec::new();
    for (i, (out, ran)) in outputs.iter().enumerate() {
        match out.status.code() {
            Some(0) => assert!(stdout(out).starts_with("sent "), "{}", stdout(out)),
            Some(5) => {
                assert!(*ran >= LOCK_WAIT, "locked after {ran:?}: {}", stdout(out));
                locked.push(i);
            }
            code => panic!(
                "exit {code:?}: {}{}",
                stdout(out),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    eprintln!(
        "{RACERS} racers on one pane: {} waited 2 s and were refused locked",
        locked.len()
    );
    for i in locked {
        let again: Vec<String> = args(i);
        let out = act(&home, &again.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }

    if backend == Backend::Fake {
        // Inside the lock a dispatch reads the pane, then types: one pane's reads and sends
        // alternate, never two reads in a row.
        let order: Vec<&str> = fleet.fake_calls()[calls_before..]
            .iter()
            .filter_map(|argv| {
                argv.iter()
                    .find(|a| *a == "list-panes" || *a == "send-keys")
                    .map(|a| if a == "list-panes" { "read" } else { "send" })
            })
            .collect();
        assert_eq!(
            order,
            ["read", "send"].repeat(RACERS),
            "the pane's lock serialises its dispatches"
        );
    }

    for i in 0..RACERS {
        assert_eq!(fleet.typed(&idle, &format!("t{i:02}")), 1, "t{i:02}");
    }
    assert_eq!(
        fleet.input(&idle).len(),
        2 * RACERS,
        "a text and its Enter per slot"
    );
    assert_eq!(act_log(&home).len(), RACERS);
    // The ledger holds one record per slot, each resolved `sent`.
    let mut records: BTreeMap<String, Value> = BTreeMap::new();
    for line in json_lines(&home.runtime().join("corral/ledger.jsonl")) {
        records.insert(line["slot"].as_str().unwrap().to_owned(), line);
    }
    assert_eq!(records.len(), RACERS);
    for (slot, record) in &records {
        assert_eq!(record["receipt"]["outcome"], "sent", "{slot}: {record}");
    }
    let listed: Value = serde_json::from_str(&home.ok(&["receipts", "--json"])).unwrap();
    assert_eq!(listed["receipts"].as_array().unwrap().len(), RACERS);
}
