//! From one parsed record to the events it holds, for the two served stores.
//!
//! A record yields zero or more events, in the store's own order (one Claude Code line can hold
//! text, thinking and several tool calls). What a classifier cannot place becomes an `unknown`
//! event carrying the record's type name, never an error: stores grow new record types often,
//! and a window counts them instead of failing.

mod claude;
mod codex;

use schema::transcript::{EventKind, SessionMeta, TypeName};

use super::json::{Node, Text};

/// A store format the reader classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Claude Code's project JSONL.
    Claude,
    /// Codex's rollout JSONL.
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

    /// The format a record looks like: Codex lines are `{timestamp, type, payload}`.
    pub fn sniff(record: &Node) -> Format {
        match (record.get("type"), record.get("payload")) {
            (Some(Node::Str(_)), Some(_)) => Format::Codex,
            _ => Format::Claude,
        }
    }
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
    /// The text whose first line is the preview.
    pub preview: Option<&'a str>,
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
        self.preview = preview;
        self
    }
}

/// The events of one record, in the store's order.
pub fn classify(format: Format, record: &Node) -> Vec<Part<'_>> {
    match format {
        Format::Claude => claude::classify(record),
        Format::Codex => codex::classify(record),
    }
}

/// The events of a record that is not JSON at all: one `unknown` event.
pub fn unparseable() -> EventKind {
    unknown("")
}

/// The session metadata found in the first records of a store.
pub fn session_meta(format: Format, head: &[Node]) -> Option<SessionMeta> {
    match format {
        Format::Claude => claude::session_meta(head),
        Format::Codex => codex::session_meta(head),
    }
}

fn unknown(type_name: &str) -> EventKind {
    EventKind::Unknown(TypeName {
        type_name: type_name.to_owned(),
    })
}

fn bookkeeping(type_name: &str) -> EventKind {
    EventKind::Bookkeeping(TypeName {
        type_name: type_name.to_owned(),
    })
}

fn string(node: Option<&Node>) -> Option<String> {
    node.and_then(Node::as_str).map(str::to_owned)
}

/// The keys of an object, in the agent's order (at most 64).
fn keys(node: Option<&Node>) -> Vec<String> {
    node.map(Node::members)
        .unwrap_or_default()
        .iter()
        .take(64)
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
        assert_eq!(
            Format::sniff(&node(
                r#"{"timestamp":"t","type":"session_meta","payload":{}}"#
            )),
            Format::Codex
        );
        assert_eq!(
            Format::sniff(&node(r#"{"type":"user","message":{"content":"hi"}}"#)),
            Format::Claude
        );
        assert_eq!(Format::of_agent("codex"), Some(Format::Codex));
        assert_eq!(Format::of_agent("gemini"), None);
    }
}
