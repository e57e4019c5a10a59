//! Frame patterns: exact JSON, where a string starting with `$` is a directive (typed wildcards,
//! `$absent`, captures bound on first sight, `${name}` references), and the object key
//! `"$more": true`. Matching with capture binding, instantiating sends, instantiating an
//! expectation with sample values (a replayer playing the host), the "expected" rendering a diff
//! shows, and the literal escape (`$$`) bless writes. Pure: values in, values out.
//!
//! The rule that keeps directives from colliding silently with data: every `$` in a pattern
//! string is special. `$$` is a literal `$`, `${name}` is a bound value, and a string that starts
//! with `$` otherwise must be a known directive; anything else is a load error.
//!
//! Both sides of the conformance kit use this one module: `cargo xtask conformance` matches a
//! host's frames against `expect` patterns, and `corral-sim replay` matches a client's frames
//! against `send` frames and writes `expect` patterns as concrete frames.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// Captured values by name.
pub type Captures = BTreeMap<String, Value>;

/// The object key that lets an object pattern accept keys it does not list.
pub const MORE_KEY: &str = "$more";

/// What a typed wildcard accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `$any`: any value, `null` included.
    Any,
    /// `$int`: an integer.
    Int,
    /// `$number`: any number.
    Number,
    /// `$string`: a string.
    String,
    /// `$bool`: `true` or `false`.
    Bool,
    /// `$array`: an array.
    Array,
    /// `$object`: an object.
    Object,
}

impl Kind {
    fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "any" => Kind::Any,
            "int" => Kind::Int,
            "number" => Kind::Number,
            "string" => Kind::String,
            "bool" => Kind::Bool,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Any => "any",
            Kind::Int => "int",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Bool => "bool",
            Kind::Array => "array",
            Kind::Object => "object",
        }
    }

    fn accepts(self, value: &Value) -> bool {
        match self {
            Kind::Any => true,
            Kind::Int => value.is_i64() || value.is_u64(),
            Kind::Number => value.is_number(),
            Kind::String => value.is_string(),
            Kind::Bool => value.is_boolean(),
            Kind::Array => value.is_array(),
            Kind::Object => value.is_object(),
        }
    }
}

/// One piece of a string that interpolates captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text (after `$$` unescaping).
    Text(String),
    /// `${name}`: the bound value's text.
    Ref(String),
}

/// What a pattern string means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Str {
    /// A literal string (after `$$` unescaping).
    Literal(String),
    /// `$<kind>`.
    Wildcard(Kind),
    /// `$<kind>:<name>`: bound on first sight, compared after.
    Capture(Kind, String),
    /// `${name}` alone: the bound value itself, of whatever JSON type.
    Ref(String),
    /// A string with `${name}` inside it: the bound values rendered into the text.
    Template(Vec<Piece>),
    /// `$absent`: the key must be missing (only as an object member's value).
    Absent,
}

/// A pattern that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// JSON pointer of the offending string.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", display_path(&self.path), self.message)
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "the frame" } else { path }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Parses one pattern string.
pub fn parse_str(text: &str) -> Result<Str, String> {
    if let Some(rest) = text.strip_prefix('$')
        && !rest.starts_with('$')
        && !rest.starts_with('{')
    {
        if rest == "absent" {
            return Ok(Str::Absent);
        }
        let (kind, name) = match rest.split_once(':') {
            Some((kind, name)) => (kind, Some(name)),
            None => (rest, None),
        };
        let Some(kind) = Kind::parse(kind) else {
            return Err(format!(
                "`{text}` is not a directive (known: $any $int $number $string $bool $array \
                 $object $absent, `$<kind>:<name>`, `${{name}}`); write `$$` for a literal `$`"
            ));
        };
        return match name {
            None => Ok(Str::Wildcard(kind)),
            Some(name) if valid_name(name) => Ok(Str::Capture(kind, name.to_owned())),
            Some(name) => Err(format!(
                "`{name}` is not a capture name (letters, digits, `_`, `-`, `.`)"
            )),
        };
    }
    let mut pieces = Vec::new();
    let mut text_piece = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '$' {
            text_piece.push(c);
            continue;
        }
        match chars.peek() {
            Some((_, '$')) => {
                chars.next();
                text_piece.push('$');
            }
            Some((_, '{')) => {
                let Some(close) = text[at..].find('}') else {
                    return Err(format!("`{text}` opens `${{` without closing it"));
                };
                let name = &text[at + 2..at + close];
                if !valid_name(name) {
                    return Err(format!("`${{{name}}}` does not name a capture"));
                }
                if !text_piece.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text_piece)));
                }
                pieces.push(Piece::Ref(name.to_owned()));
                while let Some((i, _)) = chars.peek() {
                    if *i > at + close {
                        break;
                    }
                    chars.next();
                }
            }
            _ => {
                return Err(format!(
                    "a lone `$` in `{text}`: write `$$` for a literal `$`"
                ));
            }
        }
    }
    if pieces.is_empty() {
        return Ok(Str::Literal(text_piece));
    }
    if !text_piece.is_empty() {
        pieces.push(Piece::Text(text_piece));
    }
    if let [Piece::Ref(name)] = pieces.as_slice() {
        return Ok(Str::Ref(name.clone()));
    }
    Ok(Str::Template(pieces))
}

