//! Claude Code's project JSONL (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! The format is documented by Anthropic as internal; what this reads is its public shape as of
//! Claude Code 2.1 (records `user`, `assistant`, `system`, `summary`, `file-history-snapshot`,
//! `queue-operation`, `progress`, `attachment`; `message.content` blocks `text`, `thinking`,
//! `redacted_thinking`, `tool_use`, `tool_result`, `image`; a `system` record with subtype
//! `compact_boundary` marks a compaction). One API response is written as one line per content
//! block, so a line usually yields one event; a user line of several tool results yields several.

use schema::transcript::{
    AssistantText, Attachment, Compaction, EventKind, SessionMeta, SubagentRef, Thinking, ToolCall,
    ToolResult, TurnBoundary, Usage, UserMessage,
};
use schema::{Boundary, ToolStatus};

use super::{
    Body, Part, bookkeeping, content_size, content_text, first_string, keys, string, unknown,
};
use crate::transcript::json::Node;

/// Record types that are the store's own bookkeeping, not conversation.
const BOOKKEEPING: &[&str] = &[
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
];

pub fn classify(record: &Node) -> Vec<Part<'_>> {
    let ts = record.get("timestamp").and_then(Node::as_str);
    let type_name = record.get("type").and_then(Node::as_str).unwrap_or("");
    match type_name {
        "user" => user(record, ts),
        "assistant" => assistant(record, ts),
        "system" => vec![system(record, ts)],
        "attachment" => {
            let attachment = record.get("attachment");
            let name = attachment
                .and_then(|a| a.get("type"))
                .and_then(Node::as_str)
                .unwrap_or("attachment");
            let kind = EventKind::Attachment(Attachment {
                attachment: name.to_owned(),
                bytes: attachment.map_or(0, Node::size),
            });
            vec![Part::new(
                kind,
                ts,
                Body::Json(attachment.unwrap_or(record)),
            )]
        }
        t if BOOKKEEPING.contains(&t) => vec![Part::new(bookkeeping(t), ts, Body::Json(record))],
        other => vec![Part::new(unknown(other), ts, Body::Json(record))],
    }
}

