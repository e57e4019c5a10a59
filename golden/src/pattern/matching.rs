//! Matching a received value against a pattern: exact JSON where the pattern is literal, each
//! directive checked for what it means, captures bound on first sight and compared after.

use std::fmt;

use serde_json::Value;

use super::captures::{Captures, render_template};
use super::syntax::{Kind, MORE_KEY, Str, display_path, is_absent, parse_key, parse_str};
use crate::clock::Window;

/// Why a frame does not match its pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// JSON pointer into the received frame.
    pub path: String,
    /// What differs.
    pub reason: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", display_path(&self.path), self.reason)
    }
}

/// Matches a received value against a pattern, binding captures on first sight; a `$now` must
/// fall inside `now` (the case's run up to the value's arrival). On a mismatch the captures may
/// hold partial bindings: callers that backtrack pass a copy.
pub fn matches(
    pattern: &Value,
    actual: &Value,
    captures: &mut Captures,
    now: Window,
) -> Result<(), Mismatch> {
    matches_tolerating(pattern, actual, captures, now, &[])
}

/// [`matches()`], where an object's exact key set also admits the members at `tolerated` (paths
/// as a mismatch names them, `/agents/0/x`): keys a host may add because the protocol lets a
/// frame grow, which the caller grades on its own.
pub fn matches_tolerating(
    pattern: &Value,
    actual: &Value,
    captures: &mut Captures,
    now: Window,
    tolerated: &[String],
) -> Result<(), Mismatch> {
    let mut at = At {
        captures,
        now,
        tolerated,
    };
    match_at(pattern, actual, &mut at, "")
}

/// What matching carries down the tree.
struct At<'a> {
    captures: &'a mut Captures,
    now: Window,
    tolerated: &'a [String],
}

/// Why a value is not one a wildcard of `kind` accepts (its type, and for `$now` its time), or
/// `None` when it is.
pub(super) fn refusal(kind: Kind, actual: &Value, now: Window) -> Option<String> {
    if !kind.accepts(actual) {
        return Some(match kind {
            Kind::Now => {
                format!("expected an epoch-ms time within the case's run, received {actual}")
            }
            Kind::String => format!("expected a non-empty string, received {actual}"),
            _ => format!("expected any {}, received {actual}", kind.name()),
        });
    }
    match actual.as_u64() {
        Some(ms) if kind == Kind::Now && !now.contains(ms) => Some(format!(
            "expected an epoch-ms time within the case's run ({} to {}), received {ms}, {}",
            now.from_ms,
            now.to_ms,
            now.describe(ms)
        )),
        _ => None,
    }
}

