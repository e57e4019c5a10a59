//! The session loop against a scripted fleet and an in-memory output: every rule of the
//! handshake, the request loop and both stream modes, without tmux or a process.

use schema::{Response, Scope, State};
use serde_json::{Value, json};

use std::time::Duration;

use super::*;
use crate::devices::{DeviceFile, StoreError};
use crate::push::{Pushed, PushedPane};
use crate::testing::{Scripted, carried, enrol, row, services};

struct Harness {
    session: Session<Scripted, Vec<u8>>,
    fleet: Scripted,
    store: DeviceFile,
    read_so_far: usize,
    _dir: tempfile::TempDir,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceFile::new(dir.path().join("devices.toml"));
        enrol(
            &store,
            "phone",
            "fp-phone",
            &[Scope::Read, Scope::ActAnswer],
        );
        let fleet = Scripted::default();
        fleet.set(vec![row("%0", State::Idle), row("%1", State::Working)]);
        let session = Session::new(
            SessionConfig {
                device: "fp-phone".into(),
                interval: Duration::from_millis(100),
            },
            StoreWatch::new(store.clone()),
            fleet.clone(),
            services(&dir.path().join("run")),
            FrameWriter::new(Vec::new()),
        );
        Harness {
            session,
            fleet,
            store,
            read_so_far: 0,
            _dir: dir,
        }
    }

    /// A greeted session subscribed to edges whose cycle reads are held until the test answers
    /// them ([`Session::hold_cycles`]); the subscribe's `ack` is read.
    fn subscribed_held() -> Harness {
        let mut h = Harness::new();
        h.session.hold_cycles();
        h.hello();
        h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
        h.frames();
        h
    }

    /// One held cycle: the tick, its read answered, what it publishes; how many reads were held.
    fn cycle_held(&mut self) -> usize {
        self.session.handle(Event::Tick);
        let held = self.session.answer_held();
        self.session.handle(Event::Cycled);
        held
    }

    fn line(&mut self, text: &str) -> Flow {
        self.session
            .handle(Event::Line(Incoming::Line(text.into())))
    }

    fn hello(&mut self) {
        self.line(
            r#"{"schema":1,"id":"h","t":"hello","app":"t","app_version":"1","device":"claimed"}"#,
        );
        self.frames();
    }

    /// Frames written since the last call, as JSON values.
    fn frames(&mut self) -> Vec<Value> {
        let text = String::from_utf8(self.session.output().clone()).unwrap();
        let new: Vec<Value> = text[self.read_so_far..]
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        self.read_so_far = text.len();
        new
    }

    fn revoke(&self) {
        self.store
            .update(|s| {
                s.devices.clear();
                Ok::<_, StoreError>(())
            })
            .unwrap();
    }
}

fn error(id: &str, code: &str) -> impl Fn(&Value) -> bool {
    let (id, code) = (id.to_owned(), code.to_owned());
    move |v: &Value| v["t"] == "error" && v["id"] == id.as_str() && v["code"] == code.as_str()
}

#[test]
fn hello_answers_with_the_scopes_of_the_store_not_the_claim() {
    let mut h = Harness::new();
    h.line(
        r#"{"schema":1,"id":"1","t":"hello","app":"t","app_version":"1","device":"someone-else"}"#,
    );
    let frames = h.frames();
    assert_eq!(
        frames,
        [
            json!({"schema":1,"id":"1","t":"hello","host":"studio","tool_version":env!("CARGO_PKG_VERSION"),
                "reconcile_interval_ms":100,"scopes":["read","act:answer"]})
        ]
    );
}

