//! The transcript reader: a pane's transcript file in, classified event headers, cursors and
//! bodies out. It knows nothing of frames, connections or tmux; `serve` asks it for a window, an
//! event or a pending call, and turns the answer into frames.
//!
//! Rules it keeps (the protocol's "Transcripts"): a window pages *backwards* from a cursor (or
//! the end of the file) and reads only what the page needs, so a 1 GiB file answers as fast as
//! a 1 MiB one; `read_bytes` bounds the bytes scanned (the first record of a page is always read,
//! so paging always progresses), `frame_bytes` the encoded events (dropped from the old end), and
//! `last` the event count; every string leaf of a header except its cursor and kind is cut to
//! `header_bytes` on a UTF-8 boundary; an event body is cut at 1 MiB. A record the reader cannot
//! classify is an `unknown` event, counted, never an error. Cursors are authenticated
//! ([`cursor`]). One reader lives as long as a connection and keeps a per-file memo (the file's
//! identity, its format and its session metadata) across requests.
//!
//! Modules: [`json`] (bounded record parser), [`scan`] (finding records), [`classify`] (records
//! to events, per store), [`cursor`] (tokens), [`locate`] (which file is a pane's).

pub mod classify;
pub mod cursor;
pub mod json;
pub mod locate;
pub mod scan;

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use schema::transcript::{EventKind, SessionMeta};
use schema::{BodyKind, Cursor, EventBody, EventHeader, PendingCall, WindowLimits};

use classify::{Body, Format, Part};
use cursor::{Binding, Keyring, Position};
use json::{Limits, Node};
use scan::{Backward, Forward, Record, RecordReader};

/// Longest body an `event` answer carries; a longer one is cut and marked `truncated`.
pub const BODY_CAP: usize = 1024 * 1024;

/// How much of a record a window keeps: enough for any header and for classification.
const WINDOW_LIMITS: Limits = Limits {
    string: 16 * 1024,
    total: 256 * 1024,
    depth: 128,
};

/// How much of a record an event answer keeps: one more byte than a body may carry, so a cut is
/// seen.
const BODY_LIMITS: Limits = Limits {
    string: BODY_CAP + 1,
    total: 4 * BODY_CAP,
    depth: 128,
};

/// How many records from the head are read for the session metadata, and within how many bytes.
const HEAD_RECORDS: usize = 16;
const HEAD_BYTES: u64 = 256 * 1024;

/// Why the reader could not answer.
#[derive(Debug)]
pub enum TranscriptError {
    /// The pane's transcript file does not exist.
    NotFound(PathBuf),
    /// The cursor no longer addresses its bytes, or was not minted here; says which.
    CursorInvalid(&'static str),
    /// The file could not be read.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl std::fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TranscriptError::NotFound(path) => write!(f, "no transcript at {}", path.display()),
            TranscriptError::CursorInvalid(why) => write!(f, "the cursor is invalid: {why}"),
            TranscriptError::Io { path, error } => write!(f, "reading {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for TranscriptError {}

/// A pane's transcript, as the reader needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The pane id: cursors are bound to it.
    pub pane: &'a str,
    /// The pane's agent: it decides the store format (sniffed when the name does not say).
    pub agent: &'a str,
    /// The file, as [`locate::locate`] found it.
    pub path: &'a Path,
}

/// One page of a window, newest event first.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The transcript's session metadata.
    pub session: Option<SessionMeta>,
    /// Where the next older page starts; `None` at the head of the transcript.
    pub older: Option<Cursor>,
    /// A budget, not the event count, ended the page.
    pub budget_truncated: bool,
    /// Events of kind `unknown` in the page.
    pub unknown: u32,
    /// The headers, newest first, without bodies.
    pub events: Vec<EventHeader>,
}

/// A window's limits: the request's, clamped, and the bytes its events may take in the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimits {
    /// `last`, `header_bytes`, `read_bytes` (and `frame_bytes`, already turned into `room`).
    pub window: WindowLimits,
    /// Bytes the encoded session metadata and the `events` array's elements may take together
    /// (the frame budget minus the rest of the frame).
    pub room: usize,
}

