//! Codex rollout records to events, one shape at a time, as the rollouts of each era write them
//! (golden/fixtures/transcripts/README.md has the sources).

use super::super::tests::{kinds, node};
use super::*;

fn one(text: &str) -> Part<'static> {
    let record: &'static Node = Box::leak(Box::new(node(text)));
    let mut parts = classify(record);
    assert_eq!(parts.len(), 1, "{text}");
    parts.remove(0)
}

fn type_name(kind: &EventKind) -> String {
    match kind {
        EventKind::Bookkeeping(b) => b.type_name.clone(),
        EventKind::Unknown(t) => t.type_name.clone(),
        other => panic!("not bookkeeping: {other:?}"),
    }
}

fn status(output: &str) -> ToolStatus {
    let record = serde_json::json!({
        "timestamp": "t",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "c", "output": output},
    });
    let EventKind::ToolResult(result) = one(&record.to_string()).kind else {
        panic!()
    };
    result.status
}

#[test]
fn a_function_call_reads_its_argument_keys_from_the_json_string() {
    let part = one(
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cargo test\",\"workdir\":\"/w\"}","call_id":"call_1"}}"#,
    );
    let EventKind::ToolCall(call) = part.kind else {
        panic!()
    };
    assert_eq!(call.name, "exec_command");
    assert_eq!(call.arg_keys, ["cmd", "workdir"]);
    assert_eq!(call.call_id.as_deref(), Some("call_1"));
}

/// Every form a failed call takes, in every era (codex-rs `tools/mod.rs` formats them).
#[test]
fn a_failed_call_is_an_error_in_every_output_form() {
    assert_eq!(
        status(r#"{"output":"x","metadata":{"exit_code":2,"duration_seconds":0.1}}"#),
        ToolStatus::Error
    );
    assert_eq!(
        status(r#"{"output":"ok","metadata":{"exit_code":0,"duration_seconds":0.1}}"#),
        ToolStatus::Ok
    );
    assert_eq!(
        status("execution error: No such file or directory (os error 2)"),
        ToolStatus::Error
    );
    assert_eq!(
        status("Exit code: 2\nWall time: 0.4 seconds\nOutput:\nerror[E0425]"),
        ToolStatus::Error
    );
    assert_eq!(
        status("Exit code: 0\nWall time: 0.4 seconds\nOutput:\nok"),
        ToolStatus::Ok
    );
    assert_eq!(
        status(
            "Chunk ID: 3f2a1c\nWall time: 2.5100 seconds\nProcess exited with code 101\nOutput:\ntest result: FAILED"
        ),
        ToolStatus::Error
    );
    assert_eq!(
        status(
            "Chunk ID: 3f2a1c\nWall time: 0.0100 seconds\nProcess exited with code 0\nOutput:\n"
        ),
        ToolStatus::Ok
    );
    assert_eq!(
        status(
            "Chunk ID: 9a\nWall time: 10.0020 seconds\nProcess running with session ID 3\nOutput:\nCompiling"
        ),
        ToolStatus::Pending
    );
    assert_eq!(
        status("command timed out after 10000 milliseconds\nExit code: 124"),
        ToolStatus::Error
    );
    assert_eq!(status("Plan updated"), ToolStatus::Ok);
    // An output that only mentions an exit code is not one.
    assert_eq!(
        status("grep found: Process exited with code 1"),
        ToolStatus::Ok
    );
}

/// A long output is cut when the record is read, and the JSON text keeps its exit code after it.
#[test]
fn a_long_outputs_exit_code_is_read_from_its_tail() {
    let long = "x".repeat(100_000);
    let output =
        serde_json::json!({"output": long, "metadata": {"exit_code": 1, "duration_seconds": 3.2}})
            .to_string();
    let record = serde_json::json!({
        "timestamp": "t",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "c", "output": output},
    })
    .to_string();
    let node = parse_slice(
        record.as_bytes(),
        Limits {
            string: 16 * 1024,
            total: 256 * 1024,
            depth: 64,
        },
    )
    .unwrap();
    let EventKind::ToolResult(result) = &classify(&node)[0].kind else {
        panic!()
    };
    assert_eq!(result.status, ToolStatus::Error);
}

fn output_preview_of(output: &str) -> Option<String> {
    let record = serde_json::json!({
        "timestamp": "t",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "c", "output": output},
    });
    one(&record.to_string()).preview.map(|p| p.into_owned())
}

