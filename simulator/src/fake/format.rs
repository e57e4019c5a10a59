//! tmux's `-F` formats, the subset the fake expands: plain `#{variable}`s (the variables of
//! [`super::vars`], and pane user options `#{@name}`, empty when unset), the string comparisons
//! `#{==:a,b}` and `#{!=:a,b}` (each side a format itself, `1` or `0` as tmux answers), `##`,
//! `#,`, `#}`, the aliases `#D #I #P #S #T`, and every other `#x` or `#[...]` left as tmux leaves
//! it. Anything the fake cannot expand faithfully (other modifiers, conditionals, `#(...)`,
//! unknown variables) is an error, never silent wrong output.
//!
//! A format is parsed once, before any pane is visited, so an unsupported format fails even on an
//! empty server.

use std::fmt;

use super::vars::{self, Variable};

/// A variable the fake knows how to expand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// A built-in variable, from the table.
    Builtin(&'static Variable),
    /// A user option, `@name` (with the `@`).
    Option(String),
}

/// One piece of a parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Var(Var),
    /// `#{==:left,right}` (`equal`) or `#{!=:left,right}`.
    Compare {
        equal: bool,
        left: Format,
        right: Format,
    },
}

/// A parsed format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pieces: Vec<Piece>,
}

/// A format the fake cannot expand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The offending piece, as written.
    pub piece: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unsupported format {}: the fake expands plain #{{variable}}s, #{{@option}}s, #{{==:a,b}}, #{{!=:a,b}}, ##, #, and #}}",
            self.piece
        )
    }
}

impl std::error::Error for FormatError {}

impl Format {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Format, FormatError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('#') {
            literal.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let mut chars = after.chars();
            match chars.next() {
                None => {
                    literal.push('#');
                    rest = "";
                }
                // `##[` stays `##[` (a style), as tmux keeps it.
                Some('#') if after[1..].starts_with('[') => {
                    literal.push_str("##");
                    rest = &after[1..];
                }
                Some(c @ ('#' | ',' | '}')) => {
                    literal.push(c);
                    rest = &after[1..];
                }
                Some('{') if after[1..].starts_with("==:") || after[1..].starts_with("!=:") => {
                    let body = &after[4..];
                    let (comma, end) = comparison_bounds(body).ok_or_else(|| FormatError {
                        piece: format!("#{{{}", &after[1..]),
                    })?;
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Compare {
                        equal: after[1..].starts_with("=="),
                        left: Format::parse(&body[..comma])?,
                        right: Format::parse(&body[comma + 1..end])?,
                    });
                    rest = &body[end + 1..];
                }
                Some('{') => {
                    let body = &after[1..];
                    let Some(end) = body.find('}') else {
                        return Err(FormatError {
                            piece: format!("#{{{body}"),
                        });
                    };
                    let name = &body[..end];
                    let var = if let Some(option) = name.strip_prefix('@') {
                        let plain = !option.is_empty()
                            && option
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                        plain.then(|| Var::Option(name.to_owned()))
                    } else {
                        vars::named(name).map(Var::Builtin)
                    };
                    let Some(var) = var else {
                        return Err(FormatError {
                            piece: format!("#{{{name}}}"),
                        });
                    };
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Var(var));
                    rest = &body[end + 1..];
                }
                Some(c) => match vars::aliased(c) {
                    Some(variable) => {
                        if !literal.is_empty() {
                            pieces.push(Piece::Text(std::mem::take(&mut literal)));
                        }
                        pieces.push(Piece::Var(Var::Builtin(variable)));
                        rest = &after[1..];
                    }
                    None if matches!(c, 'F' | 'H' | 'h' | 'W' | '(') => {
                        return Err(FormatError {
                            piece: format!("#{c}"),
                        });
                    }
                    None => {
                        literal.push('#');
                        rest = after;
                    }
                },
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Format { pieces })
    }

    /// Expands the format; `lookup` answers each variable (`None` expands to nothing).
    pub fn expand(&self, lookup: impl Fn(&Var) -> Option<String>) -> String {
        self.expand_with(&lookup)
    }

    fn expand_with(&self, lookup: &dyn Fn(&Var) -> Option<String>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Var(var) => {
                    if let Some(value) = lookup(var) {
                        out.push_str(&value);
                    }
                }
                Piece::Compare { equal, left, right } => {
                    let same = left.expand_with(lookup) == right.expand_with(lookup);
                    out.push_str(if same == *equal { "1" } else { "0" });
                }
            }
        }
        out
    }

    /// Whether the format names a variable that needs a pane, window or session.
    pub fn needs_target(&self) -> bool {
        self.pieces.iter().any(|piece| match piece {
            Piece::Var(Var::Builtin(variable)) => variable.needs_target(),
            Piece::Var(Var::Option(_)) => true,
            Piece::Text(_) => false,
            Piece::Compare { left, right, .. } => left.needs_target() || right.needs_target(),
        })
    }
}