/// What the reader remembers of a file between requests.
#[derive(Debug, Clone)]
struct Memo {
    dev: u64,
    ino: u64,
    size: u64,
    format: Format,
    session: Option<SessionMeta>,
}

/// An open transcript.
struct Open<'a> {
    file: File,
    size: u64,
    format: Format,
    session: Option<SessionMeta>,
    binding: Binding<'a>,
}

/// The transcript reader of one connection.
#[derive(Debug)]
pub struct Reader {
    keys: Keyring,
    memo: HashMap<PathBuf, Memo>,
}

impl Reader {
    /// A reader minting cursors under `keys`.
    pub fn new(keys: Keyring) -> Reader {
        Reader {
            keys,
            memo: HashMap::new(),
        }
    }

    fn open<'a>(&mut self, source: &Source<'a>) -> Result<Open<'a>, TranscriptError> {
        let path = source.path;
        let io = |error: std::io::Error| match error.kind() {
            std::io::ErrorKind::NotFound => TranscriptError::NotFound(path.to_owned()),
            _ => TranscriptError::Io {
                path: path.to_owned(),
                error,
            },
        };
        let file = File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(TranscriptError::NotFound(path.to_owned()));
        }
        let (dev, ino, size) = (meta.dev(), meta.ino(), meta.len());
        let fresh = match self.memo.get(path) {
            Some(m) => m.dev == dev && m.ino == ino && size >= m.size,
            None => false,
        };
        if !fresh {
            let memo = study(&file, size, source.agent, dev, ino).map_err(io)?;
            self.memo.insert(path.to_owned(), memo);
        }
        let memo = self.memo.get_mut(path).expect("just inserted");
        memo.size = size;
        Ok(Open {
            file,
            size,
            format: memo.format,
            session: memo.session.clone(),
            binding: Binding {
                pane: source.pane,
                dev,
                ino,
            },
        })
    }

    /// Checks a cursor against the open file; its position when it still addresses its bytes.
    fn position(&self, open: &Open<'_>, cursor: &Cursor) -> Result<Position, TranscriptError> {
        let decoded = cursor::decode(cursor).ok_or(TranscriptError::CursorInvalid(
            "it is not a cursor this host minted",
        ))?;
        if decoded.minted_size > open.size {
            return Err(TranscriptError::CursorInvalid(
                "the transcript is shorter than when the cursor was minted",
            ));
        }
        let edges = scan::record_edges(&open.file, decoded.position.record, cursor::EDGE).map_err(
            |_| {
                TranscriptError::CursorInvalid("the cursor's record is no longer in the transcript")
            },
        )?;
        if !self.keys.verify(&open.binding, &decoded, &edges) {
            return Err(TranscriptError::CursorInvalid(
                "the cursor does not match this pane's transcript",
            ));
        }
        Ok(decoded.position)
    }

    fn mint(&self, open: &Open<'_>, position: Position) -> Result<Cursor, std::io::Error> {
        let edges = scan::record_edges(&open.file, position.record, cursor::EDGE)?;
        Ok(self.keys.mint(&open.binding, open.size, position, &edges))
    }

    /// A page of event headers, newest first, ending just before `before` (or at the end of the
    /// file).
    pub fn window(
        &mut self,
        source: &Source<'_>,
        limits: PageLimits,
        before: Option<&Cursor>,
    ) -> Result<Page, TranscriptError> {
        let open = self.open(source)?;
        let io = |error| TranscriptError::Io {
            path: source.path.to_owned(),
            error,
        };
        let last = usize::try_from(limits.window.last).unwrap_or(usize::MAX);
        let header_cap = usize::try_from(limits.window.header_bytes).unwrap_or(usize::MAX);
        let read_cap = u64::from(limits.window.read_bytes);
        // The first record to read, how many of its events to consider, and where the scan of
        // older records starts.
        let (mut first, scan_from) = match before {
            Some(cursor) => {
                let at = self.position(&open, cursor)?;
                let first = (at.part > 0).then_some((at.record, Some(at.part)));
                (first, at.record.offset)
            }
            None => (
                None,
                Backward::last_boundary(&open.file, open.size).map_err(io)?,
            ),
        };
        let mut scan = Backward::from(&open.file, scan_from);
        let mut page = Page {
            session: open.session.clone(),
            older: None,
            budget_truncated: false,
            unknown: 0,
            events: Vec::new(),
        };
        // The session metadata goes out with every page: its bytes come off the room first.
        let mut used = page.session.as_ref().map_or(0, |meta| {
            serde_json::to_string(meta).map_or(usize::MAX, |s| s.len())
        });
        let mut scanned = 0u64;
        // Set when the page stops with older events left: the position to page back from if
        // no event made it into the page.
        let mut stopped_at: Option<Option<Position>> = None;
        'records: loop {
            let (record, part_limit) = match first.take() {
                Some(first) => first,
                None => match scan.next_record().map_err(io)? {
                    Some(record) => (record, None),
                    None => break,
                },
            };
            if scanned > 0 && scanned + record.footprint() > read_cap {
                page.budget_truncated = true;
                stopped_at = Some(None);
                break;
            }
            scanned += record.footprint();
            let node = parse_record(&open.file, record, WINDOW_LIMITS);
            let parts = parts_of(open.format, node.as_ref());
            let count = parts
                .len()
                .min(part_limit.map_or(usize::MAX, |p| p as usize));
            for index in (0..count).rev() {
                let position = Position {
                    record,
                    part: u32::try_from(index).unwrap_or(u32::MAX),
                };
                if page.events.len() == last {
                    stopped_at = Some(None);
                    break 'records;
                }
                let cursor = self.mint(&open, position).map_err(io)?;
                let header = header(&parts[index], cursor, header_cap);
                let size = serde_json::to_string(&header).map_or(usize::MAX, |s| s.len()) + 1;
                if used + size > limits.room {
                    page.budget_truncated = true;
                    let next = Position {
                        part: position.part + 1,
                        ..position
                    };
                    stopped_at = Some(Some(next));
                    break 'records;
                }
                used += size;
                if matches!(header.kind, EventKind::Unknown(_)) {
                    page.unknown += 1;
                }
                page.events.push(header);
            }
        }
        if let Some(empty_anchor) = stopped_at {
            page.older = match page.events.last() {
                Some(oldest) => Some(oldest.cursor.clone()),
                None => match (empty_anchor, before) {
                    (Some(position), _) => Some(self.mint(&open, position).map_err(io)?),
                    (None, Some(cursor)) => Some(cursor.clone()),
                    (None, None) => None,
                },
            };
        }
        Ok(page)
    }

    /// One event, with its body.
    pub fn event(
        &mut self,
        source: &Source<'_>,
        cursor: &Cursor,
    ) -> Result<EventHeader, TranscriptError> {
        let open = self.open(source)?;
        let position = self.position(&open, cursor)?;
        let node = parse_record(&open.file, position.record, BODY_LIMITS);
        let parts = parts_of(open.format, node.as_ref());
        let part = parts
            .get(position.part as usize)
            .ok_or(TranscriptError::CursorInvalid(
                "the cursor's event is no longer in its record",
            ))?;
        let cap = WindowLimits::DEFAULT.header_bytes as usize;
        let mut event = header(part, cursor.clone(), cap);
        event.body = Some(body(part));
        Ok(event)
    }

    /// The call a blocked agent is waiting on, from the last `headers` events: the call the
    /// pane's stamps name ([`Wanted`]), else the newest tool call with no result after it.
    /// `None` when there is none.
    pub fn pending_call(
        &mut self,
        source: &Source<'_>,
        wanted: Wanted<'_>,
        headers: usize,
    ) -> Result<Option<PendingCall>, TranscriptError> {
        let open = self.open(source)?;
        let io = |error| TranscriptError::Io {
            path: source.path.to_owned(),
            error,
        };
        let end = Backward::last_boundary(&open.file, open.size).map_err(io)?;
        let mut scan = Backward::from(&open.file, end);
        let mut answered: Vec<String> = Vec::new();
        let mut seen = 0;
        while seen < headers {
            let Some(record) = scan.next_record().map_err(io)? else {
                break;
            };
            let node = parse_record(&open.file, record, WINDOW_LIMITS);
            let parts = parts_of(open.format, node.as_ref());
            for (index, part) in parts.iter().enumerate().rev() {
                seen += 1;
                match &part.kind {
                    EventKind::ToolResult(result) => {
                        answered.extend(result.call_id.clone());
                    }
                    EventKind::ToolCall(call) if wanted.matches(call, &answered) => {
                        return Ok(Some(full_call(&open, record, index)));
                    }
                    _ => {}
                }
            }
        }
        Ok(None)
    }
}

