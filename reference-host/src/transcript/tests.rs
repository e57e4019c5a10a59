//! The reader against real files: paging, every budget, caps, bodies, every way a cursor goes
//! stale, and the pending call a card shows.

use std::io::Write;
use std::path::PathBuf;

use schema::{BodyKind, Budget, ToolStatus};
use serde_json::json;

use super::*;

/// A broken transcript never breaks the reader: every page of a walk to the head is served, and
/// every cursor it minted fetches its event.
#[test]
fn a_broken_transcript_is_served_with_its_breakage_counted() {
    let mut records: Vec<serde_json::Value> = (0..12).map(user).collect();
    records.insert(3, triple("t1"));
    records.insert(7, result("t1"));
    let good: String = records.iter().map(|r| format!("{r}\n")).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let keys = Keyring::load_or_create(dir.path()).unwrap();
    for bytes in crate::testing::mutations(good.as_bytes(), 21, 400) {
        std::fs::write(&path, &bytes).unwrap();
        let mut reader = Reader::new(keys.clone());
        let source = Source {
            pane: "%1",
            agent: "claude",
            path: &path,
        };
        let mut before: Option<Cursor> = None;
        for _ in 0..100 {
            let page = reader.window(&source, limits(4), before.as_ref()).unwrap();
            for event in &page.events {
                reader.event(&source, &event.cursor).unwrap();
            }
            match page.older {
                Some(older) => before = Some(older),
                None => break,
            }
        }
    }
}

/// A Claude Code transcript of `records` lines in a temp dir.
struct Fixture {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl Fixture {
    fn new(records: &[serde_json::Value]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let fixture = Fixture { dir, path };
        fixture.append(records);
        fixture
    }

    fn append(&self, records: &[serde_json::Value]) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .unwrap();
        for record in records {
            writeln!(file, "{record}").unwrap();
        }
    }

    fn source(&self) -> Source<'_> {
        Source {
            pane: "%1",
            agent: "claude",
            path: &self.path,
        }
    }

    fn reader(&self) -> Reader {
        Reader::new(Keyring::load_or_create(self.dir.path()).unwrap())
    }
}

fn user(i: usize) -> serde_json::Value {
    json!({"type":"user","sessionId":"s1","cwd":"/w","version":"2.1.0",
           "timestamp": format!("2026-01-01T00:00:{:02}Z", i % 60),
           "message":{"role":"user","content": format!("message {i}")}})
}

/// One assistant line of three blocks: thinking, text, a tool call.
fn triple(call: &str) -> serde_json::Value {
    json!({"type":"assistant","message":{"model":"claude-x","content":[
        {"type":"thinking","thinking":"consider"},
        {"type":"text","text":"running it"},
        {"type":"tool_use","id": call,"name":"Bash","input":{"command":"cargo test","timeout":60}}]}})
}

fn result(call: &str) -> serde_json::Value {
    json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":call,"content":"ok"}]}})
}

fn limits(last: u32) -> PageLimits {
    PageLimits {
        window: WindowLimits::clamp(Some(last), None),
        room: 1 << 20,
    }
}

fn previews(page: &Page) -> Vec<String> {
    page.events
        .iter()
        .map(|e| {
            e.preview
                .clone()
                .unwrap_or_else(|| e.kind.as_str().to_owned())
        })
        .collect()
}

/// Pages from the end to the head; every page's previews, in order.
fn walk(reader: &mut Reader, source: &Source<'_>, limits: PageLimits) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut before: Option<Cursor> = None;
    loop {
        let page = reader.window(source, limits, before.as_ref()).unwrap();
        pages.push(previews(&page));
        match page.older {
            Some(older) => before = Some(older),
            None => return pages,
        }
        assert!(pages.len() < 1000, "paging must end");
    }
}

#[test]
fn a_window_is_newest_first_with_session_meta_and_no_older_at_the_head() {
    let fixture = Fixture::new(&[user(0), user(1), user(2)]);
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(200), None).unwrap();
    assert_eq!(previews(&page), ["message 2", "message 1", "message 0"]);
    assert_eq!(page.older, None);
    assert!(!page.budget_truncated);
    let session = page.session.unwrap();
    assert_eq!(session.session_id.as_deref(), Some("s1"));
    assert_eq!(page.events[0].ts.as_deref(), Some("2026-01-01T00:00:02Z"));
    assert!(page.events.iter().all(|e| e.body.is_none()));
}

