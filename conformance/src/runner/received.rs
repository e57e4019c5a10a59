//! What every line a host sends goes through before it is matched: UTF-8, no pane-title canary,
//! JSON, valid against `responses.schema.json`, and decoded through the wire types. Pure: a line
//! in, the line with its problems and notes out, so a caller can still show a broken line beside
//! the frame it expected.
//!
//! Graded at the protocol's strictness: a frame that re-encodes to other bytes is a problem only
//! where the protocol fixes something (a value the wire types read differently). Keys the
//! protocol does not name (a host may add keys: a new key keeps schema 1 and readers ignore
//! unknown fields), keys in another order or spacing than corral writes (JSON objects are
//! unordered) and another JSON encoding of the same value (`\/` or `\u0041` in a string where
//! corral writes the character) are strict-grade notes, which fail a case only under `--strict`.

use golden::validate::FrameSchema;
use schema::{Response, decode_line, encode_line};
use serde_json::Value;

use super::{StepError, StepResult};

/// A received line and what is wrong with it beyond matching its pattern.
#[derive(Debug)]
pub(super) struct Received {
    /// The line (lossily decoded when it is not UTF-8).
    pub text: String,
    /// The line as JSON, when it is.
    pub frame: Option<Value>,
    /// Every rule the line breaks.
    pub problems: Vec<String>,
    /// What the protocol allows but corral would not send (strict-grade notes).
    pub notes: Vec<String>,
    /// Where the keys the wire types do not know are (`/agents/0/x`, as a pattern mismatch names
    /// a path): a pattern's exact key set tolerates them.
    pub unknown_keys: Vec<String>,
}

impl Received {
    /// An error listing the line's problems, if it has any.
    pub fn fail_on_problems(&self) -> StepResult {
        if self.problems.is_empty() {
            return Ok(());
        }
        Err(StepError::new(format!(
            "{}\nreceived: {}",
            self.problems.join("\n"),
            self.text
        )))
    }
}

/// Checks one line (without its `\n`) against the kit's rules for every received line.
/// `version_key` is the host profile's name for `hello`'s host-version key: a hello carrying it
/// is read as carrying `tool_version`, the wire types' name.
pub(super) fn check(
    bytes: Vec<u8>,
    responses: &FrameSchema,
    canaries: &[String],
    version_key: &str,
) -> Received {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut unknown_keys = Vec::new();
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            problems.push("the line is not UTF-8".to_owned());
            String::from_utf8_lossy(err.as_bytes()).into_owned()
        }
    };
    for canary in canaries {
        if text.contains(canary.as_str()) {
            problems.push(format!("a pane title canary `{canary}` rode the wire"));
        }
    }
    let mut frame = match serde_json::from_str::<Value>(&text) {
        Ok(frame) => Some(frame),
        Err(err) => {
            problems.push(format!("the line is not JSON ({err})"));
            None
        }
    };
    if let Some(renamed) = frame
        .as_mut()
        .and_then(|frame| own_version_key(frame, version_key, &mut problems))
    {
        text = renamed;
    }
    if let Some(frame) = &frame {
        if let Err(err) = responses.validate(frame) {
            problems.push(format!("the frame {err}"));
        } else {
            match decode_line::<Response>(&text) {
                Ok(decoded) => {
                    let canonical = encode_line(&decoded);
                    let canonical = canonical.trim_end();
                    if canonical != text {
                        grade_encoding(
                            &text,
                            frame,
                            canonical,
                            &mut problems,
                            &mut notes,
                            &mut unknown_keys,
                        );
                    }
                }
                Err(err) => problems.push(format!(
                    "the frame does not decode through the wire types: {err}"
                )),
            }
        }
    }
    Received {
        text,
        frame,
        problems,
        notes,
        unknown_keys,
    }
}

/// Arrays whose order the protocol does not fix, by frame type and key: a `hello`'s `scopes`
/// (the device's scopes, from the store, in no stated order).
const UNORDERED: &[(&str, &str)] = &[("hello", "scopes")];

