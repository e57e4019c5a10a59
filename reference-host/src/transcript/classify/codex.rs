//! Codex's rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).
//!
//! Since openai/codex PR #3380 (2025-09-09, the 0.3x releases) every line is
//! `{"timestamp","type","payload"}`: `session_meta` first, then `turn_context`, `response_item`
//! (payload types `message`, `reasoning`, `function_call`, `function_call_output`,
//! `local_shell_call`, `custom_tool_call`, `custom_tool_call_output`, `web_search_call`, ...),
//! `event_msg` (`token_count`, `task_started`, `task_complete`, `turn_aborted`, and mirrors of
//! messages already recorded as response items) and `compacted`. Rollouts written before it hold
//! a bare session record (`{id, timestamp, instructions, git}`) and bare response items, with
//! `{"record_type":"state"}` lines between them. Sources: golden/fixtures/transcripts/README.md.
//!
//! - A user `message` is the person's words unless Codex injected it: instructions, the
//!   environment, a shell command the person ran, an aborted turn's note (Codex's own filter,
//!   `codex-rs/core/src/context/contextual_user_message.rs`: a prefix match on their markers).
//!   An IDE's context block (`# Context from my IDE setup:`) carries the typed request after
//!   `## My request for Codex:`, which is what its preview shows. The `event_msg` `user_message`
//!   mirrors the same prompt (and newer builds stop writing it), so it is bookkeeping: the
//!   prompt is counted once, on the response item every version writes.
//! - `token_count` carries the session's cumulative usage and the last turn's
//!   (`info.total_token_usage`, `info.last_token_usage`); the usage event is the turn's, beside
//!   the model's context window. `info: null` (no usage yet) is bookkeeping.
//! - A tool's output is a string whose form depends on the tool: `shell` and `apply_patch` JSON
//!   text `{"output":...,"metadata":{"exit_code":N,...}}`, `shell_command` `Exit code: N` first,
//!   unified exec (`exec_command`) `Process exited with code N` (or `Process running with
//!   session ID N`, still running), or a failure to run at all (`execution error: ...`).

use std::borrow::Cow;

use schema::transcript::{
    AssistantText, Compaction, EventKind, PermissionRequest, SessionMeta, Thinking, ToolCall,
    ToolResult, TurnBoundary, Usage, UserMessage,
};
use schema::{Boundary, ToolStatus};

use super::{
    Body, Part, bookkeeping, content_size, content_text, keys, starts_with_ignoring_case, string,
    unknown,
};
use crate::transcript::json::{self, Limits, Node, Text, parse_slice};

/// Response item types a bare (pre-envelope) rollout line can be.
const BARE_ITEMS: &[&str] = &[
    "message",
    "function_call",
    "function_call_output",
    "local_shell_call",
    "reasoning",
];

pub fn classify(record: &Node) -> Vec<Part<'_>> {
    let ts = record.get("timestamp").and_then(Node::as_str);
    let type_name = record.get("type").and_then(Node::as_str).unwrap_or("");
    let Some(payload) = record.get("payload") else {
        return vec![bare(record, type_name, ts)];
    };
    let payload_type = payload.get("type").and_then(Node::as_str).unwrap_or("");
    let part = match type_name {
        "session_meta" => {
            let kind = EventKind::SessionMeta(meta_of(payload, None));
            Part::new(kind, ts, Body::Json(payload))
        }
        "turn_context" => Part::new(bookkeeping("turn_context"), ts, Body::Json(payload)),
        "response_item" => response_item(payload, payload_type, ts),
        "event_msg" => event_msg(payload, payload_type, ts),
        "compacted" => {
            let kind = EventKind::Compaction(Compaction { compaction: None });
            let preview = payload.get("message").and_then(Node::as_str);
            Part::new(kind, ts, Body::Json(payload)).with_preview(preview)
        }
        other => Part::new(unknown(other), ts, Body::Json(record)),
    };
    vec![part]
}

/// A line of a rollout written before the envelope: the session record, a state marker, or a
/// response item on its own.
fn bare<'a>(record: &'a Node, type_name: &str, ts: Option<&'a str>) -> Part<'a> {
    if let Some(marker) = record.get("record_type").and_then(Node::as_str) {
        return Part::new(bookkeeping(marker), ts, Body::Json(record));
    }
    if type_name.is_empty() && record.get("id").and_then(Node::as_str).is_some() {
        let kind = EventKind::SessionMeta(meta_of(record, None));
        return Part::new(kind, ts, Body::Json(record));
    }
    if BARE_ITEMS.contains(&type_name) {
        return response_item(record, type_name, ts);
    }
    Part::new(unknown(type_name), ts, Body::Json(record))
}

