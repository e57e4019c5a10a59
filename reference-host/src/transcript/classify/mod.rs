//! From one parsed record to the events it holds, for the served stores.
//!
//! A record yields zero or more events, in the store's own order (one Claude Code line can hold
//! text, thinking and several tool calls). What a classifier cannot place becomes an `unknown`
//! event carrying the record's type name, never an error: stores grow new record types often,
//! and a window counts them instead of failing. A record type a classifier knows to be the
//! store's own bookkeeping (progress ticks, file snapshots, titles, injected context) is a
//! `bookkeeping` event, which a window folds with its neighbours of the same type.
//!
//! A record's events depend on the record alone, with one exception: whether a Claude Code
//! assistant record is the last part of its message (its usage is counted once, on that part).
//! The caller decides that from the [`Mark`]s of the records after it ([`last_part`]), so the
//! events of a record never change once its message is known to be complete; a record whose
//! message may still go on (the file ends within the look-ahead) gets its usage appended later,
//! after its other events, so every cursor minted for it stays valid.

mod claude;
mod codex;

use schema::transcript::{Bookkeeping, EventKind, SessionMeta, TypeName};
use std::borrow::Cow;

use super::json::{Node, Text};

/// A store format the reader classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Claude Code's project JSONL.
    Claude,
    /// Codex's rollout JSONL (with the `{timestamp, type, payload}` envelope, or the bare records
    /// of rollouts written before it).
    Codex,
}

impl Format {
    /// The format of a pane's agent, when its name says; `None` for an agent to sniff.
    pub fn of_agent(agent: &str) -> Option<Format> {
        match agent {
            "claude" | "claude-code" => Some(Format::Claude),
            "codex" => Some(Format::Codex),
            _ => None,
        }
    }

    /// The format a store's first record says it is in; `None` for a record no served store
    /// writes. Codex lines are `{timestamp, type, payload}` (or, before the envelope, a bare
    /// `{id, timestamp, ...}` first line); Claude Code lines carry a known record `type` with its
    /// `uuid`/`sessionId`, or are one of its bookkeeping records.
    pub fn sniff(record: &Node) -> Option<Format> {
        let type_name = record.get("type").and_then(Node::as_str);
        if type_name.is_some() && record.get("payload").is_some() {
            return Some(Format::Codex);
        }
        if type_name.is_none()
            && record.get("id").is_some_and(|id| id.as_str().is_some())
            && record.get("timestamp").is_some()
        {
            return Some(Format::Codex);
        }
        claude::looks_like(record).then_some(Format::Claude)
    }

    /// True when a tool name stamped by the agent's hook (`@agent_pending_tool`) names the call
    /// `call` of the store. Codex's hooks call every shell tool `Bash` (openai/codex PR #17563,
    /// `codex-rs/hooks/src/events/permission_request.rs`), while its rollout names the function
    /// the model called: `shell`, `shell_command`, `exec_command`, `local_shell` or
    /// `container.exec`; its patch tool is `apply_patch` in both (hooks' matcher aliases `Edit`
    /// and `Write`).
    pub fn same_tool(self, stamped: &str, call: &str) -> bool {
        if stamped == call {
            return true;
        }
        match self {
            Format::Claude => false,
            Format::Codex => codex::same_tool(stamped, call),
        }
    }
}

/// True for the first line of a Gemini CLI chat in JSON lines: its session header
/// (`{sessionId, projectHash, startTime, lastUpdated, kind?}`, gemini-cli
/// `chatRecordingService.ts`), which no served store writes.
pub fn is_gemini_chat(record: &Node) -> bool {
    record.get("type").is_none()
        && record.get("sessionId").is_some()
        && record.get("projectHash").is_some()
}

/// What a record says of itself to the records before it: enough to know where a Claude Code
/// message ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// A part of an assistant message: its `message.id`, when it has one.
    Part(Option<String>),
    /// A record no message goes on after: a typed prompt, a turn boundary, a compaction.
    Break,
    /// Anything else: passed over.
    Other,
}

/// The mark of a parsed record (a record that is not JSON is [`Mark::Other`]).
pub fn mark(format: Format, record: Option<&Node>) -> Mark {
    match (format, record) {
        (Format::Claude, Some(record)) => claude::mark(record),
        _ => Mark::Other,
    }
}