/// `frame` with each of its [`UNORDERED`] arrays in the order `pattern` lists the same members,
/// when it holds the same members in another order (a strict-grade note says so); else as it is.
pub(super) fn in_pattern_order(frame: &Value, pattern: &Value, notes: &mut Vec<String>) -> Value {
    let mut frame = frame.clone();
    let t = frame
        .get("t")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for (kind, key) in UNORDERED {
        if t != *kind {
            continue;
        }
        let (Some(Value::Array(want)), Some(Value::Array(got))) =
            (pattern.get(*key), frame.get(*key))
        else {
            continue;
        };
        let mut sorted_want = want.clone();
        let mut sorted_got = got.clone();
        let text = |v: &Value| v.to_string();
        sorted_want.sort_by_key(text);
        sorted_got.sort_by_key(text);
        if want != got && sorted_want == sorted_got {
            notes.push(format!(
                "`{key}` in another order than corral's ({}); the protocol fixes none",
                Value::Array(got.clone())
            ));
            frame[*key] = Value::Array(want.clone());
        }
    }
    frame
}

/// A `hello` answer with the profile's own version key (`herd_version`): renamed in `frame` to
/// the wire types' `tool_version`, and the frame's new text returned. A hello with
/// `tool_version` where the profile names another key is a problem: the host does not do what
/// its profile says.
fn own_version_key(frame: &mut Value, key: &str, problems: &mut Vec<String>) -> Option<String> {
    const WIRE: &str = golden::profile::DEFAULT_VERSION_KEY;
    if key == WIRE {
        return None;
    }
    let members = frame.as_object_mut()?;
    if members.get("t").and_then(Value::as_str) != Some("hello") {
        return None;
    }
    if members.contains_key(WIRE) {
        problems.push(format!(
            "the host profile names hello's version key `{key}`, and the hello carries `{WIRE}`"
        ));
        return None;
    }
    let renamed: serde_json::Map<String, Value> = std::mem::take(members)
        .into_iter()
        .map(|(name, value)| {
            if name == key {
                (WIRE.to_owned(), value)
            } else {
                (name, value)
            }
        })
        .collect();
    *members = renamed;
    Some(frame.to_string())
}

/// A frame whose bytes are not corral's: its unknown keys, another key order, other spacing and
/// another JSON encoding of the same value are notes; any other difference (a value the wire
/// types read as something else) is a problem.
fn grade_encoding(
    text: &str,
    frame: &Value,
    canonical: &str,
    problems: &mut Vec<String>,
    notes: &mut Vec<String>,
    unknown_keys: &mut Vec<String>,
) {
    let Ok(known) = serde_json::from_str::<Value>(canonical) else {
        problems.push(format!(
            "the frame re-encodes to something that is not JSON: {canonical}"
        ));
        return;
    };
    let stripped = without_unknown(frame, &known, "", unknown_keys);
    if stripped != known {
        problems.push(format!(
            "the frame reads differently through the wire types; as they read it: {canonical}"
        ));
        return;
    }
    if !unknown_keys.is_empty() {
        notes.push(format!(
            "keys the protocol does not name: {}",
            unknown_keys.join(", ")
        ));
    }
    let compact = serde_json::to_string(&stripped).unwrap_or_default();
    if compact != canonical {
        notes.push(format!(
            "keys in another order than corral writes them: {canonical}"
        ));
    } else if unknown_keys.is_empty() {
        notes.extend(other_bytes(text, canonical));
    }
}

/// Why `text`, which holds the same keys in the same order as `canonical`, is not its bytes:
/// whitespace between tokens, another JSON encoding of the same value (a string escaped where
/// corral writes the character: `\/`, `\u0041`), or both.
fn other_bytes(text: &str, canonical: &str) -> Vec<String> {
    let squeezed = without_spacing(text);
    let mut notes = Vec::new();
    if squeezed.len() != text.len() {
        notes.push("other spacing than corral writes (compact JSON)".to_owned());
    }
    if squeezed != canonical {
        notes.push(format!(
            "another JSON encoding of the same value (such as a `\\/` or `\\uXXXX` escape where \
             corral writes the character): corral writes {canonical}"
        ));
    }
    notes
}