fn match_at(pattern: &Value, actual: &Value, at: &mut At<'_>, path: &str) -> Result<(), Mismatch> {
    let now = at.now;
    let captures = &mut *at.captures;
    let mismatch = |reason: String| Mismatch {
        path: path.to_owned(),
        reason,
    };
    let fail = |reason: String| Err(mismatch(reason));
    match pattern {
        Value::String(text) => match parse_str(text) {
            Err(err) => fail(err.message),
            Ok(Str::Literal(literal)) => match actual {
                Value::String(got) if *got == literal => Ok(()),
                _ => fail(format!(
                    "expected {}, received {actual}",
                    Value::String(literal)
                )),
            },
            Ok(Str::Wildcard(kind)) => refusal(kind, actual, now).map_or(Ok(()), fail),
            Ok(Str::Capture(kind, name)) => {
                if let Some(reason) = refusal(kind, actual, now) {
                    return fail(format!("{reason} (capture `{name}`)"));
                }
                match captures.get(&name) {
                    Some(bound) if bound != actual => fail(format!(
                        "capture `{name}` was bound to {bound}, received {actual}"
                    )),
                    Some(_) => Ok(()),
                    None => {
                        captures.insert(name, actual.clone());
                        Ok(())
                    }
                }
            }
            Ok(Str::Ref(name)) => match captures.get(&name) {
                Some(bound) if bound == actual => Ok(()),
                Some(bound) => fail(format!("expected ${{{name}}} = {bound}, received {actual}")),
                None => fail(format!("`${{{name}}}` is not bound")),
            },
            Ok(Str::Template(pieces)) => {
                let expected =
                    render_template(&pieces, captures).map_err(|err| mismatch(err.message))?;
                match actual {
                    Value::String(got) if *got == expected => Ok(()),
                    _ => fail(format!(
                        "expected {}, received {actual}",
                        Value::String(expected)
                    )),
                }
            }
            Ok(Str::Absent) => fail("`$absent` stands only for an object member".into()),
        },
        Value::Array(items) => {
            let Value::Array(got) = actual else {
                return fail(format!("expected an array, received {actual}"));
            };
            if items.len() != got.len() {
                return fail(format!(
                    "expected {} elements, received {}",
                    items.len(),
                    got.len()
                ));
            }
            for (i, (item, value)) in items.iter().zip(got).enumerate() {
                match_at(item, value, at, &format!("{path}/{i}"))?;
            }
            Ok(())
        }
        Value::Object(members) => {
            let Value::Object(got) = actual else {
                return fail(format!("expected an object, received {actual}"));
            };
            let more = members.get(MORE_KEY) == Some(&Value::Bool(true));
            let mut listed = Vec::new();
            for (key, value) in members {
                if key == MORE_KEY {
                    continue;
                }
                let key = parse_key(key).map_err(|err| mismatch(err.message))?;
                let member_path = format!("{path}/{key}");
                let absent = is_absent(value);
                match (absent, got.get(&key)) {
                    (true, None) => {}
                    (true, Some(value)) => {
                        return Err(Mismatch {
                            path: member_path,
                            reason: format!("expected no `{key}`, received {value}"),
                        });
                    }
                    (false, None) => {
                        return Err(Mismatch {
                            path: member_path,
                            reason: format!("expected `{key}`, but the frame has none"),
                        });
                    }
                    (false, Some(got_value)) => match_at(value, got_value, at, &member_path)?,
                }
                listed.push(key);
            }
            let tolerated = |key: &String| at.tolerated.contains(&format!("{path}/{key}"));
            if !more
                && let Some(extra) = got
                    .keys()
                    .find(|key| !listed.contains(key) && !tolerated(key))
            {
                return Err(Mismatch {
                    path: format!("{path}/{extra}"),
                    reason: format!("unexpected key `{extra}`"),
                });
            }
            Ok(())
        }
        literal => {
            if literal == actual {
                Ok(())
            } else {
                fail(format!("expected {literal}, received {actual}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check_match(pattern: Value, actual: Value) -> Result<Captures, Mismatch> {
        let mut captures = Captures::new();
        matches(&pattern, &actual, &mut captures, Window::ANY).map(|()| captures)
    }

    #[test]
    fn only_tolerated_extra_keys_pass_an_exact_key_set() {
        let pattern = json!({"a": 1, "rows": [{"b": 2}]});
        let actual = json!({"a": 1, "x": 0, "rows": [{"b": 2, "y": 0}]});
        let tolerate = |paths: &[&str]| {
            let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
            matches_tolerating(&pattern, &actual, &mut Captures::new(), Window::ANY, &paths)
        };
        assert!(tolerate(&["/x", "/rows/0/y"]).is_ok());
        assert_eq!(tolerate(&["/x"]).unwrap_err().path, "/rows/0/y");
        assert_eq!(tolerate(&["/rows/0/y"]).unwrap_err().path, "/x");
        assert_eq!(tolerate(&[]).unwrap_err().reason, "unexpected key `y`");
        // A tolerated key is no excuse for a missing or wrong one.
        let missing = json!({"x": 0, "rows": [{"b": 2, "y": 0}]});
        assert!(
            matches_tolerating(
                &pattern,
                &missing,
                &mut Captures::new(),
                Window::ANY,
                &["/x".to_owned(), "/rows/0/y".to_owned()]
            )
            .is_err()
        );
    }

    #[test]
    fn literal_json_matches_exactly() {
        assert!(
            check_match(
                json!({"a": 1, "b": [true, null]}),
                json!({"a": 1, "b": [true, null]})
            )
            .is_ok()
        );
        let err = check_match(json!({"a": 1}), json!({"a": 2})).unwrap_err();
        assert_eq!(err.path, "/a");
        assert_eq!(err.reason, "expected 1, received 2");
    }

    #[test]
    fn an_extra_key_fails_unless_more_is_set() {
        let err = check_match(json!({"a": 1}), json!({"a": 1, "b": 2})).unwrap_err();
        assert_eq!(
            err,
            Mismatch {
                path: "/b".into(),
                reason: "unexpected key `b`".into()
            }
        );
        assert!(check_match(json!({"a": 1, "$more": true}), json!({"a": 1, "b": 2})).is_ok());
    }

    #[test]
    fn a_missing_key_fails() {
        let err = check_match(json!({"a": 1, "b": 2}), json!({"a": 1})).unwrap_err();
        assert_eq!(err.path, "/b");
    }

    #[test]
    fn typed_wildcards_check_the_type() {
        let pattern = json!({"i": "$int", "s": "$string", "b": "$bool", "n": "$number", "x": "$any",
                             "a": "$array", "o": "$object"});
        let good = json!({"i": 7, "s": "x", "b": false, "n": 1.5, "x": null, "a": [], "o": {}});
        assert!(check_match(pattern.clone(), good).is_ok());
        let err = check_match(
            pattern,
            json!({"i": 1.5, "s": "x", "b": false, "n": 1, "x": 1, "a": [], "o": {}}),
        )
        .unwrap_err();
        assert_eq!(err.reason, "expected any int, received 1.5");
        let err = check_match(json!({"message": "$string"}), json!({"message": ""})).unwrap_err();
        assert_eq!(err.reason, "expected a non-empty string, received \"\"");
        assert!(check_match(json!({"m": "$string:m"}), json!({"m": ""})).is_err());
    }

    #[test]
    fn absent_means_the_key_is_missing() {
        assert!(check_match(json!({"a": 1, "title": "$absent"}), json!({"a": 1})).is_ok());
        let err = check_match(
            json!({"a": 1, "title": "$absent"}),
            json!({"a": 1, "title": "x"}),
        )
        .unwrap_err();
        assert_eq!(err.path, "/title");
    }

    #[test]
    fn a_capture_binds_on_first_sight_and_compares_after() {
        let mut captures = Captures::new();
        matches(
            &json!({"host": "$string:host"}),
            &json!({"host": "studio"}),
            &mut captures,
            Window::ANY,
        )
        .unwrap();
        assert_eq!(captures["host"], json!("studio"));
        matches(
            &json!({"h": "$string:host"}),
            &json!({"h": "studio"}),
            &mut captures,
            Window::ANY,
        )
        .unwrap();
        let err = matches(
            &json!({"h": "$string:host"}),
            &json!({"h": "other"}),
            &mut captures,
            Window::ANY,
        )
        .unwrap_err();
        assert!(err.reason.contains("bound to \"studio\""), "{err}");
        matches(
            &json!({"h": "${host}"}),
            &json!({"h": "studio"}),
            &mut captures,
            Window::ANY,
        )
        .unwrap();
        assert!(
            matches(
                &json!({"h": "${host}"}),
                &json!({"h": "x"}),
                &mut captures,
                Window::ANY
            )
            .is_err()
        );
    }

    #[test]
    fn now_is_an_integer_inside_the_window() {
        let window = Window {
            from_ms: 1_763_780_000_000,
            to_ms: 1_763_780_005_000,
        };
        let check = |value: Value| {
            let mut captures = Captures::new();
            matches(
                &json!({"at_ms": "$now:at"}),
                &json!({"at_ms": value}),
                &mut captures,
                window,
            )
            .map(|()| captures)
        };
        assert_eq!(
            check(json!(1_763_780_001_000u64)).unwrap()["at"],
            json!(1_763_780_001_000u64)
        );
        for outside in [
            json!(0),
            json!(1_763_780_001u64),
            json!(4_102_444_800_000u64),
        ] {
            let err = check(outside.clone()).unwrap_err();
            assert_eq!(err.path, "/at_ms");
            assert!(
                err.reason
                    .starts_with("expected an epoch-ms time within the case's run (")
                    && err.reason.ends_with("(capture `at`)"),
                "{outside}: {err}"
            );
        }
        let err = check(json!("1763780001000")).unwrap_err();
        assert!(err.reason.contains("received \"1763780001000\""), "{err}");
    }

    #[test]
    fn a_doubled_dollar_matches_a_literal_dollar() {
        assert!(check_match(json!({"$$k": "$$int"}), json!({"$k": "$int"})).is_ok());
    }
}
