//! Parsing a format, scanning as tmux 3.3a's format.c scans (its `format_skip`,
//! `format_build_modifiers`, `format_choose`), written from the manual's rules and checked
//! against `display-message -p`; the fake's own code, not tmux's.

use super::{
    Arith, Body, Compare, Cond, Format, FormatError, Measure, Mods, Piece, Quote, Replace, Var,
};
use crate::fake::vars;

/// tmux options whose names have no `-`; every other option name has one.
const PLAIN_OPTIONS: &[&str] = &["editor", "mouse", "prefix", "prefix2", "status"];

/// Parses a whole format.
pub(super) fn format(text: &str) -> Result<Format, FormatError> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    let flush = |literal: &mut String, pieces: &mut Vec<Piece>| {
        if !literal.is_empty() {
            pieces.push(Piece::Text(std::mem::take(literal)));
        }
    };
    while i < bytes.len() {
        let Some(at) = text[i..].find('#').map(|at| i + at) else {
            literal.push_str(&text[i..]);
            break;
        };
        literal.push_str(&text[i..at]);
        let Some(next) = text[at + 1..].chars().next() else {
            literal.push('#');
            break;
        };
        match next {
            '(' => {
                return Err(FormatError::new(format!(
                    "#(...) in format {text:?}: the fake runs no shell commands"
                )));
            }
            '{' => {
                let Some(end) = skip(&text[at..], b"}").map(|end| at + end) else {
                    flush(&mut literal, &mut pieces);
                    pieces.push(Piece::Stop);
                    return Ok(Format { pieces });
                };
                flush(&mut literal, &mut pieces);
                match replace(&text[at + 2..end])? {
                    Some(replace) => pieces.push(Piece::Replace(Box::new(replace))),
                    None => {
                        pieces.push(Piece::Stop);
                        return Ok(Format { pieces });
                    }
                }
                i = end + 1;
            }
            '#' => {
                // A run of two or more `#` before `[` is a style, kept whole.
                let run = text[at..].bytes().take_while(|b| *b == b'#').count();
                if text[at + run..].starts_with('[') {
                    literal.push_str(&text[at..at + run]);
                    i = at + run;
                } else {
                    literal.push('#');
                    i = at + 2;
                }
            }
            ',' | '}' => {
                literal.push(next);
                i = at + 2;
            }
            c => {
                match c.is_ascii_alphabetic().then(|| vars::aliased(c)).flatten() {
                    Some(variable) => {
                        flush(&mut literal, &mut pieces);
                        pieces.push(Piece::Replace(Box::new(Replace {
                            body: Body::Lookup(Var::Builtin(variable)),
                            ..Replace::default()
                        })));
                    }
                    None => {
                        literal.push('#');
                        literal.push(c);
                    }
                }
                i = at + 1 + c.len_utf8();
            }
        }
    }
    flush(&mut literal, &mut pieces);
    Ok(Format { pieces })
}

/// Where in `s` the first of `ends` is that is outside any `#{...}` and not escaped by `#`; the
/// escapes `#,` `##` `#{` `#}` `#:` are passed over. A `#{` opens a level and a `}` closes one.
pub(super) fn skip(s: &str, ends: &[u8]) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'#' && b.get(i + 1) == Some(&b'{') {
            depth += 1;
        }
        if b[i] == b'#' && b.get(i + 1).is_some_and(|n| b",#{}:".contains(n)) {
            i += 2;
            continue;
        }
        if b[i] == b'}' {
            depth -= 1;
        }
        if ends.contains(&b[i]) && depth == 0 {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// One modifier as written: its name and arguments (each a format).
#[derive(Debug)]
struct Modifier<'a> {
    name: &'a str,
    args: Vec<&'a str>,
}

fn is_end(b: Option<&u8>) -> bool {
    matches!(b, Some(b';' | b':'))
}

