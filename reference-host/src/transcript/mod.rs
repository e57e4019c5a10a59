//! The transcript reader: a pane's transcript file in, classified event headers, cursors and
//! bodies out. It knows nothing of frames, connections or tmux; `serve` asks it for a window, an
//! event or a pending call, and turns the answer into frames.
//!
//! Rules it keeps (the protocol's "Transcripts"): a window pages *backwards* from a cursor (or
//! the end of the file) and reads only what the page needs, so a 1 GiB file answers as fast as
//! a 1 MiB one; `read_bytes` bounds the bytes scanned, `frame_bytes` the encoded events (dropped
//! from the old end), and `last` the events counted (a run of bookkeeping records of one type is
//! one event, which `last` does not count); every string leaf of a header except its cursor and
//! kind is cut to `header_bytes` on a UTF-8 boundary; an event body is cut at 1 MiB. Every page
//! makes progress: its first record is always read, and its first event always placed, its
//! strings cut further when the frame needs it; a frame too small for the session and one event
//! cut to nothing is refused up front. A record the reader cannot classify is an `unknown`
//! event, counted, never an error; a file in no format the reader knows is refused
//! (`Unsupported`), never misread. Cursors are authenticated ([`cursor`]). One reader lives as
//! long as a connection and keeps a per-file memo (the file's identity, its format and its
//! session metadata) across requests.
//!
//! Modules: [`json`] (bounded record parser), [`scan`] (finding records), [`classify`] (records
//! to events, per store), [`ahead`] (where a message ends), [`header`] (headers, previews,
//! bodies), [`cursor`] (tokens), [`locate`] (which file is a pane's).

pub mod ahead;
pub mod classify;
pub mod cursor;
pub mod header;
pub mod json;
pub mod locate;
pub mod scan;

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use schema::transcript::{EventKind, SessionMeta};
use schema::{Cursor, EventHeader, PendingCall, WindowLimits};

use ahead::Ahead;
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

/// How many records from the head are read for the format and the session metadata, and within
/// how many bytes (a Claude Code file can open with dozens of bookkeeping records).
const HEAD_RECORDS: usize = 64;
const HEAD_BYTES: u64 = 256 * 1024;

/// How far back from the end a card looks for the pending call when the page has little but
/// bookkeeping: at most this many bytes.
const TAIL_BYTES: u64 = 1024 * 1024;

