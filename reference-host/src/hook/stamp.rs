//! Which pane options one hook event writes, per the pane-option contract: pure, so every event's
//! stamps are tested without tmux. Every event names the agent and moves `@agent_stamped_at`; a
//! state change moves `@agent_since` (the episode a binder quotes); a finished turn sets
//! `@agent_turn_at` and `@agent_attention`. Events that keep the state (a tool starting or ending
//! while working) leave `@agent_since` alone, so a stall is measured from the run's start.

use super::payload::{Hook, Kind};

/// One option write: a value to set, or `None` to unset.
pub type Stamp = (&'static str, Option<String>);

/// Options cleared when a session ends (all but the person's own mute).
const SESSION_OPTIONS: &[&str] = &[
    "@agent_name",
    "@agent_state",
    "@agent_detail",
    "@agent_since",
    "@agent_turn_at",
    "@agent_stamped_at",
    "@agent_attention",
    "@agent_session",
    "@agent_transcript",
    "@agent_permission_request",
    "@agent_question_request",
    "@agent_api_endpoint",
    "@agent_pending_tool",
    "@agent_pending_call",
    "@agent_context",
    "@agent_context_at",
    "@agent_notified_at",
    "@agent_context_notified_at",
    "@agent_stall_notified_at",
];

/// The writes of `hook` from agent `agent` at `now` (epoch ms), in order.
pub fn stamps(hook: &Hook, agent: &str, now: u64) -> Vec<Stamp> {
    if hook.kind == Kind::SessionEnd {
        return SESSION_OPTIONS.iter().map(|name| (*name, None)).collect();
    }
    let now = now.to_string();
    let set = |name: &'static str, value: &str| (name, Some(value.to_owned()));
    let unset = |name: &'static str| (name, None);
    let mut out: Vec<Stamp> = vec![set("@agent_name", agent), set("@agent_stamped_at", &now)];
    if let Some(session) = &hook.session_id {
        out.push(set("@agent_session", session));
    }
    if let Some(path) = &hook.transcript_path {
        out.push(set("@agent_transcript", path));
    }
    let clear_turn = [
        unset("@agent_detail"),
        unset("@agent_pending_tool"),
        unset("@agent_pending_call"),
        unset("@agent_permission_request"),
    ];
    match &hook.kind {
        Kind::SessionStart => {
            out.extend([set("@agent_state", "idle"), set("@agent_since", &now)]);
            out.extend(clear_turn);
            out.extend([unset("@agent_attention"), unset("@agent_turn_at")]);
        }
        Kind::PromptSubmit => {
            out.extend([set("@agent_state", "working"), set("@agent_since", &now)]);
            out.extend(clear_turn);
            out.push(unset("@agent_attention"));
        }
        Kind::PreTool => {
            out.extend([set("@agent_state", "working"), unset("@agent_detail")]);
            out.push(match &hook.tool_name {
                Some(tool) => set("@agent_pending_tool", tool),
                None => unset("@agent_pending_tool"),
            });
            out.push(match &hook.tool_use_id {
                Some(id) => set("@agent_pending_call", id),
                None => unset("@agent_pending_call"),
            });
        }
        Kind::PostTool => {
            out.extend([
                set("@agent_state", "working"),
                unset("@agent_detail"),
                unset("@agent_pending_tool"),
                unset("@agent_pending_call"),
            ]);
        }
        Kind::Permission => {
            out.extend([
                set("@agent_state", "blocked"),
                set("@agent_detail", "permission"),
                set("@agent_since", &now),
            ]);
            if let Some(tool) = &hook.tool_name {
                out.push(set("@agent_pending_tool", tool));
            }
        }
        Kind::Notification(kind) => match kind.as_str() {
            // The dialog is up (a later signal than PermissionRequest, kept for agents without it).
            "permission_prompt" => {
                out.extend([
                    set("@agent_state", "blocked"),
                    set("@agent_detail", "permission"),
                ]);
            }
            "elicitation_dialog" => {
                out.extend([
                    set("@agent_state", "blocked"),
                    set("@agent_detail", "question"),
                ]);
            }
            _ => {}
        },
        Kind::Stop => {
            out.extend([
                set("@agent_state", "idle"),
                set("@agent_since", &now),
                set("@agent_turn_at", &now),
                set("@agent_attention", "1"),
            ]);
            out.extend(clear_turn);
        }
        Kind::PreCompact => {
            out.extend([
                set("@agent_state", "blocked"),
                set("@agent_detail", "compacting"),
                set("@agent_since", &now),
            ]);
        }
        // After a compaction the agent waits for the next turn (a manual /compact) or goes on
        // at once (an automatic one: its next tool event says working again).
        Kind::PostCompact => {
            out.extend([set("@agent_state", "idle"), set("@agent_since", &now)]);
            out.push(unset("@agent_detail"));
        }
        Kind::SubagentStop | Kind::Other(_) | Kind::SessionEnd => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::payload::parse;

    fn names(stamps: &[Stamp]) -> Vec<String> {
        stamps
            .iter()
            .map(|(name, value)| match value {
                Some(v) => format!("{name}={v}"),
                None => format!("-{name}"),
            })
            .collect()
    }

    #[test]
    fn a_prompt_starts_a_working_run_and_clears_the_turns_leftovers() {
        let hook = parse(
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","transcript_path":"/t"}"#,
            None,
        );
        assert_eq!(
            names(&stamps(&hook, "claude", 7)),
            [
                "@agent_name=claude",
                "@agent_stamped_at=7",
                "@agent_session=s",
                "@agent_transcript=/t",
                "@agent_state=working",
                "@agent_since=7",
                "-@agent_detail",
                "-@agent_pending_tool",
                "-@agent_pending_call",
                "-@agent_permission_request",
                "-@agent_attention",
            ]
        );
    }

    #[test]
    fn a_tool_event_keeps_the_runs_since_and_names_the_pending_call() {
        let hook = parse(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"toolu_1"}"#,
            None,
        );
        let got = names(&stamps(&hook, "claude", 9));
        assert!(
            got.contains(&"@agent_pending_call=toolu_1".to_owned()),
            "{got:?}"
        );
        assert!(!got.iter().any(|s| s.contains("@agent_since")), "{got:?}");
        let post = parse(
            r#"{"hook_event_name":"PostToolUse","tool_use_id":"toolu_1"}"#,
            None,
        );
        assert!(names(&stamps(&post, "claude", 10)).contains(&"-@agent_pending_call".to_owned()));
    }

    #[test]
    fn stop_is_idle_with_attention_and_a_turn_time() {
        let hook = parse(r#"{"hook_event_name":"Stop"}"#, None);
        let got = names(&stamps(&hook, "codex", 11));
        for want in [
            "@agent_state=idle",
            "@agent_since=11",
            "@agent_turn_at=11",
            "@agent_attention=1",
        ] {
            assert!(got.contains(&want.to_owned()), "{want}: {got:?}");
        }
    }

    #[test]
    fn a_permission_request_is_blocked_on_permission_from_now() {
        let hook = parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"Edit"}"#,
            None,
        );
        let got = names(&stamps(&hook, "claude", 12));
        for want in [
            "@agent_state=blocked",
            "@agent_detail=permission",
            "@agent_since=12",
            "@agent_pending_tool=Edit",
        ] {
            assert!(got.contains(&want.to_owned()), "{want}: {got:?}");
        }
    }

    #[test]
    fn session_end_unsets_every_stamp_but_the_mute() {
        let hook = parse(r#"{"hook_event_name":"SessionEnd"}"#, None);
        let got = stamps(&hook, "claude", 1);
        assert!(got.iter().all(|(_, v)| v.is_none()));
        assert!(got.iter().any(|(n, _)| *n == "@agent_name"));
        assert!(!got.iter().any(|(n, _)| *n == "@agent_mute_until"));
    }

    #[test]
    fn an_unknown_event_only_moves_the_stamp_time() {
        let hook = parse(r#"{"hook_event_name":"Telepathy"}"#, None);
        assert_eq!(
            names(&stamps(&hook, "gemini", 3)),
            ["@agent_name=gemini", "@agent_stamped_at=3"]
        );
    }
}