#[test]
fn paging_by_last_visits_every_event_once_even_inside_a_multi_block_record() {
    let fixture = Fixture::new(&[user(0), triple("t1"), result("t1"), user(3)]);
    let mut reader = fixture.reader();
    let whole = previews(&reader.window(&fixture.source(), limits(200), None).unwrap());
    assert_eq!(
        whole,
        [
            "message 3",
            "ok",
            "cargo test",
            "running it",
            "consider",
            "message 0"
        ]
    );
    for last in 1..=4 {
        let pages = walk(&mut reader, &fixture.source(), limits(last));
        assert!(pages.iter().all(|p| p.len() <= last as usize));
        let flat: Vec<String> = pages.concat();
        assert_eq!(flat, whole, "last = {last}");
    }
}

#[test]
fn the_read_budget_ends_a_page_that_still_progresses() {
    let records: Vec<_> = (0..20).map(user).collect();
    let fixture = Fixture::new(&records);
    let one_record = serde_json::to_string(&records[0]).unwrap().len() as u32;
    let mut reader = fixture.reader();
    let tight = PageLimits {
        window: WindowLimits::clamp(
            None,
            Some(Budget {
                read_bytes: Some(one_record * 3),
                ..Budget::default()
            }),
        ),
        room: 1 << 20,
    };
    let page = reader.window(&fixture.source(), tight, None).unwrap();
    assert!(page.budget_truncated);
    assert!(!page.events.is_empty() && page.events.len() < 20);
    let pages = walk(&mut reader, &fixture.source(), tight);
    assert_eq!(pages.concat().len(), 20, "every event exactly once");
    let tiny = PageLimits {
        window: WindowLimits::clamp(
            None,
            Some(Budget {
                read_bytes: Some(1),
                ..Budget::default()
            }),
        ),
        room: 1 << 20,
    };
    let page = reader.window(&fixture.source(), tiny, None).unwrap();
    assert_eq!(page.events.len(), 1, "the first record is always read");
}

#[test]
fn the_frame_room_drops_events_from_the_old_end_and_older_continues_there() {
    let records: Vec<_> = (0..10).map(user).collect();
    let fixture = Fixture::new(&records);
    let mut reader = fixture.reader();
    let full = reader.window(&fixture.source(), limits(200), None).unwrap();
    let one = serde_json::to_string(&full.events[0]).unwrap().len() + 1;
    let session = full
        .session
        .as_ref()
        .map_or(0, |meta| serde_json::to_string(meta).unwrap().len());
    let room = PageLimits {
        window: WindowLimits::DEFAULT,
        room: session + one * 3 + one / 2,
    };
    let page = reader.window(&fixture.source(), room, None).unwrap();
    assert_eq!(previews(&page), ["message 9", "message 8", "message 7"]);
    assert!(page.budget_truncated);
    let next = reader
        .window(&fixture.source(), room, page.older.as_ref())
        .unwrap();
    assert_eq!(previews(&next), ["message 6", "message 5", "message 4"]);
    // A frame too small for the session and one event cut to nothing is refused, saying by how
    // much; at that floor a page holds one event, never none.
    let none = PageLimits {
        window: WindowLimits::DEFAULT,
        room: 10,
    };
    let Err(TranscriptError::FrameTooSmall { short }) =
        reader.window(&fixture.source(), none, None)
    else {
        panic!("a frame with no room for an event is refused");
    };
    let floor = PageLimits {
        window: WindowLimits::DEFAULT,
        room: 10 + short,
    };
    assert!(matches!(
        reader.window(
            &fixture.source(),
            PageLimits {
                room: 9 + short,
                ..floor
            },
            None
        ),
        Err(TranscriptError::FrameTooSmall { short: 1 })
    ));
    let page = reader.window(&fixture.source(), floor, None).unwrap();
    let got = previews(&page);
    assert!(!got.is_empty() && got.len() < 10, "{got:?}");
    assert_eq!(got[0], "message 9");
    assert!(page.budget_truncated);
    let resumed = reader
        .window(&fixture.source(), limits(1), page.older.as_ref())
        .unwrap();
    assert_eq!(
        previews(&resumed),
        [format!("message {}", 9 - got.len())],
        "nothing is skipped"
    );
}