/// Why the reader could not answer.
#[derive(Debug)]
pub enum TranscriptError {
    /// The pane's transcript file does not exist.
    NotFound(PathBuf),
    /// The cursor no longer addresses its bytes, or was not minted here; says which.
    CursorInvalid(&'static str),
    /// The file is in no format this reader knows; says why.
    Unsupported(String),
    /// `frame_bytes` leaves no room for the session metadata and one event cut to nothing: the
    /// frame needs this many more bytes.
    FrameTooSmall { short: usize },
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
            TranscriptError::Unsupported(why) => f.write_str(why),
            TranscriptError::FrameTooSmall { short } => {
                write!(f, "the frame budget is {short} bytes short of one event")
            }
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
    /// The file's format, or why it has none the reader knows.
    format: Result<Format, String>,
    session: Option<SessionMeta>,
    /// The head read held every record the study reads: a file that grows is not studied again
    /// (until then, it is: the records that say what the file is may not be written yet).
    full_head: bool,
}

/// An open transcript.
struct Open<'a> {
    file: File,
    size: u64,
    /// Where its last complete record ends.
    end: u64,
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
            Some(m) => {
                m.dev == dev && m.ino == ino && size >= m.size && (m.full_head || size == m.size)
            }
            None => false,
        };
        if !fresh {
            let memo = study(&file, path, size, source.agent, (dev, ino)).map_err(io)?;
            self.memo.insert(path.to_owned(), memo);
        }
        let memo = self.memo.get_mut(path).expect("just inserted");
        memo.size = size;
        let format = memo.format.clone().map_err(TranscriptError::Unsupported)?;
        let session = memo.session.clone();
        let end = Backward::last_boundary(&file, size).map_err(io)?;
        Ok(Open {
            file,
            size,
            end,
            format,
            session,
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
        let header_cap = usize::try_from(limits.window.header_bytes).unwrap_or(usize::MAX);
        let session = open.session.clone();
        // The session metadata goes out with every page: its bytes come off the room first, and
        // what is left must hold one event however far its strings are cut.
        let session_size = session.as_ref().map_or(0, |meta| {
            serde_json::to_string(meta).map_or(usize::MAX, |s| s.len())
        });
        let floor = session_size.saturating_add(header::largest_cut());
        if limits.room < floor {
            return Err(TranscriptError::FrameTooSmall {
                short: floor - limits.room,
            });
        }
        // The first record to read, how many of its events to consider, and where the scan of
        // older records starts.
        let (first, scan_from) = match before {
            Some(cursor) => {
                let at = self.position(&open, cursor)?;
                let first = (at.part > 0).then_some((at.record, Some(at.part)));
                (first, at.record.offset)
            }
            None => (None, open.end),
        };
        Pager::new(self, &open, limits, header_cap, session, session_size)
            .run(first, scan_from)
            .map_err(io)
    }

    /// One event, with its body.
    pub fn event(
        &mut self,
        source: &Source<'_>,
        cursor: &Cursor,
    ) -> Result<EventHeader, TranscriptError> {
        let open = self.open(source)?;
        let position = self.position(&open, cursor)?;
        let record = position.record;
        let node = parse_record(&open.file, record, BODY_LIMITS);
        let ahead = Ahead::read(
            &open.file,
            open.format,
            record.offset + record.footprint(),
            open.end,
        )
        .map_err(|error| TranscriptError::Io {
            path: source.path.to_owned(),
            error,
        })?;
        let last_part = ahead.last_part(&classify::mark(open.format, node.as_ref()));
        let parts = parts_of(open.format, node.as_ref(), last_part);
        let part = parts
            .get(position.part as usize)
            .ok_or(TranscriptError::CursorInvalid(
                "the cursor's event is no longer in its record",
            ))?;
        let cap = WindowLimits::DEFAULT.header_bytes as usize;
        let mut event = header::header(part, cursor.clone(), cap);
        event.body = Some(header::body(part));
        Ok(event)
    }

    /// The call a blocked agent is waiting on, from the last `headers` events that are not
    /// bookkeeping (within the last `TAIL_BYTES`): the call the pane's stamps name
    /// ([`Wanted`]), else the newest tool call with no result after it. `None` when there is none.
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
        let mut scan = Backward::from(&open.file, open.end);
        let mut answered: Vec<String> = Vec::new();
        let mut seen = 0;
        let mut scanned = 0u64;
        while seen < headers && scanned < TAIL_BYTES {
            let Some(record) = scan.next_record().map_err(io)? else {
                break;
            };
            scanned += record.footprint();
            let node = parse_record(&open.file, record, WINDOW_LIMITS);
            // Whether a message ended does not move a tool call: its usage comes after it.
            let parts = parts_of(open.format, node.as_ref(), false);
            for (index, part) in parts.iter().enumerate().rev() {
                match &part.kind {
                    EventKind::Bookkeeping(_) => continue,
                    EventKind::ToolResult(result) => {
                        answered.extend(result.call_id.clone());
                    }
                    EventKind::ToolCall(call) if wanted.matches(open.format, call, &answered) => {
                        return Ok(Some(full_call(&open, record, index)));
                    }
                    _ => {}
                }
                seen += 1;
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
    /// The tool, as the agent's hook names it: only calls of that tool match (under the
    /// store's own name for it, [`Format::same_tool`]), so a call of another tool never lends its
    /// input.
    pub tool: Option<&'a str>,
}

impl Wanted<'_> {
    fn matches(
        &self,
        format: Format,
        call: &schema::transcript::ToolCall,
        answered: &[String],
    ) -> bool {
        let id = call.call_id.as_deref();
        let by_id = match self.call_id {
            Some(want) => id == Some(want),
            None => !id.is_some_and(|id| answered.iter().any(|a| a == id)),
        };
        by_id
            && self
                .tool
                .is_none_or(|tool| format.same_tool(tool, &call.name))
    }
}

/// Why a file whose first record is one JSON document's opening line cannot be served.
const ONE_DOCUMENT: &str = "the transcript is one JSON document (as Gemini CLI saved its chats \
     before it wrote JSON lines), not a JSON-lines store this host pages";
/// Why a Gemini CLI chat in JSON lines cannot be served (its format: google-gemini/gemini-cli
/// PR #23749, v0.39.0; golden/fixtures/transcripts/README.md).
const GEMINI_LINES: &str = "the transcript is a Gemini CLI chat in JSON lines, which rewrites a \
     message by appending it again whole and undoes turns with a rewind marker: which line is a \
     message's final form is only known from the lines after it, so a window read backwards \
     cannot page it exactly, and this host does not serve it";
/// Why a file in no known format cannot be served.
const UNKNOWN_FORMAT: &str = "the transcript's records are in no format this host reads \
     (Claude Code's or Codex's JSON lines)";

/// Reads what a file's memo holds: its format (or why it has none this reader knows) and its
/// session metadata, from its first records.
fn study(
    file: &File,
    path: &Path,
    size: u64,
    agent: &str,
    (dev, ino): (u64, u64),
) -> std::io::Result<Memo> {
    // Only the head: records past it (or one record that runs past it) are no metadata.
    let end = Backward::last_boundary(file, size.min(HEAD_BYTES))?;
    let mut forward = Forward::from_head(file, end);
    let mut head = Vec::new();
    let mut first_line: Option<Vec<u8>> = None;
    let mut read = 0;
    while read < HEAD_RECORDS {
        let Some(record) = forward.next_record()? else {
            break;
        };
        read += 1;
        if first_line.is_none() {
            let mut bytes = vec![0u8; usize::try_from(record.len.min(16)).unwrap_or(16)];
            std::io::Read::read_exact(&mut RecordReader::new(file, record), &mut bytes)?;
            first_line = Some(bytes);
        }
        if let Some(node) = parse_record(file, record, WINDOW_LIMITS) {
            head.push(node);
        }
    }
    let document = first_line
        .as_deref()
        .is_some_and(|line| matches!(line.trim_ascii(), b"{" | b"["));
    // The file's own records decide, not the pane's agent: a pane can be named for one agent
    // and point at another's file (a wrapper, a resumed session, a stale stamp), and a file read
    // in a format it is not in is misread line by line. The agent decides only while the head
    // holds no JSON record at all (an empty file still to be written, a first line still torn).
    let format = if document {
        Err(ONE_DOCUMENT.to_owned())
    } else if head.first().is_some_and(classify::is_gemini_chat) {
        Err(GEMINI_LINES.to_owned())
    } else {
        match head.iter().find_map(Format::sniff) {
            Some(format) => Ok(format),
            None if head.is_empty() => match Format::of_agent(agent) {
                Some(format) => Ok(format),
                None if read == 0 => Ok(Format::Claude),
                None => Err(UNKNOWN_FORMAT.to_owned()),
            },
            None => Err(UNKNOWN_FORMAT.to_owned()),
        }
    };
    let stem = path.file_stem().and_then(|stem| stem.to_str());
    let session = format
        .as_ref()
        .ok()
        .and_then(|format| classify::session_meta(*format, &head, stem));
    Ok(Memo {
        dev,
        ino,
        size,
        format,
        session,
        full_head: read == HEAD_RECORDS || size >= HEAD_BYTES,
    })
}

fn parse_record(file: &File, record: Record, limits: Limits) -> Option<Node> {
    json::parse(RecordReader::new(file, record), limits).ok()
}

/// The events of a parsed record, or one `unknown` event for a record that is not JSON.
fn parts_of(format: Format, node: Option<&Node>, last_part: bool) -> Vec<Part<'_>> {
    match node {
        Some(node) => classify::classify(format, node, last_part),
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
    let parts = parts_of(open.format, node.as_ref(), false);
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

mod pager;
use pager::Pager;

#[cfg(test)]
mod samples;
#[cfg(test)]
mod tests;