/// How far the reader looks past a record to find where its message ends: this many records, and
/// at most [`AHEAD_BYTES`] of them (the first always counts).
pub const AHEAD_RECORDS: usize = 32;
/// See [`AHEAD_RECORDS`].
pub const AHEAD_BYTES: u64 = 64 * 1024;

/// True when the record marked `this` is the last part of its message, from the marks of the
/// records after it within the look-ahead (`following`, in file order) and whether those reach the
/// end of the file (`at_end`): a later part of the same message says no; another message, a
/// prompt or a boundary says yes; a look-ahead that ran out of records it may read says yes; the
/// end of the file says not yet (false), since the message may still be written.
pub fn last_part<'m>(
    this: &Mark,
    following: impl IntoIterator<Item = &'m Mark>,
    at_end: bool,
) -> bool {
    let Mark::Part(Some(id)) = this else {
        return true;
    };
    for mark in following {
        match mark {
            Mark::Part(Some(other)) if other == id => return false,
            Mark::Part(_) | Mark::Break => return true,
            Mark::Other => {}
        }
    }
    !at_end
}

/// What an event's body is made of.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// Prose: the text itself.
    Text(&'a Text),
    /// The store's own JSON, carried as text.
    Json(&'a Node),
}

/// One event of a record.
#[derive(Debug, Clone)]
pub struct Part<'a> {
    /// The kind and its own fields (strings not yet capped).
    pub kind: EventKind,
    /// The store's timestamp string.
    pub ts: Option<&'a str>,
    /// The text whose first line is the preview: the store's own, or one made from it (the
    /// output inside a Codex JSON-text tool result).
    pub preview: Option<Cow<'a, str>>,
    /// The content an `event` request returns.
    pub body: Body<'a>,
    /// A tool call's arguments: the agent's own object, or (Codex) the JSON text holding it.
    pub args: Option<&'a Node>,
}

impl<'a> Part<'a> {
    fn new(kind: EventKind, ts: Option<&'a str>, body: Body<'a>) -> Part<'a> {
        Part {
            kind,
            ts,
            preview: None,
            body,
            args: None,
        }
    }

    fn with_args(mut self, args: Option<&'a Node>) -> Part<'a> {
        self.args = args;
        self
    }

    fn with_preview(mut self, preview: Option<&'a str>) -> Part<'a> {
        self.preview = preview.map(Cow::Borrowed);
        self
    }

    fn with_made_preview(mut self, preview: Option<Cow<'a, str>>) -> Part<'a> {
        self.preview = preview;
        self
    }
}

/// The events of one record, in the store's order. `last_part` says whether a Claude Code
/// assistant record ends its message ([`last_part`]); other records ignore it.
pub fn classify(format: Format, record: &Node, last_part: bool) -> Vec<Part<'_>> {
    match format {
        Format::Claude => claude::classify(record, last_part),
        Format::Codex => codex::classify(record),
    }
}

/// The events of a record that is not JSON at all: one `unknown` event.
pub fn unparseable() -> EventKind {
    unknown("")
}

/// The session metadata found in the first records of a store; `stem` is the file's name without
/// its extension (Claude Code names a session's file after the session).
pub fn session_meta(format: Format, head: &[Node], stem: Option<&str>) -> Option<SessionMeta> {
    match format {
        Format::Claude => claude::session_meta(head, stem),
        Format::Codex => codex::session_meta(head),
    }
}

fn unknown(type_name: &str) -> EventKind {
    EventKind::Unknown(TypeName {
        type_name: type_name.to_owned(),
    })
}

fn bookkeeping(type_name: &str) -> EventKind {
    EventKind::Bookkeeping(Bookkeeping {
        type_name: type_name.to_owned(),
        records: 1,
    })
}

/// The text between `<tag>` and `</tag>` in `text`, when both are there.
fn tagged<'t>(text: &'t str, tag: &str) -> Option<&'t str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(&text[start..end])
}

/// True when `text`, after leading whitespace, starts with `prefix`, ASCII case ignored.
fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    let text = text.trim_start().as_bytes();
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn string(node: Option<&Node>) -> Option<String> {
    node.and_then(Node::as_str).map(str::to_owned)
}

/// The most argument keys a tool call's header lists.
pub const ARG_KEYS: usize = 64;