/// Markers of the user messages Codex writes itself (matched as prefixes, case ignored).
const INJECTED: &[&str] = &[
    "<user_instructions>",
    "<environment_context>",
    "# AGENTS.md instructions for ",
    "<INSTRUCTIONS>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
];

/// The start of the block an IDE (Codex's VS Code extension) puts before the typed request.
const IDE_CONTEXT: &str = "# Context from my IDE setup:";
/// What the typed request follows inside it (`USER_MESSAGE_BEGIN` in codex-rs `protocol.rs`).
const IDE_REQUEST: &str = "## My request for Codex:";

fn user_message<'a>(payload: &'a Node, ts: Option<&'a str>) -> Part<'a> {
    let content = payload.get("content");
    let text = content_text(content);
    let body = text.map_or(Body::Json(payload), Body::Text);
    let said = text.map_or("", |t| t.text.as_str());
    if INJECTED
        .iter()
        .any(|marker| starts_with_ignoring_case(said, marker))
    {
        return Part::new(bookkeeping("message:context"), ts, body)
            .with_preview(text.map(|t| t.text.as_str()));
    }
    let images = content.map_or(0, |c| {
        c.items()
            .iter()
            .filter(|b| b.get("type").and_then(Node::as_str) == Some("input_image"))
            .count()
    });
    let (bytes, preview) = match ide_request(said) {
        Some(request) => (request.len() as u64, Some(request)),
        None => (content_size(content), text.map(|t| t.text.as_str())),
    };
    let kind = EventKind::UserMessage(UserMessage {
        bytes,
        attachments: u32::try_from(images).unwrap_or(u32::MAX),
    });
    Part::new(kind, ts, body).with_preview(preview)
}

/// The typed request inside an IDE's context block.
fn ide_request(text: &str) -> Option<&str> {
    if !starts_with_ignoring_case(text, IDE_CONTEXT) {
        return None;
    }
    let at = text.find(IDE_REQUEST)? + IDE_REQUEST.len();
    Some(text[at..].trim_start_matches([' ', '\n', '\r']))
}

fn response_item<'a>(payload: &'a Node, payload_type: &str, ts: Option<&'a str>) -> Part<'a> {
    match payload_type {
        "message" => {
            let role = payload.get("role").and_then(Node::as_str).unwrap_or("");
            if role == "user" {
                return user_message(payload, ts);
            }
            let content = payload.get("content");
            let text = content_text(content);
            let kind = match role {
                "assistant" => EventKind::AssistantText(AssistantText {
                    bytes: content_size(content),
                }),
                other => bookkeeping(&format!("message:{other}")),
            };
            let body = match text {
                Some(text) => Body::Text(text),
                None => Body::Json(payload),
            };
            Part::new(kind, ts, body).with_preview(text.map(|t| t.text.as_str()))
        }
        "reasoning" => {
            let summary = payload.get("summary");
            let encrypted = payload.get("encrypted_content");
            let bytes = content_size(summary);
            let text = content_text(summary);
            let kind = EventKind::Thinking(Thinking {
                bytes: if bytes > 0 {
                    bytes
                } else {
                    encrypted.map_or(0, Node::size)
                },
                redacted: text.is_none() && encrypted.is_some(),
            });
            let body = match text {
                Some(text) => Body::Text(text),
                None => Body::Json(payload),
            };
            Part::new(kind, ts, body).with_preview(text.map(|t| t.text.as_str()))
        }
        "function_call" | "custom_tool_call" => {
            let arguments = payload.get("arguments").or_else(|| payload.get("input"));
            let parsed = arguments.and_then(Node::as_str).and_then(parse_arguments);
            let kind = EventKind::ToolCall(ToolCall {
                name: string(payload.get("name")).unwrap_or_default(),
                call_id: string(payload.get("call_id")),
                arg_keys: keys(parsed.as_ref()),
                bytes: arguments.map_or(0, Node::size),
            });
            let preview = arguments.and_then(Node::as_str);
            Part::new(kind, ts, Body::Json(payload))
                .with_preview(preview)
                .with_args(arguments)
        }
        "local_shell_call" | "web_search_call" => {
            let action = payload.get("action");
            let name = payload_type.trim_end_matches("_call");
            let kind = EventKind::ToolCall(ToolCall {
                name: name.to_owned(),
                call_id: string(payload.get("call_id")).or_else(|| string(payload.get("id"))),
                arg_keys: keys(action),
                bytes: action.map_or(0, Node::size),
            });
            Part::new(kind, ts, Body::Json(payload))
        }
        "function_call_output" | "custom_tool_call_output" => {
            let output = payload.get("output");
            let kind = EventKind::ToolResult(ToolResult {
                call_id: string(payload.get("call_id")),
                status: output_status(output),
                bytes: output.map_or(0, Node::size),
            });
            let body = match output {
                Some(Node::Str(text)) => Body::Text(text),
                _ => Body::Json(payload),
            };
            let preview = match output {
                Some(Node::Str(text)) => output_preview(&text.text),
                _ => None,
            };
            Part::new(kind, ts, body).with_made_preview(preview)
        }
        // Undo snapshots and the encrypted form of a remote compaction.
        kind @ ("ghost_snapshot" | "compaction" | "compaction_summary") => Part::new(
            bookkeeping(&format!("response_item:{kind}")),
            ts,
            Body::Json(payload),
        ),
        other => Part::new(
            unknown(&format!("response_item:{other}")),
            ts,
            Body::Json(payload),
        ),
    }
}