#[test]
fn the_first_frame_must_be_hello_and_a_second_hello_is_refused() {
    let mut h = Harness::new();
    assert_eq!(
        h.line(r#"{"schema":1,"id":"s","t":"snapshot"}"#),
        Flow::Continue
    );
    assert!(error("s", "bad-request")(&h.frames()[0]));
    h.hello();
    h.line(r#"{"schema":1,"id":"h2","t":"hello","app":"t","app_version":"1","device":"d"}"#);
    assert!(error("h2", "bad-request")(&h.frames()[0]));
}

#[test]
fn a_newer_schema_is_refused_and_the_connection_lives_to_downgrade() {
    let mut h = Harness::new();
    assert_eq!(
        h.line(r#"{"schema":2,"id":"h","t":"hello","app":"t"}"#),
        Flow::Continue
    );
    assert!(error("h", "unsupported-schema")(&h.frames()[0]));
    h.line(r#"{"schema":1,"id":"h1","t":"hello","app":"t","app_version":"1","device":"d"}"#);
    assert_eq!(h.frames()[0]["t"], "hello");
}

#[test]
fn bad_lines_are_answered_with_the_recoverable_id_or_0() {
    let mut h = Harness::new();
    h.hello();
    for (event, want) in [
        (Incoming::Line("not json".into()), error("0", "bad-request")),
        (Incoming::Line("".into()), error("0", "bad-request")),
        (Incoming::TooLong, error("0", "bad-request")),
        (Incoming::NotUtf8, error("0", "bad-request")),
        (
            Incoming::Line(r#"{"schema":1,"id":"u","t":"teleport"}"#.into()),
            error("u", "bad-request"),
        ),
        (
            Incoming::Line(r#"{"schema":1,"id":"w","t":"card","pane":7}"#.into()),
            error("w", "bad-request"),
        ),
    ] {
        assert_eq!(h.session.handle(Event::Line(event)), Flow::Continue);
        let frames = h.frames();
        assert_eq!(frames.len(), 1);
        assert!(want(&frames[0]), "{frames:?}");
    }
}

#[test]
fn snapshot_applies_the_selector() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"s","t":"snapshot","selector":{"state":["working"]}}"#);
    let frames = h.frames();
    let panes: Vec<&Value> = frames[0]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["pane"])
        .collect();
    assert_eq!(panes, [&json!("%1")]);
}

#[test]
fn a_failed_read_is_answered_internal() {
    let mut h = Harness::new();
    h.hello();
    h.fleet.fail(true);
    h.line(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    assert!(error("s", "internal")(&h.frames()[0]));
}

#[test]
fn edges_stream_after_a_silent_baseline_with_the_subscribe_id() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    assert_eq!(h.frames(), [json!({"schema":1,"id":"sub","t":"ack"})]);
    assert!(
        h.session.deadline().is_some(),
        "the baseline cycle is scheduled at once"
    );
    h.session.handle(Event::Tick);
    assert!(h.frames().is_empty(), "the baseline is silent");
    h.fleet
        .set(vec![row("%0", State::Blocked), row("%2", State::Idle)]);
    h.session.handle(Event::Tick);
    let frames = h.frames();
    let moves: Vec<(String, String, String, String)> = frames
        .iter()
        .map(|f| {
            (
                f["id"].to_string(),
                f["pane"].to_string(),
                f["from"].to_string(),
                f["to"].to_string(),
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            (
                "\"sub\"".into(),
                "\"%0\"".into(),
                "\"idle\"".into(),
                "\"blocked\"".into()
            ),
            (
                "\"sub\"".into(),
                "\"%2\"".into(),
                "\"\"".into(),
                "\"idle\"".into()
            ),
            (
                "\"sub\"".into(),
                "\"%1\"".into(),
                "\"working\"".into(),
                "\"\"".into()
            ),
        ]
    );
    h.session.handle(Event::Tick);
    assert!(h.frames().is_empty(), "no change, no edge");
}

#[test]
fn snapshot_streams_suppress_a_repeat_of_the_last_one() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":false}"#);
    h.frames();
    h.session.handle(Event::Tick);
    let first = h.frames();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["t"], "snapshot");
    assert_eq!(first[0]["id"], "sub");
    h.session.handle(Event::Tick);
    assert!(h.frames().is_empty(), "an equal snapshot is suppressed");
    h.fleet.edit(|rows| rows[0].state = State::Blocked);
    h.session.handle(Event::Tick);
    assert_eq!(h.frames()[0]["agents"][0]["state"], "blocked");
}

#[test]
fn a_second_subscribe_is_refused_and_requests_are_answered_while_streaming() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"a","t":"subscribe","events":true}"#);
    h.line(r#"{"schema":1,"id":"b","t":"subscribe","events":false}"#);
    let frames = h.frames();
    assert_eq!(frames[0]["t"], "ack");
    assert!(error("b", "bad-request")(&frames[1]));
    h.session.handle(Event::Tick);
    h.line(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    let frames = h.frames();
    assert_eq!(frames[0]["t"], "snapshot");
    assert_eq!(frames[0]["id"], "s");
}

#[test]
fn a_revoked_device_is_refused_on_its_next_request_and_the_process_exits_2() {
    let mut h = Harness::new();
    h.hello();
    h.revoke();
    assert_eq!(
        h.line(r#"{"schema":1,"id":"s","t":"snapshot"}"#),
        Flow::Exit(2)
    );
    assert!(error("s", "scope-denied")(&h.frames()[0]));
}

#[test]
fn a_revoked_device_is_refused_on_the_stream_at_the_next_publish() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.session.handle(Event::Tick);
    h.frames();
    h.revoke();
    assert_eq!(h.session.handle(Event::Tick), Flow::Exit(2));
    assert!(error("sub", "scope-denied")(&h.frames()[0]));
}

/// A push of panes whose datagrams carried no read, as the event loop hands it over.
fn push(panes: &[&str]) -> Event {
    Event::Push(Pushed::Panes(
        panes
            .iter()
            .map(|p| PushedPane {
                pane: (*p).to_owned(),
                read: None,
            })
            .collect(),
    ))
}

/// A push of `pane` carrying the hook's read, started and answered at `at_ms`.
fn push_read(pane: &str, at_ms: u64) -> Event {
    Event::Push(Pushed::Panes(vec![PushedPane {
        pane: pane.to_owned(),
        read: Some(carried(at_ms)),
    }]))
}

#[test]
fn a_push_reads_nothing_before_the_baseline_or_without_a_stream() {
    let mut h = Harness::new();
    h.hello();
    h.fleet.edit(|rows| rows[0].state = State::Blocked);
    assert_eq!(h.session.handle(push(&["%0"])), Flow::Continue);
    assert_eq!(h.fleet.reads(), 0, "no stream: nothing read");
    assert_eq!(h.session.push_server(), None);
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.frames();
    h.session.handle(push(&["%0"]));
    assert_eq!(h.fleet.reads(), 0, "no baseline yet: nothing read");
    assert!(h.frames().is_empty());
    h.session.handle(Event::Tick);
    assert!(
        h.frames().is_empty(),
        "the first cycle is still a silent baseline"
    );
    assert_eq!(h.session.push_server(), Some("/s"), "the baseline's server");
}

/// The same move seen by a push and the cycle, in either order: one edge.
#[test]
fn a_move_seen_by_a_push_and_the_cycle_is_one_edge_in_either_order() {
    for push_first in [true, false] {
        let mut h = Harness::new();
        h.hello();
        h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
        h.session.handle(Event::Tick);
        h.frames();
        h.fleet.edit(|rows| rows[1].state = State::Blocked);
        let (first, second) = if push_first {
            (push(&["%1"]), Event::Tick)
        } else {
            (Event::Tick, push(&["%1"]))
        };
        h.session.handle(first);
        let frames = h.frames();
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(
            (
                &frames[0]["id"],
                &frames[0]["pane"],
                &frames[0]["from"],
                &frames[0]["to"]
            ),
            (
                &json!("sub"),
                &json!("%1"),
                &json!("working"),
                &json!("blocked")
            )
        );
        h.session.handle(second);
        assert!(h.frames().is_empty(), "push first: {push_first}");
        h.session.handle(Event::Tick);
        assert!(h.frames().is_empty());
    }
}

/// No read older than what a stream has seen feeds it: its first cycle's is no older than the
/// subscription, and each later one no older than the read before it, a pushed pane's included.
#[test]
fn a_stream_asks_for_no_read_older_than_its_last() {
    let mut h = Harness::new();
    h.hello();
    let subscribed = now_ms();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.session.handle(Event::Tick);
    std::thread::sleep(Duration::from_millis(5));
    let pushed = now_ms();
    h.session.handle(push(&["%0"]));
    h.session.handle(Event::Tick);
    let floors = h.fleet.floors();
    assert_eq!(floors.len(), 2);
    assert!(floors[0] >= subscribed, "{floors:?} {subscribed}");
    assert!(
        floors[1] >= pushed,
        "the push's read raised it: {floors:?} {pushed}"
    );
}

/// The read a hook carried is taken instead of asking tmux, its edge stamped when that read
/// answered; one that started before the stream's last read is not (the stream reads the pane
/// itself), so its memory of the fleet never goes back in time, unless it shows a later stamp of
/// the pane than the stream remembers (tmux answered the stream's read before that stamp).
#[test]
fn a_carried_read_is_taken_when_it_is_no_older_than_the_stream_s_last_or_stamped_later() {
    let mut h = Harness::new();
    h.hello();
    h.fleet.edit(|rows| rows[0].stamped_at_ms = Some(1_000));
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.session.handle(Event::Tick);
    h.frames();
    let reads = h.fleet.reads();
    h.fleet.edit(|rows| rows[0].state = State::Blocked);
    let hooked = now_ms();
    h.session.handle(push_read("%0", hooked));
    assert_eq!((h.fleet.carried_parsed(), h.fleet.reads()), (1, reads));
    let frames = h.frames();
    assert_eq!(
        (&frames[0]["pane"], &frames[0]["to"], &frames[0]["at_ms"]),
        (&json!("%0"), &json!("blocked"), &json!(hooked))
    );
    // Reads carried from before the stream's last (the push's, at `hooked`), showing the stamp
    // the stream remembers or none: read again instead.
    for stamp in [Some(1_000), None] {
        let reads = h.fleet.reads();
        h.fleet.edit(|rows| {
            rows[0].state = State::Working;
            rows[0].stamped_at_ms = stamp;
        });
        h.session.handle(push_read("%0", hooked - 1));
        assert_eq!(h.fleet.reads(), reads + 1, "{stamp:?}: the pane read again");
        assert_eq!(h.frames()[0]["to"], "working");
        h.fleet.edit(|rows| {
            rows[0].state = State::Blocked;
            rows[0].stamped_at_ms = Some(1_000);
        });
        h.session.handle(push(&["%0"]));
        assert_eq!(h.frames()[0]["to"], "blocked");
    }
    // One from before, but stamped after what the stream remembers: taken, no tmux asked.
    let reads = h.fleet.reads();
    h.fleet.edit(|rows| {
        rows[0].state = State::Idle;
        rows[0].stamped_at_ms = Some(1_001);
    });
    h.session.handle(push_read("%0", hooked - 1));
    assert_eq!(h.fleet.reads(), reads, "the carried read was taken");
    let frames = h.frames();
    assert_eq!(
        (&frames[0]["to"], &frames[0]["at_ms"]),
        (&json!("idle"), &json!(hooked - 1))
    );
}

/// `serve` reads its cycles off its loop. A push that comes while a cycle's read is under way
/// is published at once; the read, begun before the push and answered after it, shows the pane
/// as it was and takes nothing back (one edge for the move); a tick meanwhile begins no second
/// read.
#[test]
fn a_push_during_a_cycle_read_is_published_first_and_the_older_read_takes_nothing_back() {
    let mut h = Harness::subscribed_held();
    h.fleet.edit(|rows| rows[1].stamped_at_ms = Some(1_000));
    assert_eq!(h.cycle_held(), 1);
    assert!(h.frames().is_empty(), "the baseline is silent");
    h.session.handle(Event::Tick);
    h.session.handle(Event::Tick);
    h.fleet.edit(|rows| {
        rows[1].state = State::Blocked;
        rows[1].stamped_at_ms = Some(1_001);
    });
    h.session.handle(push_read("%1", now_ms()));
    let frames = h.frames();
    assert_eq!(
        (frames.len(), &frames[0]["pane"], &frames[0]["to"]),
        (1, &json!("%1"), &json!("blocked")),
        "{frames:?}"
    );
    assert_eq!(h.session.answer_held(), 1, "the second tick began no read");
    h.session.handle(Event::Cycled);
    assert!(h.frames().is_empty(), "the older read took the move back");
    h.cycle_held();
    assert!(
        h.frames().is_empty(),
        "the next read sees what was published"
    );
}

/// A device revoked while a cycle's read is under way gets nothing of it.
#[test]
fn a_device_revoked_during_a_cycle_read_gets_nothing_of_it() {
    let mut h = Harness::subscribed_held();
    h.cycle_held();
    h.fleet.edit(|rows| rows[1].state = State::Blocked);
    h.session.handle(Event::Tick);
    h.revoke();
    h.session.answer_held();
    assert_eq!(h.session.handle(Event::Cycled), Flow::Exit(2));
    let frames = h.frames();
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert!(error("sub", "scope-denied")(&frames[0]), "{frames:?}");
}

/// A read made off the loop that panics is the session's panic, on the loop, as when the read
/// ran there: not a stream whose cycles stop in silence while its read stays "under way".
#[test]
fn a_cycle_read_that_panics_off_the_loop_panics_the_session() {
    let mut h = Harness::subscribed_held();
    h.fleet.panic_next_cycle();
    h.session.handle(Event::Tick);
    assert_eq!(
        h.session.answer_held(),
        1,
        "the job's panic was caught off the loop"
    );
    let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        h.session.handle(Event::Cycled)
    }));
    let panic = resumed.expect_err("the loop resumes the read's panic");
    assert_eq!(
        panic.downcast_ref::<&str>(),
        Some(&"a scripted cycle read panicked")
    );
}

