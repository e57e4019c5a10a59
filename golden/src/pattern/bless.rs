//! Blessing: an expectation rewritten from what was received (`cargo xtask conformance --bless`),
//! literals taking the received values and every directive kept, with each `$` received written
//! as `$$`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::syntax::{MORE_KEY, Str, is_absent, parse_key, parse_str};

/// A received value written as a pattern literal: every `$` doubled, in strings and keys.
pub fn escape_literal(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(text.replace('$', "$$")),
        Value::Array(items) => Value::Array(items.iter().map(escape_literal).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| (key.replace('$', "$$"), escape_literal(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The pattern rewritten to expect what was received: literals take the received value, while
/// wildcards, captures, references and `$absent` members stay as they are. Keys follow the
/// received frame's order; `$absent` members and `$more` keep their place at the end.
pub fn bless(pattern: &Value, actual: &Value) -> Value {
    match (pattern, actual) {
        (Value::String(text), _) => match parse_str(text) {
            Ok(Str::Literal(_)) | Err(_) => escape_literal(actual),
            Ok(_) => pattern.clone(),
        },
        (Value::Array(items), Value::Array(got)) => Value::Array(
            got.iter()
                .enumerate()
                .map(|(i, value)| match items.get(i) {
                    Some(item) => bless(item, value),
                    None => escape_literal(value),
                })
                .collect(),
        ),
        (Value::Object(members), Value::Object(got)) => {
            let unescaped: BTreeMap<String, &Value> = members
                .iter()
                .filter(|(key, _)| *key != MORE_KEY)
                .filter_map(|(key, value)| parse_key(key).ok().map(|k| (k, value)))
                .collect();
            let mut out = Map::new();
            for (key, value) in got {
                let blessed = match unescaped.get(key) {
                    Some(pattern) if !is_absent(pattern) => bless(pattern, value),
                    _ => escape_literal(value),
                };
                out.insert(key.replace('$', "$$"), blessed);
            }
            for (key, value) in members {
                let absent = is_absent(value);
                if (absent && !got.contains_key(&parse_key(key).unwrap_or_default()))
                    || key == MORE_KEY
                {
                    out.insert(key.clone(), value.clone());
                }
            }
            Value::Object(out)
        }
        _ => escape_literal(actual),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::clock::Window;
    use crate::pattern::{Captures, Mismatch, matches};

    fn check_match(pattern: Value, actual: Value) -> Result<Captures, Mismatch> {
        let mut captures = Captures::new();
        matches(&pattern, &actual, &mut captures, Window::ANY).map(|()| captures)
    }

    #[test]
    fn bless_rewrites_literals_and_keeps_directives() {
        let pattern = json!({"schema": 1, "id": "1", "t": "hello", "host": "$string:host",
                             "tool_version": "0.0.1", "title": "$absent", "$more": true});
        let actual = json!({"schema": 1, "t": "hello", "host": "studio", "tool_version": "0.2.0",
                            "scopes": ["read"], "note": "$5"});
        assert_eq!(
            bless(&pattern, &actual),
            json!({"schema": 1, "t": "hello", "host": "$string:host", "tool_version": "0.2.0",
                   "scopes": ["read"], "note": "$$5", "title": "$absent", "$more": true})
        );
    }

    #[test]
    fn a_blessed_pattern_matches_what_it_was_blessed_from() {
        let pattern = json!({"a": [1, "$int"], "b": "x"});
        let actual = json!({"a": [2, 3, 4], "b": "y$", "c": {"$d": "e"}});
        let blessed = bless(&pattern, &actual);
        assert!(check_match(blessed, actual).is_ok());
    }
}
