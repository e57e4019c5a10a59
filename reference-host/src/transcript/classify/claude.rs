//! Claude Code's project JSONL (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! The format is documented by Anthropic as internal. What this reads is its shape as real files
//! of Claude Code 2.0.27 to 2.1.2xx show it (sources: golden/fixtures/transcripts/README.md,
//! which lists the files that reproduce each version's records, and where each fact comes from):
//!
//! - `user`, `assistant`, `system`, `attachment` and `progress` records carry the envelope
//!   (`sessionId`, `cwd`, `version`, `uuid`, ...; first in 2.0 and early 2.1, last from 2.1.76:
//!   read by key, never by position). Other records are flat bookkeeping (`summary`,
//!   `file-history-snapshot`, `queue-operation`, `pr-link`, `last-prompt`, `tag`,
//!   `worktree-state`, `content-replacement`, titles, modes) and can come first in a file.
//! - One API response is written as one record per content block, every one sharing
//!   `message.id`, carrying `stop_reason: null` and a copy of `usage` whose `output_tokens` is
//!   final, when ever, only on the last part. So usage is counted once per message, on its last
//!   part ([`super::last_part`]), and turn ends come from `system` records: `turn_duration`
//!   (2.1), or `stop_hook_summary` in 2.0 files, which write no `turn_duration`.
//! - A compaction writes a `compact_boundary` system record, then a user record with
//!   `isCompactSummary` ("This session is being continued..."), and for `/compact` the command's
//!   echo (`<command-name>` tags) and its output (`<local-command-stdout>`, with ANSI escapes):
//!   bookkeeping, not the person's words.
//! - A failed API call ends its turn with a synthetic assistant record (`model: "<synthetic>"`,
//!   `isApiErrorMessage`, `error` such as `rate_limit`); an interrupt is a user text
//!   `[Request interrupted by user...]`.

use schema::transcript::{
    AssistantText, Attachment, Compaction, EventKind, SessionMeta, SubagentRef, Thinking, ToolCall,
    ToolResult, TurnBoundary, Usage, UserMessage,
};
use schema::{Boundary, ToolStatus};

use super::{
    Body, Mark, Part, bookkeeping, content_size, content_text, first_string, keys, string, tagged,
    unknown,
};
use crate::transcript::json::{Node, Text};

/// Record types that are the store's own bookkeeping, not conversation (flat side records).
const BOOKKEEPING: &[&str] = &[
    "summary",
    "file-history-snapshot",
    "file-history-delta",
    "queue-operation",
    "progress",
    "last-prompt",
    "custom-title",
    "ai-title",
    "agent-name",
    "agent-color",
    "agent-setting",
    "tag",
    "pr-link",
    "worktree-state",
    "content-replacement",
    "mode",
    "permission-mode",
    "attribution-snapshot",
    "speculation-accept",
    "cost-state",
    "saved_hook_context",
];

/// Attachment records that bring something into the conversation (a file, an image, text the
/// person selected or queued); the rest (hook outcomes, reminders, skill listings, ...) are
/// bookkeeping.
const ATTACHMENTS: &[&str] = &[
    "file",
    "directory",
    "image",
    "pdf",
    "selected_lines_in_ide",
    "opened_file_in_ide",
    "edited_text_file",
    "edited_image_file",
    "queued_command",
    "mcp_resource",
];

/// Record types Claude Code writes: a record of one of these carrying Claude's envelope
/// (`uuid` or `sessionId`) or its `message` object says a file is Claude Code's (Gemini CLI's
/// chat lines have a `type` of `user` too, but their text is in `content`).
const TYPES: &[&str] = &["user", "assistant", "system", "attachment"];