fn event_msg<'a>(payload: &'a Node, payload_type: &str, ts: Option<&'a str>) -> Part<'a> {
    let boundary = |boundary: Boundary, reason: Option<String>| {
        EventKind::TurnBoundary(TurnBoundary { boundary, reason })
    };
    let kind = match payload_type {
        "token_count" => match payload.get("info") {
            // Written before any usage is known (and with rate limits only).
            None | Some(Node::Null) => bookkeeping("event_msg:token_count"),
            Some(info) => {
                let last = info.get("last_token_usage");
                let tokens = |key: &str| last.and_then(|t| t.get(key)).and_then(Node::as_u64);
                EventKind::Usage(Usage {
                    input: tokens("input_tokens"),
                    output: tokens("output_tokens"),
                    total: tokens("total_tokens"),
                    context_window: info.get("model_context_window").and_then(Node::as_u64),
                    cost_usd: None,
                })
            }
        },
        "task_started" => boundary(Boundary::Start, None),
        "task_complete" => boundary(Boundary::End, None),
        "turn_aborted" => boundary(
            Boundary::End,
            Some(string(payload.get("reason")).unwrap_or_else(|| "aborted".to_owned())),
        ),
        "exec_approval_request" | "apply_patch_approval_request" => {
            EventKind::PermissionRequest(PermissionRequest {
                tool: if payload_type == "exec_approval_request" {
                    "exec".to_owned()
                } else {
                    "apply_patch".to_owned()
                },
                call_id: string(payload.get("call_id")),
            })
        }
        other => bookkeeping(&format!("event_msg:{other}")),
    };
    let preview = payload.get("message").and_then(Node::as_str);
    Part::new(kind, ts, Body::Json(payload)).with_preview(preview)
}

/// A tool call's `arguments` string, read as the JSON object it holds.
fn parse_arguments(text: &str) -> Option<Node> {
    let limits = Limits {
        string: 64,
        total: 4096,
        depth: 16,
    };
    parse_slice(text.as_bytes(), limits).ok()
}

/// What a tool's output says of the call: `error` for a failed run (a non-zero exit code in any
/// of the output forms, `success: false`, a command that could not run or timed out), `pending`
/// for a unified-exec process still running, else `ok`.
fn output_status(output: Option<&Node>) -> ToolStatus {
    match output {
        Some(Node::Str(text)) => text_status(text),
        Some(object @ Node::Object(..)) => {
            let failed = matches!(object.get("success"), Some(Node::Bool(false)))
                || object
                    .get("metadata")
                    .and_then(|m| m.get("exit_code"))
                    .and_then(Node::as_f64)
                    .is_some_and(|code| code != 0.0);
            if failed {
                ToolStatus::Error
            } else {
                ToolStatus::Ok
            }
        }
        _ => ToolStatus::Ok,
    }
}

/// Where the JSON-text form keeps its exit code: after the output, so a long output's is in the
/// string's tail.
const EXIT_CODE_KEY: &str = "\"metadata\":{\"exit_code\":";