/// What a pane's stamps say of the call it is blocked on (`@agent_pending_call`,
/// `@agent_pending_tool`); each narrows the search of the transcript's tail.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wanted<'a> {
    /// The call id: only that call matches, answered or not.
    pub call_id: Option<&'a str>,
    /// The tool: only calls of that tool match, so a call of another tool never lends its input.
    pub tool: Option<&'a str>,
}

impl Wanted<'_> {
    fn matches(&self, call: &schema::transcript::ToolCall, answered: &[String]) -> bool {
        let id = call.call_id.as_deref();
        let by_id = match self.call_id {
            Some(want) => id == Some(want),
            None => !id.is_some_and(|id| answered.iter().any(|a| a == id)),
        };
        by_id && self.tool.is_none_or(|tool| call.name == tool)
    }
}

/// Reads what a file's memo holds: its format and session metadata, from its first records.
fn study(file: &File, size: u64, agent: &str, dev: u64, ino: u64) -> std::io::Result<Memo> {
    // Only the head: records past it (or one record that runs past it) are no metadata.
    let end = Backward::last_boundary(file, size.min(HEAD_BYTES))?;
    let mut forward = Forward::from_head(file, end);
    let mut head = Vec::new();
    while head.len() < HEAD_RECORDS {
        let Some(record) = forward.next_record()? else {
            break;
        };
        if let Some(node) = parse_record(file, record, WINDOW_LIMITS) {
            head.push(node);
        }
    }
    let format = Format::of_agent(agent)
        .or_else(|| head.first().map(Format::sniff))
        .unwrap_or(Format::Claude);
    Ok(Memo {
        dev,
        ino,
        size,
        format,
        session: classify::session_meta(format, &head),
    })
}