/// A tool result's preview is the output a person reads, not the form Codex wraps it in: the
/// JSON text's `output` decoded (escapes, a surrogate pair, a string cut before its end), unified
/// exec's text after `Output:` (its exit line when it printed nothing), other forms as written.
#[test]
fn a_tool_results_preview_is_its_output_not_its_wrapping() {
    let json_text = |output: &str| {
        serde_json::json!({"output": output, "metadata": {"exit_code": 0, "duration_seconds": 0.0}})
            .to_string()
    };
    let cases = [
        (
            json_text("Success. Updated the following files:\nM src/a.rs\n"),
            "Success. Updated the following files:\nM src/a.rs\n",
        ),
        (
            json_text("say \"hi\"\t\\ \u{e9}\u{1F600}"),
            "say \"hi\"\t\\ \u{e9}\u{1F600}",
        ),
        (
            r#"{"output":"\ud83d\ude00 ok \ud83d lone"#.to_owned(),
            "\u{1F600} ok \u{FFFD} lone",
        ),
        (
            "Chunk ID: c011f8\nWall time: 0.2 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\nrunning 3 tests\n".to_owned(),
            "\nrunning 3 tests\n",
        ),
        (
            "Chunk ID: 0fcd4f\nWall time: 1.0 seconds\nProcess exited with code 2\nOutput:\n".to_owned(),
            "Process exited with code 2",
        ),
        (
            "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nboom\n".to_owned(),
            "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nboom\n",
        ),
        (
            "execution error: No such file or directory (os error 2)".to_owned(),
            "execution error: No such file or directory (os error 2)",
        ),
    ];
    for (output, want) in cases {
        assert_eq!(
            output_preview_of(&output).as_deref(),
            Some(want),
            "{output}"
        );
    }
    // As the window shows it: the first line with something on it.
    let shown = crate::transcript::header::preview(
        &output_preview_of(&json_text("\n\n  Compiling api\nFinished")).unwrap(),
        256,
    );
    assert_eq!(shown.as_deref(), Some("  Compiling api"));
}

/// Usage is the last turn's beside the window, never the session's running total.
#[test]
fn usage_is_the_last_turns_and_a_token_count_without_info_is_bookkeeping() {
    let part = one(
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":33800000,"cached_input_tokens":30000000,"output_tokens":90000,"reasoning_output_tokens":40000,"total_tokens":33890000},"last_token_usage":{"input_tokens":120000,"cached_input_tokens":110000,"output_tokens":800,"reasoning_output_tokens":300,"total_tokens":120800},"model_context_window":258400},"rate_limits":null}}"#,
    );
    let EventKind::Usage(u) = part.kind else {
        panic!()
    };
    assert_eq!(
        (u.input, u.output, u.total),
        (Some(120000), Some(800), Some(120800))
    );
    assert_eq!(u.context_window, Some(258400));
    let empty = one(
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":null}}"#,
    );
    assert_eq!(type_name(&empty.kind), "event_msg:token_count");
}