/// Parses an object key: `$$` escapes; a key may not hold any other directive.
fn parse_key(key: &str) -> Result<String, String> {
    match parse_str(key)? {
        Str::Literal(key) => Ok(key),
        _ => Err(format!(
            "the key `{key}` is a directive; only `{MORE_KEY}` may be one, write `$$` for a literal `$`"
        )),
    }
}

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
            let parsed = parse_str(text).map_err(error)?;
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
                let key = parse_key(key).map_err(error)?;
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

fn render_template(pieces: &[Piece], captures: &Captures) -> Result<String, String> {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Ref(name) => match captures.get(name) {
                Some(Value::String(text)) => out.push_str(text),
                Some(other @ (Value::Number(_) | Value::Bool(_))) => {
                    out.push_str(&other.to_string())
                }
                Some(other) => {
                    return Err(format!(
                        "`${{{name}}}` is {other}, which cannot be written inside a string"
                    ));
                }
                None => return Err(format!("`${{{name}}}` is not bound")),
            },
        }
    }
    Ok(out)
}

/// Matches a received value against a pattern, binding captures on first sight. On a mismatch
/// the captures may hold partial bindings: callers that backtrack pass a copy.
pub fn matches(pattern: &Value, actual: &Value, captures: &mut Captures) -> Result<(), Mismatch> {
    match_at(pattern, actual, captures, "")
}