/// True when `record` is one Claude Code writes.
pub fn looks_like(record: &Node) -> bool {
    let Some(type_name) = record.get("type").and_then(Node::as_str) else {
        return false;
    };
    BOOKKEEPING.contains(&type_name)
        || (TYPES.contains(&type_name)
            && (record.get("uuid").is_some()
                || record.get("sessionId").is_some()
                || record
                    .get("message")
                    .is_some_and(|m| m.get("content").is_some())))
}

pub fn classify(record: &Node, last_part: bool) -> Vec<Part<'_>> {
    let ts = record.get("timestamp").and_then(Node::as_str);
    let type_name = record.get("type").and_then(Node::as_str).unwrap_or("");
    match type_name {
        "user" => user(record, ts),
        "assistant" => assistant(record, ts, last_part),
        "system" => vec![system(record, ts)],
        "attachment" => vec![attachment(record, ts)],
        t if BOOKKEEPING.contains(&t) => {
            vec![
                Part::new(bookkeeping(t), ts, Body::Json(record))
                    .with_preview(side_preview(record)),
            ]
        }
        other => vec![Part::new(unknown(other), ts, Body::Json(record))],
    }
}

/// What a person reads first of a side record: a title, a tag, a link, a queued prompt.
fn side_preview(record: &Node) -> Option<&str> {
    [
        "summary",
        "customTitle",
        "aiTitle",
        "agentName",
        "tag",
        "prUrl",
        "lastPrompt",
        "content",
    ]
    .iter()
    .find_map(|key| record.get(key).and_then(Node::as_str))
}

/// The mark of a record for the look-ahead of the messages before it.
pub fn mark(record: &Node) -> Mark {
    match record.get("type").and_then(Node::as_str) {
        Some("assistant") => Mark::Part(string(record.get("message").and_then(|m| m.get("id")))),
        Some("user") => {
            let meta = record.get("isMeta").is_some_and(Node::is_true);
            let results_only = match record.get("message").and_then(|m| m.get("content")) {
                Some(Node::Array(blocks, _)) => {
                    !blocks.is_empty() && blocks.iter().all(|b| block_type(b) == "tool_result")
                }
                _ => false,
            };
            if meta || results_only {
                Mark::Other
            } else {
                Mark::Break
            }
        }
        Some("system") => match record.get("subtype").and_then(Node::as_str) {
            Some("turn_duration" | "stop_hook_summary" | "compact_boundary") => Mark::Break,
            _ => Mark::Other,
        },
        _ => Mark::Other,
    }
}

fn attachment<'a>(record: &'a Node, ts: Option<&'a str>) -> Part<'a> {
    let attachment = record.get("attachment");
    let name = attachment
        .and_then(|a| a.get("type"))
        .and_then(Node::as_str)
        .unwrap_or("attachment");
    if !ATTACHMENTS.contains(&name) {
        let kind = bookkeeping(&format!("attachment:{name}"));
        return Part::new(kind, ts, Body::Json(attachment.unwrap_or(record)));
    }
    let kind = EventKind::Attachment(Attachment {
        attachment: name.to_owned(),
        bytes: attachment.map_or(0, Node::size),
    });
    let preview = attachment.and_then(|a| {
        ["filename", "path", "prompt", "content"]
            .iter()
            .find_map(|key| a.get(key).and_then(Node::as_str))
    });
    Part::new(kind, ts, Body::Json(attachment.unwrap_or(record))).with_preview(preview)
}

/// What a user record's text is, when it is not the person's words.
enum Said<'a> {
    /// The person's own words.
    Words,
    /// A slash command's echo: the command (`/compact`).
    Command(Option<&'a str>),
    /// A local command's output (with the terminal's escapes, cleaned from the preview).
    CommandOutput(&'a str),
    /// The interrupt marker: the turn ended there.
    Interrupted,
}

/// Classifies the text of a user record by the markers Claude Code wraps its own texts in.
fn said(text: &str) -> Said<'_> {
    let trimmed = text.trim_start();
    if trimmed.starts_with("[Request interrupted by user") {
        return Said::Interrupted;
    }
    if trimmed.starts_with("<command-name>") || trimmed.starts_with("<command-message>") {
        return Said::Command(tagged(text, "command-name").map(str::trim));
    }
    for tag in ["local-command-stdout", "local-command-stderr"] {
        if trimmed.starts_with(&format!("<{tag}>")) {
            return Said::CommandOutput(tagged(text, tag).unwrap_or(text));
        }
    }
    Said::Words
}

