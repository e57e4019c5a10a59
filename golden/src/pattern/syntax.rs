//! Reading a pattern string: what each `$` means. `$$` is a literal `$`, `${name}` a bound value,
//! `$<kind>` a typed wildcard, `$<kind>:<name>` a capture, `$absent` a missing member; any other
//! `$` is an error, so a directive can never be mistaken for data, or data for a directive.

use std::fmt;

use serde_json::Value;

use crate::Error;

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
    /// `$now`: an epoch-ms integer inside the case's run, on the wall clock (a time the host
    /// stamps itself). The type check is [`Kind::accepts`]; the span is checked by the matcher,
    /// which knows it ([`crate::clock::Window`]).
    Now,
}

impl Kind {
    /// Every kind, in the order the README lists them.
    pub const ALL: [Kind; 8] = [
        Kind::Any,
        Kind::Int,
        Kind::Number,
        Kind::String,
        Kind::Bool,
        Kind::Array,
        Kind::Object,
        Kind::Now,
    ];

    fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The name after the `$` (`int` for `$int`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Any => "any",
            Kind::Int => "int",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Bool => "bool",
            Kind::Array => "array",
            Kind::Object => "object",
            Kind::Now => "now",
        }
    }

    /// Whether a received value is of this kind (for `$now`, an integer that can be an epoch-ms
    /// time; whether it is inside the case's run is the matcher's check).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            Kind::Any => true,
            Kind::Int => value.is_i64() || value.is_u64(),
            Kind::Number => value.is_number(),
            // A string a pattern leaves open is still something: an empty `message` or
            // `tool_version` says nothing.
            Kind::String => value.as_str().is_some_and(|text| !text.is_empty()),
            Kind::Bool => value.is_boolean(),
            Kind::Array => value.is_array(),
            Kind::Object => value.is_object(),
            Kind::Now => value.is_u64(),
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

pub fn display_path(path: &str) -> &str {
    if path.is_empty() { "the frame" } else { path }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Parses one pattern string.
pub fn parse_str(text: &str) -> Result<Str, Error> {
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
            return Err(Error::new(format!(
                "`{text}` is not a directive (known: $any $int $number $string $bool $array \
                 $object $now $absent, `$<kind>:<name>`, `${{name}}`); write `$$` for a literal `$`"
            )));
        };
        return match name {
            None => Ok(Str::Wildcard(kind)),
            Some(name) if valid_name(name) => Ok(Str::Capture(kind, name.to_owned())),
            Some(name) => Err(Error::new(format!(
                "`{name}` is not a capture name (letters, digits, `_`, `-`, `.`)"
            ))),
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
                    return Err(Error::new(format!(
                        "`{text}` opens `${{` without closing it"
                    )));
                };
                let name = &text[at + 2..at + close];
                if !valid_name(name) {
                    return Err(Error::new(format!("`${{{name}}}` does not name a capture")));
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
                return Err(Error::new(format!(
                    "a lone `$` in `{text}`: write `$$` for a literal `$`"
                )));
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
pub fn parse_key(key: &str) -> Result<String, Error> {
    match parse_str(key)? {
        Str::Literal(key) => Ok(key),
        _ => Err(Error::new(format!(
            "the key `{key}` is a directive; only `{MORE_KEY}` may be one, write `$$` for a literal `$`"
        ))),
    }
}

/// True when the member's pattern is `$absent`: the key must be missing.
pub fn is_absent(value: &Value) -> bool {
    matches!(value, Value::String(text) if text == "$absent")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doubled_dollar_is_a_literal_dollar() {
        assert_eq!(parse_str("$$HOME").unwrap(), Str::Literal("$HOME".into()));
        assert_eq!(parse_str("a$$b").unwrap(), Str::Literal("a$b".into()));
        assert_eq!(parse_key("$$k"), Ok("$k".into()));
    }

    #[test]
    fn an_unknown_directive_or_lone_dollar_is_an_error_not_data() {
        assert!(
            parse_str("$HOME")
                .unwrap_err()
                .message
                .contains("write `$$`")
        );
        assert!(
            parse_str("costs 5$")
                .unwrap_err()
                .message
                .contains("lone `$`")
        );
        assert!(parse_str("${open").is_err());
        assert!(parse_str("$int:bad name").is_err());
        assert!(parse_key("$int").is_err());
    }

    #[test]
    fn directives_parse_into_what_they_mean() {
        assert_eq!(parse_str("$int"), Ok(Str::Wildcard(Kind::Int)));
        assert_eq!(parse_str("$now"), Ok(Str::Wildcard(Kind::Now)));
        assert_eq!(
            parse_str("$now:paired"),
            Ok(Str::Capture(Kind::Now, "paired".into()))
        );
        assert_eq!(
            parse_str("$string:host"),
            Ok(Str::Capture(Kind::String, "host".into()))
        );
        assert_eq!(parse_str("${host}"), Ok(Str::Ref("host".into())));
        assert_eq!(
            parse_str("${sim_dir}/repos"),
            Ok(Str::Template(vec![
                Piece::Ref("sim_dir".into()),
                Piece::Text("/repos".into())
            ]))
        );
        assert!(is_absent(&Value::from("$absent")));
    }
}