fn match_at(
    pattern: &Value,
    actual: &Value,
    captures: &mut Captures,
    path: &str,
) -> Result<(), Mismatch> {
    let mismatch = |reason: String| Mismatch {
        path: path.to_owned(),
        reason,
    };
    let fail = |reason: String| Err(mismatch(reason));
    match pattern {
        Value::String(text) => match parse_str(text) {
            Err(err) => fail(err),
            Ok(Str::Literal(literal)) => match actual {
                Value::String(got) if *got == literal => Ok(()),
                _ => fail(format!(
                    "expected {}, received {actual}",
                    Value::String(literal)
                )),
            },
            Ok(Str::Wildcard(kind)) => {
                if kind.accepts(actual) {
                    Ok(())
                } else {
                    fail(format!("expected any {}, received {actual}", kind.name()))
                }
            }
            Ok(Str::Capture(kind, name)) => {
                if !kind.accepts(actual) {
                    return fail(format!(
                        "expected any {} (capture `{name}`), received {actual}",
                        kind.name()
                    ));
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
                let expected = render_template(&pieces, captures).map_err(mismatch)?;
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
                match_at(item, value, captures, &format!("{path}/{i}"))?;
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
                let key = parse_key(key).map_err(mismatch)?;
                let member_path = format!("{path}/{key}");
                let absent = matches!(value, Value::String(text) if text == "$absent");
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
                    (false, Some(got_value)) => match_at(value, got_value, captures, &member_path)?,
                }
                listed.push(key);
            }
            if !more && let Some(extra) = got.keys().find(|key| !listed.contains(key)) {
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

/// Turns a send pattern into the frame to send: `${name}` replaced, `$$` unescaped.
pub fn instantiate(pattern: &Value, captures: &Captures) -> Result<Value, String> {
    Ok(match pattern {
        Value::String(text) => match parse_str(text)? {
            Str::Literal(literal) => Value::String(literal),
            Str::Ref(name) => captures
                .get(&name)
                .cloned()
                .ok_or_else(|| format!("`${{{name}}}` is not bound"))?,
            Str::Template(pieces) => Value::String(render_template(&pieces, captures)?),
            _ => return Err(format!("`{text}` is a wildcard and cannot be sent")),
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
pub fn instantiate_text(text: &str, captures: &Captures) -> Result<String, String> {
    match parse_str(text)? {
        Str::Literal(literal) => Ok(literal),
        Str::Ref(name) => match captures.get(&name) {
            Some(Value::String(value)) => Ok(value.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(format!("`${{{name}}}` is not bound")),
        },
        Str::Template(pieces) => render_template(&pieces, captures),
        _ => Err(format!("`{text}` is a wildcard and cannot be an argument")),
    }
}

/// The value a sample `$int` or `$number` takes in a member whose key ends in `_ms` (an epoch
/// millisecond): 2100-01-01T00:00:00Z, the simulator's pinned "now" in conformance runs.
pub const SAMPLE_EPOCH_MS: u64 = 4_102_444_800_000;

/// The value a sample `$string` takes; a capture `$string:<name>` takes `replay-<name>`, so two
/// captures never share a value by accident.
pub const SAMPLE_STRING: &str = "replay";

/// Turns an expectation into the concrete frame a stand-in host writes: literals as written (`$$`
/// unescaped), `${name}` replaced, `$absent` members and `$more` left out, and every wildcard a
/// fixed sample of its type: `$any` null, `$int` and `$number` 0 ([`SAMPLE_EPOCH_MS`] in a member
/// whose key ends in `_ms`), `$string` [`SAMPLE_STRING`], `$bool` false, `$array` `[]`, `$object`
/// `{}`. A capture seen for the first time binds its sample, so every later sight of it, and a
/// `${name}` in a frame the client must send back, is that same value; a bound capture writes
/// its value. The result matches the pattern.
pub fn sample(pattern: &Value, captures: &mut Captures) -> Result<Value, String> {
    sample_at(pattern, None, captures)
}

fn sample_of(kind: Kind, key: Option<&str>, name: Option<&str>) -> Value {
    let epoch = key.is_some_and(|key| key.ends_with("_ms"));
    match kind {
        Kind::Any => Value::Null,
        Kind::Int | Kind::Number if epoch => Value::from(SAMPLE_EPOCH_MS),
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

fn sample_at(pattern: &Value, key: Option<&str>, captures: &mut Captures) -> Result<Value, String> {
    Ok(match pattern {
        Value::String(text) => match parse_str(text)? {
            Str::Literal(literal) => Value::String(literal),
            Str::Wildcard(kind) => sample_of(kind, key, None),
            Str::Capture(kind, name) => match captures.get(&name) {
                Some(bound) if kind.accepts(bound) => bound.clone(),
                Some(bound) => {
                    return Err(format!(
                        "capture `{name}` is bound to {bound}, which is not any {}",
                        kind.name()
                    ));
                }
                None => {
                    let value = sample_of(kind, key, Some(&name));
                    captures.insert(name, value.clone());
                    value
                }
            },
            Str::Ref(name) => captures
                .get(&name)
                .cloned()
                .ok_or_else(|| format!("`${{{name}}}` is not bound"))?,
            Str::Template(pieces) => Value::String(render_template(&pieces, captures)?),
            Str::Absent => return Err("`$absent` stands only for an object member".into()),
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
                if key == MORE_KEY || matches!(value, Value::String(text) if text == "$absent") {
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

/// The pattern as a reader compares it with the received frame: every directive that the
/// received value satisfies is replaced by that value, so a diff shows only real differences.
pub fn render_expected(pattern: &Value, actual: Option<&Value>, captures: &Captures) -> Value {
    match pattern {
        Value::String(text) => match parse_str(text) {
            Ok(Str::Literal(literal)) => Value::String(literal),
            Ok(Str::Wildcard(kind)) => match actual {
                Some(value) if kind.accepts(value) => value.clone(),
                _ => pattern.clone(),
            },
            Ok(Str::Capture(kind, name)) => match (captures.get(&name), actual) {
                (Some(bound), _) => bound.clone(),
                (None, Some(value)) if kind.accepts(value) => value.clone(),
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
                    .map(|(i, item)| render_expected(item, got.and_then(|g| g.get(i)), captures))
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
                if matches!(value, Value::String(text) if text == "$absent") {
                    continue;
                }
                let rendered = render_expected(value, got.and_then(|g| g.get(&key)), captures);
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
                    Some(pattern) if !matches!(pattern, Value::String(t) if t == "$absent") => {
                        bless(pattern, value)
                    }
                    _ => escape_literal(value),
                };
                out.insert(key.replace('$', "$$"), blessed);
            }
            for (key, value) in members {
                let absent = matches!(value, Value::String(t) if t == "$absent");
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

    fn check_match(pattern: Value, actual: Value) -> Result<Captures, Mismatch> {
        let mut captures = Captures::new();
        matches(&pattern, &actual, &mut captures).map(|()| captures)
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
        )
        .unwrap();
        assert_eq!(captures["host"], json!("studio"));
        matches(
            &json!({"h": "$string:host"}),
            &json!({"h": "studio"}),
            &mut captures,
        )
        .unwrap();
        let err = matches(
            &json!({"h": "$string:host"}),
            &json!({"h": "other"}),
            &mut captures,
        )
        .unwrap_err();
        assert!(err.reason.contains("bound to \"studio\""), "{err}");
        matches(
            &json!({"h": "${host}"}),
            &json!({"h": "studio"}),
            &mut captures,
        )
        .unwrap();
        assert!(matches(&json!({"h": "${host}"}), &json!({"h": "x"}), &mut captures).is_err());
    }

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
        assert!(matches(&json!("${pane}:x"), &json!("%1:x"), &mut captures).is_ok());
    }

    #[test]
    fn a_doubled_dollar_is_a_literal_dollar() {
        assert_eq!(parse_str("$$HOME").unwrap(), Str::Literal("$HOME".into()));
        assert_eq!(parse_str("a$$b").unwrap(), Str::Literal("a$b".into()));
        assert!(check_match(json!({"$$k": "$$int"}), json!({"$k": "$int"})).is_ok());
        assert_eq!(
            instantiate(&json!("$$x"), &Captures::new()).unwrap(),
            json!("$x")
        );
    }

    #[test]
    fn an_unknown_directive_or_lone_dollar_is_an_error_not_data() {
        assert!(parse_str("$HOME").unwrap_err().contains("write `$$`"));
        assert!(parse_str("costs 5$").unwrap_err().contains("lone `$`"));
        assert!(parse_str("${open").is_err());
        assert!(parse_str("$int:bad name").is_err());
        let err = check(&json!({"a": "$HOME"}), Use::Expect).unwrap_err();
        assert_eq!(err.path, "/a");
    }

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
    fn a_sample_fills_every_wildcard_with_a_fixed_value_of_its_type() {
        let pattern = json!({"schema": 1, "id": "1", "t": "edge", "at_ms": "$int", "n": "$int",
                             "x": "$number", "s": "$string", "b": "$bool", "a": "$array",
                             "o": "$object", "any": "$any", "gone": "$absent", "cost": "$$5",
                             "$more": true});
        let mut captures = Captures::new();
        let sampled = sample(&pattern, &mut captures).unwrap();
        assert_eq!(
            sampled,
            json!({"schema": 1, "id": "1", "t": "edge", "at_ms": SAMPLE_EPOCH_MS, "n": 0, "x": 0,
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
                .contains("not bound")
        );
        assert!(sample(&json!(["$absent"]), &mut captures).is_err());
        captures.insert("n".into(), json!("text"));
        assert!(
            sample(&json!({"n": "$int:n"}), &mut captures)
                .unwrap_err()
                .contains("not any int")
        );
    }

    #[test]
    fn the_expected_rendering_fills_satisfied_wildcards_only() {
        let pattern = json!({"id": "1", "at": "$int", "to": "$string", "gone": "$absent"});
        let actual = json!({"at": 5, "to": 3});
        assert_eq!(
            render_expected(&pattern, Some(&actual), &Captures::new()),
            json!({"id": "1", "at": 5, "to": "$string"})
        );
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