/// The keys of an object, in the agent's order (at most [`ARG_KEYS`]).
fn keys(node: Option<&Node>) -> Vec<String> {
    node.map(Node::members)
        .unwrap_or_default()
        .iter()
        .take(ARG_KEYS)
        .map(|(k, _)| k.clone())
        .collect()
}

/// The first string value of an object (a tool call's command or path): its preview.
fn first_string(node: Option<&Node>) -> Option<&str> {
    node?.members().iter().find_map(|(_, v)| v.as_str())
}

/// The size of a content value: a string's length, or the text of its text blocks.
fn content_size(node: Option<&Node>) -> u64 {
    match node {
        None | Some(Node::Null) => 0,
        Some(Node::Str(text)) => text.len,
        Some(Node::Array(items, _)) => items
            .iter()
            .map(|block| match block.get("text") {
                Some(text) => text.size(),
                None => block.size(),
            })
            .sum(),
        Some(other) => other.size(),
    }
}

/// The first text of a content value (a string, or the first text block).
fn content_text(node: Option<&Node>) -> Option<&Text> {
    match node? {
        Node::Str(text) => Some(text),
        Node::Array(items, _) => items
            .iter()
            .find_map(|block| block.get("text").and_then(Node::as_text)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::json::{Limits, parse_slice};

    pub(super) fn node(text: &str) -> Node {
        parse_slice(
            text.as_bytes(),
            Limits {
                string: 1 << 16,
                total: 1 << 20,
                depth: 64,
            },
        )
        .unwrap()
    }

    pub(super) fn kinds(parts: &[Part<'_>]) -> Vec<String> {
        parts.iter().map(|p| p.kind.as_str().to_owned()).collect()
    }

    #[test]
    fn the_format_is_sniffed_from_the_record_shape() {
        let sniff = |text: &str| Format::sniff(&node(text));
        assert_eq!(
            sniff(r#"{"timestamp":"t","type":"session_meta","payload":{}}"#),
            Some(Format::Codex)
        );
        // A rollout written before the envelope starts with its bare session record.
        assert_eq!(
            sniff(
                r#"{"id":"5973b6c0","timestamp":"2025-07-01T10:00:00.123Z","instructions":null}"#
            ),
            Some(Format::Codex)
        );
        assert_eq!(
            sniff(r#"{"type":"user","sessionId":"s","uuid":"u","message":{"content":"hi"}}"#),
            Some(Format::Claude)
        );
        assert_eq!(
            sniff(r#"{"type":"queue-operation","operation":"enqueue","sessionId":"s"}"#),
            Some(Format::Claude)
        );
        // A Gemini CLI chat's first line, and anything else no served store writes.
        assert_eq!(
            sniff(r#"{"sessionId":"s","projectHash":"h","startTime":"t"}"#),
            None
        );
        assert_eq!(sniff(r#"{"role":"user","message":{"content":[]}}"#), None);
        assert_eq!(Format::of_agent("codex"), Some(Format::Codex));
        assert_eq!(Format::of_agent("gemini"), None);
    }

    #[test]
    fn a_message_ends_where_the_records_after_it_say() {
        let part = |id: &str| Mark::Part(Some(id.to_owned()));
        let this = part("msg_1");
        // Another part of the same message follows, past a progress tick.
        assert!(!last_part(&this, &[Mark::Other, part("msg_1")], false));
        // Another message, a prompt or a boundary ends it.
        assert!(last_part(&this, &[Mark::Other, part("msg_2")], false));
        assert!(last_part(&this, &[Mark::Break], true));
        // The look-ahead ran out of records it may read: ended; the file ended: not yet.
        assert!(last_part(&this, &[Mark::Other], false));
        assert!(!last_part(&this, &[Mark::Other], true));
        assert!(!last_part(&this, &[], true));
        // A part without an id stands alone.
        assert!(last_part(&Mark::Part(None), &[], true));
    }

    #[test]
    fn tool_names_of_a_codex_hook_match_the_rollouts_calls() {
        for call in [
            "exec_command",
            "shell",
            "shell_command",
            "local_shell",
            "container.exec",
        ] {
            assert!(Format::Codex.same_tool("Bash", call), "{call}");
        }
        assert!(!Format::Codex.same_tool("Bash", "apply_patch"));
        assert!(Format::Codex.same_tool("Edit", "apply_patch"));
        assert!(!Format::Claude.same_tool("Bash", "exec_command"));
        assert!(Format::Claude.same_tool("Bash", "Bash"));
    }
}
