//! The reader against the kit's transcript samples (`golden/fixtures/transcripts/`): files that
//! reproduce what Claude Code 2.0 and 2.1, Codex before the envelope, at 0.40 and at 0.104, and
//! Gemini CLI before and after 0.39 write, version by version (their README says where each
//! shape comes from).
//!
//! - Every sample's events, read from the end to the head, are written out as text and compared
//!   with `samples/<name>.txt`: a change of classification shows as a diff of that file.
//!   `CORRAL_BLESS=1 cargo test -p reference-host --lib samples` rewrites them; review the diff.
//! - Paging terminates and accounts for every line exactly once whatever the frame's room, from
//!   the smallest the reader accepts up to 32 KiB, and never answers an empty page with an
//!   `older` cursor. The default run takes every room up to 512 bytes past the floor, every 61st
//!   byte up to 8 KiB and every 509th above, one thread per sample; `CORRAL_IT_LONG=1` takes
//!   every one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schema::transcript::EventKind;
use schema::{Cursor, EventHeader, WindowLimits};

use super::cursor::{self, Keyring};
use super::scan::Forward;
use super::{Page, PageLimits, Reader, Source, TranscriptError};

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/fixtures/transcripts")
}

fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/transcript/samples")
}

/// Every sample the reader serves (Claude Code's and Codex's), by file name, with the agent its
/// file is for.
fn samples() -> Vec<(String, &'static str, PathBuf)> {
    let mut out: Vec<(String, &'static str, PathBuf)> = std::fs::read_dir(samples_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .filter(|path| !is_gemini(path))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let agent = if name.starts_with("codex") {
                "codex"
            } else {
                "claude"
            };
            (name, agent, path)
        })
        .collect();
    out.sort();
    assert!(out.len() >= 7, "{out:?}");
    out
}

fn is_gemini(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("gemini"))
}

/// Gemini CLI's chats, in JSON lines (0.39 on) and as one JSON document (before), are refused
/// with their reason whatever agent the pane is named for: never read as another store's.
#[test]
fn gemini_samples_are_refused_with_their_reason_on_any_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
    let gemini: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| is_gemini(path))
        .collect();
    assert_eq!(gemini.len(), 2, "{gemini:?}");
    for path in &gemini {
        let why = if path.extension().is_some_and(|ext| ext == "jsonl") {
            "Gemini CLI chat in JSON lines"
        } else {
            "one JSON document"
        };
        for agent in ["gemini", "claude", "codex", "opencode"] {
            let source = Source {
                pane: "%1",
                agent,
                path,
            };
            match reader.window(&source, limits(4096), None) {
                Err(TranscriptError::Unsupported(reason)) => {
                    assert!(reason.contains(why), "{}: {reason}", path.display());
                }
                other => panic!("{} on a {agent} pane: {other:?}", path.display()),
            }
        }
    }
}

fn limits(room: usize) -> PageLimits {
    PageLimits {
        window: WindowLimits::clamp(Some(1000), None),
        room,
    }
}

/// Pages from the end to the head; every page.
fn walk(reader: &mut Reader, source: &Source<'_>, room: usize) -> Vec<Page> {
    let mut pages = Vec::new();
    let mut before: Option<Cursor> = None;
    loop {
        let page = reader
            .window(source, limits(room), before.as_ref())
            .unwrap();
        assert!(
            !(page.events.is_empty() && page.older.is_some()),
            "{}: an empty page with an older cursor at room {room}",
            source.path.display()
        );
        let older = page.older.clone();
        pages.push(page);
        match older {
            Some(older) => before = Some(older),
            None => return pages,
        }
        assert!(pages.len() < 10_000, "paging must end");
    }
}

/// One line of the text form of an event.
fn line(event: &EventHeader) -> String {
    let kind = serde_json::to_value(&event.kind).unwrap();
    let mut fields: Vec<String> = kind
        .as_object()
        .unwrap()
        .iter()
        .filter(|(key, _)| *key != "kind")
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    fields.insert(0, event.kind.as_str().to_owned());
    let ts = event.ts.as_deref().unwrap_or("-");
    match &event.preview {
        Some(preview) => format!("{ts} {} | {preview}", fields.join(" ")),
        None => format!("{ts} {}", fields.join(" ")),
    }
}

/// A sample's events, oldest first, as text: its session, then one line per event.
fn render(reader: &mut Reader, source: &Source<'_>) -> String {
    let pages = walk(reader, source, 1 << 20);
    let session = serde_json::to_string(&pages[0].session).unwrap();
    let mut lines: Vec<String> = pages
        .iter()
        .flat_map(|page| page.events.iter().map(line))
        .collect();
    lines.reverse();
    let unknown: u32 = pages.iter().map(|page| page.unknown).sum();
    format!(
        "session {session}\nunknown {unknown}\n{}\n",
        lines.join("\n")
    )
}

