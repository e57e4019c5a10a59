//! Sample instantiation: an expectation turned into a concrete frame, each wildcard a fixed value
//! of its type, for a replayer playing the host's half of a session.

use serde_json::{Map, Value};

use super::captures::{Captures, bound, render_template};
use super::syntax::{Kind, MORE_KEY, Str, is_absent, parse_key, parse_str};
use crate::Error;
use crate::clock::NOW_MS;

/// The value a sample `$string` takes; a capture `$string:<name>` takes `replay-<name>`, so two
/// captures never share a value by accident.
pub const SAMPLE_STRING: &str = "replay";

/// Turns an expectation into the concrete frame a stand-in host writes: literals as written (`$$`
/// unescaped), `${name}` replaced, `$absent` members and `$more` left out, and every wildcard a
/// fixed sample of its type: `$any` null, `$int` and `$number` 0 (the pinned [`NOW_MS`] in a member
/// whose key ends in `_ms`), `$now` the pinned [`NOW_MS`], `$string` [`SAMPLE_STRING`], `$bool`
/// false, `$array` `[]`, `$object` `{}`. A capture seen for the first time binds its sample, so every later sight of it, and a
/// `${name}` in a frame the client must send back, is that same value; a bound capture writes
/// its value. The result matches the pattern.
pub fn sample(pattern: &Value, captures: &mut Captures) -> Result<Value, Error> {
    sample_at(pattern, None, captures)
}

fn sample_of(kind: Kind, key: Option<&str>, name: Option<&str>) -> Value {
    let epoch = key.is_some_and(|key| key.ends_with("_ms"));
    match kind {
        Kind::Any => Value::Null,
        Kind::Now => Value::from(NOW_MS),
        Kind::Int | Kind::Number if epoch => Value::from(NOW_MS),
        Kind::Int | Kind::Number => Value::from(0),
        Kind::String => Value::String(match name {
            Some(name) => format!("{SAMPLE_STRING}-{name}"),
            None => SAMPLE_STRING.to_owned(),
        }),
        Kind::Bool => Value::Bool(false),
        Kind::Array => Value::Array(Vec::new()),
        Kind::Object => Value::Object(Map::new()),
    }
}

fn sample_at(pattern: &Value, key: Option<&str>, captures: &mut Captures) -> Result<Value, Error> {
    Ok(match pattern {
        Value::String(text) => match parse_str(text)? {
            Str::Literal(literal) => Value::String(literal),
            Str::Wildcard(kind) => sample_of(kind, key, None),
            Str::Capture(kind, name) => match captures.get(&name) {
                Some(bound) if kind.accepts(bound) => bound.clone(),
                Some(bound) => {
                    return Err(Error::new(format!(
                        "capture `{name}` is bound to {bound}, which is not any {}",
                        kind.name()
                    )));
                }
                None => {
                    let value = sample_of(kind, key, Some(&name));
                    captures.insert(name, value.clone());
                    value
                }
            },
            Str::Ref(name) => bound(captures, &name)?.clone(),
            Str::Template(pieces) => Value::String(render_template(&pieces, captures)?),
            Str::Absent => return Err(Error::new("`$absent` stands only for an object member")),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| sample_at(item, key, captures))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(members) => {
            let mut out = Map::new();
            for (key, value) in members {
                if key == MORE_KEY || is_absent(value) {
                    continue;
                }
                let key = parse_key(key)?;
                let value = sample_at(value, Some(&key), captures)?;
                out.insert(key, value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::clock::Window;
    use crate::pattern::{Mismatch, matches};

    fn check_match(pattern: Value, actual: Value) -> Result<Captures, Mismatch> {
        let mut captures = Captures::new();
        matches(&pattern, &actual, &mut captures, Window::ANY).map(|()| captures)
    }

    #[test]
    fn a_sample_fills_every_wildcard_with_a_fixed_value_of_its_type() {
        let pattern = json!({"schema": 1, "id": "1", "t": "edge", "at_ms": "$int", "n": "$int", "seen": "$now",
                             "x": "$number", "s": "$string", "b": "$bool", "a": "$array",
                             "o": "$object", "any": "$any", "gone": "$absent", "cost": "$$5",
                             "$more": true});
        let mut captures = Captures::new();
        let sampled = sample(&pattern, &mut captures).unwrap();
        assert_eq!(
            sampled,
            json!({"schema": 1, "id": "1", "t": "edge", "at_ms": NOW_MS, "n": 0, "seen": NOW_MS, "x": 0,
                   "s": "replay", "b": false, "a": [], "o": {}, "any": null, "cost": "$5"})
        );
        assert!(captures.is_empty());
        assert!(check_match(pattern, sampled).is_ok());
    }

    #[test]
    fn a_sampled_capture_is_bound_once_and_reused() {
        let mut captures = Captures::new();
        captures.insert("sim_dir".into(), json!("/sim"));
        let first = sample(
            &json!({"host": "$string:host", "tool_version": "$string", "w": "${sim_dir}/repos"}),
            &mut captures,
        )
        .unwrap();
        assert_eq!(
            first,
            json!({"host": "replay-host", "tool_version": "replay", "w": "/sim/repos"})
        );
        let again = sample(
            &json!({"host": "$string:host", "h": "${host}", "at": "${host}.elsewhere"}),
            &mut captures,
        )
        .unwrap();
        assert_eq!(
            again,
            json!({"host": "replay-host", "h": "replay-host", "at": "replay-host.elsewhere"})
        );
    }

    #[test]
    fn a_sample_refuses_what_it_cannot_write() {
        let mut captures = Captures::new();
        assert!(
            sample(&json!({"h": "${nobody}"}), &mut captures)
                .unwrap_err()
                .message
                .contains("not bound")
        );
        assert!(sample(&json!(["$absent"]), &mut captures).is_err());
        captures.insert("n".into(), json!("text"));
        assert!(
            sample(&json!({"n": "$int:n"}), &mut captures)
                .unwrap_err()
                .message
                .contains("not any int")
        );
    }
}
