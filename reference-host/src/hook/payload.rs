//! What an agent's hook hands `corral event`: Claude Code's hook events (JSON on stdin; the
//! fields every event carries are `session_id`, `transcript_path`, `cwd`, `hook_event_name`, as
//! of Claude Code 2.1, code.claude.com/docs/en/hooks), Codex's hooks (the same shape, PR
//! openai/codex#17563, 2026-04) and its `notify` program (one JSON argument,
//! `{"type":"agent-turn-complete","thread-id",...}`, Codex config docs), and Gemini CLI's hooks
//! (`BeforeAgent`, `AfterAgent`, `BeforeTool`, `AfterTool`, `PreCompress`, `Notification` with
//! `notification_type: "ToolPermission"`, google-gemini/gemini-cli `hookEventHandler.ts`). Every
//! field is optional: a payload the host cannot read is an event with only its name.

use serde_json::{Map, Value};

/// What happened, as the pane-option contract needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A session started or resumed: idle.
    SessionStart,
    /// The person submitted a prompt: a turn starts, working.
    PromptSubmit,
    /// A tool is about to run: working, the call pending.
    PreTool,
    /// A tool finished: working, nothing pending.
    PostTool,
    /// The agent asks permission for a tool: blocked, the request parked for a verdict.
    Permission,
    /// A notification; `permission_prompt`, `idle_prompt`, `elicitation_dialog` (Claude Code)
    /// and `ToolPermission` (Gemini CLI) say something.
    Notification(String),
    /// The agent finished its turn: idle, with output to look at.
    Stop,
    /// The turn ended on an API error (Claude Code 2.1.78+): its class (`rate_limit`,
    /// `server_error`, `authentication_failed`, `billing_error`, `invalid_request`,
    /// `max_output_tokens`, `unknown`), empty when the payload does not say.
    StopFailure(String),
    /// A subagent finished; the main agent goes on.
    SubagentStop,
    /// A compaction starts.
    PreCompact,
    /// A compaction ended.
    PostCompact,
    /// The session ended: the pane is no agent pane any more.
    SessionEnd,
    /// Any other event: only the stamp time moves.
    Other(String),
}

/// One hook invocation's payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    /// What happened.
    pub kind: Kind,
    /// The agent's own session id.
    pub session_id: Option<String>,
    /// The session's transcript file.
    pub transcript_path: Option<String>,
    /// The tool's name (tool and permission events).
    pub tool_name: Option<String>,
    /// The tool's input, the agent's own object.
    pub tool_input: Map<String, Value>,
    /// The tool call's id.
    pub tool_use_id: Option<String>,
}

/// The tool Claude Code asks its questions with: its `PermissionRequest` carries the questions
/// (`tool_input.questions`), and is answered with the chosen labels, not a bare allow.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

impl Hook {
    /// True for a permission request that is really a question to the person.
    pub fn is_question(&self) -> bool {
        self.tool_name.as_deref() == Some(ASK_USER_QUESTION)
            && self
                .tool_input
                .get("questions")
                .is_some_and(Value::is_array)
    }
}

/// The kind a hook event name stands for.
pub fn kind_of(name: &str) -> Kind {
    match name {
        "SessionStart" => Kind::SessionStart,
        "UserPromptSubmit" | "BeforeAgent" => Kind::PromptSubmit,
        "PreToolUse" | "BeforeTool" => Kind::PreTool,
        "PostToolUse" | "PostToolUseFailure" | "AfterTool" => Kind::PostTool,
        "PermissionRequest" => Kind::Permission,
        "Notification" => Kind::Notification(String::new()),
        "Stop" | "AfterAgent" | "agent-turn-complete" | "notify" => Kind::Stop,
        "StopFailure" => Kind::StopFailure(String::new()),
        "SubagentStop" => Kind::SubagentStop,
        "PreCompact" | "PreCompress" => Kind::PreCompact,
        "PostCompact" => Kind::PostCompact,
        "SessionEnd" => Kind::SessionEnd,
        other => Kind::Other(other.to_owned()),
    }
}