#[test]
fn many_pushed_panes_read_the_fleet_once() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.session.handle(Event::Tick);
    h.frames();
    let reads = h.fleet.reads();
    h.fleet.edit(|rows| {
        rows[0].state = State::Working;
        rows.push(row("%5", State::Idle));
    });
    h.session.handle(Event::Push(Pushed::Fleet));
    assert_eq!(h.fleet.reads(), reads + 1);
    let moves: Vec<(Value, Value)> = h
        .frames()
        .iter()
        .map(|f| (f["pane"].clone(), f["to"].clone()))
        .collect();
    assert_eq!(
        moves,
        [
            (json!("%0"), json!("working")),
            (json!("%5"), json!("idle"))
        ]
    );
}

/// A push of many panes reads the whole fleet as a cycle does, off the loop, from a read that
/// starts after the push. While a cycle's read is under way (it may have begun before the moves)
/// no second one starts; another follows it, and that one publishes the moves.
#[test]
fn a_push_of_many_panes_reads_the_fleet_after_the_read_under_way() {
    let mut h = Harness::subscribed_held();
    h.cycle_held();
    h.frames();
    // No read under way: one begins at once, from a read no older than the push (which comes
    // a few ms after the stream's last read: the floor must move).
    std::thread::sleep(Duration::from_millis(5));
    let pushed = now_ms();
    h.fleet.edit(|rows| rows[0].state = State::Blocked);
    h.session.handle(Event::Push(Pushed::Fleet));
    assert_eq!(h.session.answer_held(), 1);
    assert!(
        *h.fleet.floors().last().unwrap() >= pushed,
        "{:?}",
        h.fleet.floors()
    );
    h.session.handle(Event::Cycled);
    assert_eq!(h.frames()[0]["to"], "blocked");
    // A cycle's read under way, begun before the next moves: it publishes nothing of them, and
    // the read the push asked for follows it.
    h.session.handle(Event::Tick);
    std::thread::sleep(Duration::from_millis(5));
    let pushed = now_ms();
    h.fleet.edit(|rows| rows[1].state = State::Idle);
    h.session.handle(Event::Push(Pushed::Fleet));
    assert_eq!(h.session.answer_held(), 1, "one read at a time");
    h.session.handle(Event::Cycled);
    assert!(
        h.frames().is_empty(),
        "the read under way began before the move"
    );
    assert_eq!(h.session.answer_held(), 1, "the push's read follows it");
    assert!(
        *h.fleet.floors().last().unwrap() >= pushed,
        "{:?}",
        h.fleet.floors()
    );
    h.session.handle(Event::Cycled);
    let frames = h.frames();
    assert_eq!(
        (&frames[0]["pane"], &frames[0]["to"]),
        (&json!("%1"), &json!("idle")),
        "{frames:?}"
    );
}