fn parse_record(file: &File, record: Record, limits: Limits) -> Option<Node> {
    json::parse(RecordReader::new(file, record), limits).ok()
}

/// The events of a parsed record, or one `unknown` event for a record that is not JSON.
fn parts_of(format: Format, node: Option<&Node>) -> Vec<Part<'_>> {
    match node {
        Some(node) => classify::classify(format, node),
        None => {
            static EMPTY: Node = Node::Null;
            vec![Part {
                kind: classify::unparseable(),
                ts: None,
                preview: None,
                body: Body::Json(&EMPTY),
                args: None,
            }]
        }
    }
}

/// The call at `index` of `record`, read again with room for its whole input.
fn full_call(open: &Open<'_>, record: Record, index: usize) -> PendingCall {
    let node = parse_record(&open.file, record, BODY_LIMITS);
    let parts = parts_of(open.format, node.as_ref());
    let Some(part) = parts.get(index) else {
        return PendingCall {
            tool: String::new(),
            input: None,
            call_id: None,
        };
    };
    let EventKind::ToolCall(call) = &part.kind else {
        unreachable!("the index was a tool call when the record was first read");
    };
    let input = match part.args {
        Some(node @ Node::Object(..)) => match node.to_value() {
            serde_json::Value::Object(map) => Some(map),
            _ => None,
        },
        Some(Node::Str(text)) if !text.is_cut() => serde_json::from_str(&text.text).ok(),
        _ => None,
    };
    PendingCall {
        tool: call.name.clone(),
        input,
        call_id: call.call_id.clone(),
    }
}