/// Reads a payload. `name` is the hook name the command line gave, which wins over the
/// payload's own `hook_event_name` (Codex's notify says `type` instead).
pub fn parse(text: &str, name: Option<&str>) -> Hook {
    let object: Map<String, Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => object,
        Ok(_) | Err(_) => Map::new(),
    };
    let string = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| object.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let event_name = name
        .map(str::to_owned)
        .or_else(|| string(&["hook_event_name", "type"]))
        .unwrap_or_default();
    let kind = match kind_of(&event_name) {
        Kind::Notification(_) => {
            Kind::Notification(string(&["notification_type"]).unwrap_or_default())
        }
        Kind::StopFailure(_) => Kind::StopFailure(string(&["error"]).unwrap_or_default()),
        // Codex's notify program names its event in `type`.
        Kind::Other(_) if string(&["type"]).as_deref() == Some("agent-turn-complete") => Kind::Stop,
        kind => kind,
    };
    let tool_input = match object.get("tool_input") {
        Some(Value::Object(input)) => input.clone(),
        _ => Map::new(),
    };
    Hook {
        kind,
        session_id: string(&["session_id", "thread-id", "thread_id"]),
        transcript_path: string(&["transcript_path"]),
        tool_name: string(&["tool_name"]),
        tool_input,
        tool_use_id: string(&["tool_use_id"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_permission_request_keeps_the_agents_own_tool_input() {
        let hook = parse(
            r#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf build","description":"clean"},"permission_suggestions":[]}"#,
            None,
        );
        assert_eq!(hook.kind, Kind::Permission);
        assert_eq!(hook.session_id.as_deref(), Some("s1"));
        assert_eq!(hook.tool_name.as_deref(), Some("Bash"));
        assert_eq!(
            hook.tool_input.keys().collect::<Vec<_>>(),
            ["command", "description"]
        );
    }

    #[test]
    fn the_command_line_name_wins_and_codex_notify_is_a_turn_end() {
        let hook = parse(r#"{"hook_event_name":"Stop"}"#, Some("PreToolUse"));
        assert_eq!(hook.kind, Kind::PreTool);
        let notify = parse(
            r#"{"type":"agent-turn-complete","thread-id":"th1","turn-id":"t","cwd":"/w"}"#,
            None,
        );
        assert_eq!(notify.kind, Kind::Stop);
        assert_eq!(notify.session_id.as_deref(), Some("th1"));
        let note = parse(
            r#"{"hook_event_name":"Notification","notification_type":"idle_prompt"}"#,
            None,
        );
        assert_eq!(note.kind, Kind::Notification("idle_prompt".into()));
    }

    #[test]
    fn stop_failure_carries_its_error_class_and_a_question_is_told_apart() {
        let failed = parse(
            r#"{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit","error_details":"429 Too Many Requests"}"#,
            None,
        );
        assert_eq!(failed.kind, Kind::StopFailure("rate_limit".into()));
        let asked = parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which?","header":"Pick","options":[],"multiSelect":false}]}}"#,
            None,
        );
        assert!(asked.is_question());
        let bash = parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            None,
        );
        assert!(!bash.is_question());
        let gemini = parse(
            r#"{"session_id":"g","transcript_path":"","cwd":"/w","hook_event_name":"Notification","timestamp":"t","notification_type":"ToolPermission","message":"Tool Confirm Shell Command requires execution","details":{"type":"exec","title":"Confirm Shell Command","command":"rm -rf build","rootCommand":"rm"}}"#,
            None,
        );
        assert_eq!(gemini.kind, Kind::Notification("ToolPermission".into()));
        assert_eq!(gemini.transcript_path, None, "an empty path is none");
    }

    #[test]
    fn a_payload_that_is_not_json_is_just_its_name() {
        let hook = parse("garbage {", Some("Stop"));
        assert_eq!(hook.kind, Kind::Stop);
        assert_eq!(hook.session_id, None);
        assert_eq!(parse("", None).kind, Kind::Other(String::new()));
    }
}
