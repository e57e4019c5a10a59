//! Judging one line an app sent against the frame the session expects from it: one JSON object,
//! valid against `requests.schema.json`, decoded through the wire types, and, re-encoded in
//! canonical form, matching the session's frame with the app's own values (its `id`, hello's
//! `app`, `app_version` and `device`) left open. Pure: bytes in, a judgement out.
//!
//! Matching the canonical form rather than the bytes is what a host does too: key order, spacing,
//! an unknown key (ignored on read) or an omitted `events` (false by default) change nothing in
//! what the request means, and so nothing in the answer; every value the wire types carry must be
//! the session's.

use golden::clock::Window;
use golden::pattern::{self, Captures};
use golden::validate::FrameSchema;
use schema::{Frames as _, Request, decode_line, encode_line};
use serde_json::Value;

use super::script::{LINE_CAP, Receive};

/// The verdict on one line.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The line's `id` when it has a string one: the answers to it carry this id.
    pub app_id: Option<String>,
    /// `None` when the frame passed; else why it failed.
    pub failure: Option<String>,
    /// The session's frame as the app should have sent it, its open values filled with the app's
    /// where it gave them.
    pub expected: Value,
}

impl Judgement {
    /// Whether the line passed.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// The verdict on a line longer than the `read_cap` bytes the replayer holds: over the cap, its
/// bytes never read.
pub fn too_long(receive: &Receive, read_cap: usize) -> Judgement {
    Judgement {
        app_id: None,
        failure: Some(format!(
            "the line has more than {read_cap} bytes, over the {LINE_CAP}-byte cap a host enforces"
        )),
        expected: pattern::render_expected(&receive.pattern, None, &Captures::new(), Window::ANY),
    }
}

/// Judges one line (without its `\n`).
pub fn judge(bytes: &[u8], receive: &Receive, requests: &FrameSchema) -> Judgement {
    let expected = |actual: Option<&Value>| {
        pattern::render_expected(&receive.pattern, actual, &Captures::new(), Window::ANY)
    };
    let fail = |app_id: Option<String>, failure: String, actual: Option<&Value>| Judgement {
        app_id,
        failure: Some(failure),
        expected: expected(actual),
    };
    if bytes.len() > LINE_CAP {
        return fail(
            None,
            format!(
                "the line has {} bytes, over the {LINE_CAP}-byte cap a host enforces",
                bytes.len()
            ),
            None,
        );
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return fail(None, "the line is not UTF-8".into(), None);
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => return fail(None, "the line is not a JSON object".into(), None),
        Err(err) => return fail(None, format!("the line is not JSON ({err})"), None),
    };
    let app_id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    if let Err(err) = requests.validate(&value) {
        return fail(app_id, format!("the frame {err}"), Some(&value));
    }
    let decoded = match decode_line::<Request>(text) {
        Ok(decoded) => decoded,
        Err(err) => {
            return fail(
                app_id,
                format!("the frame does not decode through the wire types: {err}"),
                Some(&value),
            );
        }
    };
    let canonical: Value =
        serde_json::from_str(&encode_line(&decoded)).expect("encoded frames are JSON");
    // A frame an app sends holds no wildcard, so no `$now` either.
    match pattern::matches(
        &receive.pattern,
        &canonical,
        &mut Captures::new(),
        Window::ANY,
    ) {
        Ok(()) => Judgement {
            app_id,
            failure: None,
            expected: expected(Some(&canonical)),
        },
        Err(mismatch) => {
            let failure = if mismatch.path == "/t" {
                format!(
                    "expected a `{}` frame, received `{}`",
                    receive.t,
                    decoded.body.name()
                )
            } else {
                format!("the frame differs {mismatch}")
            };
            fail(app_id, failure, Some(&canonical))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::replay::script::client_neutral;

    fn receive(frame: Value) -> Receive {
        Receive {
            line: 5,
            t: frame["t"].as_str().unwrap().to_owned(),
            session_id: frame["id"].as_str().unwrap().to_owned(),
            pattern: client_neutral(&frame),
            wait_ms: 100,
        }
    }

    fn check(line: &str, frame: Value) -> Judgement {
        let requests = FrameSchema::generated("requests.schema.json").unwrap();
        judge(line.as_bytes(), &receive(frame), &requests)
    }

    fn subscribe() -> Value {
        json!({"schema": 1, "id": "2", "t": "subscribe", "events": false,
               "selector": {"agent": "opencode"}})
    }

    #[test]
    fn the_apps_own_id_and_hello_fields_pass() {
        let judged = check(
            r#"{"schema":1,"id":"a7","t":"hello","app":"phone","app_version":"3.1","device":"SHA256:me"}"#,
            json!({"schema": 1, "id": "1", "t": "hello", "app": "corral-kit",
                   "app_version": "1.0.0", "device": "SHA256:kit-phone"}),
        );
        assert_eq!(judged.failure, None);
        assert_eq!(judged.app_id.as_deref(), Some("a7"));
        assert_eq!(judged.expected["app"], json!("phone"));
    }

    #[test]
    fn meaning_not_spelling_is_judged() {
        // Keys in another order, `events` left to its default, an unknown key: the same request.
        let judged = check(
            r#"{ "t":"subscribe", "selector":{"agent":"opencode"}, "id":"s", "schema":1, "x":1 }"#,
            subscribe(),
        );
        assert!(judged.passed(), "{judged:?}");
    }

    #[test]
    fn a_wrong_t_is_named() {
        let judged = check(r#"{"schema":1,"id":"s","t":"snapshot"}"#, subscribe());
        assert_eq!(
            judged.failure.as_deref(),
            Some("expected a `subscribe` frame, received `snapshot`")
        );
        assert_eq!(judged.app_id.as_deref(), Some("s"));
    }

    #[test]
    fn a_different_value_names_its_path_and_the_expected_frame_shows_it() {
        let judged = check(
            r#"{"schema":1,"id":"s","t":"subscribe","events":false,"selector":{"agent":"codex"}}"#,
            subscribe(),
        );
        assert_eq!(
            judged.failure.as_deref(),
            Some(r#"the frame differs at /selector/agent: expected "opencode", received "codex""#)
        );
        assert_eq!(
            judged.expected,
            json!({"schema": 1, "id": "s", "t": "subscribe", "events": false,
                   "selector": {"agent": "opencode"}})
        );
    }

    #[test]
    fn a_missing_member_is_named() {
        let judged = check(
            r#"{"schema":1,"id":"s","t":"subscribe","events":false}"#,
            subscribe(),
        );
        assert_eq!(
            judged.failure.as_deref(),
            Some("the frame differs at /selector: expected `selector`, but the frame has none")
        );
    }

    #[test]
    fn an_invalid_frame_names_the_schema_path() {
        let judged = check(
            r#"{"schema":1,"id":"s","t":"subscribe","events":"yes"}"#,
            subscribe(),
        );
        let failure = judged.failure.unwrap();
        assert!(
            failure.starts_with("the frame violates requests.schema.json: /events: "),
            "{failure}"
        );
        assert_eq!(judged.app_id.as_deref(), Some("s"));
    }

    #[test]
    fn lines_that_are_not_frames_fail_without_an_id() {
        for (line, reason) in [
            ("[1,2]", "the line is not a JSON object"),
            ("{\"schema\":", "the line is not JSON"),
        ] {
            let judged = check(line, subscribe());
            assert!(judged.failure.unwrap().starts_with(reason), "{line}");
            assert_eq!(judged.app_id, None);
            assert_eq!(judged.expected["id"], json!("$string"));
        }
        let requests = FrameSchema::generated("requests.schema.json").unwrap();
        let judged = judge(b"{\"id\":\"\xff\"}", &receive(subscribe()), &requests);
        assert_eq!(judged.failure.as_deref(), Some("the line is not UTF-8"));
    }

    #[test]
    fn a_line_over_the_cap_fails_before_it_is_read() {
        let line = format!(
            r#"{{"schema":1,"id":"s","t":"subscribe","events":false,"pad":"{}"}}"#,
            "x".repeat(LINE_CAP)
        );
        let judged = check(&line, subscribe());
        assert_eq!(
            judged.failure.unwrap(),
            format!(
                "the line has {} bytes, over the 65536-byte cap a host enforces",
                line.len()
            )
        );
    }

    #[test]
    fn a_later_schema_is_refused_by_the_schema() {
        let judged = check(
            r#"{"schema":2,"id":"s","t":"subscribe","events":false,"selector":{"agent":"opencode"}}"#,
            subscribe(),
        );
        assert!(judged.failure.unwrap().contains("/schema"));
    }
}
