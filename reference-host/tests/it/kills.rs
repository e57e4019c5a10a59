//! A dispatching `corral serve` killed (SIGKILL) at each point between its claim and its
//! receipt: its claim written and the pane's lock not yet taken, inside the pane read, inside the
//! fire, and after the fire with the receipt not yet written; on each lane (keys typed into a
//! pane, a parked hook request's verdict, the agent's HTTP API). Each time the ledger stays
//! readable, the slot resolves `error`/`fired-unknown` for every later asker (at the host and
//! from a device, `cached`), the action reached the agent at most once (exactly once when the
//! kill came inside or after the fire) and never again, and another slot on the same pane goes
//! through: the kernel released the dead process's pane lock.
//!
//! The process is stopped where it must be by what another host process could do (hold the pane
//! lock, hold the ledger lock), by a gate in front of tmux that holds the host's own invocation
//! ([`Gate`]), or by an agent API slow to answer. No hook inside the host is needed.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::unique;

use crate::dispatch::{act, home_with_act_log, stdout};
use crate::support::{
    Backend, Background, Fleet, Gate, Home, Host, eventually, hold, json_lines, marked_processes,
};

/// Where the dispatching process is when it is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// Its claim is written; it waits for the pane's lock, which the test holds.
    Claimed,
    /// Inside the pane read: its `list-panes` is held at the gate.
    Reading,
    /// Inside the fire: its `send-keys` is held at the gate (and delivers after the kill), or
    /// the agent API got the POST and has not answered yet.
    Firing,
    /// Fired (its act log line is written); it waits for the ledger's lock, which the test
    /// holds, to write the receipt.
    Fired,
}

/// How an action reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// A steer typed into the idle pane.
    Keys,
    /// An approve written as the verdict of the blocked pane's parked request.
    Hook,
    /// An approve POSTed to an OpenCode pane's agent API.
    Api,
}

const SLOT: &str = "doomed";

macro_rules! killed {
    ($($name:ident: $point:ident on $lane:ident),* $(,)?) => {
        $(
            fn $name(backend: Backend) {
                killed_at(backend, Point::$point, Lane::$lane);
            }
        )*
        on_both_backends!($($name),*);
    };
}

killed!(
    keys_killed_after_its_claim: Claimed on Keys,
    keys_killed_inside_the_pane_read: Reading on Keys,
    keys_killed_inside_the_fire: Firing on Keys,
    keys_killed_after_the_fire_before_the_receipt: Fired on Keys,
    hook_killed_after_its_claim: Claimed on Hook,
    hook_killed_after_the_verdict_before_the_receipt: Fired on Hook,
    api_killed_inside_the_post: Firing on Api,
    api_killed_after_the_post_before_the_receipt: Fired on Api,
);

/// One fleet with an OpenCode pane blocked on a permission its agent API answers.
struct Bench {
    fleet: Fleet,
    home: Home,
    gate: Gate,
    pane: String,
    _api: Option<Background>,
}

impl Bench {
    fn new(backend: Backend, lane: Lane) -> Bench {
        let fleet = Fleet::up(backend);
        let mut home = home_with_act_log(&fleet);
        home.enrol("phone", "fp-phone", &["read", "act:answer", "act:steer"]);
        let gate = Gate::install(&mut home);
        let (pane, api) = match lane {
            Lane::Keys => (fleet.pane("idle"), None),
            Lane::Hook => (fleet.pane("blocked"), None),
            Lane::Api => {
                let api = fleet.api();
                let pane = fleet.add("ask", "work", "opencode", "blocked");
                fleet.step(
                    &pane,
                    &[
                        "--detail",
                        "permission",
                        "--permission-request",
                        "per-1",
                        "--api-endpoint",
                        "auto",
                    ],
                );
                (pane, Some(api))
            }
        };
        Bench {
            fleet,
            home,
            gate,
            pane,
            _api: api,
        }
    }