#[test]
fn every_sample_reads_as_its_expected_events() {
    let dir = tempfile::tempdir().unwrap();
    let bless = std::env::var_os("CORRAL_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, agent, path) in samples() {
        let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
        let source = Source {
            pane: "%1",
            agent,
            path: &path,
        };
        let got = render(&mut reader, &source);
        let expected = expected_dir().join(name.replace(".jsonl", ".txt"));
        if bless {
            std::fs::create_dir_all(expected_dir()).unwrap();
            std::fs::write(&expected, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expected).unwrap_or_default();
        if want != got {
            let diff = similar::TextDiff::from_lines(&want, &got)
                .unified_diff()
                .header("expected", "read")
                .to_string();
            differ.push(format!("{}:\n{diff}", expected.display()));
        }
    }
    assert!(
        differ.is_empty(),
        "the samples read differently (CORRAL_BLESS=1 rewrites the expected files):\n{}",
        differ.join("\n")
    );
}

/// The records of a file: offset to index, in file order.
fn record_offsets(path: &Path) -> Vec<u64> {
    let file = std::fs::File::open(path).unwrap();
    let size = file.metadata().unwrap().len();
    let mut forward = Forward::from_head(&file, size);
    let mut out = Vec::new();
    while let Some(record) = forward.next_record().unwrap() {
        out.push(record.offset);
    }
    out
}

/// What a walk covered: each non-bookkeeping event by its position, and each record, counted
/// once per event that stands for it (a bookkeeping run covers its records).
fn coverage(pages: &[Page], offsets: &[u64]) -> (Vec<(u64, u32)>, BTreeMap<u64, u32>) {
    let index: BTreeMap<u64, usize> = offsets.iter().enumerate().map(|(i, o)| (*o, i)).collect();
    let mut events = Vec::new();
    let mut records: BTreeMap<u64, u32> = BTreeMap::new();
    for event in pages.iter().flat_map(|page| &page.events) {
        let at = cursor::decode(&event.cursor).unwrap().position;
        match &event.kind {
            EventKind::Bookkeeping(run) => {
                let first = index[&at.record.offset];
                for offset in &offsets[first..first + run.records as usize] {
                    *records.entry(*offset).or_default() += 1;
                }
            }
            _ => {
                events.push((at.record.offset, at.part));
                records.entry(at.record.offset).or_default();
            }
        }
    }
    events.sort_unstable();
    (events, records)
}

#[test]
fn paging_any_sample_at_any_room_visits_every_line_once_and_ends() {
    let long = std::env::var_os("CORRAL_IT_LONG").is_some();
    let walkers: Vec<_> = samples()
        .into_iter()
        .map(|(name, agent, path)| {
            crate::threads::spawn(move || page_at_every_room(&name, agent, &path, long))
        })
        .collect();
    for walker in walkers {
        walker.join().unwrap();
    }
}

fn page_at_every_room(name: &str, agent: &str, path: &Path, long: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut reader = Reader::new(Keyring::load_or_create(dir.path()).unwrap());
    let source = Source {
        pane: "%1",
        agent,
        path,
    };
    let offsets = record_offsets(path);
    let whole = walk(&mut reader, &source, 1 << 20);
    let (events, records) = coverage(&whole, &offsets);
    assert_eq!(
        records.keys().copied().collect::<Vec<_>>(),
        offsets,
        "{name}: every line is some event's"
    );
    assert!(
        records.values().all(|n| *n <= 1),
        "{name}: no line is in two bookkeeping runs"
    );
    // The smallest room the reader accepts for this file.
    let floor = match reader.window(&source, limits(0), None) {
        Err(TranscriptError::FrameTooSmall { short }) => short,
        other => panic!("{name}: a room of 0 is refused, not {other:?}"),
    };
    assert!(matches!(
        reader.window(&source, limits(floor - 1), None),
        Err(TranscriptError::FrameTooSmall { short: 1 })
    ));
    let top = 32 * 1024;
    let rooms: Vec<usize> = if long {
        (floor..=top).collect()
    } else {
        (floor..floor + 512)
            .chain((floor + 512..8 * 1024).step_by(61))
            .chain((8 * 1024..=top).step_by(509))
            .chain([top])
            .collect()
    };
    for room in rooms {
        let pages = walk(&mut reader, &source, room);
        let (got_events, got_records) = coverage(&pages, &offsets);
        assert_eq!(
            got_events, events,
            "{name} at room {room}: every event once"
        );
        assert_eq!(
            got_records.keys().copied().collect::<Vec<_>>(),
            offsets,
            "{name} at room {room}: every line"
        );
        assert!(
            got_records.values().all(|n| *n <= 1),
            "{name} at room {room}: a line counted twice"
        );
    }
}