/// `text` without the whitespace between JSON tokens; strings, escapes and all, left as they are.
fn without_spacing(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

/// `frame` without the object members `known` (its re-encoding) lacks, recording their JSON
/// pointers; arrays element by element.
fn without_unknown(frame: &Value, known: &Value, path: &str, unknown: &mut Vec<String>) -> Value {
    match (frame, known) {
        (Value::Object(members), Value::Object(known_members)) => Value::Object(
            members
                .iter()
                .filter_map(|(key, value)| {
                    let pointer = format!("{path}/{key}");
                    match known_members.get(key) {
                        Some(known_value) => Some((
                            key.clone(),
                            without_unknown(value, known_value, &pointer, unknown),
                        )),
                        None => {
                            unknown.push(pointer);
                            None
                        }
                    }
                })
                .collect(),
        ),
        (Value::Array(items), Value::Array(known_items)) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| match known_items.get(i) {
                    Some(known_item) => {
                        without_unknown(item, known_item, &format!("{path}/{i}"), unknown)
                    }
                    None => item.clone(),
                })
                .collect(),
        ),
        _ => frame.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(line: &[u8]) -> Received {
        let responses = FrameSchema::generated("responses.schema.json").unwrap();
        check(
            line.to_vec(),
            &responses,
            &["TITLE-CANARY".to_owned()],
            "tool_version",
        )
    }

    #[test]
    fn a_canonical_valid_frame_has_no_problems() {
        let received = checked(br#"{"schema":1,"id":"1","t":"ack"}"#);
        assert!(received.frame.is_some());
        assert!(
            received.fail_on_problems().is_ok(),
            "{:?}",
            received.problems
        );
    }

    #[test]
    fn every_broken_rule_is_listed() {
        assert_eq!(checked(b"\xff").problems[0], "the line is not UTF-8");
        let canary = checked(br#"{"schema":1,"id":"TITLE-CANARY-x","t":"ack"}"#);
        assert_eq!(
            canary.problems,
            ["a pane title canary `TITLE-CANARY` rode the wire"]
        );
        let spaced = checked(br#"{"schema":1, "id":"1","t":"ack"}"#);
        assert!(spaced.problems.is_empty(), "{:?}", spaced.problems);
        assert!(
            spaced.notes[0].contains("other spacing"),
            "{:?}",
            spaced.notes
        );
        let invalid = checked(br#"{"schema":1,"t":"ack"}"#);
        assert!(
            invalid.problems[0].starts_with("the frame violates"),
            "{:?}",
            invalid.problems
        );
        assert!(checked(b"{").frame.is_none());
    }

    /// A host whose profile names its own version key: its hello reads as `tool_version`, and a
    /// hello with `tool_version` instead is a problem.
    #[test]
    fn a_profiles_own_version_key_reads_as_tool_version() {
        let responses = FrameSchema::generated("responses.schema.json").unwrap();
        let hello = |line: &str| check(line.as_bytes().to_vec(), &responses, &[], "herd_version");
        let own = hello(
            r#"{"schema":1,"id":"1","t":"hello","host":"h","herd_version":"2.0","reconcile_interval_ms":200,"scopes":["read"]}"#,
        );
        assert!(own.problems.is_empty(), "{:?}", own.problems);
        assert!(own.notes.is_empty(), "{:?}", own.notes);
        assert_eq!(own.frame.unwrap()["tool_version"], "2.0");
        let neutral = hello(
            r#"{"schema":1,"id":"1","t":"hello","host":"h","tool_version":"2.0","reconcile_interval_ms":200,"scopes":["read"]}"#,
        );
        assert!(
            neutral.problems[0].contains("names hello's version key `herd_version`"),
            "{:?}",
            neutral.problems
        );
        // Other frames are left as they are.
        let ack = hello(r#"{"schema":1,"id":"1","t":"ack","herd_version":"x"}"#);
        assert_eq!(ack.unknown_keys, ["/herd_version"]);
    }

    /// A hello's scopes are a set: another order matches, with a note; other members do not.
    #[test]
    fn a_hellos_scopes_match_in_any_order() {
        let pattern = serde_json::json!({"t": "hello", "scopes": ["read", "act:answer"]});
        let mut notes = Vec::new();
        let frame = serde_json::json!({"t": "hello", "scopes": ["act:answer", "read"]});
        assert_eq!(
            in_pattern_order(&frame, &pattern, &mut notes),
            serde_json::json!({"t": "hello", "scopes": ["read", "act:answer"]})
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        let other = serde_json::json!({"t": "hello", "scopes": ["act:steer", "read"]});
        assert_eq!(in_pattern_order(&other, &pattern, &mut notes), other);
        let not_hello = serde_json::json!({"t": "ack", "scopes": ["act:answer", "read"]});
        assert_eq!(
            in_pattern_order(&not_hello, &pattern, &mut notes),
            not_hello
        );
        assert_eq!(notes.len(), 1);
    }

    /// `\/` and `\uXXXX` escape characters corral writes as they are: the same value in another
    /// JSON encoding, said as such (not as spacing); spacing, even around an escaped quote, is
    /// said apart from it.
    #[test]
    fn another_encoding_of_the_same_value_is_named_for_what_it_is() {
        let canonical = r#"{"schema":1,"id":"a/b1","t":"ack"}"#;
        let encoding = format!(
            "another JSON encoding of the same value (such as a `\\/` or `\\uXXXX` escape where \
             corral writes the character): corral writes {canonical}"
        );
        let spacing = "other spacing than corral writes (compact JSON)";
        for line in [
            r#"{"schema":1,"id":"a\/b1","t":"ack"}"#,
            r#"{"schema":1,"id":"a/b\u0031","t":"ack"}"#,
        ] {
            let escaped = checked(line.as_bytes());
            assert!(escaped.problems.is_empty(), "{:?}", escaped.problems);
            assert_eq!(escaped.notes, [encoding.as_str()], "{line}");
        }
        let both = checked(br#"{ "schema":1,"id":"a\/b1","t":"ack" }"#);
        assert_eq!(both.notes, [spacing, encoding.as_str()]);
        let spaced = checked(b"{\"schema\":1,\t\"id\":\"a \\\" b\",\"t\":\"ack\"}");
        assert_eq!(spaced.notes, [spacing]);
        let as_written = checked(br#"{"schema":1,"id":"a \" b","t":"ack"}"#);
        assert!(as_written.notes.is_empty(), "{:?}", as_written.notes);
    }

    /// A key the protocol does not name, another key order and other spacing are notes, never
    /// problems.
    #[test]
    fn growth_and_order_are_notes_never_problems() {
        let grown = checked(br#"{"schema":1,"id":"1","t":"ack","x_herd":{"a":1}}"#);
        assert!(grown.problems.is_empty(), "{:?}", grown.problems);
        assert_eq!(grown.unknown_keys, ["/x_herd"]);
        assert_eq!(grown.notes, ["keys the protocol does not name: /x_herd"]);
        let reordered = checked(br#"{"t":"ack","schema":1,"id":"1"}"#);
        assert!(reordered.problems.is_empty(), "{:?}", reordered.problems);
        assert!(reordered.unknown_keys.is_empty());
        assert_eq!(reordered.notes.len(), 1, "{:?}", reordered.notes);
        let both = checked(br#"{"t":"ack","schema":1,"id":"1","zz":null}"#);
        assert_eq!(both.notes.len(), 2, "{:?}", both.notes);
        let nested = checked(
            concat!(
                r#"{"schema":1,"id":"2","t":"snapshot","agents":["#,
                r#"{"pane":"%6","agent":"claude","state":"idle","detail":null,"since_ms":1,"episode_ms":1,"locator":"ops:0.0","attention":false,"done":false,"session":"ops","transcript":null,"permission_request":null,"stamped_at_ms":1,"context":null,"context_at_ms":null,"muted":false,"repo":null,"branch":null,"worktree":null,"pending_tool":null,"pending_call":null,"server":"s","host":"h","x":1}"#,
                "]}"
            )
            .as_bytes(),
        );
        assert!(nested.problems.is_empty(), "{:?}", nested.problems);
        assert_eq!(
            nested.unknown_keys,
            ["/agents/0/x"],
            "{:?}",
            nested.problems
        );
    }
}