#[test]
fn a_revoked_device_gets_nothing_pushed() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.session.handle(Event::Tick);
    h.frames();
    h.fleet.edit(|rows| rows[0].state = State::Blocked);
    h.revoke();
    let reads = h.fleet.reads();
    assert_eq!(h.session.handle(push(&["%0"])), Flow::Exit(2));
    let frames = h.frames();
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert!(error("sub", "scope-denied")(&frames[0]));
    assert_eq!(h.fleet.reads(), reads, "the pane was not even read");
}

#[test]
fn a_pushed_pane_that_is_gone_or_unreadable_publishes_nothing() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
    h.session.handle(Event::Tick);
    h.frames();
    h.fleet.edit(|rows| {
        rows.remove(0);
    });
    h.session.handle(push(&["%0"]));
    assert!(
        h.frames().is_empty(),
        "a vanished pane is the cycle's to report"
    );
    h.fleet.fail(true);
    assert_eq!(h.session.handle(push(&["%1"])), Flow::Continue);
    assert!(h.frames().is_empty());
    h.fleet.fail(false);
    h.session.handle(Event::Tick);
    let frames = h.frames();
    assert_eq!(
        (&frames[0]["pane"], &frames[0]["to"]),
        (&json!("%0"), &json!(""))
    );
}

