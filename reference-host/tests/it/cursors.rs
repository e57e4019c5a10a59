//! Every tampered cursor of a generated set, over the wire: the cursors a `window` minted for two
//! panes' transcripts (a Claude Code and a Codex store, each the simulator's corpus of every
//! event kind plus a cycle of records; the long form, [`runs`], takes all of a longer cycle's,
//! the short form every eighth), each with every byte position changed, once to another
//! character of the token alphabet and once by a flipped bit. Asked as an `event`'s cursor and as
//! a `window`'s `before`, every one is `cursor-invalid` with the request's id; the cursors as
//! minted are served, and the connection goes on. The unit tests check the same on the reader
//! (`src/transcript/tests.rs`) and every bit of a token on the keyring (`src/transcript/cursor.rs`).

use serde_json::{Value, json};

use crate::support::{Backend, Fleet, fleet_with_phone, is_error, runs};

/// The alphabet of the host's tokens (URL-safe base64).
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The token with the byte at `at` replaced: by the next character of the alphabet (wrapping),
/// or with its lowest bit flipped (which may leave the alphabet).
fn tampered(token: &str, at: usize, flip: bool) -> String {
    let mut bytes = token.as_bytes().to_vec();
    bytes[at] = if flip {
        bytes[at] ^ 1
    } else {
        let i = ALPHABET.iter().position(|c| *c == bytes[at]).unwrap_or(0);
        ALPHABET[(i + 1) % ALPHABET.len()]
    };
    String::from_utf8(bytes).unwrap()
}

#[test]
fn every_tampered_cursor_is_cursor_invalid() {
    let (fleet, mut home) = fleet_with_phone(Backend::Fake);
    home.patient_tmux();
    let records = runs(20, 200).to_string();
    let panes = [("idle", "claude"), ("blocked", "codex")].map(|(name, format)| {
        write_transcript(&fleet, name, format, &records);
        fleet.pane(name)
    });
    let mut host = home.serve("fp-phone");
    host.hello();

    // The generated set: every cursor of each pane's newest 1000 events (the short form takes
    // every eighth of them, the first and last included).
    let every = runs(8, 1);
    let mut minted: Vec<(String, String)> = Vec::new();
    for pane in &panes {
        host.send(&json!({"schema":1,"id":"w","t":"window","pane":pane,"last":1000}).to_string());
        let window = host.recv();
        let events = window["events"]
            .as_array()
            .unwrap_or_else(|| panic!("{window}"));
        assert!(events.len() > 20, "{pane}: {} events", events.len());
        for (i, event) in events.iter().enumerate() {
            if i % every == 0 || i + 1 == events.len() {
                let cursor = event["cursor"].as_str().unwrap().to_owned();
                minted.push((pane.clone(), cursor));
            }
        }
    }

    // Each minted cursor is served, as an event and as where a window pages back from.
    let mut lines: Vec<String> = Vec::new();
    for (pane, cursor) in &minted {
        lines.push(event(pane, cursor, "ok"));
        lines.push(window(pane, cursor, "ok"));
    }
    let mut tampered_count = 0;
    for (pane, cursor) in &minted {
        for at in 0..cursor.len() {
            for flip in [false, true] {
                let bad = tampered(cursor, at, flip);
                assert_ne!(&bad, cursor);
                lines.push(event(pane, &bad, &format!("e{tampered_count}")));
                lines.push(window(pane, &bad, &format!("w{tampered_count}")));
                tampered_count += 1;
            }
        }
    }
    // One pipe's worth at a time would stall the test against a host that answers as it reads:
    // the lines go from a thread of their own.
    let total = lines.len();
    let feeder = host.feed(lines);
    for _ in 0..2 * minted.len() {
        let frame = host.recv();
        assert_eq!(frame["id"], "ok", "{frame}");
        assert!(frame["t"] == "event" || frame["t"] == "window", "{frame}");
    }
    for n in 0..tampered_count {
        for kind in ["e", "w"] {
            let frame: Value = host.recv();
            assert!(
                is_error(&frame, &format!("{kind}{n}"), "cursor-invalid"),
                "tampered cursor {n} ({kind}): {frame}"
            );
        }
    }
    let stdin = feeder.join().unwrap();
    drop(stdin);
    assert_eq!(host.exit_code(), 0);
    eprintln!(
        "{} minted cursors of two stores, {tampered_count} tampered: all {} tampered requests cursor-invalid ({total} requests)",
        minted.len(),
        2 * tampered_count
    );
}

fn write_transcript(fleet: &Fleet, pane: &str, format: &str, records: &str) {
    fleet.sim(&[
        "transcript",
        "write",
        "--pane",
        pane,
        "--format",
        format,
        "--corpus",
        "--events",
        records,
    ]);
}

fn event(pane: &str, cursor: &str, id: &str) -> String {
    json!({"schema":1,"id":id,"t":"event","pane":pane,"cursor":cursor}).to_string()
}

fn window(pane: &str, cursor: &str, id: &str) -> String {
    json!({"schema":1,"id":id,"t":"window","pane":pane,"last":1,"before":cursor}).to_string()
}