fn text_status(text: &Text) -> ToolStatus {
    let head = text.text.trim_start();
    if ["execution error:", "command timed out", "aborted"]
        .iter()
        .any(|prefix| head.starts_with(prefix))
    {
        return ToolStatus::Error;
    }
    let failed = |code: Option<i64>| match code {
        Some(0) => ToolStatus::Ok,
        Some(_) => ToolStatus::Error,
        None => ToolStatus::Ok,
    };
    // `shell_command`: `Exit code: N` is the first line.
    if let Some(rest) = head.strip_prefix("Exit code: ") {
        return failed(leading_int(rest));
    }
    // Unified exec: a header of lines before `Output:`.
    let header = head.split("\nOutput:").next().unwrap_or("");
    if header.starts_with("Chunk ID:") || header.starts_with("Wall time:") {
        for line in header.lines() {
            if let Some(rest) = line.strip_prefix("Process exited with code ") {
                return failed(leading_int(rest));
            }
            if line.starts_with("Process running with session ID") {
                return ToolStatus::Pending;
            }
        }
    }
    // The JSON text of `shell`, `local_shell` and `apply_patch`: its metadata follows the output
    // (the only place the key is not escaped), in the tail when the string was cut.
    if head.starts_with('{') {
        let end = text.tail.as_deref().unwrap_or(&text.text);
        if let Some(at) = end.rfind(EXIT_CODE_KEY) {
            return failed(leading_int(&end[at + EXIT_CODE_KEY.len()..]));
        }
    }
    ToolStatus::Ok
}

/// What a person reads first of a tool's output: the output itself, not the form around it.
/// The JSON text of `shell` and `apply_patch` shows its `output` string decoded (never
/// `{"output":"…\n…` with its escapes); unified exec shows what follows `Output:`, or its
/// `Process exited with code N` line when the command printed nothing.
fn output_preview(text: &str) -> Option<Cow<'_, str>> {
    let head = text.trim_start();
    if let Some(rest) = head.strip_prefix(JSON_OUTPUT_KEY) {
        return Some(Cow::Owned(json::string_start(
            rest.as_bytes(),
            PREVIEW_SOURCE,
        )));
    }
    if head.starts_with("Chunk ID:") || head.starts_with("Wall time:") {
        let (header, output) = head.split_once("\nOutput:").unwrap_or((head, ""));
        let printed = output.lines().any(|line| !line.trim().is_empty());
        return if printed {
            Some(Cow::Borrowed(output))
        } else {
            header
                .lines()
                .find(|line| line.starts_with("Process "))
                .map(Cow::Borrowed)
        };
    }
    Some(Cow::Borrowed(text))
}

/// How the JSON text of an output begins.
const JSON_OUTPUT_KEY: &str = "{\"output\":\"";

/// Bytes of a JSON-text output decoded for its preview: more than a preview's first line needs
/// after blank lines.
const PREVIEW_SOURCE: usize = 2048;

/// The integer at the start of `text` (`-1` included).
fn leading_int(text: &str) -> Option<i64> {
    let end = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(text.len(), |(i, _)| i);
    text[..end].parse().ok()
}

/// True when a tool name Codex's hooks give (`Bash` for every shell tool, `apply_patch` and its
/// matcher aliases `Edit` and `Write`) names the rollout's call `call`.
pub fn same_tool(stamped: &str, call: &str) -> bool {
    match stamped {
        "Bash" => matches!(
            call,
            "shell" | "shell_command" | "exec_command" | "local_shell" | "container.exec"
        ),
        "apply_patch" | "Edit" | "Write" => call == "apply_patch",
        _ => false,
    }
}

fn meta_of(payload: &Node, model: Option<&str>) -> SessionMeta {
    SessionMeta {
        agent: Some("codex".to_owned()),
        session_id: string(payload.get("id")),
        cwd: string(payload.get("cwd")),
        version: string(payload.get("cli_version")),
        model: model.map(str::to_owned),
    }
}

/// The session, from the `session_meta` record and the first `turn_context` (the model).
pub fn session_meta(head: &[Node]) -> Option<SessionMeta> {
    let payload_of = |type_name: &str| {
        head.iter()
            .find(|r| r.get("type").and_then(Node::as_str) == Some(type_name))
            .and_then(|r| r.get("payload"))
    };
    // A rollout before the envelope starts with its bare session record.
    let bare = || {
        head.first()
            .filter(|r| r.get("type").is_none() && r.get("id").and_then(Node::as_str).is_some())
    };
    let meta = payload_of("session_meta").or_else(bare)?;
    let model = payload_of("turn_context")
        .and_then(|p| p.get("model"))
        .and_then(Node::as_str);
    Some(meta_of(meta, model))
}

#[cfg(test)]
mod tests;
