//! Property tests: random tokens in every open vocabulary survive a round trip verbatim; random
//! unknown fields anywhere in any example frame are ignored on read and never written back;
//! random tokens in the closed state vocabulary are refused.

use proptest::prelude::*;
use proptest::sample::Index;
use schema::*;
use serde_json::{Map, Value};

use crate::common::data_lines;

/// Tokens shaped like wire tokens.
fn token() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_:-]{0,15}"
}

/// Small arbitrary JSON values.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Lines with one placeholder `TOKEN` where an open vocabulary sits, and that vocabulary's known
/// tokens (a random token equal to one of them is not "unknown").
fn open_slots() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        (
            r#"{"schema":1,"id":"1","t":"hello","host":"h","tool_version":"0.1.0","reconcile_interval_ms":2000,"scopes":["read","TOKEN"]}"#,
            Scope::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"6","t":"card","card":"informational","detail":"TOKEN","headline":"Waiting for you"}"#,
            Detail::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"6","t":"card","card":"permission","pane":"%1","agent":"a","lane":"screen","options":[{"kind":"TOKEN","name":"Yes"}],"extraction":"failed","binder":{"expect_episode_ms":0}}"#,
            OptionKind::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"10","t":"receipt","slot":"s","pane":"%3","action":"TOKEN","outcome":"sent","reason":null,"exit_code":0,"cached":false,"device":"d","at_ms":1}"#,
            Action::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"10","t":"receipt","slot":"s","pane":"%3","action":"approve","outcome":"TOKEN","reason":null,"exit_code":0,"cached":false,"device":"d","at_ms":1}"#,
            Outcome::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"10","t":"receipt","slot":"s","pane":"%3","action":"approve","outcome":"refused","reason":"TOKEN","exit_code":4,"cached":false,"device":"d","at_ms":1}"#,
            Reason::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"1","t":"error","code":"TOKEN","message":"m"}"#,
            ErrorCode::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"4","t":"edge","at_ms":1,"pane":"%3","agent":"a","from":"idle","to":"blocked","detail":"TOKEN","locator":"w:0.0","repo":null,"branch":null}"#,
            Detail::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"9","t":"event","event":{"cursor":"c","kind":"TOKEN","ts":null,"preview":null,"body":null}}"#,
            EventKind::KNOWN,
        ),
        (
            r#"{"schema":1,"id":"9","t":"event","event":{"cursor":"c","kind":"tool_result","call_id":null,"status":"TOKEN","bytes":0,"ts":null,"preview":null,"body":null}}"#,
            ToolStatus::KNOWN,
        ),
    ]
}

/// Every object in a frame an unknown key may be put in: not inside the agent's own tool input,
/// which is carried verbatim.
fn object_paths(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) => {
            out.push(path.clone());
            for (key, child) in map {
                if key == "input" {
                    continue;
                }
                path.push(key.clone());
                object_paths(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                path.push(i.to_string());
                object_paths(child, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn object_at<'v>(value: &'v mut Value, path: &[String]) -> &'v mut Map<String, Value> {
    let mut node = value;
    for step in path {
        node = match node {
            Value::Object(map) => map.get_mut(step).unwrap(),
            Value::Array(items) => &mut items[step.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
    }
    node.as_object_mut().unwrap()
}

/// Inserts `key: value` into a random object of `line` at a random position.
fn with_unknown_field(line: &str, at: Index, position: Index, key: &str, value: Value) -> String {
    let mut frame: Value = serde_json::from_str(line).unwrap();
    let mut paths = Vec::new();
    object_paths(&frame, &mut Vec::new(), &mut paths);
    let object = object_at(&mut frame, at.get(&paths).as_slice());
    let position = position.index(object.len() + 1);
    object.shift_insert(position, key.to_owned(), value);
    frame.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_open_tokens_round_trip_verbatim(token in token(), slot in any::<Index>()) {
        let slots = open_slots();
        let (template, known) = slot.get(&slots);
        prop_assume!(!known.contains(&token.as_str()));
        let line = template.replace("TOKEN", &token);
        let frame = decode_line::<Response>(&line).map_err(|e| TestCaseError::fail(format!("{line}: {e}")))?;
        let again = encode_line(&frame);
        prop_assert_eq!(again.trim_end(), line.as_str());
    }

    #[test]
    fn random_unknown_fields_are_ignored_and_not_written_back(
        line in any::<Index>(),
        at in any::<Index>(),
        position in any::<Index>(),
        key in "zz_[a-z0-9_]{1,10}",
        value in json_value(),
    ) {
        let mut lines: Vec<(String, bool)> =
            data_lines("requests.ndjson").into_iter().map(|l| (l, true)).collect();
        lines.extend(data_lines("responses.ndjson").into_iter().map(|l| (l, false)));
        let (original, is_request) = line.get(&lines);
        let noisy = with_unknown_field(original, at, position, &key, value);
        let again = if *is_request {
            decode_line::<Request>(&noisy).map(|f| encode_line(&f))
        } else {
            decode_line::<Response>(&noisy).map(|f| encode_line(&f))
        };
        let again = again.map_err(|e| TestCaseError::fail(format!("{noisy}: {e}")))?;
        prop_assert_eq!(again.trim_end(), original.as_str());
    }

    #[test]
    fn random_state_tokens_are_refused(token in token()) {
        prop_assume!(!State::KNOWN.contains(&token.as_str()));
        let line = format!(
            r#"{{"schema":1,"id":"4","t":"edge","at_ms":1,"pane":"%3","agent":"a","from":"idle","to":"{token}","detail":null,"locator":"w:0.0","repo":null,"branch":null}}"#
        );
        let err = decode_line::<Response>(&line).unwrap_err();
        prop_assert_eq!(err.reply_id(), "4");
        prop_assert_eq!(err.code(), ErrorCode::BadRequest);
    }
}