fn user<'a>(record: &'a Node, ts: Option<&'a str>) -> Vec<Part<'a>> {
    if record.get("isMeta").is_some_and(Node::is_true) {
        return vec![Part::new(bookkeeping("user:meta"), ts, Body::Json(record))];
    }
    let content = record.get("message").and_then(|m| m.get("content"));
    let mut parts = Vec::new();
    match content {
        Some(Node::Str(text)) => {
            let kind = EventKind::UserMessage(UserMessage {
                bytes: text.len,
                attachments: 0,
            });
            parts.push(Part::new(kind, ts, Body::Text(text)).with_preview(Some(&text.text)));
        }
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
            Some(text) => {
                let kind = EventKind::UserMessage(UserMessage {
                    bytes: text.len,
                    attachments: u32::try_from(attachments).unwrap_or(u32::MAX),
                });
                Part::new(kind, ts, Body::Text(text)).with_preview(Some(&text.text))
            }
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

fn assistant<'a>(record: &'a Node, ts: Option<&'a str>) -> Vec<Part<'a>> {
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
    // The line that ends a response carries its stop reason: usage, and the end of a turn
    // unless the model stopped to call a tool.
    if let Some(stop) = message
        .and_then(|m| m.get("stop_reason"))
        .and_then(Node::as_str)
    {
        if let Some(usage) = message.and_then(|m| m.get("usage")) {
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
            let kind = EventKind::Usage(Usage {
                input,
                output,
                total,
                context_window: None,
                cost_usd: None,
            });
            parts.push(Part::new(kind, ts, Body::Json(usage)));
        }
        if stop != "tool_use" {
            let kind = EventKind::TurnBoundary(TurnBoundary {
                boundary: Boundary::End,
                reason: Some(stop.to_owned()),
            });
            let body = message.and_then(|m| m.get("stop_reason")).unwrap_or(record);
            parts.push(Part::new(kind, ts, Body::Json(body)));
        }
    }
    if parts.is_empty() {
        parts.push(Part::new(bookkeeping("assistant"), ts, Body::Json(record)));
    }
    parts
}

fn assistant_text<'a>(text: &'a crate::transcript::json::Text, ts: Option<&'a str>) -> Part<'a> {
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

fn system<'a>(record: &'a Node, ts: Option<&'a str>) -> Part<'a> {
    let subtype = record.get("subtype").and_then(Node::as_str).unwrap_or("");
    if subtype == "compact_boundary" {
        let metadata = record.get("compactMetadata");
        let kind = EventKind::Compaction(Compaction {
            compaction: string(metadata.and_then(|m| m.get("trigger"))),
        });
        return Part::new(kind, ts, Body::Json(metadata.unwrap_or(record)));
    }
    let preview = record.get("content").and_then(Node::as_str);
    Part::new(
        bookkeeping(&format!("system:{subtype}")),
        ts,
        Body::Json(record),
    )
    .with_preview(preview)
}

/// The session, from the first records that carry it.
pub fn session_meta(head: &[Node]) -> Option<SessionMeta> {
    let stamped = head.iter().find(|r| r.get("sessionId").is_some())?;
    let model = head.iter().find_map(|r| {
        r.get("message")
            .and_then(|m| m.get("model"))
            .and_then(Node::as_str)
    });
    Some(SessionMeta {
        agent: Some("claude".to_owned()),
        session_id: string(stamped.get("sessionId")),
        cwd: string(stamped.get("cwd")),
        version: string(stamped.get("version")),
        model: model.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{kinds, node};
    use super::*;

    #[test]
    fn a_user_prompt_is_a_user_message_with_its_size_and_preview() {
        let record = node(
            r#"{"type":"user","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"fix it\nplease"}}"#,
        );
        let parts = classify(&record);
        assert_eq!(kinds(&parts), ["user_message"]);
        assert_eq!(parts[0].ts, Some("2026-01-01T00:00:00Z"));
        assert_eq!(parts[0].preview, Some("fix it\nplease"));
        let EventKind::UserMessage(m) = &parts[0].kind else {
            panic!()
        };
        assert_eq!((m.bytes, m.attachments), (13, 0));
    }

    #[test]
    fn one_record_with_several_blocks_yields_several_events_in_order() {
        let record = node(
            r#"{"type":"assistant","message":{"content":[
                {"type":"thinking","thinking":"hmm"},
                {"type":"text","text":"I'll run it"},
                {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls","description":"list"}},
                {"type":"hologram"}]}}"#,
        );
        let parts = classify(&record);
        assert_eq!(
            kinds(&parts),
            ["thinking", "assistant_text", "tool_call", "unknown"]
        );
        let EventKind::ToolCall(call) = &parts[2].kind else {
            panic!()
        };
        assert_eq!(call.name, "Bash");
        assert_eq!(call.call_id.as_deref(), Some("toolu_1"));
        assert_eq!(call.arg_keys, ["command", "description"]);
        assert_eq!(parts[2].preview, Some("ls"));
        let EventKind::Unknown(t) = &parts[3].kind else {
            panic!()
        };
        assert_eq!(t.type_name, "assistant:hologram");
    }

    #[test]
    fn tool_results_carry_the_call_id_and_error_status() {
        let record = node(
            r#"{"type":"user","message":{"content":[
                {"type":"tool_result","tool_use_id":"toolu_1","content":"ok"},
                {"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"boom"}]}]},
                "toolUseResult":{"agentId":"a1"}}"#,
        );
        let parts = classify(&record);
        assert_eq!(
            kinds(&parts),
            ["tool_result", "tool_result", "subagent_ref"]
        );
        let EventKind::ToolResult(second) = &parts[1].kind else {
            panic!()
        };
        assert_eq!(second.status, ToolStatus::Error);
        assert_eq!(second.bytes, 4);
        assert_eq!(parts[1].preview, Some("boom"));
    }

    #[test]
    fn a_stop_reason_adds_usage_and_a_turn_end() {
        let record = node(
            r#"{"type":"assistant","message":{"model":"m","stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3},"content":[{"type":"text","text":"done"}]}}"#,
        );
        let parts = classify(&record);
        assert_eq!(kinds(&parts), ["assistant_text", "usage", "turn_boundary"]);
        let EventKind::Usage(u) = &parts[1].kind else {
            panic!()
        };
        assert_eq!((u.input, u.output, u.total), (Some(15), Some(3), Some(18)));
    }

    #[test]
    fn store_records_are_bookkeeping_compaction_or_unknown() {
        let kinds_of = |text: &str| kinds(&classify(&node(text)));
        assert_eq!(
            kinds_of(r#"{"type":"summary","summary":"x"}"#),
            ["bookkeeping"]
        );
        assert_eq!(
            kinds_of(
                r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto"}}"#
            ),
            ["compaction"]
        );
        assert_eq!(kinds_of(r#"{"type":"telepathy"}"#), ["unknown"]);
        assert_eq!(kinds_of(r#"{"no_type":1}"#), ["unknown"]);
    }

    #[test]
    fn session_meta_comes_from_the_first_stamped_record() {
        let head = [
            node(r#"{"type":"summary"}"#),
            node(r#"{"type":"user","sessionId":"s1","cwd":"/w","version":"2.1.3"}"#),
            node(r#"{"type":"assistant","message":{"model":"claude-x"}}"#),
        ];
        let meta = session_meta(&head).unwrap();
        assert_eq!(meta.session_id.as_deref(), Some("s1"));
        assert_eq!(meta.model.as_deref(), Some("claude-x"));
        assert_eq!(session_meta(&head[..1]), None);
    }
}
