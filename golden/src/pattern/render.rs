//! The expected side of a diff: a pattern written as the frame it expected, each directive the
//! received value satisfied replaced by that value, so a diff shows only real differences.

use serde_json::{Map, Value};

use super::captures::{Captures, render_template};
use super::matching::refusal;
use super::syntax::{MORE_KEY, Str, is_absent, parse_key, parse_str};
use crate::clock::Window;

/// The pattern as a reader compares it with the received frame: every directive that the
/// received value satisfies (a `$now` only inside `now`) is replaced by that value, so a diff
/// shows only real differences.
pub fn render_expected(
    pattern: &Value,
    actual: Option<&Value>,
    captures: &Captures,
    now: Window,
) -> Value {
    let satisfied = |kind, value: &Value| refusal(kind, value, now).is_none();
    match pattern {
        Value::String(text) => match parse_str(text) {
            Ok(Str::Literal(literal)) => Value::String(literal),
            Ok(Str::Wildcard(kind)) => match actual {
                Some(value) if satisfied(kind, value) => value.clone(),
                _ => pattern.clone(),
            },
            Ok(Str::Capture(kind, name)) => match (captures.get(&name), actual) {
                (Some(bound), _) => bound.clone(),
                (None, Some(value)) if satisfied(kind, value) => value.clone(),
                _ => pattern.clone(),
            },
            Ok(Str::Ref(name)) => captures.get(&name).cloned().unwrap_or(pattern.clone()),
            Ok(Str::Template(pieces)) => render_template(&pieces, captures)
                .map(Value::String)
                .unwrap_or(pattern.clone()),
            Ok(Str::Absent) | Err(_) => pattern.clone(),
        },
        Value::Array(items) => {
            let got = actual.and_then(Value::as_array);
            Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        render_expected(item, got.and_then(|g| g.get(i)), captures, now)
                    })
                    .collect(),
            )
        }
        Value::Object(members) => {
            let got = actual.and_then(Value::as_object);
            let more = members.get(MORE_KEY) == Some(&Value::Bool(true));
            let mut out = Map::new();
            for (key, value) in members {
                if key == MORE_KEY {
                    continue;
                }
                let Ok(key) = parse_key(key) else {
                    out.insert(key.clone(), value.clone());
                    continue;
                };
                if is_absent(value) {
                    continue;
                }
                let rendered = render_expected(value, got.and_then(|g| g.get(&key)), captures, now);
                out.insert(key, rendered);
            }
            if more && let Some(got) = got {
                for (key, value) in got {
                    if !out.contains_key(key) && !members.contains_key(key) {
                        out.insert(key.clone(), value.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_expected_rendering_fills_satisfied_wildcards_only() {
        let pattern = json!({"id": "1", "at": "$int", "to": "$string", "gone": "$absent",
                             "a_ms": "$now", "b_ms": "$now"});
        let actual = json!({"at": 5, "to": 3, "a_ms": 1_500, "b_ms": 7});
        let now = Window {
            from_ms: 1_000,
            to_ms: 2_000,
        };
        assert_eq!(
            render_expected(&pattern, Some(&actual), &Captures::new(), now),
            json!({"id": "1", "at": 5, "to": "$string", "a_ms": 1_500, "b_ms": "$now"})
        );
    }
}
