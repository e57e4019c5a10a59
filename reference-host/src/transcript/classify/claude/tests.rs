//! Claude Code records to events, one shape at a time, each as real files of the version named
//! write it (golden/fixtures/transcripts/README.md has the sources).

use super::super::tests::{kinds, node};
use super::*;

fn one_kind(text: &str) -> EventKind {
    let record = node(text);
    let parts = classify(&record, true);
    assert_eq!(parts.len(), 1, "{text}");
    parts[0].kind.clone()
}

fn type_name(kind: &EventKind) -> &str {
    match kind {
        EventKind::Bookkeeping(b) => &b.type_name,
        EventKind::Unknown(t) => &t.type_name,
        other => panic!("not bookkeeping: {other:?}"),
    }
}

#[test]
fn a_user_prompt_is_a_user_message_with_its_size_and_preview() {
    let record = node(
        r#"{"type":"user","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"fix it\nplease"}}"#,
    );
    let parts = classify(&record, true);
    assert_eq!(kinds(&parts), ["user_message"]);
    assert_eq!(parts[0].ts, Some("2026-01-01T00:00:00Z"));
    assert_eq!(parts[0].preview.as_deref(), Some("fix it\nplease"));
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
            {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls","description":"list"},"caller":{"type":"direct"}},
            {"type":"hologram"}]}}"#,
    );
    let parts = classify(&record, false);
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
    assert_eq!(parts[2].preview.as_deref(), Some("ls"));
    assert_eq!(type_name(&parts[3].kind), "assistant:hologram");
}

#[test]
fn tool_results_carry_the_call_id_and_error_status() {
    let record = node(
        r#"{"type":"user","message":{"content":[
            {"type":"tool_result","tool_use_id":"toolu_1","content":"ok"},
            {"type":"tool_result","content":"<tool_use_error>File does not exist.</tool_use_error>","is_error":true,"tool_use_id":"toolu_2"}]},
            "toolUseResult":{"status":"completed","agentId":"a1"}}"#,
    );
    let parts = classify(&record, true);
    assert_eq!(
        kinds(&parts),
        ["tool_result", "tool_result", "subagent_ref"]
    );
    let EventKind::ToolResult(second) = &parts[1].kind else {
        panic!()
    };
    assert_eq!(second.status, ToolStatus::Error);
    assert_eq!(second.call_id.as_deref(), Some("toolu_2"));
    let EventKind::ToolResult(first) = &parts[0].kind else {
        panic!()
    };
    assert_eq!(
        first.status,
        ToolStatus::Ok,
        "is_error absent is a success (2.1)"
    );
}

