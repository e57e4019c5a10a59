//! Shared cycle reads on a scripted tmux: the first read of a cycle is tmux's and is left for
//! the others, whoever wakes within the tolerance parses it instead, an old or foreign file is no
//! cache, a failure is never left, and a schedule's instants.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use super::*;

const INTERVAL: Duration = Duration::from_millis(2000);

/// What tmux answers for a fleet of `panes` (id, state) in the edge format, as the reader would
/// get it, with `nonce`.
fn answer(panes: &[(&str, &str)], nonce: &str) -> (RawListing, Listing) {
    let sep = format!("\u{1f}{nonce}\u{1f}");
    let mut out = String::new();
    for (id, state) in panes {
        let fields = [
            *id,
            "work",
            "0",
            "1",
            "/w",
            "/tmp/tmux-0/s",
            "claude",
            state,
            "",
            "",
            "",
        ];
        out.push_str(&format!("\u{1e}{nonce}\u{1f}{}\n", fields.join(&sep)));
    }
    let raw = RawListing {
        fields: Fields::Edge,
        nonce: nonce.to_owned(),
        answer: Answer::Output(out.into_bytes()),
    };
    let listing = raw.listing().unwrap();
    (raw, listing)
}

/// A tmux whose reads are counted and answer `panes`.
fn counting<'a>(
    calls: &'a AtomicUsize,
    panes: &'static [(&'static str, &'static str)],
) -> impl FnOnce(Fields) -> Result<(RawListing, Listing), TmuxError> + 'a {
    move |fields| {
        assert_eq!(fields, Fields::Edge);
        let n = calls.fetch_add(1, Ordering::SeqCst);
        Ok(answer(panes, &format!("n{n}")))
    }
}

fn ids(listing: &Listing) -> Vec<(String, String)> {
    listing
        .clone()
        .into_panes()
        .into_iter()
        .map(|p| (p.pane_id, p.options.state))
        .collect()
}

#[test]
fn the_first_read_of_a_cycle_is_left_for_whoever_wakes_within_the_tolerance() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = SharedReads::at(&tmp.path().join("fleet"), "k");
    let calls = AtomicUsize::new(0);
    let woke = now_ms();
    let first = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (woke, 0),
            counting(&calls, &[("%1", "idle")]),
        )
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        first.origin_ms, first.started_ms,
        "no schedule yet: this read starts one"
    );
    let file = tmp.path().join("fleet/k-edge-2000.read");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    // Another process of the same cycle parses it: no tmux call, the same panes and times.
    let second = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (woke + 20, 0),
            counting(&calls, &[("%1", "busy")]),
        )
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "tmux was not asked again");
    assert_eq!(second, first);
    assert_eq!(ids(&second.listing), [("%1".into(), "idle".into())]);
    // A process that wakes well after it reads tmux itself, on the same schedule.
    let later = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (first.started_ms + tolerance(INTERVAL) + 500, 0),
            counting(&calls, &[("%1", "working")]),
        )
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(ids(&later.listing), [("%1".into(), "working".into())]);
    assert_eq!(
        later.origin_ms, first.origin_ms,
        "the schedule is kept while it is alive"
    );
    let (header, _) = shared.header("edge", 2000).unwrap();
    assert_eq!(header.generation, 2);
}

/// A stream whose last read (its subscription, a push) started after the file's read never
/// takes it, however fresh: its memory of the fleet would go back in time.
#[test]
fn a_read_older_than_the_stream_s_last_is_never_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = SharedReads::at(tmp.path(), "k");
    let calls = AtomicUsize::new(0);
    let woke = now_ms();
    let first = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (woke, 0),
            counting(&calls, &[("%1", "idle")]),
        )
        .unwrap();
    let after = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (woke + 10, first.started_ms + 1),
            counting(&calls, &[("%1", "working")]),
        )
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2, "read again");
    assert_eq!(ids(&after.listing), [("%1".into(), "working".into())]);
    let same = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (woke + 10, after.started_ms),
            counting(&calls, &[("%1", "busy")]),
        )
        .unwrap();
    assert_eq!(
        (calls.load(Ordering::SeqCst), same),
        (2, after),
        "a read at the floor is taken"
    );
}