/// Where a comparison's two sides part and where it ends, in `body` (the text after `==:`): the
/// first `,` and the first `}` outside any nested `#{...}`, skipping tmux's escapes `#,` `##`
/// `#{` `#}` `#:` as tmux's own scan does. `None` when it does not end.
fn comparison_bounds(body: &str) -> Option<(usize, usize)> {
    let bytes = body.as_bytes();
    let mut depth = 0usize;
    let mut comma = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 2;
                continue;
            }
            b'#' if bytes.get(i + 1).is_some_and(|b| b",#}:".contains(b)) => {
                i += 2;
                continue;
            }
            b'}' if depth == 0 => return comma.map(|comma| (comma, i)),
            b'}' => depth -= 1,
            b',' if depth == 0 && comma.is_none() => comma = Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(format: &str, expected: &str) {
        let parsed = Format::parse(format).unwrap();
        let out = parsed.expand(|var| match var {
            Var::Builtin(variable) => match variable.name {
                "pane_id" => Some("%0".into()),
                "session_name" => Some("s1".into()),
                "window_index" => Some("0".into()),
                "pane_index" => Some("0".into()),
                "pane_title" => Some("vm".into()),
                _ => None,
            },
            Var::Option(name) if name == "@v0" => Some("plain".into()),
            Var::Option(_) => None,
        });
        assert_eq!(out, expected, "format {format:?}");
    }

    /// Expected outputs were printed by tmux 3.3a's `display-message -p` for the same formats.
    #[test]
    fn expands_like_tmux() {
        check("a##b", "a#b");
        check("a##[x", "a##[x");
        check("a#,b", "a,b");
        check("a#}b", "a}b");
        check("a#xb", "a#xb");
        check("a#[fg=red]b", "a#[fg=red]b");
        check("trail#", "trail#");
        check("#D#S#I#P#T", "%0s100vm");
        check("#{@v0}#{@v0}", "plainplain");
        check("x#{pane_id}##y#{@v0}z#{@nope}w", "x%0#yplainzw");
        check("###{pane_id}", "#%0");
        check("####", "##");
        check("\x1f#{pane_id}\t", "\x1f%0\t");
    }

    /// Printed by tmux 3.3a's `display-message -p` with `@v0` set to `plain`.
    #[test]
    fn compares_like_tmux() {
        check("#{==:#{@v0},plain}", "1");
        check("#{!=:#{@v0},plain}", "0");
        check("#{==:#{@nope},}", "1");
        check("#{!=:#{@nope},}", "0");
        check("x#{==:a#,b,a#,b}y", "x1y");
        check("#{==:#{pane_index}#{@v0},0plain} #{==:1,2}", "1 0");
        check("#{!=:#{==:a,a},0}", "1");
    }

    #[test]
    fn refuses_what_it_cannot_expand() {
        for format in [
            "#{?pane_active,y,n}",
            "#{=5:pane_title}",
            "#{nonsense}",
            "#{pane_id",
            "#(date)",
            "#W",
            "#{@}",
            "#{ pane_id}",
            "#{==:a}",
            "#{==:a,b",
            "#{<=:a,b}",
            "#{==:#{?x,y,z},1}",
        ] {
            let err = Format::parse(format).unwrap_err();
            assert!(
                err.to_string().starts_with("unsupported format"),
                "{format}: {err}"
            );
        }
    }
}