#[test]
fn header_strings_are_cut_on_a_character_boundary_but_bytes_count_everything() {
    let text = "é".repeat(300);
    let fixture = Fixture::new(&[json!({"type":"user","message":{"content": text}})]);
    let mut reader = fixture.reader();
    let capped = PageLimits {
        window: WindowLimits::clamp(
            None,
            Some(Budget {
                header_bytes: Some(5),
                ..Budget::default()
            }),
        ),
        room: 1 << 20,
    };
    let page = reader.window(&fixture.source(), capped, None).unwrap();
    let event = &page.events[0];
    assert_eq!(event.preview.as_deref(), Some("éé"));
    let EventKind::UserMessage(m) = &event.kind else {
        panic!("{event:?}")
    };
    assert_eq!(m.bytes, 600);
    assert!(event.cursor.0.len() > 5, "the cursor is never cut");
}

#[test]
fn records_no_reader_knows_and_broken_lines_are_counted_unknown() {
    let fixture = Fixture::new(&[user(0), json!({"type":"hologram"})]);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&fixture.path)
        .unwrap();
    file.write_all(b"{\"type\": not json\n\n").unwrap();
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(200), None).unwrap();
    assert_eq!(page.unknown, 2);
    assert_eq!(
        previews(&page),
        ["unknown", "unknown", "message 0"],
        "the blank line is no record"
    );
}

#[test]
fn an_event_returns_its_body_text_or_json() {
    let fixture = Fixture::new(&[triple("t1")]);
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(200), None).unwrap();
    let call = reader
        .event(&fixture.source(), &page.events[0].cursor)
        .unwrap();
    let body = call.body.unwrap();
    assert_eq!(body.kind, BodyKind::Json);
    assert_eq!(body.text, r#"{"command":"cargo test","timeout":60}"#);
    assert!(!body.truncated);
    let text = reader
        .event(&fixture.source(), &page.events[1].cursor)
        .unwrap();
    assert_eq!(text.body.unwrap().text, "running it");
    assert_eq!(text.cursor, page.events[1].cursor);
}

#[test]
fn a_body_over_one_mib_is_cut_and_marked() {
    let big = "ü".repeat(BODY_CAP); // 2 MiB of two-byte characters
    let fixture = Fixture::new(&[json!({"type":"user","message":{"content": big}})]);
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(1), None).unwrap();
    let event = reader
        .event(&fixture.source(), &page.events[0].cursor)
        .unwrap();
    let body = event.body.unwrap();
    assert!(body.truncated);
    assert_eq!(body.text.len(), BODY_CAP);
    assert!(body.text.chars().all(|c| c == 'ü'));
}

#[test]
fn a_file_that_grew_keeps_its_cursors() {
    let fixture = Fixture::new(&[user(0), user(1)]);
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(1), None).unwrap();
    fixture.append(&[user(2), user(3)]);
    let older = reader
        .window(&fixture.source(), limits(200), page.older.as_ref())
        .unwrap();
    assert_eq!(previews(&older), ["message 0"]);
    assert!(
        reader
            .event(&fixture.source(), &page.events[0].cursor)
            .is_ok()
    );
    // A fresh reader (another connection) honours the same cursor.
    let mut other = fixture.reader();
    assert!(
        other
            .event(&fixture.source(), &page.events[0].cursor)
            .is_ok()
    );
}

fn invalid(reader: &mut Reader, source: &Source<'_>, cursor: &Cursor) -> bool {
    matches!(
        reader.event(source, cursor),
        Err(TranscriptError::CursorInvalid(_))
    ) && matches!(
        reader.window(source, limits(5), Some(cursor)),
        Err(TranscriptError::CursorInvalid(_))
    )
}