/// The modifiers at the start of `key` and the rest after their `:`; none (and `key` whole)
/// when they do not end in a `:`, as tmux reads them.
fn modifiers(key: &str) -> (Vec<Modifier<'_>>, &str) {
    let b = key.as_bytes();
    let mut list = Vec::new();
    let mut cp = 0;
    while cp < b.len() && b[cp] != b':' {
        if b[cp] == b';' {
            cp += 1;
        }
        let Some(&c) = b.get(cp) else { break };
        if b"labcdnwETSWPL<>".contains(&c) && is_end(b.get(cp + 1)) {
            list.push(Modifier {
                name: &key[cp..cp + 1],
                args: Vec::new(),
            });
            cp += 1;
            continue;
        }
        let two = key.get(cp..cp + 2).unwrap_or("");
        if ["||", "&&", "!=", "==", "<=", ">="].contains(&two) && is_end(b.get(cp + 2)) {
            list.push(Modifier {
                name: two,
                args: Vec::new(),
            });
            cp += 2;
            continue;
        }
        if !b"mCNst=peq".contains(&c) {
            break;
        }
        let name = &key[cp..cp + 1];
        if is_end(b.get(cp + 1)) {
            list.push(Modifier {
                name,
                args: Vec::new(),
            });
            cp += 1;
            continue;
        }
        let Some(&wrap) = b.get(cp + 1) else { break };
        if !wrap.is_ascii_punctuation() || wrap == b'-' {
            let Some(end) = skip(&key[cp + 1..], b":;").map(|end| cp + 1 + end) else {
                break;
            };
            list.push(Modifier {
                name,
                args: vec![&key[cp + 1..end]],
            });
            cp = end;
            continue;
        }
        // Arguments parted by the character after the modifier: `=/5/...`, `s/a/b/`.
        let ends = [wrap, b';', b':'];
        let mut args = Vec::new();
        cp += 1;
        loop {
            if b.get(cp) == Some(&wrap) && is_end(b.get(cp + 1)) {
                cp += 1;
                break;
            }
            let Some(end) = skip(&key[cp + 1..], &ends).map(|end| cp + 1 + end) else {
                cp = b.len();
                break;
            };
            args.push(&key[cp + 1..end]);
            cp = end;
            if is_end(b.get(cp)) {
                break;
            }
        }
        list.push(Modifier { name, args });
    }
    if b.get(cp) != Some(&b':') {
        return (Vec::new(), key);
    }
    (list, &key[cp + 1..])
}

/// A modifier's argument that the fake needs as plain text when it parses.
fn plain<'a>(modifier: &Modifier<'a>, at: usize) -> Result<Option<&'a str>, FormatError> {
    match modifier.args.get(at) {
        Some(arg) if arg.contains('#') => Err(FormatError::new(format!(
            "format modifier {}: a computed argument ({arg}) is not modelled by the fake",
            modifier.name
        ))),
        arg => Ok(arg.copied()),
    }
}

fn refuse(modifier: &Modifier<'_>, key: &str, what: &str) -> FormatError {
    FormatError::new(format!(
        "format modifier {} in #{{{key}}} ({what}) is not modelled by the fake",
        modifier.name
    ))
}