/// What Codex injects as user messages is bookkeeping; the typed prompt is a user message once
/// (its `event_msg` mirror is bookkeeping); an IDE's block shows the request typed in it.
#[test]
fn injected_context_is_not_the_persons_words() {
    let user = |text: &str| {
        serde_json::json!({
            "timestamp": "t",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        })
        .to_string()
    };
    for injected in [
        "<user_instructions>\n\nBe brief.\n\n</user_instructions>",
        "<environment_context>\n  <cwd>/home/ana/src/api</cwd>\n</environment_context>",
        "# AGENTS.md instructions for /home/ana/src/api\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
        "<user_shell_command>\n<command>\nls\n</command>\n</user_shell_command>",
        "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>",
    ] {
        assert_eq!(
            type_name(&one(&user(injected)).kind),
            "message:context",
            "{injected}"
        );
    }
    let typed = one(&user("fix the tests"));
    assert!(matches!(typed.kind, EventKind::UserMessage(ref m) if m.bytes == 13));
    let ide = one(&user(
        "# Context from my IDE setup:\n\n## Active file: src/lib.rs\n\n## Open tabs:\n- lib.rs: src/lib.rs\n\n## My request for Codex:\nrename foo to bar\n",
    ));
    assert_eq!(ide.preview.as_deref(), Some("rename foo to bar\n"));
    assert!(matches!(ide.kind, EventKind::UserMessage(ref m) if m.bytes == 18));
    let mirror = one(
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix the tests","kind":"plain"}}"#,
    );
    assert_eq!(type_name(&mirror.kind), "event_msg:user_message");
    let developer = one(
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}"#,
    );
    assert_eq!(type_name(&developer.kind), "message:developer");
}

#[test]
fn messages_reasoning_turns_and_compactions_are_classified() {
    let records = [
        r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo"}]}}"#,
        r#"{"type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAA"}}"#,
        r#"{"type":"event_msg","payload":{"type":"task_started","turn_id":"t1","model_context_window":258400}}"#,
        r#"{"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"yo"}}"#,
        r#"{"type":"event_msg","payload":{"type":"agent_message","message":"yo"}}"#,
        r#"{"type":"compacted","payload":{"message":"summary","replacement_history":[]}}"#,
        r#"{"type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{}}}"#,
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
            "assistant_text",
            "thinking",
            "turn_boundary",
            "turn_boundary",
            "bookkeeping",
            "compaction",
            "bookkeeping",
            "unknown",
            "unknown"
        ]
    );
    let EventKind::Thinking(t) = one(records[1]).kind else {
        panic!()
    };
    assert!(t.redacted);
}

/// Before the envelope (mid-2025), a rollout is a bare session record, bare response items and
/// state markers.
#[test]
fn a_rollout_from_before_the_envelope_is_read() {
    let meta = one(
        r#"{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-07-01T10:00:00.123Z","instructions":null,"git":{"branch":"main"}}"#,
    );
    let EventKind::SessionMeta(m) = meta.kind else {
        panic!()
    };
    assert_eq!(
        m.session_id.as_deref(),
        Some("5973b6c0-94b8-487b-a530-2aeb6098ae0e")
    );
    assert_eq!(type_name(&one(r#"{"record_type":"state"}"#).kind), "state");
    assert!(matches!(
        one(r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the tests"}]}"#).kind,
        EventKind::UserMessage(_)
    ));
    let EventKind::ToolResult(r) = one(
        r#"{"type":"function_call_output","call_id":"call_abc","output":"{\"output\":\"boom\",\"metadata\":{\"exit_code\":101,\"duration_seconds\":3.2}}"}"#,
    )
    .kind
    else {
        panic!()
    };
    assert_eq!(r.status, ToolStatus::Error);
    let head = [
        node(r#"{"id":"s-legacy","timestamp":"2025-07-01T10:00:00.123Z","instructions":null}"#),
        node(r#"{"record_type":"state"}"#),
    ];
    assert_eq!(
        session_meta(&head).unwrap().session_id.as_deref(),
        Some("s-legacy")
    );
}

#[test]
fn session_meta_reads_the_first_record_and_the_model_of_the_turn_context() {
    let head = [
        node(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w","cli_version":"0.46.0"}}"#),
        node(r#"{"type":"turn_context","payload":{"model":"gpt-5-codex"}}"#),
    ];
    let meta = session_meta(&head).unwrap();
    assert_eq!(meta.session_id.as_deref(), Some("s"));
    assert_eq!(meta.version.as_deref(), Some("0.46.0"));
    assert_eq!(meta.model.as_deref(), Some("gpt-5-codex"));
}