#[test]
fn every_way_a_cursor_goes_stale_is_cursor_invalid() {
    let records: Vec<_> = (0..5).map(user).collect();
    // Tampered: every byte of the token changed.
    let fixture = Fixture::new(&records);
    let mut reader = fixture.reader();
    let cursor = reader
        .window(&fixture.source(), limits(2), None)
        .unwrap()
        .events[1]
        .cursor
        .clone();
    for at in 0..cursor.0.len() {
        let mut bytes = cursor.0.clone().into_bytes();
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        let tampered = Cursor(String::from_utf8(bytes).unwrap());
        assert!(
            invalid(&mut reader, &fixture.source(), &tampered),
            "byte {at}"
        );
    }
    // Another pane's cursor.
    let other = Source {
        pane: "%2",
        ..fixture.source()
    };
    assert!(invalid(&mut reader, &other, &cursor));
    // Truncated below the cursor's mint size.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&fixture.path)
        .unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len - 10).unwrap();
    assert!(invalid(&mut reader, &fixture.source(), &cursor));
    file.set_len(len).unwrap();

    // Replaced (a new file renamed over the old) and rotated (moved away, a new one created).
    let fixture = Fixture::new(&records);
    let mut reader = fixture.reader();
    let cursor = reader
        .window(&fixture.source(), limits(2), None)
        .unwrap()
        .events[1]
        .cursor
        .clone();
    let copy = fixture.dir.path().join("copy");
    std::fs::copy(&fixture.path, &copy).unwrap();
    std::fs::rename(&copy, &fixture.path).unwrap();
    assert!(invalid(&mut reader, &fixture.source(), &cursor), "replaced");

    // Rewritten in place: same inode and size, other bytes.
    let fixture = Fixture::new(&records);
    let mut reader = fixture.reader();
    let cursor = reader
        .window(&fixture.source(), limits(2), None)
        .unwrap()
        .events[1]
        .cursor
        .clone();
    let text = std::fs::read_to_string(&fixture.path)
        .unwrap()
        .replace("message", "massage");
    std::fs::write(&fixture.path, text).unwrap();
    assert!(
        invalid(&mut reader, &fixture.source(), &cursor),
        "rewritten"
    );
}

#[test]
fn the_pending_call_is_the_newest_call_without_a_result() {
    let fixture = Fixture::new(&[triple("t1"), result("t1"), user(2), triple("t2")]);
    let mut reader = fixture.reader();
    let call = reader
        .pending_call(&fixture.source(), Wanted::default(), 20)
        .unwrap()
        .unwrap();
    assert_eq!(call.tool, "Bash");
    assert_eq!(call.call_id.as_deref(), Some("t2"));
    let input = call.input.unwrap();
    assert_eq!(input.keys().collect::<Vec<_>>(), ["command", "timeout"]);
    let named = reader
        .pending_call(
            &fixture.source(),
            Wanted {
                call_id: Some("t1"),
                tool: None,
            },
            20,
        )
        .unwrap()
        .unwrap();
    assert_eq!(named.call_id.as_deref(), Some("t1"));
    fixture.append(&[result("t2")]);
    assert_eq!(
        reader
            .pending_call(&fixture.source(), Wanted::default(), 20)
            .unwrap(),
        None
    );
}

#[test]
fn a_codex_rollout_is_read_with_its_own_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl");
    let lines = [
        json!({"timestamp":"t0","type":"session_meta","payload":{"id":"cx","cwd":"/w","cli_version":"0.46.0"}}),
        json!({"timestamp":"t1","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}),
        json!({"timestamp":"t2","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":1}}"}}),
    ];
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
    // An agent name that does not say the format: sniffed from the first record.
    let source = Source {
        pane: "%4",
        agent: "my-codex-fork",
        path: &path,
    };
    let page = reader.window(&source, limits(200), None).unwrap();
    let kinds: Vec<&str> = page.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["tool_result", "tool_call", "session_meta"]);
    let EventKind::ToolResult(r) = &page.events[0].kind else {
        panic!()
    };
    assert_eq!(r.status, ToolStatus::Error);
    assert_eq!(page.session.unwrap().session_id.as_deref(), Some("cx"));
}

#[test]
fn a_missing_file_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone.jsonl");
    let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
    let source = Source {
        pane: "%1",
        agent: "claude",
        path: &path,
    };
    assert!(matches!(
        reader.window(&source, limits(5), None),
        Err(TranscriptError::NotFound(_))
    ));
}

/// A window reads only the tail: behind the records sits a sparse 4 GiB region which a reader
/// that scanned the file would have to read (and would take seconds and gigabytes to).
#[test]
fn a_window_reads_only_what_its_page_needs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let file = File::create(&path).unwrap();
    file.set_len(4 << 30).unwrap();
    drop(file);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"\n").unwrap();
    for i in 0..50 {
        writeln!(file, "{}", user(i)).unwrap();
    }
    let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
    let source = Source {
        pane: "%1",
        agent: "claude",
        path: &path,
    };
    let page = reader.window(&source, limits(20), None).unwrap();
    assert_eq!(page.events.len(), 20);
    assert_eq!(page.events[0].preview.as_deref(), Some("message 49"));
}

fn progress(i: usize) -> serde_json::Value {
    json!({"type":"progress","data":{"type":"bash_progress","output":format!("line {i}")},"toolUseID":"t1","parentToolUseID":"t1","timestamp":format!("2026-01-01T00:01:{:02}Z", i % 60)})
}