/// The event of a user text (a string content or a text block).
fn user_text<'a>(text: &'a Text, ts: Option<&'a str>, attachments: usize) -> Part<'a> {
    match said(&text.text) {
        Said::Words => {
            let kind = EventKind::UserMessage(UserMessage {
                bytes: text.len,
                attachments: u32::try_from(attachments).unwrap_or(u32::MAX),
            });
            Part::new(kind, ts, Body::Text(text)).with_preview(Some(&text.text))
        }
        Said::Command(name) => Part::new(bookkeeping("user:command"), ts, Body::Text(text))
            .with_preview(name.or(Some(&text.text))),
        Said::CommandOutput(output) => {
            Part::new(bookkeeping("user:command_output"), ts, Body::Text(text))
                .with_preview(Some(output))
        }
        Said::Interrupted => {
            let kind = EventKind::TurnBoundary(TurnBoundary {
                boundary: Boundary::End,
                reason: Some("interrupted".to_owned()),
            });
            Part::new(kind, ts, Body::Text(text)).with_preview(Some(&text.text))
        }
    }
}

fn user<'a>(record: &'a Node, ts: Option<&'a str>) -> Vec<Part<'a>> {
    let content = record.get("message").and_then(|m| m.get("content"));
    if record.get("isMeta").is_some_and(Node::is_true) {
        let preview = content_text(content).map(|t| t.text.as_str());
        return vec![
            Part::new(bookkeeping("user:meta"), ts, Body::Json(record)).with_preview(preview),
        ];
    }
    if record.get("isCompactSummary").is_some_and(Node::is_true) {
        let text = content_text(content);
        let body = text.map_or(Body::Json(record), Body::Text);
        let part = Part::new(bookkeeping("user:compact_summary"), ts, body)
            .with_preview(text.map(|t| t.text.as_str()));
        return vec![part];
    }
    let mut parts = Vec::new();
    match content {
        Some(Node::Str(text)) => parts.push(user_text(text, ts, 0)),
        Some(Node::Array(blocks, _)) => {
            let attachments = blocks
                .iter()
                .filter(|b| matches!(block_type(b), "image" | "document"))
                .count();
            for block in blocks {
                parts.push(user_block(block, ts, attachments));
            }
        }
        _ => {}
    }
    if let Some(result) = record.get("toolUseResult")
        && let Some(child) = result.get("agentId").and_then(Node::as_str)
    {
        let kind = EventKind::SubagentRef(SubagentRef {
            child_id: child.to_owned(),
            external_file: true,
        });
        parts.push(Part::new(kind, ts, Body::Json(result)));
    }
    if parts.is_empty() {
        parts.push(Part::new(bookkeeping("user"), ts, Body::Json(record)));
    }
    parts
}

fn block_type(block: &Node) -> &str {
    block.get("type").and_then(Node::as_str).unwrap_or("")
}