/// The header of an event: strings cut to `cap`, body not set.
fn header(part: &Part<'_>, cursor: Cursor, cap: usize) -> EventHeader {
    EventHeader {
        cursor,
        kind: cap_kind(&part.kind, cap),
        ts: part.ts.map(|ts| capped(ts, cap)),
        preview: part.preview.and_then(first_line).map(|l| capped(l, cap)),
        body: None,
    }
}

/// The first line of a text that has something on it, without trailing whitespace.
fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim_end)
        .find(|line| !line.trim_start().is_empty())
}

fn capped(text: &str, cap: usize) -> String {
    json::cut(text, cap).to_owned()
}

/// Every string of a kind's own fields cut to `cap`.
fn cap_kind(kind: &EventKind, cap: usize) -> EventKind {
    let c = |s: &String| capped(s, cap);
    let o = |s: &Option<String>| s.as_ref().map(|s| capped(s, cap));
    let mut kind = kind.clone();
    match &mut kind {
        EventKind::SessionMeta(m) => {
            *m = SessionMeta {
                agent: o(&m.agent),
                session_id: o(&m.session_id),
                cwd: o(&m.cwd),
                version: o(&m.version),
                model: o(&m.model),
            };
        }
        EventKind::ToolCall(t) => {
            t.name = c(&t.name);
            t.call_id = o(&t.call_id);
            t.arg_keys = t.arg_keys.iter().map(c).collect();
        }
        EventKind::ToolResult(t) => t.call_id = o(&t.call_id),
        EventKind::PermissionRequest(p) => {
            p.tool = c(&p.tool);
            p.call_id = o(&p.call_id);
        }
        EventKind::TurnBoundary(t) => t.reason = o(&t.reason),
        EventKind::SubagentRef(s) => s.child_id = c(&s.child_id),
        EventKind::Compaction(x) => x.compaction = o(&x.compaction),
        EventKind::Attachment(a) => a.attachment = c(&a.attachment),
        EventKind::Bookkeeping(t) | EventKind::Unknown(t) => t.type_name = c(&t.type_name),
        EventKind::UserMessage(_)
        | EventKind::AssistantText(_)
        | EventKind::Thinking(_)
        | EventKind::Usage(_)
        | EventKind::Other(_) => {}
    }
    kind
}

/// The body of an event: text as text, anything else as the store's own JSON; cut at
/// [`BODY_CAP`] on a UTF-8 boundary.
fn body(part: &Part<'_>) -> EventBody {
    let (kind, text, was_cut) = match part.body {
        Body::Text(text) => (BodyKind::Text, text.text.clone(), text.is_cut()),
        Body::Json(node) => (
            BodyKind::Json,
            serde_json::to_string(&node.to_value()).unwrap_or_default(),
            has_cut_string(node),
        ),
    };
    let kept = json::cut(&text, BODY_CAP);
    EventBody {
        kind,
        truncated: was_cut || kept.len() < text.len(),
        text: kept.to_owned(),
    }
}

fn has_cut_string(node: &Node) -> bool {
    match node {
        Node::Str(text) => text.is_cut(),
        Node::Array(items, _) => items.iter().any(has_cut_string),
        Node::Object(members, _) => members.iter().any(|(_, v)| has_cut_string(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