/// 2.0.76 to 2.1.6x stream one message as one record per block, each with `stop_reason: null`
/// and a copy of the usage whose output count is only final, if ever, on the last part.
#[test]
fn usage_is_counted_once_on_the_last_part_of_a_message_whatever_its_stop_reason() {
    let part = |block: &str, output: u64| {
        format!(
            r#"{{"type":"assistant","message":{{"model":"claude-opus-4-6","id":"msg_01","type":"message","role":"assistant","content":[{block}],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":3,"cache_creation_input_tokens":15005,"cache_read_input_tokens":11442,"output_tokens":{output},"service_tier":"standard"}}}}}}"#
        )
    };
    let first = node(&part(r#"{"type":"text","text":"Let me look."}"#, 9));
    assert_eq!(kinds(&classify(&first, false)), ["assistant_text"]);
    let last = node(&part(
        r#"{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a"}}"#,
        231,
    ));
    let parts = classify(&last, true);
    assert_eq!(kinds(&parts), ["tool_call", "usage"]);
    let EventKind::Usage(u) = &parts[1].kind else {
        panic!()
    };
    assert_eq!(
        (u.input, u.output, u.total),
        (Some(26450), Some(231), Some(26681))
    );
    // No turn end from a stop reason: turn ends come from system records.
    let ended = node(
        r#"{"type":"assistant","message":{"id":"msg_02","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}}"#,
    );
    assert_eq!(kinds(&classify(&ended, true)), ["assistant_text", "usage"]);
}

#[test]
fn a_synthetic_api_error_ends_the_turn_with_its_class_and_counts_no_usage() {
    let record = node(
        r#"{"type":"assistant","message":{"id":"e1","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"API Error: Rate limit reached"}]},"error":"rate_limit","isApiErrorMessage":true}"#,
    );
    let parts = classify(&record, true);
    assert_eq!(kinds(&parts), ["assistant_text", "turn_boundary"]);
    let EventKind::TurnBoundary(end) = &parts[1].kind else {
        panic!()
    };
    assert_eq!(end.reason.as_deref(), Some("rate_limit"));
}

#[test]
fn turn_ends_come_from_turn_duration_or_a_2_0_stop_hook_summary() {
    let duration = one_kind(
        r#"{"type":"system","subtype":"turn_duration","durationMs":59902,"messageCount":69,"version":"2.1.220"}"#,
    );
    assert!(matches!(duration, EventKind::TurnBoundary(ref t) if t.boundary == Boundary::End));
    let summary = |version: &str| {
        one_kind(&format!(
            r#"{{"type":"system","subtype":"stop_hook_summary","hookCount":1,"hookInfos":[],"hookErrors":[],"preventedContinuation":false,"stopReason":"","hasOutput":false,"level":"suggestion","version":"{version}"}}"#
        ))
    };
    assert!(matches!(summary("2.0.76"), EventKind::TurnBoundary(_)));
    // 2.1 writes a turn_duration after it: the summary is the hooks' bookkeeping.
    assert_eq!(type_name(&summary("2.1.39")), "system:stop_hook_summary");
    assert_eq!(
        type_name(&one_kind(
            r#"{"type":"system","subtype":"api_error","level":"error","error":{},"retryInMs":558.9,"retryAttempt":1,"maxRetries":10}"#
        )),
        "system:api_error"
    );
}

#[test]
fn an_interrupt_ends_the_turn() {
    let record = node(
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#,
    );
    let parts = classify(&record, true);
    let EventKind::TurnBoundary(end) = &parts[0].kind else {
        panic!("{parts:?}")
    };
    assert_eq!(end.reason.as_deref(), Some("interrupted"));
}

/// After `/compact`, 2.0.76 writes the boundary, the summary, a caveat, the command's echo and its
/// output with the terminal's escapes: none of it is the person's words.
#[test]
fn compaction_artefacts_are_bookkeeping_with_plain_previews() {
    let boundary = one_kind(
        r#"{"parentUuid":null,"logicalParentUuid":"u0","type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"level":"info","compactMetadata":{"trigger":"manual","preTokens":21558}}"#,
    );
    assert!(
        matches!(boundary, EventKind::Compaction(ref c) if c.compaction.as_deref() == Some("manual"))
    );
    let summary = node(
        r#"{"type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:"},"isVisibleInTranscriptOnly":true,"isCompactSummary":true}"#,
    );
    let parts = classify(&summary, true);
    assert_eq!(type_name(&parts[0].kind), "user:compact_summary");
    let caveat = node(
        r#"{"type":"user","message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands."},"isMeta":true}"#,
    );
    assert_eq!(type_name(&classify(&caveat, true)[0].kind), "user:meta");
    let echo = node(
        r#"{"type":"user","message":{"role":"user","content":"<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args></command-args>"}}"#,
    );
    let parts = classify(&echo, true);
    assert_eq!(type_name(&parts[0].kind), "user:command");
    assert_eq!(parts[0].preview.as_deref(), Some("/compact"));
    let output = node(
        r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>\u001b[2mCompacted (ctrl+o to see full summary)\u001b[22m</local-command-stdout>"}}"#,
    );
    let parts = classify(&output, true);
    assert_eq!(type_name(&parts[0].kind), "user:command_output");
    assert_eq!(
        parts[0].preview.as_deref(),
        Some("\u{1b}[2mCompacted (ctrl+o to see full summary)\u{1b}[22m"),
        "the tags go here; the header cleans the escapes"
    );
}

#[test]
fn side_records_of_every_version_are_bookkeeping_and_only_new_types_are_unknown() {
    for (record, name) in [
        (
            r#"{"type":"summary","summary":"Fix the parser","leafUuid":"u"}"#,
            "summary",
        ),
        (
            r#"{"type":"queue-operation","operation":"enqueue","timestamp":"t","sessionId":"s","content":"and the docs"}"#,
            "queue-operation",
        ),
        (
            r#"{"type":"progress","data":{"type":"hook_progress","hookEvent":"PreToolUse","hookName":"PreToolUse:Bash","command":"x"},"toolUseID":"toolu_1","parentToolUseID":"toolu_1"}"#,
            "progress",
        ),
        (
            r#"{"type":"pr-link","sessionId":"s","prNumber":55,"prUrl":"https://github.com/o/r/pull/55","prRepository":"o/r","timestamp":"t"}"#,
            "pr-link",
        ),
        (
            r#"{"type":"last-prompt","lastPrompt":"ship it","sessionId":"s"}"#,
            "last-prompt",
        ),
        (r#"{"type":"tag","sessionId":"s","tag":"v2"}"#, "tag"),
        (
            r#"{"type":"worktree-state","sessionId":"s","worktreeSession":null}"#,
            "worktree-state",
        ),
        (
            r#"{"type":"content-replacement","sessionId":"s","replacements":[]}"#,
            "content-replacement",
        ),
        (
            r#"{"type":"attachment","attachment":{"type":"hook_success","hookName":"Stop"}}"#,
            "attachment:hook_success",
        ),
    ] {
        assert_eq!(type_name(&one_kind(record)), name, "{record}");
    }
    assert!(matches!(
        one_kind(r#"{"type":"attachment","attachment":{"type":"file","filename":"src/a.rs"}}"#),
        EventKind::Attachment(_)
    ));
    assert!(matches!(
        one_kind(r#"{"type":"telepathy"}"#),
        EventKind::Unknown(_)
    ));
    assert!(matches!(
        one_kind(r#"{"no_type":1}"#),
        EventKind::Unknown(_)
    ));
}

#[test]
fn marks_say_where_a_message_can_go_on() {
    let mark_of = |text: &str| mark(&node(text));
    assert_eq!(
        mark_of(r#"{"type":"assistant","message":{"id":"msg_1"}}"#),
        Mark::Part(Some("msg_1".into()))
    );
    assert_eq!(mark_of(r#"{"type":"progress","data":{}}"#), Mark::Other);
    assert_eq!(
        mark_of(
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t"}]}}"#
        ),
        Mark::Other
    );
    assert_eq!(
        mark_of(r#"{"type":"user","message":{"content":"next"}}"#),
        Mark::Break
    );
    assert_eq!(
        mark_of(r#"{"type":"system","subtype":"turn_duration"}"#),
        Mark::Break
    );
}

#[test]
fn session_meta_takes_each_field_from_the_first_record_that_has_it() {
    let head = [
        node(
            r#"{"type":"queue-operation","operation":"dequeue","timestamp":"t","sessionId":"s0"}"#,
        ),
        node(
            r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#,
        ),
        node(r#"{"type":"user","sessionId":"s1","cwd":"/w","version":"2.1.39"}"#),
        node(r#"{"type":"assistant","message":{"model":"<synthetic>"}}"#),
        node(r#"{"type":"assistant","message":{"model":"claude-x"}}"#),
    ];
    let meta = session_meta(&head, None).unwrap();
    assert_eq!(meta.session_id.as_deref(), Some("s0"));
    assert_eq!(meta.cwd.as_deref(), Some("/w"));
    assert_eq!(meta.version.as_deref(), Some("2.1.39"));
    assert_eq!(meta.model.as_deref(), Some("claude-x"));
    let named = session_meta(&head, Some("5f1c0e2a-7d4b-4c1e-9a53-2b8f0d6e1a77")).unwrap();
    assert_eq!(
        named.session_id.as_deref(),
        Some("5f1c0e2a-7d4b-4c1e-9a53-2b8f0d6e1a77"),
        "the file's own name, as Claude Code names it"
    );
    assert_eq!(session_meta(&head[1..2], None), None);
}
