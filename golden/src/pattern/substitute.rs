//! Substitution: a frame we send (or a simulator argument) with every `${name}` replaced by its
//! bound value and `$$` unescaped.

use serde_json::{Map, Value};

use super::captures::{Captures, bound, render_template};
use super::syntax::{Str, parse_key, parse_str};
use crate::Error;

/// Turns a send pattern into the frame to send: `${name}` replaced, `$$` unescaped.
pub fn instantiate(pattern: &Value, captures: &Captures) -> Result<Value, Error> {
    Ok(match pattern {
        Value::String(text) => match parse_str(text)? {
            Str::Literal(literal) => Value::String(literal),
            Str::Ref(name) => bound(captures, &name)?.clone(),
            Str::Template(pieces) => Value::String(render_template(&pieces, captures)?),
            _ => {
                return Err(Error::new(format!(
                    "`{text}` is a wildcard and cannot be sent"
                )));
            }
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| instantiate(item, captures))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(members) => {
            let mut out = Map::new();
            for (key, value) in members {
                out.insert(parse_key(key)?, instantiate(value, captures)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// Replaces `${name}` in a plain argument string (simulator arguments).
pub fn instantiate_text(text: &str, captures: &Captures) -> Result<String, Error> {
    match parse_str(text)? {
        Str::Literal(literal) => Ok(literal),
        Str::Ref(name) => match bound(captures, &name)? {
            Value::String(value) => Ok(value.clone()),
            other => Ok(other.to_string()),
        },
        Str::Template(pieces) => render_template(&pieces, captures),
        _ => Err(Error::new(format!(
            "`{text}` is a wildcard and cannot be an argument"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::clock::Window;
    use crate::pattern::matches;

    #[test]
    fn references_interpolate_inside_strings() {
        let mut captures = Captures::new();
        captures.insert("pane".into(), json!("%1"));
        captures.insert("episode".into(), json!(1763780000000u64));
        let sent = instantiate(
            &json!({"slot": "${pane}:${episode}:approve", "n": "${episode}"}),
            &captures,
        )
        .unwrap();
        assert_eq!(
            sent,
            json!({"slot": "%1:1763780000000:approve", "n": 1763780000000u64})
        );
        assert!(
            matches(
                &json!("${pane}:x"),
                &json!("%1:x"),
                &mut captures,
                Window::ANY
            )
            .is_ok()
        );
    }

    #[test]
    fn a_doubled_dollar_is_sent_as_one() {
        assert_eq!(
            instantiate(&json!("$$x"), &Captures::new()).unwrap(),
            json!("$x")
        );
    }
}
