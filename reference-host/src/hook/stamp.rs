//! Which pane options one hook event writes, per the pane-option contract: pure, so every event's
//! stamps are tested without tmux. Every event names the agent and moves `@agent_stamped_at`; a
//! state change moves `@agent_since` (the episode a binder quotes); a finished turn sets
//! `@agent_turn_at` and `@agent_attention`.
//!
//! Some events cannot know the state they change from: a tool starting or ending says working,
//! and a permission notification says blocked, whether the pane was already so or not. Their
//! `@agent_since` is a guarded write ([`Stamp::unless`]): tmux moves it only when the pane is not
//! already in the state, as it writes. So a stall is measured from a run's start, a second dialog
//! in one turn is an episode of its own (its binder and its notification are new), and the
//! notification that follows a `PermissionRequest` for the same dialog keeps its episode.

use schema::PaneOption;

use super::payload::{Hook, Kind};

/// One option write: a value to set, or `None` to unset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The option.
    pub option: PaneOption,
    /// Its value; `None` unsets it.
    pub value: Option<String>,
    /// Set only unless the pane's `@agent_state` already holds this state.
    pub unless_state: Option<&'static str>,
}

impl Stamp {
    /// Sets `option` to `value`.
    pub fn set(option: PaneOption, value: impl Into<String>) -> Stamp {
        Stamp {
            option,
            value: Some(value.into()),
            unless_state: None,
        }
    }

    /// Unsets `option`.
    pub fn unset(option: PaneOption) -> Stamp {
        Stamp {
            option,
            value: None,
            unless_state: None,
        }
    }

    /// Sets `option` to `value` unless the pane is already in `state`.
    pub fn unless(option: PaneOption, value: impl Into<String>, state: &'static str) -> Stamp {
        Stamp {
            option,
            value: Some(value.into()),
            unless_state: Some(state),
        }
    }
}

/// Whether a session's end unsets `option`: every option but the person's own mute. Exhaustive,
/// so an option added to the contract is decided on here.
fn cleared_at_session_end(option: PaneOption) -> bool {
    match option {
        PaneOption::MuteUntil => false,
        PaneOption::Name
        | PaneOption::State
        | PaneOption::Detail
        | PaneOption::Since
        | PaneOption::TurnAt
        | PaneOption::StampedAt
        | PaneOption::Attention
        | PaneOption::Session
        | PaneOption::Transcript
        | PaneOption::PermissionRequest
        | PaneOption::QuestionRequest
        | PaneOption::ApiEndpoint
        | PaneOption::PendingTool
        | PaneOption::PendingCall
        | PaneOption::Context
        | PaneOption::ContextAt
        | PaneOption::NotifiedAt
        | PaneOption::ContextNotifiedAt
        | PaneOption::StallNotifiedAt => true,
    }
}

/// The detail a failed turn's pane is blocked with: `rate_limit` for a rate limit, `error` for
/// every other API error.
fn failure_detail(error: &str) -> &'static str {
    match error {
        "rate_limit" => "rate_limit",
        _ => "error",
    }
}