#[test]
fn another_interval_is_another_schedule_and_a_dead_schedule_starts_again() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = SharedReads::at(tmp.path(), "k");
    let calls = AtomicUsize::new(0);
    let woke = now_ms();
    let slow = shared
        .read(
            Fields::Edge,
            INTERVAL,
            (woke, 0),
            counting(&calls, &[("%1", "idle")]),
        )
        .unwrap();
    let fast = Duration::from_millis(200);
    let other = shared
        .read(
            Fields::Edge,
            fast,
            (woke, 0),
            counting(&calls, &[("%1", "idle")]),
        )
        .unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "each interval has its own file"
    );
    assert!(tmp.path().join("k-edge-200.read").exists());
    // A file whose last read is more than two intervals old is no schedule to join.
    let path = tmp.path().join("k-edge-200.read");
    let mut bytes = encode(
        "edge",
        7,
        200,
        &Shared {
            started_ms: other.started_ms - 1000,
            answered_ms: other.answered_ms - 1000,
            origin_ms: 5,
            ..other.clone()
        },
    );
    std::fs::write(&path, &bytes).unwrap();
    let restarted = shared
        .read(
            Fields::Edge,
            fast,
            (now_ms(), 0),
            counting(&calls, &[("%1", "idle")]),
        )
        .unwrap();
    assert_ne!(restarted.origin_ms, 5);
    assert_eq!(restarted.origin_ms, restarted.started_ms);
    // Garbage, a truncated file, another format's: no cache, read again.
    for garbage in [b"corral-fleet-read 1\n{".to_vec(), b"hello".to_vec(), {
        bytes.truncate(bytes.len() - 3);
        bytes
    }] {
        std::fs::write(&path, &garbage).unwrap();
        let before = calls.load(Ordering::SeqCst);
        shared
            .read(
                Fields::Edge,
                fast,
                (now_ms(), 0),
                counting(&calls, &[("%1", "idle")]),
            )
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), before + 1);
    }
    assert_eq!(slow.raw.fields, Fields::Edge);
}

#[test]
fn a_failed_read_is_not_left_and_no_server_is() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = SharedReads::at(tmp.path(), "k");
    let failing = |_| {
        Err(TmuxError::Failed {
            status: "exit status: 1".into(),
            stderr: "lost server".into(),
        })
    };
    assert!(
        shared
            .read(Fields::Row, INTERVAL, (now_ms(), 0), failing)
            .is_err()
    );
    assert!(!tmp.path().join("k-row-2000.read").exists());
    let none = |fields| {
        let raw = RawListing {
            fields,
            nonce: "n".into(),
            answer: Answer::NoServer {
                socket: "/tmp/tmux-0/s".into(),
            },
        };
        let listing = raw.listing()?;
        Ok((raw, listing))
    };
    let first = shared
        .read(Fields::Row, INTERVAL, (now_ms(), 0), none)
        .unwrap();
    let again = shared
        .read(Fields::Row, INTERVAL, (now_ms(), 0), |_| {
            panic!("tmux asked again")
        })
        .unwrap();
    assert_eq!(again, first);
    assert_eq!(
        again.listing,
        Listing::NoServer {
            socket: "/tmp/tmux-0/s".into()
        }
    );
}

#[test]
fn a_format_never_shared_is_read_directly() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = SharedReads::at(tmp.path(), "k");
    let calls = AtomicUsize::new(0);
    for _ in 0..2 {
        shared
            .read(Fields::Host, INTERVAL, (now_ms(), 0), |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                let raw = RawListing {
                    fields: Fields::Host,
                    nonce: "n".into(),
                    answer: Answer::Output(Vec::new()),
                };
                let listing = raw.listing()?;
                Ok((raw, listing))
            })
            .unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

