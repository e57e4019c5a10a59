//! Revocation (`corral device revoke`) under every request kind a connection serves, 10 runs
//! each on the fake tmux (100 in the long form, [`runs`]): revoked before the request, while the host processes it, or after its
//! answer. Whatever the moment, the first request or publish after the revocation is refused
//! `scope-denied` with its own id, nothing follows the refusal, and the process exits 2. A request
//! the device check had already let through is answered; a stream's cycle is checked when it
//! begins and again when its read answers, so a read under way at the revocation publishes
//! nothing.
//!
//! "While the host processes it" is made certain, not hoped for: a request that reads tmux is held
//! at a [`Gate`] in front of the fake tmux, `receipts` at the ledger's lock the test holds, and the
//! revocation lands while it waits there. `hello` and `subscribe`'s `ack` touch neither; a hello
//! is raced against the revocation, and a stream is revoked during its first cycle's read.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{
    Backend, Fleet, Gate, Home, Host, eventually, hold, is_error, locks_of, runs,
};

/// The request kinds, and the two kinds of stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hello,
    Snapshot,
    Edges,
    Snapshots,
    Card,
    Window,
    Event,
    Dispatch,
    Receipts,
}

/// When the device is revoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    Before,
    During,
    After,
}

macro_rules! every_kind {
    ($($name:ident: $kind:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            revoked_around(Kind::$kind);
        }
    )*};
}

every_kind!(
    revoked_around_hello: Hello,
    revoked_around_snapshot: Snapshot,
    revoked_around_an_edge_stream: Edges,
    revoked_around_a_snapshot_stream: Snapshots,
    revoked_around_card: Card,
    revoked_around_window: Window,
    revoked_around_event: Event,
    revoked_around_dispatch: Dispatch,
    revoked_around_receipts: Receipts,
);

/// One fleet, and a home whose tmux is behind a [`Gate`].
struct Bench {
    _fleet: Fleet,
    home: Home,
    gate: Gate,
    idle: String,
    blocked: String,
    /// A cursor of the idle pane's transcript, minted by another connection.
    cursor: String,
}

impl Bench {
    fn new() -> Bench {
        let fleet = Fleet::up(Backend::Fake);
        let idle = fleet.pane("idle");
        fleet.small_transcript("idle");
        let mut home = fleet.home();
        let gate = Gate::install(&mut home);
        home.write_config("[serve]\nreconcile_interval_ms = 50\n");
        home.enrol("reader", "fp-reader", &["read"]);
        let mut reader = home.serve("fp-reader");
        reader.hello();
        reader.send(&json!({"schema":1,"id":"w","t":"window","pane":idle}).to_string());
        let window = reader.recv();
        let cursor = window["events"][0]["cursor"]
            .as_str()
            .unwrap_or_else(|| panic!("{window}"))
            .to_owned();
        Bench {
            blocked: fleet.pane("blocked"),
            _fleet: fleet,
            home,
            gate,
            idle,
            cursor,
        }
    }

    /// The request of `kind`, id `k`.
    fn request(&self, kind: Kind, run: usize) -> String {
        let idle = &self.idle;
        match kind {
            Kind::Hello => {
                json!({"schema":1,"id":"k","t":"hello","app":"it","app_version":"1","device":"d"})
            }
            Kind::Snapshot => json!({"schema":1,"id":"k","t":"snapshot"}),
            Kind::Edges => json!({"schema":1,"id":"k","t":"subscribe","events":true}),
            Kind::Snapshots => json!({"schema":1,"id":"k","t":"subscribe","events":false}),
            Kind::Card => json!({"schema":1,"id":"k","t":"card","pane":self.blocked}),
            Kind::Window => json!({"schema":1,"id":"k","t":"window","pane":idle,"last":2}),
            Kind::Event => {
                json!({"schema":1,"id":"k","t":"event","pane":idle,"cursor":self.cursor})
            }
            Kind::Dispatch => json!({"schema":1,"id":"k","t":"dispatch","slot":format!("s{run}"),
                "host":"","pane":idle,"action":"steer","text":format!("r{run}"),
                "binder":{"expect_episode_ms":0}}),
            Kind::Receipts => json!({"schema":1,"id":"k","t":"receipts"}),
        }
        .to_string()
    }