fn kinds_of(page: &Page) -> Vec<String> {
    page.events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Bookkeeping(b) => format!("{}x{}", b.type_name, b.records),
            other => other.as_str().to_owned(),
        })
        .collect()
}

/// Three quarters of a long Claude Code file can be progress ticks: a run of them is one event,
/// which `last` does not count, addressed by the run's oldest record.
#[test]
fn a_run_of_bookkeeping_is_one_event_that_last_does_not_count() {
    let mut records = vec![user(0), triple("t1")];
    records.extend((0..40).map(progress));
    records.push(result("t1"));
    records.extend((40..45).map(progress));
    records.push(json!({"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":true}));
    records.push(user(1));
    let fixture = Fixture::new(&records);
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(3), None).unwrap();
    assert_eq!(
        kinds_of(&page),
        [
            "user_message",
            "file-history-snapshotx1",
            "progressx5",
            "tool_result",
            "progressx40",
            "tool_call"
        ]
    );
    // The fold's cursor is its oldest record: its event is that record alone.
    let fold = &page.events[4];
    let event = reader.event(&fixture.source(), &fold.cursor).unwrap();
    let EventKind::Bookkeeping(one) = &event.kind else {
        panic!()
    };
    assert_eq!((one.type_name.as_str(), one.records), ("progress", 1));
    assert_eq!(event.preview, fold.preview);
    assert_eq!(event.ts, fold.ts);
    assert_eq!(
        fold.ts.as_deref(),
        Some("2026-01-01T00:01:00Z"),
        "the oldest's"
    );
    // Paging on continues before the run, and every record is accounted for once.
    let next = reader
        .window(&fixture.source(), limits(3), page.older.as_ref())
        .unwrap();
    assert_eq!(
        kinds_of(&next),
        ["assistant_text", "thinking", "user_message"]
    );
    assert_eq!(next.older, None);
    // Under a small read budget a run is cut where the budget stops, and goes on next page.
    let small = PageLimits {
        window: WindowLimits::clamp(
            Some(200),
            Some(Budget {
                read_bytes: Some(2000),
                ..Budget::default()
            }),
        ),
        room: 1 << 20,
    };
    let mut total = 0;
    let mut before: Option<Cursor> = None;
    loop {
        let page = reader
            .window(&fixture.source(), small, before.as_ref())
            .unwrap();
        total += page
            .events
            .iter()
            .map(|e| match &e.kind {
                EventKind::Bookkeeping(b) => b.records as usize,
                _ => 1,
            })
            .sum::<usize>();
        match page.older {
            Some(older) => before = Some(older),
            None => break,
        }
    }
    // Records 0..: 1 user + (thinking, text, call) + 40 + result + 5 + snapshot + user.
    assert_eq!(total, 1 + 3 + 40 + 1 + 5 + 1 + 1);
}

fn streamed(id: &str, block: serde_json::Value, output: u64) -> serde_json::Value {
    json!({"type":"assistant","message":{"model":"claude-opus-4-6","id":id,"type":"message","role":"assistant",
        "content":[block],"stop_reason":null,"stop_sequence":null,
        "usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":output}}})
}

/// A message streamed as several records is counted once, on its last part, in every window and
/// in the event answer alike; a message the file may still continue has no usage until it ends,
/// and gets it without moving any cursor minted before.
#[test]
fn a_streamed_message_is_counted_once_and_its_cursors_survive_its_end() {
    let text = |t: &str| json!({"type":"text","text":t});
    let fixture = Fixture::new(&[
        user(0),
        streamed("msg_1", text("a"), 2),
        progress(1),
        streamed("msg_1", text("b"), 200),
        result("t0"),
        streamed("msg_2", text("c"), 1),
    ]);
    let mut reader = fixture.reader();
    let page = reader.window(&fixture.source(), limits(200), None).unwrap();
    assert_eq!(
        kinds_of(&page),
        [
            "assistant_text",
            "tool_result",
            "usage",
            "assistant_text",
            "progressx1",
            "assistant_text",
            "user_message"
        ],
        "msg_2 may go on: no usage yet"
    );
    let EventKind::Usage(usage) = &page.events[2].kind else {
        panic!()
    };
    assert_eq!((usage.input, usage.output), (Some(1003), Some(200)));
    // Paged one event at a time, every record is classified as in the whole window.
    let one_by_one: Vec<String> = walk(&mut reader, &fixture.source(), limits(1))
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(one_by_one, previews(&page));
    let c_cursor = page.events[0].cursor.clone();
    // msg_2 ends: the next record is another message's; its usage appears after its text.
    fixture.append(&[streamed("msg_3", text("d"), 5)]);
    let grown = reader.window(&fixture.source(), limits(200), None).unwrap();
    assert_eq!(
        kinds_of(&grown)[..3],
        ["assistant_text", "usage", "assistant_text"]
    );
    let again = reader.event(&fixture.source(), &c_cursor).unwrap();
    assert_eq!(
        again.preview.as_deref(),
        Some("c"),
        "a cursor minted before still holds"
    );
    assert_eq!(grown.events[2].preview.as_deref(), Some("c"));
    let event = reader
        .event(&fixture.source(), &grown.events[1].cursor)
        .unwrap();
    assert_eq!(event.kind.as_str(), "usage");
}

