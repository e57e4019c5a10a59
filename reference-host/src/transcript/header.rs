//! Event headers and bodies from classified parts: every string leaf of a header but its cursor
//! and kind cut to a cap on a UTF-8 boundary, previews made printable, bodies cut at 1 MiB.
//!
//! A preview is the first line of the content that has something on it, after terminal escape
//! sequences (CSI, OSC, and ESC with one byte) and every other control character are taken out:
//! a local command's output keeps its colours in the store (Claude Code writes `\u001b[2m` in its
//! `/compact` output), and a client must never receive them.

use std::borrow::Cow;
use std::sync::OnceLock;

use schema::transcript::{
    Bookkeeping, EventKind, SessionMeta, ToolCall, TurnBoundary, TypeName, Usage,
};
use schema::{BodyKind, Boundary, Cursor, EventBody, EventHeader};

use super::BODY_CAP;
use super::classify::{Body, Part};
use super::json::{self, Node};

/// The longest cursor the reader mints, in characters: room held back for a window's `older`.
pub const CURSOR_MAX: usize = 72;

/// The header of an event: strings cut to `cap`, body not set.
pub fn header(part: &Part<'_>, cursor: Cursor, cap: usize) -> EventHeader {
    EventHeader {
        cursor,
        kind: cap_kind(&part.kind, cap),
        ts: part.ts.map(|ts| capped(ts, cap)),
        preview: part.preview.as_deref().and_then(|text| preview(text, cap)),
        body: None,
    }
}

/// The header of a run of `records` bookkeeping records of type `type_name`, addressed by
/// `cursor` (its oldest record, whose `ts` and `preview` it shows).
pub fn fold(
    type_name: &str,
    records: u32,
    cursor: Cursor,
    ts: Option<&str>,
    preview_text: Option<&str>,
    cap: usize,
) -> EventHeader {
    EventHeader {
        cursor,
        kind: EventKind::Bookkeeping(Bookkeeping {
            type_name: capped(type_name, cap),
            records,
        }),
        ts: ts.map(|ts| capped(ts, cap)),
        preview: preview_text.and_then(|text| preview(text, cap)),
        body: None,
    }
}

/// The encoded size of a header as a window carries it (with the comma that separates it).
pub fn size(header: &EventHeader) -> usize {
    serde_json::to_string(header).map_or(usize::MAX, |s| s.len()) + 1
}

/// The largest any header can be once every string it may cut is cut to nothing: a window
/// whose frame cannot hold its session and one such header cannot make progress, and is refused.
pub fn largest_cut() -> usize {
    static LARGEST: OnceLock<usize> = OnceLock::new();
    *LARGEST.get_or_init(|| {
        let empty = || Some(String::new());
        let kinds = [
            EventKind::ToolCall(ToolCall {
                name: String::new(),
                call_id: empty(),
                arg_keys: vec![String::new(); super::classify::ARG_KEYS],
                bytes: u64::MAX,
            }),
            EventKind::Usage(Usage {
                input: Some(u64::MAX),
                output: Some(u64::MAX),
                total: Some(u64::MAX),
                context_window: Some(u64::MAX),
                cost_usd: Some(f64::MAX),
            }),
            EventKind::SessionMeta(SessionMeta {
                agent: empty(),
                session_id: empty(),
                cwd: empty(),
                version: empty(),
                model: empty(),
            }),
            EventKind::TurnBoundary(TurnBoundary {
                boundary: Boundary::End,
                reason: empty(),
            }),
            EventKind::Bookkeeping(Bookkeeping {
                type_name: String::new(),
                records: u32::MAX,
            }),
            EventKind::Unknown(TypeName {
                type_name: String::new(),
            }),
        ];
        kinds
            .into_iter()
            .map(|kind| {
                size(&EventHeader {
                    cursor: Cursor("x".repeat(CURSOR_MAX)),
                    kind,
                    ts: empty(),
                    preview: empty(),
                    body: None,
                })
            })
            .max()
            .unwrap_or(usize::MAX)
    })
}

/// `make(cap)` at the largest cap up to `cap` whose header takes at most `room` bytes; `None`
/// when even a cap of 0 does not fit.
pub fn fitted(
    cap: usize,
    room: usize,
    make: impl Fn(usize) -> EventHeader,
) -> Option<(EventHeader, usize)> {
    let full = make(cap);
    let full_size = size(&full);
    if full_size <= room {
        return Some((full, full_size));
    }
    // The size only grows with the cap: the largest cap below `cap` that fits, by bisection.
    let (mut lo, mut hi) = (0usize, cap);
    let mut best = None;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let header = make(mid);
        let bytes = size(&header);
        if bytes <= room {
            best = Some((header, bytes));
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    best
}

/// The preview of a text: its first line with something on it, printable, cut to `cap`.
pub fn preview(text: &str, cap: usize) -> Option<String> {
    let text = printable(text);
    first_line(&text).map(|line| capped(line, cap))
}

/// The first line of a text that has something on it, without trailing whitespace.
fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim_end)
        .find(|line| !line.trim_start().is_empty())
}