/// Ten processes (threads, each with a lock file opened on its own, as processes do) waking at
/// one instant while the first's tmux read takes a while: one tmux call, one answer for all.
#[test]
fn processes_waking_together_make_one_read() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = SharedReads::at(tmp.path(), "k");
    let calls = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(10));
    let woke = now_ms();
    let reads: Vec<_> = (0..10)
        .map(|_| {
            let (shared, calls, start) = (shared.clone(), calls.clone(), start.clone());
            crate::threads::spawn(move || {
                start.wait();
                shared
                    .read(Fields::Edge, INTERVAL, (woke, 0), |_| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(50));
                        Ok(answer(&[("%1", "idle"), ("%2", "blocked")], "x"))
                    })
                    .unwrap()
            })
        })
        .collect();
    let reads: Vec<Shared> = reads.into_iter().map(|r| r.join().unwrap()).collect();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(reads.iter().all(|r| *r == reads[0]));
}

#[test]
fn a_schedule_s_next_instant_is_at_least_half_an_interval_on() {
    // On the schedule: exactly one interval on, whatever a few ms of lateness.
    assert_eq!(next_instant(1000, 200, 1400), 1600);
    assert_eq!(next_instant(1000, 200, 1407), 1600);
    // Joining it between two instants: the first at least half an interval on.
    assert_eq!(next_instant(1000, 200, 1450), 1600);
    assert_eq!(next_instant(1000, 200, 1510), 1800);
    // Before the schedule started (a clock that went back): its origin.
    assert_eq!(next_instant(5000, 200, 1000), 5000);
    for after in 1000..3000 {
        let next = next_instant(1000, 200, after);
        assert!(next >= after + 100 && next < after + 300, "{after}: {next}");
        assert_eq!((next - 1000) % 200, 0);
    }
}

#[test]
fn the_tolerance_is_a_quarter_interval_at_most_100_ms() {
    assert_eq!(tolerance(Duration::from_millis(200)), 50);
    assert_eq!(tolerance(Duration::from_millis(2000)), 100);
}

/// A `serve` alone leaves no read in the file: nobody would take it, and on a runtime dir on
/// disk it was written there every cycle. Its own push socket does not count, nor a daemon's;
/// once another `serve` listens for the server, its next read is left, and the other takes it.
#[test]
fn a_read_is_left_only_while_another_serve_listens() {
    let tmp = tempfile::tempdir().unwrap();
    let (fleet, push) = (tmp.path().join("fleet"), tmp.path().join("push"));
    let me = std::process::id();
    let shared = SharedReads::listening_at(&fleet, "k", push.clone(), me);
    let file = fleet.join("k-edge-2000.read");
    let calls = AtomicUsize::new(0);
    let panes: &[(&str, &str)] = &[("%1", "idle")];
    let read = |woke, panes| {
        shared
            .read(Fields::Edge, INTERVAL, (woke, 0), counting(&calls, panes))
            .unwrap()
    };
    read(now_ms(), panes);
    assert!(!file.exists(), "alone, nothing is left");
    let own = crate::push::Listener::bind(&push, "/tmp/tmux-0/s", "serve").unwrap();
    std::fs::write(push.join("daemon-1-aa.sock"), b"").unwrap();
    read(now_ms(), panes);
    assert!(
        !file.exists(),
        "its own socket and a daemon's are no other serve"
    );
    // Another `serve` (pid 1 runs, always) listens for the server.
    std::fs::write(push.join("serve-1-bb.sock"), b"").unwrap();
    read(now_ms(), &[]);
    assert!(!file.exists(), "a read of no pane names no server");
    let woke = now_ms();
    let left = read(woke, panes);
    assert!(
        file.exists(),
        "with another serve listening, the read is left"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    let other = SharedReads::listening_at(&fleet, "k", push, 1);
    let taken = other
        .read(
            Fields::Edge,
            INTERVAL,
            (woke + 10, 0),
            counting(&calls, panes),
        )
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 4, "the other took it");
    assert_eq!(taken, left);
    drop(own);
}
