//! Versioning and decode classification: unknown fields dropped, unknown open tokens kept, closed
//! tokens refused, a newer schema recognised before its body is read, and every bad line mapped
//! to the id and code the host must answer with.

use schema::*;

fn request(line: &str) -> Result<Envelope<Request>, DecodeError> {
    decode_line::<Request>(line)
}

#[test]
fn an_unknown_field_is_dropped_on_reencode() {
    let line = r#"{"schema":1,"id":"1","t":"hello","app":"a","future":{"x":[1,2]},"app_version":"1","device":"d","zz":null}"#;
    let frame = request(line).unwrap();
    assert_eq!(
        encode_line(&frame),
        "{\"schema\":1,\"id\":\"1\",\"t\":\"hello\",\"app\":\"a\",\"app_version\":\"1\",\"device\":\"d\"}\n"
    );
}

#[test]
fn an_unknown_field_inside_a_nested_object_is_dropped() {
    let line = r#"{"schema":1,"id":"3","t":"snapshot","selector":{"session":"w","colour":"blue"}}"#;
    let frame = request(line).unwrap();
    assert_eq!(
        encode_line(&frame).trim_end(),
        r#"{"schema":1,"id":"3","t":"snapshot","selector":{"session":"w"}}"#
    );
}

#[test]
fn an_unknown_open_token_is_preserved() {
    let line = r#"{"schema":1,"id":"6","t":"card","card":"informational","detail":"sandbox_escape","headline":"Waiting for you"}"#;
    let frame = decode_line::<Response>(line).unwrap();
    match &frame.body {
        Response::Card(Card::Informational(card)) => {
            assert!(card.detail.is_other());
            assert_eq!(card.detail.as_str(), "sandbox_escape");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(encode_line(&frame).trim_end(), line);
}

#[test]
fn an_unknown_event_kind_keeps_its_token() {
    let line = r#"{"schema":1,"id":"9","t":"event","event":{"cursor":"c","kind":"hologram","depth":3,"ts":null,"preview":null,"body":null}}"#;
    let frame = decode_line::<Response>(line).unwrap();
    let Response::Event(reply) = &frame.body else {
        panic!("{frame:?}")
    };
    assert_eq!(reply.event.kind.as_str(), "hologram");
    assert_eq!(
        encode_line(&frame).trim_end(),
        r#"{"schema":1,"id":"9","t":"event","event":{"cursor":"c","kind":"hologram","ts":null,"preview":null,"body":null}}"#
    );
}

#[test]
fn a_closed_token_outside_the_vocabulary_is_refused() {
    let line = r#"{"schema":1,"id":"4","t":"edge","at_ms":1,"pane":"%3","agent":"claude","from":"working","to":"napping","detail":null,"locator":"w:0.0","repo":null,"branch":null}"#;
    let err = decode_line::<Response>(line).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest);
    assert_eq!(err.reply_id(), "4");
    assert!(
        err.to_string().contains("unknown variant `napping`"),
        "{err}"
    );
}

#[test]
fn a_schema_2_frame_is_recognised_before_its_body_is_parsed() {
    // The body is garbage for schema 1 (and `t` unknown): the schema still decides the answer.
    for line in [
        r#"{"schema":2,"id":"9","t":"hello","app":5}"#,
        r#"{"schema":2,"id":"9","t":"teleport","to":"mars"}"#,
        r#"{"t":"hello","id":"9","schema":2}"#,
    ] {
        let err = request(line).unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnsupportedSchema {
                id: Some("9".into()),
                schema: "2".into()
            },
            "{line}"
        );
        assert_eq!(err.code(), ErrorCode::UnsupportedSchema);
        assert_eq!(err.reply_id(), "9");
        assert_eq!(peek_schema(line), Some(2));
    }
    let err = request(r#"{"schema":2,"t":"hello"}"#).unwrap_err();
    assert_eq!(err.reply_id(), UNADDRESSED_ID, "no id to answer to");
    assert_eq!(err.code(), ErrorCode::UnsupportedSchema);
}

/// Any integer other than 1 is a schema this build does not implement, whatever its size or sign:
/// a client must learn to downgrade, not be told its line is malformed. The number is quoted as
/// written.
#[test]
fn an_integer_schema_of_any_size_is_unsupported() {
    for schema in [
        "18446744073709551615",
        "-0",
        "0",
        "-1",
        "9223372036854775808",
        "-9223372036854775809",
        "100000000000000000000000000000000000000000000000000",
    ] {
        let line = format!(r#"{{"schema":{schema},"id":"9","t":"hello"}}"#);
        let err = request(&line).unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnsupportedSchema {
                id: Some("9".into()),
                schema: schema.into()
            },
            "{line}"
        );
        assert_eq!(err.code(), ErrorCode::UnsupportedSchema);
        assert!(
            err.to_string()
                .starts_with(&format!("schema {schema} is not implemented")),
            "{err}"
        );
    }
    let spaced = r#"{ "schema" : 2 , "id":"9","t":"hello"}"#;
    assert_eq!(
        request(spaced).unwrap_err(),
        DecodeError::UnsupportedSchema {
            id: Some("9".into()),
            schema: "2".into()
        }
    );
}

/// A `schema` that is not an integer (a fraction or exponent even when whole, a string, null)
/// is a malformed envelope, answered with the line's id when it has one.
#[test]
fn a_schema_that_is_not_an_integer_is_a_bad_request() {
    for schema in ["1.0", "1e0", "1E2", "\"1\"", "null", "true", "[1]", "{}"] {
        let line = format!(r#"{{"schema":{schema},"id":"9","t":"hello"}}"#);
        let err = request(&line).unwrap_err();
        assert_eq!(err.code(), ErrorCode::BadRequest, "{line}");
        assert_eq!(err.reply_id(), "9", "{line}");
        assert!(err.to_string().contains("no integer `schema`"), "{err}");
    }
    let err = request(r#"{"schema":1.5,"t":"hello"}"#).unwrap_err();
    assert_eq!(err.reply_id(), UNADDRESSED_ID);
    assert_eq!(err.code(), ErrorCode::BadRequest);
}

#[test]
fn an_envelope_key_nested_past_any_recursion_limit_still_leaves_the_id_recoverable() {
    let deep = format!("{}1{}", "[".repeat(400), "]".repeat(400));
    for line in [
        format!(r#"{{"schema":1,"id":"9","t":{deep}}}"#),
        format!(r#"{{"schema":{deep},"id":"9","t":"hello"}}"#),
        format!(r#"{{"schema":1,"t":"hello","id":"9","x":{deep}}}"#),
    ] {
        let err = request(&line).unwrap_err();
        assert_eq!(err.reply_id(), "9", "{}", &line[..40]);
        assert_eq!(err.code(), ErrorCode::BadRequest);
    }
}

#[test]
fn lines_without_a_recoverable_id_are_answered_with_id_0() {
    for line in [
        "not json",
        "",
        "[1,2,3]",
        r#""a string""#,
        "{\"schema\":1,\"id\":\"1\",\"t\":\"hel",
        r#"{"schema":1,"t":"hello","app":"a","app_version":"1","device":"d"}"#,
        r#"{"schema":1,"id":12,"t":"snapshot"}"#,
        r#"{"schema":1,"id":null,"t":"snapshot"}"#,
        r#"{"id":5}"#,
    ] {
        let err = request(line).unwrap_err();
        assert!(
            matches!(err, DecodeError::Unaddressed { .. }),
            "{line}: {err:?}"
        );
        assert_eq!(err.reply_id(), "0");
        assert_eq!(err.code(), ErrorCode::BadRequest);
    }
}

#[test]
fn an_object_with_a_string_id_is_answered_with_that_id() {
    for (line, needle) in [
        (
            r#"{"schema":1,"id":"x7","t":"teleport"}"#,
            "unknown frame `teleport`",
        ),
        (r#"{"schema":1,"id":"x7"}"#, "no string `t`"),
        (r#"{"schema":1,"id":"x7","t":3}"#, "no string `t`"),
        (r#"{"id":"x7","t":"snapshot"}"#, "no integer `schema`"),
        (
            r#"{"schema":1.5,"id":"x7","t":"snapshot"}"#,
            "no integer `schema`",
        ),
        (
            r#"{"schema":1,"id":"x7","t":"card"}"#,
            "missing field `pane`",
        ),
        (
            r#"{"schema":1,"id":"x7","t":"card","pane":3}"#,
            "invalid type",
        ),
        (
            r#"{"schema":1,"id":"x7","t":"window","pane":"%1","last":"many"}"#,
            "invalid type",
        ),
        (
            r#"{"schema":1,"id":"x7","t":"subscribe","events":"yes"}"#,
            "invalid type",
        ),
    ] {
        let err = request(line).unwrap_err();
        assert_eq!(err.reply_id(), "x7", "{line}");
        assert_eq!(err.code(), ErrorCode::BadRequest, "{line}");
        assert!(err.to_string().contains(needle), "{line}: {err}");
    }
}

#[test]
fn a_trailing_newline_is_accepted_and_trailing_garbage_is_not() {
    assert!(request("{\"schema\":1,\"id\":\"1\",\"t\":\"snapshot\"}\n").is_ok());
    let err = request(r#"{"schema":1,"id":"1","t":"snapshot"} {}"#).unwrap_err();
    assert_eq!(err.reply_id(), "0");
}

#[test]
fn a_row_with_an_unknown_state_token_is_refused_but_unknown_detail_is_kept() {
    let base = r#"{"pane":"%4","agent":"codex","state":"STATE","detail":"DETAIL","since_ms":null,"episode_ms":0,"locator":"w:0.0","attention":false,"done":false,"session":"w","transcript":null,"permission_request":null,"stamped_at_ms":null,"context":null,"context_at_ms":null,"muted":false,"repo":null,"branch":null,"worktree":null,"pending_tool":null,"pending_call":null,"server":"/tmp/s","host":"h"}"#;
    let ok = base
        .replace("STATE", "blocked")
        .replace("DETAIL", "new_detail");
    let row: FleetRow = serde_json::from_str(&ok).unwrap();
    assert_eq!(row.detail.as_ref().map(Detail::as_str), Some("new_detail"));
    assert_eq!(serde_json::to_string(&row).unwrap(), ok);
    let done = base.replace("STATE", "done").replace("DETAIL", "plan");
    assert!(serde_json::from_str::<FleetRow>(&done).is_err());
}
