//! The ledger against real files: claims, repeats, dead claimers, torn and corrupt lines, the
//! cap and the time-to-live, and racing claimers.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt};

use super::*;

#[test]
fn a_broken_ledger_is_an_error_never_a_panic_and_never_absent() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::new(dir.path());
    for (slot, at) in [("a", 1), ("b", 2)] {
        ledger.claim(&request(slot), at).unwrap();
        ledger.resolve(&sent(slot, at)).unwrap();
    }
    let log = dir.path().join("ledger.jsonl");
    let good = std::fs::read(&log).unwrap();
    for bytes in crate::testing::mutations(&good, 3, 1500) {
        std::fs::write(&log, &bytes).unwrap();
        let mut fresh = Ledger::new(dir.path());
        // A claim of a slot the good log resolved is its receipt or an error: never a new claim.
        match fresh.claim(&request("a"), 9) {
            Ok(Claim::Resolved(r)) => assert_eq!(r.slot, "a"),
            Ok(Claim::Claimed) => {
                // Only when no complete line of the broken log is a record of slot a: the
                // mutation cut its lines into a torn tail (which a writer that died mid-append
                // leaves, and which fired nothing) or changed its slot's name.
                let complete = bytes
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |at| at + 1);
                let readable = bytes[..complete]
                    .split(|b| *b == b'\n')
                    .filter_map(|line| serde_json::from_slice::<Entry>(line).ok())
                    .any(|entry| entry.slot == "a");
                assert!(
                    !readable,
                    "claimed again over a readable record: {}",
                    String::from_utf8_lossy(&bytes)
                );
            }
            Ok(Claim::InFlight) => {}
            Err(LedgerError::Corrupt { .. } | LedgerError::Io { .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
}

fn request(slot: &str) -> Request<'_> {
    static APPROVE: std::sync::LazyLock<Action> = std::sync::LazyLock::new(|| Action::Approve);
    Request {
        slot,
        device: "fp-phone",
        pane: "%1",
        action: &APPROVE,
    }
}

fn sent(slot: &str, at_ms: u64) -> Receipt {
    Receipt {
        slot: slot.to_owned(),
        pane: "%1".into(),
        action: Action::Approve,
        outcome: Outcome::Sent,
        reason: None,
        exit_code: 0,
        cached: false,
        device: "fp-phone".into(),
        at_ms,
    }
}

#[test]
fn a_claimed_slot_is_in_flight_then_resolved_for_every_later_asker() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::new(dir.path());
    assert_eq!(ledger.claim(&request("a"), 10).unwrap(), Claim::Claimed);
    assert_eq!(ledger.claim(&request("a"), 11).unwrap(), Claim::InFlight);
    let mut other = Ledger::new(dir.path());
    assert_eq!(
        other.claim(&request("a"), 12).unwrap(),
        Claim::InFlight,
        "a live owner"
    );
    ledger.resolve(&sent("a", 10)).unwrap();
    assert_eq!(
        other.claim(&request("a"), 13).unwrap(),
        Claim::Resolved(sent("a", 10))
    );
    let mode = std::fs::metadata(dir.path().join("ledger.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_dead_claimers_slot_resolves_fired_unknown_and_never_fires() {
    let dir = tempfile::tempdir().unwrap();
    let mut dying = Ledger::new(dir.path());
    assert_eq!(dying.claim(&request("a"), 10).unwrap(), Claim::Claimed);
    drop(dying); // its liveness lock goes with it, as with a process killed mid-dispatch
    let mut later = Ledger::new(dir.path());
    let Claim::Resolved(receipt) = later.claim(&request("a"), 20).unwrap() else {
        panic!("a dead claim is resolved, never claimed again");
    };
    assert_eq!(receipt.outcome, Outcome::Error);
    assert_eq!(receipt.reason, Some(Reason::FiredUnknown));
    assert_eq!((receipt.exit_code, receipt.at_ms), (1, 10));
    let mut third = Ledger::new(dir.path());
    assert_eq!(
        third.claim(&request("a"), 30).unwrap(),
        Claim::Resolved(receipt)
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("owners"))
            .unwrap()
            .count(),
        2,
        "the dead owner's lock file is swept; the two live ones stay"
    );
}

#[test]
fn an_abandoned_claim_resolves_fired_unknown_for_every_asker_its_claimer_included() {
    let dir = tempfile::tempdir().unwrap();
    let mut claimer = Ledger::new(dir.path());
    assert_eq!(claimer.claim(&request("a"), 10).unwrap(), Claim::Claimed);
    let mut other = Ledger::new(dir.path());
    assert_eq!(other.claim(&request("a"), 11).unwrap(), Claim::InFlight);
    // The receipt could not be written.
    claimer.abandon();
    let Claim::Resolved(receipt) = other.claim(&request("a"), 12).unwrap() else {
        panic!("an abandoned claim is resolved, never claimed again");
    };
    assert_eq!(
        (
            receipt.outcome.clone(),
            receipt.reason.clone(),
            receipt.at_ms
        ),
        (Outcome::Error, Some(Reason::FiredUnknown), 10)
    );
    assert_eq!(
        claimer.claim(&request("a"), 13).unwrap(),
        Claim::Resolved(receipt)
    );
    // The claimer goes on claiming other slots, under a fresh owner.
    assert_eq!(claimer.claim(&request("b"), 14).unwrap(), Claim::Claimed);
    assert_eq!(other.claim(&request("b"), 15).unwrap(), Claim::InFlight);
}

#[test]
fn a_released_slot_can_be_claimed_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::new(dir.path());
    assert_eq!(ledger.claim(&request("a"), 10).unwrap(), Claim::Claimed);
    ledger.release("a").unwrap();
    assert!(ledger.receipts(None, None).unwrap().is_empty());
    let mut other = Ledger::new(dir.path());
    assert_eq!(other.claim(&request("a"), 11).unwrap(), Claim::Claimed);
}

