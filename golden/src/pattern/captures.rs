//! Captured values: what a pattern binds on first sight and what `${name}` stands for, in a whole
//! value or written into a longer string.

use std::collections::BTreeMap;

use serde_json::Value;

use super::syntax::Piece;
use crate::Error;

/// Captured values by name.
pub type Captures = BTreeMap<String, Value>;

/// The value bound to `name`, or the error that says it is not.
pub fn bound<'a>(captures: &'a Captures, name: &str) -> Result<&'a Value, Error> {
    captures
        .get(name)
        .ok_or_else(|| Error::new(format!("`${{{name}}}` is not bound")))
}

/// A string with `${name}`s in it, each replaced by its bound value's text (a string as is, a
/// number or a boolean as JSON; anything else cannot be written inside a string).
pub fn render_template(pieces: &[Piece], captures: &Captures) -> Result<String, Error> {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Ref(name) => match bound(captures, name)? {
                Value::String(text) => out.push_str(text),
                other @ (Value::Number(_) | Value::Bool(_)) => out.push_str(&other.to_string()),
                other => {
                    return Err(Error::new(format!(
                        "`${{{name}}}` is {other}, which cannot be written inside a string"
                    )));
                }
            },
        }
    }
    Ok(out)
}