#[test]
fn pane_requests_answer_not_found_for_an_unknown_pane() {
    let mut h = Harness::new();
    h.hello();
    for line in [
        r#"{"schema":1,"id":"c","t":"card","pane":"%9"}"#,
        r#"{"schema":1,"id":"c","t":"window","pane":"%9"}"#,
        r#"{"schema":1,"id":"c","t":"event","pane":"%9","cursor":"x"}"#,
        r#"{"schema":1,"id":"c","t":"dispatch","slot":"s","host":"elsewhere","pane":"%0","action":"approve","binder":{"expect_episode_ms":0}}"#,
    ] {
        h.line(line);
        assert!(error("c", "not-found")(&h.frames()[0]), "{line}");
    }
    h.line(r#"{"schema":1,"id":"k","t":"card","pane":"%0"}"#);
    assert_eq!(
        h.frames()[0],
        json!({"schema":1,"id":"k","t":"card","card":"none"}),
        "an idle pane has no card"
    );
}

#[test]
fn a_dispatch_to_a_pane_that_is_gone_is_a_receipt_not_an_error() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"d","t":"dispatch","slot":"s","host":"","pane":"%9","action":"approve","binder":{"expect_episode_ms":0}}"#);
    let frame = &h.frames()[0];
    assert_eq!(frame["t"], "receipt");
    assert_eq!(
        (&frame["outcome"], &frame["reason"], &frame["exit_code"]),
        (&json!("vanished"), &json!("pane-gone"), &json!(3))
    );
    h.line(r#"{"schema":1,"id":"r","t":"receipts","slot":"s"}"#);
    let receipts = &h.frames()[0]["receipts"];
    assert_eq!(receipts.as_array().unwrap().len(), 1);
    assert_eq!(receipts[0]["cached"], true);
}