    /// How many times an action reached the agent: the slot's text typed into the pane, the
    /// verdict file (created exclusively: once at most, and its content the one approve), or
    /// the POSTs the agent API received.
    fn fires(&self, lane: Lane) -> usize {
        match lane {
            Lane::Keys => self.fleet.typed(&self.pane, SLOT),
            Lane::Hook => {
                let verdict = self.home.runtime().join("corral/verdicts/req-blocked");
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
            Lane::Api => {
                let replies = self.fleet.api_replies();
                for reply in &replies {
                    assert_eq!(reply["path"], "/permission/per-1/reply", "{reply}");
                }
                replies.len()
            }
        }
    }
}

fn killed_at(backend: Backend, point: Point, lane: Lane) {
    let bench = Bench::new(backend, lane);
    let (home, pane) = (&bench.home, bench.pane.as_str());
    let corral = home.runtime().join("corral");
    let pane_lock_path = corral.join(format!("locks/pane-_{}.lock", &pane[1..]));
    let what = format!("{point:?} on {lane:?}, {backend:?}");

    let mark = unique("killed");
    let mut command = home.serve_command("fp-phone");
    command.env("CORRAL_IT_MARK", &mark);
    let mut host = Host::start(command);
    host.hello();
    let mut pane_lock =
        matches!(point, Point::Claimed | Point::Fired).then(|| hold(&pane_lock_path));
    match (point, lane) {
        (Point::Reading, _) => bench.gate.close(&["list-panes"]),
        (Point::Firing, Lane::Keys) => bench.gate.close(&["send-keys"]),
        // Answered after 1.5 s: inside the host's 2 s time-out, and long enough to kill it in.
        (Point::Firing, Lane::Api) => {
            bench.fleet.sim(&["api", "delay", "1500", "--post"]);
        }
        _ => {}
    }
    host.send(&frame(pane, lane, SLOT).to_string());
    eventually("the claim is written", || {
        json_lines(&corral.join("ledger.jsonl"))
            .iter()
            .any(|line| line["slot"] == SLOT)
    });
    let mut ledger_lock = None;
    match (point, lane) {
        (Point::Claimed, _) => {}
        (Point::Reading, _) | (Point::Firing, Lane::Keys) => {
            eventually("the host's tmux call is held", || bench.gate.entered());
        }
        (Point::Firing, _) => {
            eventually("the agent API got the POST", || bench.fires(lane) == 1);
        }
        (Point::Fired, _) => {
            ledger_lock = Some(hold(&corral.join("ledger.lock")));
            pane_lock = None;
            let log = home.dir.path().join("act.log");
            eventually("the action fired", || {
                json_lines(&log).iter().any(|line| line["slot"] == SLOT)
            });
        }
    }
    assert_eq!(
        host.exit_within(Duration::ZERO),
        None,
        "{what}: it ended before the kill"
    );
    assert_eq!(
        host.recv_within(Duration::ZERO),
        None,
        "{what}: it answered before the kill"
    );
    drop(host);
    drop((pane_lock, ledger_lock));
    bench.gate.open();
    if lane == Lane::Api {
        bench.fleet.sim(&["api", "delay", "0", "--post"]);
    }
    // A held tmux call outlives the process that started it, then runs: wait for it.
    eventually("the dead dispatcher's tmux calls end", || {
        marked_processes(&mark).is_empty()
    });

    let fired = usize::from(matches!(point, Point::Firing | Point::Fired));
    assert_eq!(bench.fires(lane), fired, "{what}");
    for _ in 0..2 {
        let out = act_on(home, &dispatch_args(pane, lane, SLOT));
        assert_eq!(out.status.code(), Some(1), "{what}: {}", stdout(&out));
        assert!(
            stdout(&out).starts_with("error/fired-unknown") && stdout(&out).ends_with(", cached\n"),
            "{what}: {}",
            stdout(&out)
        );
    }
    let mut phone = home.serve("fp-phone");
    phone.hello();
    phone.send(&frame(pane, lane, SLOT).to_string());
    let receipt = phone.recv();
    assert_eq!(
        (
            &receipt["outcome"],
            &receipt["reason"],
            &receipt["exit_code"],
            &receipt["cached"]
        ),
        (
            &json!("error"),
            &json!("fired-unknown"),
            &json!(1),
            &json!(true)
        ),
        "{what}: {receipt}"
    );
    phone.send(r#"{"schema":1,"id":"r","t":"receipts"}"#);
    let listed = phone.recv();
    assert_eq!(listed["receipts"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["receipts"][0]["slot"], SLOT, "{listed}");
    assert_eq!(listed["receipts"][0]["reason"], "fired-unknown", "{listed}");
    assert_eq!(bench.fires(lane), fired, "{what}: fired again");
    // Every line of the ledger parses, and the slot's last one is its fired-unknown receipt.
    let ledger = json_lines(&corral.join("ledger.jsonl"));
    let last = ledger
        .iter()
        .rev()
        .find(|line| line["slot"] == SLOT)
        .unwrap();
    assert_eq!(last["receipt"]["reason"], "fired-unknown", "{ledger:?}");

    // Another slot on the same pane: the dead process's pane lock is free.
    phone.send(&frame(pane, lane, "after").to_string());
    let receipt = phone.recv();
    let answered = (receipt["outcome"].as_str(), receipt["reason"].as_str());
    match lane {
        Lane::Keys => {
            assert_eq!(answered, (Some("sent"), None), "{what}: {receipt}");
            assert_eq!(bench.fleet.typed(pane, "after"), 1, "{what}");
            assert_eq!(bench.fires(lane), fired, "{what}");
        }
        // The request was answered once at most: a verdict is never written twice.
        Lane::Hook if fired == 1 => {
            assert_eq!(
                answered,
                (Some("vanished"), Some("request-gone")),
                "{what}: {receipt}"
            );
            assert_eq!(bench.fires(lane), 1, "{what}");
        }
        Lane::Hook => {
            assert_eq!(answered, (Some("replied"), None), "{what}: {receipt}");
            assert_eq!(bench.fires(lane), 1, "{what}");
        }
        Lane::Api => {
            assert_eq!(answered, (Some("replied"), None), "{what}: {receipt}");
            assert_eq!(bench.fires(lane), fired + 1, "{what}");
        }
    }
    phone.close();
    assert_eq!(phone.exit_code(), 0);
}

fn act_on(home: &Home, args: &[String]) -> std::process::Output {
    act(home, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `corral act` arguments: a steer typing `slot`, or an approve.
fn dispatch_args(pane: &str, lane: Lane, slot: &str) -> Vec<String> {
    let mut args = vec![pane.to_owned()];
    match lane {
        Lane::Keys => args.extend(["steer".into(), "--text".into(), slot.into()]),
        Lane::Hook | Lane::Api => args.push("approve".into()),
    }
    args.extend(["--slot".into(), slot.into()]);
    args
}

/// The same dispatch from a device.
fn frame(pane: &str, lane: Lane, slot: &str) -> Value {
    let mut frame = json!({"schema":1,"id":slot,"t":"dispatch","slot":slot,"host":"",
        "pane":pane,"binder":{"expect_episode_ms":0}});
    match lane {
        Lane::Keys => {
            frame["action"] = json!("steer");
            frame["text"] = json!(slot);
        }
        Lane::Hook | Lane::Api => frame["action"] = json!("approve"),
    }
    frame
}