fn user_block<'a>(block: &'a Node, ts: Option<&'a str>, attachments: usize) -> Part<'a> {
    match block_type(block) {
        "text" => match block.get("text").and_then(Node::as_text) {
            Some(text) => user_text(text, ts, attachments),
            None => Part::new(unknown("user:text"), ts, Body::Json(block)),
        },
        "tool_result" => {
            let content = block.get("content");
            let status = if block.get("is_error").is_some_and(Node::is_true) {
                ToolStatus::Error
            } else {
                ToolStatus::Ok
            };
            let kind = EventKind::ToolResult(ToolResult {
                call_id: string(block.get("tool_use_id")),
                status,
                bytes: content_size(content),
            });
            let text = content_text(content);
            let body = match content {
                Some(Node::Str(text)) => Body::Text(text),
                Some(other) => Body::Json(other),
                None => Body::Json(block),
            };
            Part::new(kind, ts, body).with_preview(text.map(|t| t.text.as_str()))
        }
        kind @ ("image" | "document") => {
            let attachment = EventKind::Attachment(Attachment {
                attachment: kind.to_owned(),
                bytes: block.size(),
            });
            Part::new(attachment, ts, Body::Json(block))
        }
        other => Part::new(unknown(&format!("user:{other}")), ts, Body::Json(block)),
    }
}

fn assistant<'a>(record: &'a Node, ts: Option<&'a str>, last_part: bool) -> Vec<Part<'a>> {
    let message = record.get("message");
    let content = message.and_then(|m| m.get("content"));
    let mut parts = Vec::new();
    match content {
        Some(Node::Str(text)) => parts.push(assistant_text(text, ts)),
        Some(Node::Array(blocks, _)) => {
            parts.extend(blocks.iter().map(|block| assistant_block(block, ts)));
        }
        _ => {}
    }
    let synthetic =
        message.and_then(|m| m.get("model")).and_then(Node::as_str) == Some("<synthetic>");
    if synthetic {
        // Written by Claude Code itself, not the model: no tokens were used. An API error that
        // ended the turn names its class (`rate_limit`, `server_error`, ...).
        if record.get("isApiErrorMessage").is_some_and(Node::is_true) {
            let reason = string(record.get("error")).unwrap_or_else(|| "api_error".to_owned());
            let kind = EventKind::TurnBoundary(TurnBoundary {
                boundary: Boundary::End,
                reason: Some(reason),
            });
            parts.push(Part::new(
                kind,
                ts,
                Body::Json(record.get("error").unwrap_or(record)),
            ));
        }
    } else if last_part && let Some(usage) = message.and_then(|m| m.get("usage")) {
        parts.push(Part::new(
            EventKind::Usage(usage_of(usage)),
            ts,
            Body::Json(usage),
        ));
    }
    if parts.is_empty() {
        parts.push(Part::new(bookkeeping("assistant"), ts, Body::Json(record)));
    }
    parts
}

/// A message's usage: input is the prompt's tokens, read from the cache or not.
fn usage_of(usage: &Node) -> Usage {
    let tokens = |key: &str| usage.get(key).and_then(Node::as_u64);
    let input = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| tokens(k))
    .reduce(|a, b| a + b);
    let output = tokens("output_tokens");
    let total = match (input, output) {
        (Some(i), Some(o)) => Some(i + o),
        _ => None,
    };
    Usage {
        input,
        output,
        total,
        context_window: None,
        cost_usd: None,
    }
}

fn assistant_text<'a>(text: &'a Text, ts: Option<&'a str>) -> Part<'a> {
    let kind = EventKind::AssistantText(AssistantText { bytes: text.len });
    Part::new(kind, ts, Body::Text(text)).with_preview(Some(&text.text))
}

