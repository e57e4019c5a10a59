//! Processes racing to dispatch, on the fake tmux and on a scratch real tmux server, counted on
//! the agent's side (what the pane received): twenty `corral serve` processes sending one slot
//! at once fire it once and all answer the same receipt; twenty sending a slot each to one pane
//! fire each slot once, one at a time inside the pane's lock, and every receipt resolves.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::dispatch::{act_log, home_with_act_log};
use crate::support::{Backend, CallLog, Fleet, Home, Host, eventually, hold, json_lines, locks_of};

on_both_backends!(
    racing_processes_fire_a_slot_once,
    racing_processes_on_one_pane_fire_each_slot_once,
);

const RACERS: usize = 20;
/// How long a dispatch waits for a pane's lock before it is refused `locked`.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// A home whose devices may hold [`RACERS`] connections at once, a device that steers, and the
/// log of the tmux calls its processes make.
fn racing_home(fleet: &Fleet) -> (Home, CallLog) {
    let mut home = home_with_act_log(fleet);
    home.patient_tmux();
    let calls = CallLog::install(&mut home);
    let config = std::fs::read_to_string(home.config_file()).unwrap();
    home.write_config(&config.replace("[serve]\n", "[serve]\nmax_connections = 32\n"));
    home.enrol("phone", "fp-phone", &["read", "act:steer"]);
    (home, calls)
}

/// A steer of `text` on `slot`.
fn steer(pane: &str, slot: &str, text: &str) -> String {
    json!({"schema":1,"id":"race","t":"dispatch","slot":slot,"host":"","pane":pane,
           "action":"steer","text":text,"binder":{"expect_episode_ms":0}})
    .to_string()
}

/// Starts one `corral serve` per frame and says hello on each, then sends every frame while the
/// test holds the lock file `barrier` (one the host waits on, not one it polls), and lets go once
/// every host waits for it: they all go on from there together. Each host's answer, and how long it took.
fn race(home: &Home, barrier: &Path, frames: Vec<String>) -> Vec<(Value, Duration)> {
    let mut hosts: Vec<Host> = frames
        .iter()
        .map(|_| {
            let mut host = home.serve("fp-phone");
            host.hello();
            host
        })
        .collect();
    let held = hold(barrier);
    let sent: Vec<Instant> = hosts
        .iter_mut()
        .zip(&frames)
        .map(|(host, frame)| {
            host.send(frame);
            Instant::now()
        })
        .collect();
    eventually("every racer waits at the barrier", || {
        hosts.iter().all(|host| locks_of(host.pid()).1 > 0)
    });
    drop(held);
    let answers: Vec<(Value, Duration)> = hosts
        .iter_mut()
        .zip(sent)
        .map(|(host, at)| {
            let answer = host.recv();
            (answer, at.elapsed())
        })
        .collect();
    for mut host in hosts {
        host.close();
        assert_eq!(host.exit_code(), 0);
    }
    answers
}

fn racing_processes_fire_a_slot_once(backend: Backend) {
    let fleet = Fleet::up(backend);
    let (home, _) = racing_home(&fleet);
    let idle = fleet.pane("idle");
    // They meet at the ledger's lock, every one about to claim the slot.
    let ledger_lock = home.runtime().join("corral/ledger.lock");
    let answers = race(
        &home,
        &ledger_lock,
        vec![steer(&idle, "race", "once"); RACERS],
    );

    let fresh: Vec<&Value> = answers
        .iter()
        .map(|(answer, _)| answer)
        .filter(|answer| answer["cached"] == false)
        .collect();
    assert_eq!(
        fresh.len(),
        1,
        "one process fired; the others answered from the ledger: {answers:?}"
    );
    let mut fired = fresh[0].clone();
    assert_eq!(
        (&fired["t"], &fired["outcome"], &fired["exit_code"]),
        (&json!("receipt"), &json!("sent"), &json!(0)),
        "{fired}"
    );
    fired["cached"] = json!(true);
    for (answer, _) in &answers {
        if answer["cached"] == true {
            assert_eq!(answer, &fired, "every answer is the same receipt");
        }
    }
    assert_eq!(act_log(&home).len(), 1, "one fire in the act log");
    assert_eq!(
        fleet.typed(&idle, "once"),
        1,
        "the text reached the pane once"
    );
    assert_eq!(
        fleet.input(&idle),
        [json!({"text": "once"}), json!({"keys": ["Enter"]})],
        "the text and its Enter, once"
    );
}

fn racing_processes_on_one_pane_fire_each_slot_once(backend: Backend) {
    let fleet = Fleet::up(backend);
    let (home, calls) = racing_home(&fleet);
    let idle = fleet.pane("idle");
    let text = |i: usize| format!("t{i:02}");
    let slot = |i: usize| format!("s{i:02}");
    // They meet at the ledger's lock, each about to claim its slot, then at the pane's lock.
    let ledger_lock = home.runtime().join("corral/ledger.lock");
    let answers = race(
        &home,
        &ledger_lock,
        (0..RACERS)
            .map(|i| steer(&idle, &slot(i), &text(i)))
            .collect(),
    );

    // A dispatch is refused `locked` only when it waited the pane lock's 2 s out; the claim is
    // released, so the same slot is dispatched again.
    let mut locked = Vec::new();
    for (i, (answer, took)) in answers.iter().enumerate() {
        assert_eq!(answer["slot"], slot(i), "{answer}");
        match (answer["outcome"].as_str(), answer["reason"].as_str()) {
            (Some("sent"), None) => assert_eq!(answer["cached"], false, "{answer}"),
            (Some("refused"), Some("locked")) => {
                assert!(*took >= LOCK_WAIT, "locked after {took:?}: {answer}");
                locked.push(i);
            }
            _ => panic!("{answer}"),
        }
    }
    eprintln!(
        "{RACERS} racers on one pane ({backend:?}): {} waited 2 s and were refused locked",
        locked.len()
    );
    if !locked.is_empty() {
        let again = race(
            &home,
            &ledger_lock,
            locked
                .iter()
                .map(|&i| steer(&idle, &slot(i), &text(i)))
                .collect(),
        );
        for (answer, _) in again {
            assert_eq!(
                (&answer["outcome"], &answer["cached"]),
                (&json!("sent"), &json!(false)),
                "a released slot fires when dispatched again: {answer}"
            );
        }
    }

    // Inside the lock a dispatch reads the pane, then types: the pane's reads and sends
    // alternate, never two reads in a row.
    let order: Vec<&str> = calls
        .calls()
        .iter()
        .filter_map(|call| {
            let command = call
                .split(' ')
                .find(|a| *a == "list-panes" || *a == "send-keys")?;
            Some(if command == "list-panes" {
                "read"
            } else {
                "send"
            })
        })
        .collect();
    let sends_per_steer = order.iter().filter(|c| **c == "send").count() / RACERS;
    let mut one = vec!["read"];
    one.extend(std::iter::repeat_n("send", sends_per_steer));
    assert_eq!(
        order,
        one.repeat(RACERS),
        "the pane's lock serialises its dispatches"
    );
    // Each text is followed by its own Enter, never by another's text.
    let input = fleet.input(&idle);
    assert_eq!(input.len(), 2 * RACERS, "a text and its Enter per slot");
    for pair in input.chunks(2) {
        assert!(
            pair[0]["text"].is_string() && pair[1] == json!({"keys": ["Enter"]}),
            "interleaved dispatches: {input:?}"
        );
    }
    for i in 0..RACERS {
        assert_eq!(fleet.typed(&idle, &text(i)), 1, "{}", text(i));
    }
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