/// The writes of `hook` from agent `agent` at `now` (epoch ms), in order.
pub fn stamps(hook: &Hook, agent: &str, now: u64) -> Vec<Stamp> {
    if hook.kind == Kind::SessionEnd {
        return PaneOption::ALL
            .iter()
            .copied()
            .filter(|option| cleared_at_session_end(*option))
            .map(Stamp::unset)
            .collect();
    }
    let now = now.to_string();
    let set = Stamp::set;
    let unset = Stamp::unset;
    let mut out: Vec<Stamp> = vec![
        set(PaneOption::Name, agent),
        set(PaneOption::StampedAt, &now),
    ];
    if let Some(session) = &hook.session_id {
        out.push(set(PaneOption::Session, session));
    }
    if let Some(path) = &hook.transcript_path {
        out.push(set(PaneOption::Transcript, path));
    }
    let clear_turn = || {
        [
            unset(PaneOption::Detail),
            unset(PaneOption::PendingTool),
            unset(PaneOption::PendingCall),
            unset(PaneOption::PermissionRequest),
        ]
    };
    // Blocked from now, unless already blocked (the same dialog, signalled twice).
    let blocked = |out: &mut Vec<Stamp>, detail: &str| {
        out.extend([
            Stamp::unless(PaneOption::Since, &now, "blocked"),
            Stamp::set(PaneOption::State, "blocked"),
            Stamp::set(PaneOption::Detail, detail),
        ]);
    };
    match &hook.kind {
        Kind::SessionStart => {
            out.extend([set(PaneOption::State, "idle"), set(PaneOption::Since, &now)]);
            out.extend(clear_turn());
            out.extend([unset(PaneOption::Attention), unset(PaneOption::TurnAt)]);
        }
        Kind::PromptSubmit => {
            out.extend([
                set(PaneOption::State, "working"),
                set(PaneOption::Since, &now),
            ]);
            out.extend(clear_turn());
            out.push(unset(PaneOption::Attention));
        }
        Kind::PreTool => {
            out.extend([
                Stamp::unless(PaneOption::Since, &now, "working"),
                set(PaneOption::State, "working"),
                unset(PaneOption::Detail),
            ]);
            out.push(match &hook.tool_name {
                Some(tool) => set(PaneOption::PendingTool, tool),
                None => unset(PaneOption::PendingTool),
            });
            out.push(match &hook.tool_use_id {
                Some(id) => set(PaneOption::PendingCall, id),
                None => unset(PaneOption::PendingCall),
            });
        }
        Kind::PostTool => {
            out.extend([
                Stamp::unless(PaneOption::Since, &now, "working"),
                set(PaneOption::State, "working"),
                unset(PaneOption::Detail),
                unset(PaneOption::PendingTool),
                unset(PaneOption::PendingCall),
            ]);
        }
        // A permission request is a dialog of its own: a new episode whatever came before.
        Kind::Permission => {
            let detail = if hook.is_question() {
                "question"
            } else {
                "permission"
            };
            out.extend([
                set(PaneOption::State, "blocked"),
                set(PaneOption::Detail, detail),
                set(PaneOption::Since, &now),
            ]);
            if let Some(tool) = &hook.tool_name {
                out.push(set(PaneOption::PendingTool, tool));
            }
        }
        Kind::Notification(kind) => match kind.as_str() {
            // The dialog is up: Claude Code's notification comes ~6 s after it appears (later
            // than its PermissionRequest, which may already have blocked the pane for it), and
            // Gemini CLI's ToolPermission is its only sign of a permission wait.
            "permission_prompt" | "ToolPermission" => blocked(&mut out, "permission"),
            "elicitation_dialog" => blocked(&mut out, "question"),
            _ => {}
        },
        Kind::Stop => {
            out.extend([
                set(PaneOption::State, "idle"),
                set(PaneOption::Since, &now),
                set(PaneOption::TurnAt, &now),
                set(PaneOption::Attention, "1"),
            ]);
            out.extend(clear_turn());
        }
        // The turn ended on an API error: the agent waits for the person (a rate limit to wait
        // out, a key to fix), which is what blocked says.
        Kind::StopFailure(error) => {
            out.extend(clear_turn());
            out.extend([
                set(PaneOption::State, "blocked"),
                set(PaneOption::Detail, failure_detail(error)),
                set(PaneOption::Since, &now),
            ]);
        }
        Kind::PreCompact => {
            out.extend([
                set(PaneOption::State, "blocked"),
                set(PaneOption::Detail, "compacting"),
                set(PaneOption::Since, &now),
            ]);
        }
        // After a compaction the agent waits for the next turn (a manual /compact) or goes on
        // at once (an automatic one: its next tool event says working again).
        Kind::PostCompact => {
            out.extend([set(PaneOption::State, "idle"), set(PaneOption::Since, &now)]);
            out.push(unset(PaneOption::Detail));
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
            .map(|stamp| match (&stamp.value, stamp.unless_state) {
                (Some(v), None) => format!("{}={v}", stamp.option),
                (Some(v), Some(state)) => format!("{}={v} unless {state}", stamp.option),
                (None, _) => format!("-{}", stamp.option),
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
        // A run that goes on keeps its start; a pane coming back to work starts a new one.
        assert!(
            got.contains(&"@agent_since=9 unless working".to_owned()),
            "{got:?}"
        );
        assert!(
            got.iter().position(|s| s.contains("@agent_since"))
                < got.iter().position(|s| s.starts_with("@agent_state")),
            "tested before the state is written: {got:?}"
        );
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

    /// A dialog's notification blocks a working pane from now (a new episode, so a second
    /// dialog in one turn is not the first's), and keeps the episode of a pane its
    /// PermissionRequest already blocked.
    #[test]
    fn a_permission_notification_is_a_new_episode_unless_already_blocked() {
        for (agent, payload) in [
            (
                "claude",
                r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#,
            ),
            (
                "gemini",
                r#"{"hook_event_name":"Notification","notification_type":"ToolPermission","details":{"type":"exec","title":"Confirm Shell Command","command":"rm -rf build","rootCommand":"rm"}}"#,
            ),
        ] {
            let got = names(&stamps(&parse(payload, None), agent, 20));
            assert_eq!(
                got[2..],
                [
                    "@agent_since=20 unless blocked",
                    "@agent_state=blocked",
                    "@agent_detail=permission"
                ],
                "{agent}"
            );
        }
    }

    #[test]
    fn a_question_asked_through_the_permission_hook_blocks_on_a_question() {
        let hook = parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which?","header":"Pick","options":[{"label":"A","description":"a"}],"multiSelect":false}]}}"#,
            None,
        );
        let got = names(&stamps(&hook, "claude", 30));
        assert!(
            got.contains(&"@agent_detail=question".to_owned()),
            "{got:?}"
        );
        assert!(got.contains(&"@agent_since=30".to_owned()), "{got:?}");
    }

    #[test]
    fn an_api_error_blocks_the_pane_with_its_class() {
        for (error, detail) in [
            ("rate_limit", "rate_limit"),
            ("server_error", "error"),
            ("authentication_failed", "error"),
            ("", "error"),
        ] {
            let hook = parse(
                &format!(r#"{{"hook_event_name":"StopFailure","error":"{error}"}}"#),
                None,
            );
            let got = names(&stamps(&hook, "claude", 40));
            for want in [
                "@agent_state=blocked".to_owned(),
                format!("@agent_detail={detail}"),
                "@agent_since=40".to_owned(),
                "-@agent_pending_tool".to_owned(),
            ] {
                assert!(got.contains(&want), "{error}: {want}: {got:?}");
            }
            let detail_at = got
                .iter()
                .position(|s| s == &format!("@agent_detail={detail}"));
            let cleared_at = got.iter().position(|s| s == "-@agent_detail");
            assert!(
                cleared_at < detail_at,
                "the turn's detail is cleared first: {got:?}"
            );
        }
    }

    #[test]
    fn session_end_unsets_every_stamp_but_the_mute() {
        let hook = parse(r#"{"hook_event_name":"SessionEnd"}"#, None);
        let got = stamps(&hook, "claude", 1);
        assert!(got.iter().all(|s| s.value.is_none()));
        assert!(got.iter().any(|s| s.option.as_str() == "@agent_name"));
        assert!(!got.iter().any(|s| s.option.as_str() == "@agent_mute_until"));
        assert_eq!(got.len(), PaneOption::ALL.len() - 1, "{got:?}");
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