#[test]
fn a_dispatch_fires_through_the_fleet_and_a_repeat_is_cached() {
    let mut h = Harness::new();
    h.fleet.edit(|rows| {
        rows[0].state = State::Blocked;
        rows[0].detail = Some(schema::Detail::Permission);
    });
    h.hello();
    let line = r#"{"schema":1,"id":"d","t":"dispatch","slot":"%0:0:approve","host":"studio","pane":"%0","action":"approve","binder":{"expect_episode_ms":0}}"#;
    h.line(line);
    let first = h.frames().remove(0);
    assert_eq!(
        (&first["outcome"], &first["cached"], &first["device"]),
        (&json!("sent"), &json!(false), &json!("fp-phone"))
    );
    h.line(line);
    assert_eq!(h.frames()[0]["cached"], true);
    assert_eq!(h.fleet.sent(), [("%0".to_owned(), "keys:1".to_owned())]);
}

#[test]
fn a_device_without_read_is_refused_reading_frames_and_lives() {
    let mut h = Harness::new();
    h.store
        .update(|s: &mut schema::DeviceStore| {
            s.devices[0].scopes = vec![Scope::ActAnswer];
            Ok::<_, StoreError>(())
        })
        .unwrap();
    h.hello();
    // Every request kind, with whether it reads: a kind added to the wire and not here fails
    // below, so nobody adds one without saying whether it needs `read`.
    let kinds: [(&str, Option<&str>); 8] = [
        ("hello", None),
        ("dispatch", None),
        ("snapshot", Some(r#"{"schema":1,"id":"x","t":"snapshot"}"#)),
        (
            "subscribe",
            Some(r#"{"schema":1,"id":"x","t":"subscribe","events":true}"#),
        ),
        (
            "card",
            Some(r#"{"schema":1,"id":"x","t":"card","pane":"%0"}"#),
        ),
        (
            "window",
            Some(r#"{"schema":1,"id":"x","t":"window","pane":"%0"}"#),
        ),
        (
            "event",
            Some(r#"{"schema":1,"id":"x","t":"event","pane":"%0","cursor":"c"}"#),
        ),
        ("receipts", Some(r#"{"schema":1,"id":"x","t":"receipts"}"#)),
    ];
    let mut named: Vec<&str> = kinds.iter().map(|(name, _)| *name).collect();
    let mut wire: Vec<&str> = <Request as schema::Frames>::NAMES.to_vec();
    named.sort_unstable();
    wire.sort_unstable();
    assert_eq!(named, wire, "every request kind says whether it reads");
    for line in kinds.iter().filter_map(|(_, line)| *line) {
        h.line(line);
        assert!(error("x", "scope-denied")(&h.frames()[0]), "{line}");
    }
    assert!(h.session.deadline().is_none(), "no stream was started");
}

#[test]
fn eof_and_shutdown_exit_0() {
    let mut h = Harness::new();
    assert_eq!(h.session.handle(Event::Line(Incoming::Eof)), Flow::Exit(0));
    let mut h = Harness::new();
    assert_eq!(h.session.handle(Event::Shutdown), Flow::Exit(0));
}

#[test]
fn a_closed_output_ends_the_session_cleanly() {
    #[derive(Debug)]
    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Sink for Closed {}
    let h = Harness::new();
    let mut session = Session::new(
        SessionConfig {
            device: "fp-phone".into(),
            interval: Duration::from_millis(100),
        },
        StoreWatch::new(h.store.clone()),
        h.fleet.clone(),
        services(&h._dir.path().join("run")),
        FrameWriter::new(Closed),
    );
    let flow = session.handle(Event::Line(Incoming::Line(
        r#"{"schema":1,"id":"1","t":"hello","app":"t","app_version":"1","device":"d"}"#.into(),
    )));
    assert_eq!(flow, Flow::Exit(0));
}

/// A reader that left while there was nothing to write is seen at the next watch, not at the
/// next write (which on a quiet connection may never come).
#[test]
fn a_watch_ends_the_session_when_the_output_is_unusable_and_not_before() {
    #[derive(Debug, Default)]
    struct Leaving {
        gone: std::rc::Rc<std::cell::Cell<bool>>,
    }
    impl Write for Leaving {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Sink for Leaving {
        fn check(&mut self) -> std::io::Result<()> {
            if self.gone.get() {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            Ok(())
        }
    }
    let h = Harness::new();
    let output = Leaving::default();
    let gone = output.gone.clone();
    let mut session = Session::new(
        SessionConfig {
            device: "fp-phone".into(),
            interval: Duration::from_millis(100),
        },
        StoreWatch::new(h.store.clone()),
        h.fleet.clone(),
        services(&h._dir.path().join("run")),
        FrameWriter::new(output),
    );
    assert_eq!(session.handle(Event::Watch), Flow::Continue);
    gone.set(true);
    assert_eq!(session.handle(Event::Watch), Flow::Exit(0));
}

#[test]
fn streamed_and_answered_frames_are_whole_lines_that_decode() {
    let mut h = Harness::new();
    h.hello();
    h.line(r#"{"schema":1,"id":"sub","t":"subscribe","events":false}"#);
    h.session.handle(Event::Tick);
    h.line(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    let text = String::from_utf8(h.session.output().clone()).unwrap();
    for line in text.lines() {
        decode_line::<Response>(line).unwrap();
    }
}

#[test]
fn a_window_fills_its_frame_budget_and_never_passes_it() {
    let mut h = Harness::new();
    let path = h._dir.path().join("t.jsonl");
    let mut text = String::new();
    for i in 0..300 {
        let record = json!({"type":"user","sessionId":"s-0123456789","cwd":"/work/api",
            "version":"2.1.0","timestamp":"2026-01-01T00:00:00Z",
            "message":{"role":"user","content": format!("message {i} {}", "x".repeat(i % 97))}});
        text.push_str(&format!("{record}\n"));
    }
    std::fs::write(&path, text).unwrap();
    let mut pane = row("%0", State::Idle);
    pane.transcript = Some(path.display().to_string());
    h.fleet.set(vec![pane]);
    h.hello();
    for frame_bytes in [1200, 2048, 4096, 9000, 32768] {
        for id in ["w".to_owned(), "i".repeat(200)] {
            h.line(&format!(
                r#"{{"schema":1,"id":"{id}","t":"window","pane":"%0","last":1000,"budget":{{"frame_bytes":{frame_bytes}}}}}"#
            ));
            let out = String::from_utf8(h.session.output().clone()).unwrap();
            let line = out[h.read_so_far..].to_owned();
            h.read_so_far = out.len();
            let frame: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(frame["t"], "window", "{line}");
            assert_eq!(frame["budget_truncated"], true);
            let events = frame["events"].as_array().unwrap();
            let largest = events
                .iter()
                .map(|e| e.to_string().len() + 1)
                .max()
                .unwrap_or(0);
            assert!(
                line.len() <= frame_bytes as usize,
                "{frame_bytes}: {}",
                line.len()
            );
            assert!(
                line.len() + largest + 100 > frame_bytes as usize,
                "{frame_bytes} with a {}-byte id: a {}-byte frame of {} events leaves room for \
                 another",
                id.len(),
                line.len(),
                events.len()
            );
        }
    }
}