/// `text` without terminal escape sequences and control characters (a tab becomes a space;
/// line breaks stay, for `first_line`).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push(' '),
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC (and the other strings): up to BEL or ESC \.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                // ESC and one byte (a charset, a keypad mode); or a lone ESC at the end.
                _ => {}
            },
            // A C1 CSI is a CSI too.
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

pub fn capped(text: &str, cap: usize) -> String {
    json::cut(text, cap).to_owned()
}

/// Every string of a kind's own fields cut to `cap`.
fn cap_kind(kind: &EventKind, cap: usize) -> EventKind {
    let c = |s: &String| capped(s, cap);
    let o = |s: &Option<String>| s.as_ref().map(|s| capped(s, cap));
    let mut kind = kind.clone();
    match &mut kind {
        EventKind::SessionMeta(m) => *m = cap_session(m, cap),
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
        EventKind::Bookkeeping(b) => b.type_name = c(&b.type_name),
        EventKind::Unknown(t) => t.type_name = c(&t.type_name),
        EventKind::UserMessage(_)
        | EventKind::AssistantText(_)
        | EventKind::Thinking(_)
        | EventKind::Usage(_)
        | EventKind::Other(_) => {}
    }
    kind
}

/// The session metadata with every string cut to `cap`.
pub fn cap_session(meta: &SessionMeta, cap: usize) -> SessionMeta {
    let o = |s: &Option<String>| s.as_ref().map(|s| capped(s, cap));
    SessionMeta {
        agent: o(&meta.agent),
        session_id: o(&meta.session_id),
        cwd: o(&meta.cwd),
        version: o(&meta.version),
        model: o(&meta.model),
    }
}

/// The body of an event: text as text, anything else as the store's own JSON; cut at
/// [`BODY_CAP`] on a UTF-8 boundary.
pub fn body(part: &Part<'_>) -> EventBody {
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
mod tests {
    use super::*;

    #[test]
    fn previews_carry_no_escape_or_control_bytes() {
        let cases = [
            (
                "\u{1b}[2mCompacted (ctrl+o to see full summary)\u{1b}[22m",
                "Compacted (ctrl+o to see full summary)",
            ),
            ("\u{1b}]0;title\u{7}done", "done"),
            ("\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\", "link"),
            ("a\tb\u{0}c\u{7f}d\u{9b}1mE", "a bcdE"),
            ("\u{1b}[1m\u{1b}[0m\nsecond line", "second line"),
            ("plain", "plain"),
        ];
        for (text, want) in cases {
            let got = preview(text, 256).unwrap();
            assert_eq!(got, want, "{text:?}");
            assert!(!got.chars().any(char::is_control), "{got:?}");
        }
        assert_eq!(
            preview("\u{1b}[2m\u{1b}[22m", 256),
            None,
            "nothing printable"
        );
    }

    #[test]
    fn a_header_too_big_for_its_room_is_cut_to_the_largest_cap_that_fits() {
        let make = |cap: usize| EventHeader {
            cursor: Cursor("c".into()),
            kind: EventKind::UserMessage(schema::transcript::UserMessage {
                bytes: 1,
                attachments: 0,
            }),
            ts: None,
            preview: Some(capped(&"p".repeat(300), cap)),
            body: None,
        };
        let full = size(&make(256));
        let (header, bytes) = fitted(256, full - 10, make).unwrap();
        assert_eq!(bytes, full - 10);
        assert_eq!(header.preview.unwrap().len(), 246);
        assert!(fitted(256, 10, make).is_none(), "not even a cap of 0");
    }

    #[test]
    fn the_largest_cut_header_bounds_every_kind_at_cap_zero() {
        let worst = largest_cut();
        let call = EventHeader {
            cursor: Cursor("x".repeat(CURSOR_MAX)),
            kind: EventKind::ToolCall(ToolCall {
                name: String::new(),
                call_id: Some(String::new()),
                arg_keys: vec![String::new(); 64],
                bytes: u64::MAX,
            }),
            ts: Some(String::new()),
            preview: Some(String::new()),
            body: None,
        };
        assert!(worst >= size(&call));
        assert!(worst < 600, "{worst}");
    }
}