/// Parses the inside of one `#{...}`; `None` when tmux gives up on it (the format stops there).
fn replace(key: &str) -> Result<Option<Replace>, FormatError> {
    let (list, copy) = modifiers(key);
    let mut mods = Mods::default();
    let mut literal = false;
    let mut char = false;
    let mut compare = None;
    let mut arith = None;
    for modifier in &list {
        match modifier.name {
            "l" => literal = true,
            "a" => char = true,
            "b" => mods.basename = true,
            "d" => mods.dirname = true,
            "n" => mods.measure = Some(Measure::Length),
            "w" => mods.measure = Some(Measure::Width),
            "E" => mods.again = true,
            "T" => {
                mods.again = true;
                mods.strftime = true;
            }
            "t" => {
                mods.time = true;
                if let Some(flags) = plain(modifier, 0)?
                    && flags.contains(['p', 'f'])
                {
                    return Err(refuse(modifier, key, "another time format than ctime's"));
                }
            }
            "q" => match plain(modifier, 0)? {
                None => mods.quote = Some(Quote::Shell),
                Some(flags) if flags.contains(['e', 'h']) => mods.quote = Some(Quote::Hash),
                Some(_) => {}
            },
            "=" => {
                if let Some(n) = modifier.args.first() {
                    let marker = modifier.args.get(1).map(|m| format(m)).transpose()?;
                    mods.trim = Some((format(n)?, marker));
                }
            }
            "p" => {
                if let Some(n) = modifier.args.first() {
                    mods.pad = Some(format(n)?);
                }
            }
            "s" if modifier.args.len() >= 2 => {
                if modifier.args.len() > 2 && !modifier.args[2].is_empty() {
                    return Err(refuse(modifier, key, "a substitution with flags"));
                }
                mods.subs
                    .push((format(modifier.args[0])?, format(modifier.args[1])?));
            }
            "m" => {
                let flags = plain(modifier, 0)?.unwrap_or("");
                if flags.contains('r') {
                    return Err(refuse(modifier, key, "a regular expression"));
                }
                compare = Some(Compare::Match {
                    icase: flags.contains('i'),
                });
            }
            "e" if (1..=3).contains(&modifier.args.len()) => {
                arith = Some(arithmetic(modifier, key)?);
            }
            "==" => compare = Some(Compare::Eq),
            "!=" => compare = Some(Compare::Ne),
            "<" => compare = Some(Compare::Lt),
            ">" => compare = Some(Compare::Gt),
            "<=" => compare = Some(Compare::Le),
            ">=" => compare = Some(Compare::Ge),
            "||" => compare = Some(Compare::Or),
            "&&" => compare = Some(Compare::And),
            "S" | "W" | "P" | "L" => return Err(refuse(modifier, key, "a loop")),
            "N" => return Err(refuse(modifier, key, "a name check")),
            "C" => return Err(refuse(modifier, key, "a search of the pane's content")),
            "c" => return Err(refuse(modifier, key, "a colour")),
            _ => {}
        }
    }
    let body = if literal {
        Body::Literal(copy.to_owned())
    } else if char {
        Body::Char(format(copy)?)
    } else if let Some((op, float, digits)) = arith {
        // Without its comma an arithmetic expands to nothing, and the format goes on.
        match choose(copy)? {
            None => Body::Nothing,
            Some((left, right)) => Body::Arith {
                op,
                float,
                digits,
                left,
                right,
            },
        }
    } else if let Some(op) = compare {
        let Some((left, right)) = choose(copy)? else {
            return Ok(None);
        };
        Body::Compare { op, left, right }
    } else if let Some(rest) = copy.strip_prefix('?') {
        let Some(comma) = skip(rest, b",") else {
            return Ok(None);
        };
        let raw = &rest[..comma];
        let cond = match name(raw)? {
            Some(var) => Cond::Var(var),
            None => Cond::Text {
                raw: raw.to_owned(),
                format: format(raw)?,
            },
        };
        let Some((yes, no)) = choose(&rest[comma + 1..])? else {
            return Ok(None);
        };
        Body::Cond { cond, yes, no }
    } else if copy.contains("#{") {
        Body::Nested(format(copy)?)
    } else {
        match name(copy)? {
            Some(var) => Body::Lookup(var),
            None => Body::Nothing,
        }
    };
    Ok(Some(Replace { mods, body }))
}

/// The two sides of `left,right`, each a format; `None` without the comma.
fn choose(text: &str) -> Result<Option<(Format, Format)>, FormatError> {
    match skip(text, b",") {
        None => Ok(None),
        Some(comma) => Ok(Some((format(&text[..comma])?, format(&text[comma + 1..])?))),
    }
}

/// What a name is: a variable, a user option, a tmux option, or nothing tmux knows (`None`). A
/// variable tmux knows and the fake does not model is the error.
fn name(name: &str) -> Result<Option<Var>, FormatError> {
    if let Some(option) = name.strip_prefix('@') {
        return Ok((!option.is_empty()).then(|| Var::Option(name.to_owned())));
    }
    if let Some(variable) = vars::named(name) {
        if variable.unmodelled() {
            return Err(FormatError::new(format!(
                "format variable #{{{name}}} is not modelled by the fake"
            )));
        }
        return Ok(Some(Var::Builtin(variable)));
    }
    let option = name.split('[').next().unwrap_or(name);
    let option_like = !option.is_empty()
        && option
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if option_like && (option.contains('-') || PLAIN_OPTIONS.contains(&option)) {
        return Ok(Some(Var::TmuxOption(name.to_owned())));
    }
    Ok(None)
}

/// `e|op|flags|digits`: the operator, whether it is floating point, and the decimal places.
fn arithmetic(modifier: &Modifier<'_>, key: &str) -> Result<(Arith, bool, usize), FormatError> {
    let op = match plain(modifier, 0)?.unwrap_or("") {
        "+" => Arith::Add,
        "-" => Arith::Sub,
        "*" => Arith::Mul,
        "/" => Arith::Div,
        "m" | "%" => Arith::Mod,
        "==" => Arith::Eq,
        "!=" => Arith::Ne,
        ">" => Arith::Gt,
        ">=" => Arith::Ge,
        "<" => Arith::Lt,
        "<=" => Arith::Le,
        _ => return Err(refuse(modifier, key, "an operator tmux does not have")),
    };
    let float = plain(modifier, 1)?.is_some_and(|flags| flags.contains('f'));
    let digits = match plain(modifier, 2)? {
        None if float => 2,
        None => 0,
        Some(digits) => digits
            .parse()
            .map_err(|_| refuse(modifier, key, "decimal places that are not a number"))?,
    };
    Ok((op, float, digits))
}