/// The first event of a page is placed whatever room is left: cut to fit.
#[test]
fn a_first_event_too_big_for_the_frame_is_cut_to_fit() {
    let keys: serde_json::Map<String, serde_json::Value> = (0..64)
        .map(|i| (format!("{i:03}-{}", "k".repeat(250)), json!(i)))
        .collect();
    let fixture = Fixture::new(&[
        user(0),
        json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Wide","input":keys}]}}),
    ]);
    let mut reader = fixture.reader();
    let room = PageLimits {
        window: WindowLimits::DEFAULT,
        room: 2000,
    };
    let page = reader.window(&fixture.source(), room, None).unwrap();
    assert_eq!(page.events.len(), 1);
    let EventKind::ToolCall(call) = &page.events[0].kind else {
        panic!()
    };
    assert_eq!(call.arg_keys.len(), 64, "cut, never dropped");
    let encoded = serde_json::to_string(&page.events[0]).unwrap().len() + 1;
    let session = serde_json::to_string(page.session.as_ref().unwrap())
        .unwrap()
        .len();
    assert!(session + encoded <= 2000);
    assert!(page.budget_truncated && page.older.is_some());
    let next = reader
        .window(&fixture.source(), room, page.older.as_ref())
        .unwrap();
    assert_eq!(previews(&next), ["message 0"]);
}

/// A file no served store writes is refused with the reason, never read as Claude Code's.
#[test]
fn a_file_in_a_format_the_reader_does_not_know_is_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
    let cases = [
        (
            "gemini",
            "session-2026-01-01T10-00-1a2b3c4d.json",
            "{\n  \"sessionId\": \"1a2b\",\n  \"messages\": []\n}\n",
            "one JSON document",
        ),
        (
            "claude",
            "doc.json",
            "[\n{\"type\":\"user\"}\n]\n",
            "one JSON document",
        ),
        (
            "gemini",
            "session-2026-05-01T10-00-1a2b3c4d.jsonl",
            "{\"sessionId\":\"1a2b3c4d\",\"projectHash\":\"ab\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}\n{\"id\":\"m1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":[{\"text\":\"hi\"}]}\n",
            "Gemini CLI chat in JSON lines",
        ),
        // A Gemini chat on a pane named for another agent is still a Gemini chat.
        (
            "claude",
            "session-2026-05-01T10-00-5e6f7a8b.jsonl",
            "{\"sessionId\":\"5e6f7a8b\",\"projectHash\":\"ab\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}\n{\"id\":\"m1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":[{\"text\":\"hi\"}]}\n",
            "Gemini CLI chat in JSON lines",
        ),
        (
            "codex",
            "rollout-gemini.jsonl",
            "{\"sessionId\":\"5e6f7a8b\",\"projectHash\":\"ab\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}\n",
            "Gemini CLI chat in JSON lines",
        ),
        (
            "claude",
            "cursor-like.jsonl",
            "{\"role\":\"user\",\"message\":{\"content\":[]}}\n",
            "no format this host reads",
        ),
        (
            "cursor-like",
            "t.jsonl",
            "{\"role\":\"user\",\"message\":{\"content\":[]}}\n",
            "no format this host reads",
        ),
    ];
    for (agent, name, text, why) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let source = Source {
            pane: "%1",
            agent,
            path: &path,
        };
        match reader.window(&source, limits(5), None) {
            Err(TranscriptError::Unsupported(reason)) => {
                assert!(reason.contains(why), "{name}: {reason}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}
