//! Codex's rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).
//!
//! Every line is `{"timestamp","type","payload"}` (openai/codex `codex-rs` rollout format, as of
//! 0.4x): `session_meta` first, then `turn_context`, `response_item` (payload types `message`,
//! `reasoning`, `function_call`, `function_call_output`, `local_shell_call`, `custom_tool_call`,
//! `custom_tool_call_output`, `web_search_call`), `event_msg` (`token_count`, `task_started`,
//! `task_complete`, `turn_aborted`, approval requests, and echoes of messages already recorded
//! as response items) and `compacted`.

use schema::transcript::{
    AssistantText, Compaction, EventKind, PermissionRequest, SessionMeta, Thinking, ToolCall,
    ToolResult, TurnBoundary, Usage, UserMessage,
};
use schema::{Boundary, ToolStatus};

use super::{Body, Part, bookkeeping, content_size, content_text, keys, string, unknown};
use crate::transcript::json::{Limits, Node, parse_slice};

pub fn classify(record: &Node) -> Vec<Part<'_>> {
    let ts = record.get("timestamp").and_then(Node::as_str);
    let type_name = record.get("type").and_then(Node::as_str).unwrap_or("");
    let Some(payload) = record.get("payload") else {
        return vec![Part::new(unknown(type_name), ts, Body::Json(record))];
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

fn response_item<'a>(payload: &'a Node, payload_type: &str, ts: Option<&'a str>) -> Part<'a> {
    match payload_type {
        "message" => {
            let role = payload.get("role").and_then(Node::as_str).unwrap_or("");
            let content = payload.get("content");
            let text = content_text(content);
            let bytes = content_size(content);
            let kind = match role {
                "user" => {
                    let images = content.map_or(0, |c| {
                        c.items()
                            .iter()
                            .filter(|b| b.get("type").and_then(Node::as_str) == Some("input_image"))
                            .count()
                    });
                    EventKind::UserMessage(UserMessage {
                        bytes,
                        attachments: u32::try_from(images).unwrap_or(u32::MAX),
                    })
                }
                "assistant" => EventKind::AssistantText(AssistantText { bytes }),
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
            let preview = output.and_then(Node::as_str);
            Part::new(kind, ts, body).with_preview(preview)
        }
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
        "token_count" => {
            let info = payload.get("info");
            let total = info.and_then(|i| i.get("total_token_usage"));
            let tokens = |key: &str| total.and_then(|t| t.get(key)).and_then(Node::as_u64);
            EventKind::Usage(Usage {
                input: tokens("input_tokens"),
                output: tokens("output_tokens"),
                total: tokens("total_tokens"),
                context_window: info
                    .and_then(|i| i.get("model_context_window"))
                    .and_then(Node::as_u64),
                cost_usd: None,
            })
        }
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

/// `ok` unless the output says the call failed (a non-zero exit code, `success: false`).
fn output_status(output: Option<&Node>) -> ToolStatus {
    let parsed;
    let object = match output {
        Some(Node::Str(text)) if !text.is_cut() => {
            parsed = parse_arguments(&text.text);
            parsed.as_ref()
        }
        Some(Node::Str(_)) => return ToolStatus::Unknown,
        other => other,
    };
    let Some(object) = object else {
        return ToolStatus::Ok;
    };
    let exit = object
        .get("metadata")
        .and_then(|m| m.get("exit_code"))
        .and_then(Node::as_f64);
    let failed = exit.is_some_and(|code| code != 0.0)
        || matches!(object.get("success"), Some(Node::Bool(false)));
    if failed {
        ToolStatus::Error
    } else {
        ToolStatus::Ok
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
    let meta = payload_of("session_meta")?;
    let model = payload_of("turn_context")
        .and_then(|p| p.get("model"))
        .and_then(Node::as_str);
    Some(meta_of(meta, model))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{kinds, node};
    use super::*;

    fn one(text: &str) -> EventKind {
        let record = node(text);
        let parts = classify(&record);
        assert_eq!(parts.len(), 1, "{text}");
        parts[0].kind.clone()
    }

    #[test]
    fn a_function_call_reads_its_argument_keys_from_the_json_string() {
        let kind = one(
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"],\"workdir\":\"/w\"}","call_id":"call_1"}}"#,
        );
        let EventKind::ToolCall(call) = kind else {
            panic!()
        };
        assert_eq!(call.name, "shell");
        assert_eq!(call.arg_keys, ["command", "workdir"]);
        assert_eq!(call.call_id.as_deref(), Some("call_1"));
    }

    #[test]
    fn a_function_output_with_a_failing_exit_code_is_an_error() {
        let kind = one(
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":2}}"}}"#,
        );
        let EventKind::ToolResult(result) = kind else {
            panic!()
        };
        assert_eq!(result.status, ToolStatus::Error);
    }

    #[test]
    fn messages_reasoning_usage_and_turns_are_classified() {
        let records = [
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo"}]}}"#,
            r#"{"type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":"gAAA"}}"#,
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7},"model_context_window":100}}}"#,
            r#"{"type":"event_msg","payload":{"type":"task_complete"}}"#,
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":"yo"}}"#,
            r#"{"type":"compacted","payload":{"message":"summary"}}"#,
            r#"{"type":"x_future","payload":{}}"#,
            r#"{"type":"response_item","payload":{"type":"hologram"}}"#,
        ];
        let got: Vec<String> = records
            .iter()
            .flat_map(|r| kinds(&classify(&node(r))))
            .collect();
        assert_eq!(
            got,
            [
                "user_message",
                "assistant_text",
                "thinking",
                "usage",
                "turn_boundary",
                "bookkeeping",
                "compaction",
                "unknown",
                "unknown"
            ]
        );
        let EventKind::Thinking(t) = one(records[2]) else {
            panic!()
        };
        assert!(t.redacted);
        let EventKind::Usage(u) = one(records[3]) else {
            panic!()
        };
        assert_eq!(u.context_window, Some(100));
    }

    #[test]
    fn session_meta_reads_the_first_record_and_the_model_of_the_turn_context() {
        let head = [
            node(
                r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w","cli_version":"0.46.0"}}"#,
            ),
            node(r#"{"type":"turn_context","payload":{"model":"gpt-5-codex"}}"#),
        ];
        let meta = session_meta(&head).unwrap();
        assert_eq!(meta.session_id.as_deref(), Some("s"));
        assert_eq!(meta.version.as_deref(), Some("0.46.0"));
        assert_eq!(meta.model.as_deref(), Some("gpt-5-codex"));
    }
}