    /// One run: a fresh device, its connection, the revocation at `when`. Says how the
    /// connection ended: which frame was refused.
    fn run(&self, kind: Kind, run: usize, when: When) -> &'static str {
        let name = format!("d{run}");
        let id = format!("fp-{run}");
        self.home.enrol(&name, &id, &["read", "act:steer"]);
        let mut host = self.home.serve(&id);
        let revoke = || {
            self.home.ok(&["device", "revoke", &name]);
        };
        // Past start-up (its connection slot is held), so a refusal is the session's.
        eventually("the host started", || locks_of(host.pid()).0 > 0);
        if kind != Kind::Hello {
            host.hello();
        }
        let stream = matches!(kind, Kind::Edges | Kind::Snapshots);
        let request = self.request(kind, run);
        let ended = match when {
            When::Before => {
                revoke();
                host.send(&request);
                refused(&mut host, "k", kind);
                "the request"
            }
            When::During if kind == Kind::Hello => {
                host.send(&request);
                revoke();
                let first = host.recv();
                if first["t"] == "hello" {
                    self.next_refused(&mut host);
                    "the next request"
                } else {
                    assert!(is_error(&first, "k", "scope-denied"), "{first}");
                    "the request"
                }
            }
            When::During if kind == Kind::Receipts => {
                let lock = hold(&self.home.runtime().join("corral/ledger.lock"));
                host.send(&request);
                eventually("receipts waits for the ledger", || {
                    locks_of(host.pid()).1 > 0
                });
                revoke();
                drop(lock);
                answered(&mut host, kind);
                self.next_refused(&mut host);
                "the next request"
            }
            When::During => {
                self.gate.close(&["*"]);
                host.send(&request);
                eventually("the request reads tmux", || self.gate.entered());
                revoke();
                self.gate.open();
                if stream {
                    // A stream's read runs off the loop, and its publish is checked again when
                    // the read answers: the read the revocation landed in publishes nothing.
                    let ack = host.recv();
                    assert_eq!(ack["t"], "ack", "{ack}");
                    refused(&mut host, "k", kind);
                    "the publish of the read under way"
                } else {
                    answered(&mut host, kind);
                    self.next_refused(&mut host);
                    "the next request"
                }
            }
            When::After => {
                host.send(&request);
                answered(&mut host, kind);
                revoke();
                if stream {
                    refused(&mut host, "k", kind);
                    "the next publish"
                } else {
                    self.next_refused(&mut host);
                    "the next request"
                }
            }
        };
        assert_eq!(host.exit_code(), 2, "{kind:?} {when:?}: {}", host.stderr());
        assert_eq!(
            host.recv_within(Duration::ZERO),
            None,
            "{kind:?} {when:?}: nothing follows the refusal"
        );
        ended
    }

    fn next_refused(&self, host: &mut Host) {
        host.send(r#"{"schema":1,"id":"next","t":"snapshot"}"#);
        refused(host, "next", Kind::Snapshot);
    }
}

/// The answer a request of `kind` gets from a device that held its record when it was checked:
/// for a snapshot stream, its `ack` and its first cycle's snapshot.
fn answered(host: &mut Host, kind: Kind) {
    let want = match kind {
        Kind::Hello => "hello",
        Kind::Snapshot | Kind::Snapshots => "snapshot",
        Kind::Edges => "ack",
        Kind::Card => "card",
        Kind::Window => "window",
        Kind::Event => "event",
        Kind::Dispatch => "receipt",
        Kind::Receipts => "receipts",
    };
    if kind == Kind::Snapshots {
        let ack = host.recv();
        assert_eq!(ack["t"], "ack", "{ack}");
    }
    let frame = host.recv();
    assert_eq!(frame["t"], want, "{kind:?}: {frame}");
    if kind == Kind::Dispatch {
        assert_eq!(frame["outcome"], "sent", "{frame}");
    }
}

fn refused(host: &mut Host, id: &str, kind: Kind) {
    let frame = host.recv();
    assert!(
        is_error(&frame, id, "scope-denied"),
        "{kind:?}: expected the refusal of {id}, got {frame}"
    );
}

fn revoked_around(kind: Kind) {
    let bench = Bench::new();
    let total = runs(10, 100);
    let mut ended: BTreeMap<(String, &str), usize> = BTreeMap::new();
    for run in 0..total {
        let when = [When::Before, When::During, When::After][run % 3];
        let how = bench.run(kind, run, when);
        *ended.entry((format!("{when:?}"), how)).or_default() += 1;
    }
    eprintln!("revoked around {kind:?}: {total}/{total} runs refused and exited 2: {ended:?}");
}

/// A live stream whose device is revoked stops at its next publish: the frame that follows the
/// revocation is the refusal, never the edge the fleet's change would have published.
fn a_revoked_stream_stops_at_its_next_publish(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = fleet.home();
    home.enrol("phone", "fp-phone", &["read"]);
    let idle = fleet.pane("idle");
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    assert_eq!(host.recv()["t"], "ack");
    // The first cycle's silent baseline is taken before the pane moves.
    host.silent_for(Duration::from_millis(350));
    fleet.step(&idle, &["--state", "working"]);
    let edge = host.recv();
    assert_eq!(
        (&edge["t"], &edge["to"]),
        (&json!("edge"), &json!("working"))
    );
    home.ok(&["device", "revoke", "phone"]);
    fleet.step(&idle, &["--state", "idle"]);
    let frame = host.recv();
    assert!(is_error(&frame, "sub", "scope-denied"), "{frame}");
    assert_eq!(host.exit_code(), 2);
    assert_eq!(host.recv_within(Duration::ZERO), None::<Value>);
}

on_both_backends!(a_revoked_stream_stops_at_its_next_publish);
