//! Checking a pattern before it is used: its syntax, where wildcards may stand (not in a frame we
//! send), and the capture names it binds and references, so a loader can prove every `${name}`
//! is bound before it is used.

use serde_json::Value;

use super::syntax::{MORE_KEY, Piece, Str, SyntaxError, parse_key, parse_str};

/// Where a pattern is used: a frame we send (no wildcards) or one we expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A frame the client sends: values and `${name}` only.
    Send,
    /// A frame the host is expected to send: every directive.
    Expect,
}

/// Checks a pattern's syntax, and returns the capture names it binds (in order of appearance) and
/// the names it references.
pub fn check(pattern: &Value, usage: Use) -> Result<(Vec<String>, Vec<String>), SyntaxError> {
    let mut binds = Vec::new();
    let mut refs = Vec::new();
    check_at(pattern, usage, "", false, &mut binds, &mut refs)?;
    Ok((binds, refs))
}

fn check_at(
    pattern: &Value,
    usage: Use,
    path: &str,
    member: bool,
    binds: &mut Vec<String>,
    refs: &mut Vec<String>,
) -> Result<(), SyntaxError> {
    let error = |message: String| SyntaxError {
        path: path.to_owned(),
        message,
    };
    match pattern {
        Value::String(text) => {
            let parsed = parse_str(text).map_err(|err| error(err.message))?;
            let directive = matches!(parsed, Str::Wildcard(_) | Str::Capture(..) | Str::Absent);
            if usage == Use::Send && directive {
                return Err(error(format!(
                    "`{text}` is a wildcard; a frame we send holds values and `${{name}}` only"
                )));
            }
            match parsed {
                Str::Absent if !member => {
                    return Err(error("`$absent` only stands for an object member".into()));
                }
                Str::Capture(_, name) => binds.push(name),
                Str::Ref(name) => refs.push(name),
                Str::Template(pieces) => refs.extend(pieces.into_iter().filter_map(|p| match p {
                    Piece::Ref(name) => Some(name),
                    Piece::Text(_) => None,
                })),
                _ => {}
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_at(item, usage, &format!("{path}/{i}"), false, binds, refs)?;
            }
            Ok(())
        }
        Value::Object(members) => {
            for (key, value) in members {
                if key == MORE_KEY {
                    if usage == Use::Send || value != &Value::Bool(true) {
                        return Err(error(format!(
                            "`{MORE_KEY}` is `true` or absent, and only in expectations"
                        )));
                    }
                    continue;
                }
                let key = parse_key(key).map_err(|err| error(err.message))?;
                check_at(value, usage, &format!("{path}/{key}"), true, binds, refs)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// True when the pattern holds no directive at all (and no `$$`): it is a concrete frame.
pub fn is_concrete(pattern: &Value) -> bool {
    match pattern {
        Value::String(text) => !text.contains('$'),
        Value::Array(items) => items.iter().all(is_concrete),
        Value::Object(members) => members
            .iter()
            .all(|(key, value)| !key.contains('$') && is_concrete(value)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_send_holds_no_wildcards() {
        let err = check(&json!({"id": "$string"}), Use::Send).unwrap_err();
        assert!(err.message.contains("wildcard"), "{err}");
        let (binds, refs) = check(&json!({"id": "${x}", "a": "p${y}"}), Use::Send).unwrap();
        assert!(binds.is_empty());
        assert_eq!(refs, ["x", "y"]);
    }

    #[test]
    fn check_reports_binds_in_order_and_refuses_a_stray_absent() {
        let (binds, _) = check(&json!({"a": "$int:x", "b": ["$string:y"]}), Use::Expect).unwrap();
        assert_eq!(binds, ["x", "y"]);
        assert!(check(&json!(["$absent"]), Use::Expect).is_err());
        assert!(check(&json!({"$more": false}), Use::Expect).is_err());
    }

    #[test]
    fn concreteness_is_the_absence_of_any_dollar() {
        assert!(is_concrete(&json!({"a": [1, "x"]})));
        assert!(!is_concrete(&json!({"a": "$int"})));
        assert!(!is_concrete(&json!({"$$a": 1})));
    }

    #[test]
    fn a_bad_directive_is_reported_with_its_path() {
        let err = check(&json!({"a": "$HOME"}), Use::Expect).unwrap_err();
        assert_eq!(err.path, "/a");
    }
}