#[test]
fn a_torn_last_line_is_cut_off_and_a_corrupt_line_is_an_error_never_absent() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::new(dir.path());
    ledger.claim(&request("a"), 10).unwrap();
    ledger.resolve(&sent("a", 10)).unwrap();
    let log = dir.path().join("ledger.jsonl");
    let whole = std::fs::read(&log).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(b"{\"slot\":\"b\",\"claim");
    std::fs::write(&log, &torn).unwrap();
    let mut reader = Ledger::new(dir.path());
    assert_eq!(reader.claim(&request("b"), 11).unwrap(), Claim::Claimed);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.ends_with('\n') && !text.contains("\"claim{"), "{text}");

    let mut corrupt = whole;
    corrupt.extend_from_slice(b"not json\n");
    std::fs::write(&log, &corrupt).unwrap();
    let mut reader = Ledger::new(dir.path());
    assert!(matches!(
        reader.claim(&request("a"), 12),
        Err(LedgerError::Corrupt { .. })
    ));
    assert!(matches!(
        reader.receipts(None, None),
        Err(LedgerError::Corrupt { .. })
    ));
}

#[test]
fn receipts_are_resolved_only_filtered_by_slot_and_claim_time_and_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::new(dir.path());
    for (slot, at) in [("c", 30), ("a", 10), ("b", 20), ("d", 40)] {
        ledger.claim(&request(slot), at).unwrap();
        if slot != "d" {
            ledger.resolve(&sent(slot, at)).unwrap();
        }
    }
    let slots = |found: Vec<Receipt>| found.into_iter().map(|r| r.slot).collect::<Vec<_>>();
    assert_eq!(slots(ledger.receipts(None, None).unwrap()), ["a", "b", "c"]);
    assert_eq!(slots(ledger.receipts(None, Some(20)).unwrap()), ["b", "c"]);
    assert_eq!(slots(ledger.receipts(Some("b"), Some(20)).unwrap()), ["b"]);
    assert_eq!(
        slots(ledger.receipts(Some("b"), Some(21)).unwrap()),
        Vec::<String>::new()
    );
    let mut other = Ledger::new(dir.path());
    assert_eq!(slots(other.receipts(None, None).unwrap()), ["a", "b", "c"]);
}

#[test]
fn the_ledger_keeps_at_most_cap_slots_expired_first_then_oldest_never_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::new(dir.path());
    let day = TTL_MS;
    // One slot in flight, older than everything else.
    ledger.claim(&request("flying"), 1).unwrap();
    for i in 0..CAP - 1 {
        let slot = format!("s{i:05}");
        ledger.claim(&request(&slot), 2 + i as u64).unwrap();
        ledger.resolve(&sent(&slot, 2 + i as u64)).unwrap();
    }
    // Full: the next claim drops the oldest resolved slots down to the low-water mark, never the
    // one in flight.
    ledger.claim(&request("new"), 10_000).unwrap();
    let kept = ledger.receipts(None, None).unwrap();
    assert_eq!(
        kept.len(),
        LOW_WATER - 2,
        "the low-water mark, less `flying` and `new`"
    );
    let dropped = (CAP - 1) - (LOW_WATER - 2);
    assert_eq!(
        kept[0].slot,
        format!("s{dropped:05}"),
        "the oldest resolved went first"
    );
    // Room was made for CAP / 8 claims: the next one rewrites nothing.
    let inode = || {
        std::fs::metadata(dir.path().join("ledger.jsonl"))
            .unwrap()
            .ino()
    };
    let before = inode();
    ledger.claim(&request("newer"), 10_001).unwrap();
    assert_eq!(inode(), before, "no rewrite below the cap");
    ledger.resolve(&sent("newer", 10_001)).unwrap();
    assert_eq!(ledger.peek("flying").unwrap(), Some(Claim::InFlight));
    let lines = std::fs::read_to_string(dir.path().join("ledger.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(lines <= CAP, "rewritten to one line per slot: {lines}");
    // A day later every resolved slot has expired.
    ledger.resolve(&sent("new", 10_000)).unwrap();
    for i in 0..2 * CAP {
        let slot = format!("later{i}");
        ledger.claim(&request(&slot), 10_000 + day + 1).unwrap();
        ledger.resolve(&sent(&slot, 10_000 + day + 1)).unwrap();
        if i == CAP {
            break;
        }
    }
    let kept = ledger.receipts(None, None).unwrap();
    assert!(
        kept.iter().all(|r| r.slot.starts_with("later")),
        "expired first"
    );
    assert_eq!(ledger.peek("flying").unwrap(), Some(Claim::InFlight));
}

#[test]
fn racing_claimers_get_one_claim() {
    let dir = tempfile::tempdir().unwrap();
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let dir = dir.path().to_owned();
            crate::threads::spawn(move || {
                let mut ledger = Ledger::new(&dir);
                let claim = ledger.claim(&request("race"), 5).unwrap();
                // Keep the owner alive until every thread has claimed.
                std::thread::sleep(std::time::Duration::from_millis(100));
                claim
            })
        })
        .collect();
    let claims: Vec<Claim> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(claims.iter().filter(|c| **c == Claim::Claimed).count(), 1);
    assert_eq!(claims.iter().filter(|c| **c == Claim::InFlight).count(), 15);
}