fn assistant_block<'a>(block: &'a Node, ts: Option<&'a str>) -> Part<'a> {
    match block_type(block) {
        "text" => match block.get("text").and_then(Node::as_text) {
            Some(text) => assistant_text(text, ts),
            None => Part::new(unknown("assistant:text"), ts, Body::Json(block)),
        },
        "thinking" => match block.get("thinking").and_then(Node::as_text) {
            Some(text) => {
                let kind = EventKind::Thinking(Thinking {
                    bytes: text.len,
                    redacted: false,
                });
                Part::new(kind, ts, Body::Text(text)).with_preview(Some(&text.text))
            }
            None => Part::new(unknown("assistant:thinking"), ts, Body::Json(block)),
        },
        "redacted_thinking" => {
            let kind = EventKind::Thinking(Thinking {
                bytes: block.get("data").map_or(0, Node::size),
                redacted: true,
            });
            Part::new(kind, ts, Body::Json(block))
        }
        "tool_use" | "server_tool_use" => {
            let input = block.get("input");
            let kind = EventKind::ToolCall(ToolCall {
                name: string(block.get("name")).unwrap_or_default(),
                call_id: string(block.get("id")),
                arg_keys: keys(input),
                bytes: input.map_or(0, Node::size),
            });
            Part::new(kind, ts, Body::Json(input.unwrap_or(block)))
                .with_preview(first_string(input))
                .with_args(input)
        }
        other => Part::new(
            unknown(&format!("assistant:{other}")),
            ts,
            Body::Json(block),
        ),
    }
}

/// True for a record written by Claude Code before 2.1: those files mark a turn's end only with
/// the Stop hooks' summary (`turn_duration` came with 2.1).
fn before_turn_duration(record: &Node) -> bool {
    let Some(version) = record.get("version").and_then(Node::as_str) else {
        return false;
    };
    let mut numbers = version.split('.').map(str::parse::<u32>);
    match (numbers.next(), numbers.next()) {
        (Some(Ok(major)), Some(Ok(minor))) => (major, minor) < (2, 1),
        _ => false,
    }
}

fn system<'a>(record: &'a Node, ts: Option<&'a str>) -> Part<'a> {
    let subtype = record.get("subtype").and_then(Node::as_str).unwrap_or("");
    let end = || {
        EventKind::TurnBoundary(TurnBoundary {
            boundary: Boundary::End,
            reason: None,
        })
    };
    match subtype {
        "compact_boundary" => {
            let metadata = record.get("compactMetadata");
            let kind = EventKind::Compaction(Compaction {
                compaction: string(metadata.and_then(|m| m.get("trigger"))),
            });
            Part::new(kind, ts, Body::Json(metadata.unwrap_or(record)))
        }
        "turn_duration" => Part::new(end(), ts, Body::Json(record)),
        "stop_hook_summary" if before_turn_duration(record) => {
            Part::new(end(), ts, Body::Json(record))
        }
        _ => {
            let content = record.get("content").and_then(Node::as_str);
            let preview = content.map(|text| match said(text) {
                Said::Command(Some(name)) => name,
                Said::CommandOutput(output) => output,
                _ => text,
            });
            Part::new(
                bookkeeping(&format!("system:{subtype}")),
                ts,
                Body::Json(record),
            )
            .with_preview(preview)
        }
    }
}

/// True for a file name that is a session id (a UUID), as Claude Code names a session's file.
fn is_session_name(stem: &str) -> bool {
    stem.len() == 36
        && stem.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// The session, from the first records that carry each field (the first records of a file are
/// often bookkeeping that carries none of them). The session id is the file's own name when that
/// is one: a resumed session's first records can carry the session it was resumed from.
pub fn session_meta(head: &[Node], stem: Option<&str>) -> Option<SessionMeta> {
    let first = |key: &str| head.iter().find_map(|r| string(r.get(key)));
    let model = head.iter().find_map(|r| {
        r.get("message")
            .and_then(|m| m.get("model"))
            .and_then(Node::as_str)
            .filter(|model| *model != "<synthetic>")
    });
    let session_id = stem
        .filter(|stem| is_session_name(stem))
        .map(str::to_owned)
        .or_else(|| first("sessionId"));
    let meta = SessionMeta {
        agent: Some("claude".to_owned()),
        session_id,
        cwd: first("cwd"),
        version: first("version"),
        model: model.map(str::to_owned),
    };
    let known = meta.session_id.is_some()
        || meta.cwd.is_some()
        || meta.version.is_some()
        || meta.model.is_some();
    known.then_some(meta)
}

#[cfg(test)]
mod tests;
