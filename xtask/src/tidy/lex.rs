//! Rust source as the tidy rules need it: identifiers, `::` and punctuation with their lines,
//! and nothing from comments, strings, raw strings, character literals or numbers, so a path
//! written in a comment or a string is never taken for code. A rule about string literals asks
//! for them too ([`lex_with_strings`]), each a token of its own.

/// A token: an identifier or keyword, `::`, one punctuation character, or (from
/// [`lex_with_strings`] only) a string literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The identifier, keyword, `::` or character; a string literal's text between its quotes,
    /// as written (escapes not processed).
    pub text: String,
    /// Its 1-based line (where a string literal starts).
    pub line: usize,
    /// Code, or a string literal.
    pub kind: Kind,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An identifier, keyword, `::` or punctuation character.
    Code,
    /// A string literal: plain, raw or byte.
    Str,
}

impl Token {
    /// Whether it is an identifier or a keyword.
    pub fn is_ident(&self) -> bool {
        self.kind == Kind::Code
            && self
                .text
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
    }

    /// Whether it is code with this text (never a string literal that reads the same).
    pub fn is(&self, text: &str) -> bool {
        self.kind == Kind::Code && self.text == text
    }
}

/// Rust source as tokens, without comments, strings, character literals and numbers.
pub fn lex(text: &str) -> Vec<Token> {
    let mut tokens = lex_with_strings(text);
    tokens.retain(|token| token.kind == Kind::Code);
    tokens
}

/// Rust source as tokens with its string literals among them, without comments, character
/// literals and numbers.
pub fn lex_with_strings(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let literal = |range: std::ops::Range<usize>, line: usize| Token {
        text: chars[range].iter().collect(),
        line,
        kind: Kind::Str,
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut nested = 0;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '/' && at(i + 1) == '*' {
                    nested += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    nested -= 1;
                    i += 2;
                    if nested == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if let Some(raw) = raw_string(&chars, i) {
            tokens.push(literal(raw.contents, line));
            line += chars[i..raw.end].iter().filter(|c| **c == '\n').count();
            i = raw.end;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            let start_line = line;
            i += if c == 'b' { 2 } else { 1 };
            let start = i;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            tokens.push(literal(start..i.min(chars.len()), start_line));
            i += 1;
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            let start = if c == 'b' { i + 1 } else { i };
            if at(start + 1) == '\\' {
                // An escaped character literal: past the escaped character, up to the quote.
                i = start + 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(start + 2) == '\'' {
                i = start + 3;
            } else {
                // A lifetime or a label: the quote alone.
                i = start + 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            if c.is_alphabetic() || c == '_' {
                tokens.push(Token {
                    text: chars[start..i].iter().collect(),
                    line,
                    kind: Kind::Code,
                });
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push(Token {
                text: "::".into(),
                line,
                kind: Kind::Code,
            });
            i += 2;
        } else {
            tokens.push(Token {
                text: c.to_string(),
                line,
                kind: Kind::Code,
            });
            i += 1;
        }
    }
    tokens
}

/// A raw string in the source: where its text between the quotes lies, and where it ends.
struct Raw {
    /// The text between its quotes.
    contents: std::ops::Range<usize>,
    /// Just past its closing quote and hashes.
    end: usize,
}

/// The raw string starting at `i` (`r"`, `r#"`, `br##"`, ...), if one does.
fn raw_string(chars: &[char], i: usize) -> Option<Raw> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    let start = j;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|c| **c == '#')
                .count()
                == hashes
        {
            return Some(Raw {
                contents: start..j,
                end: j + 1 + hashes,
            });
        }
        j += 1;
    }
    Some(Raw {
        contents: start..chars.len(),
        end: chars.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<String> {
        lex(source).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn paths_are_tokens_and_what_is_not_code_is_gone() {
        assert_eq!(
            texts("use crate::a::{b, c};"),
            [
                "use", "crate", "::", "a", "::", "{", "b", ",", "c", "}", ";"
            ]
        );
        assert_eq!(
            texts(
                "x // crate::a\n/* crate::b /* nested */ */ \"crate::c\" r#\"crate::\"d\"# b'\\'' 'e' 1_000"
            ),
            ["x"]
        );
        assert_eq!(
            texts("fn f<'a>(s: &'a str) {}"),
            [
                "fn", "f", "<", "a", ">", "(", "s", ":", "&", "a", "str", ")", "{", "}"
            ]
        );
    }

    #[test]
    fn string_literals_are_tokens_of_their_own_with_their_text_and_line() {
        let tokens = lex_with_strings(
            "f(\"a\\\"b\", r#\"c\"d\"#, b\"e\") // \"not\"\n/* \"nor\" */ 'x' '\"' \"two\nlines\" g",
        );
        let strings: Vec<(&str, usize)> = tokens
            .iter()
            .filter(|t| t.kind == Kind::Str)
            .map(|t| (t.text.as_str(), t.line))
            .collect();
        assert_eq!(
            strings,
            [("a\\\"b", 1), ("c\"d", 1), ("e", 1), ("two\nlines", 2)]
        );
        assert_eq!(
            tokens.last().map(|t| (t.text.as_str(), t.line)),
            Some(("g", 3))
        );
        assert!(!tokens.iter().any(|t| t.kind == Kind::Str && t.is_ident()));
    }

    #[test]
    fn every_token_knows_its_line() {
        let tokens = lex("a\n/* x\n y */ b\n\"s\n\" c");
        let lines: Vec<usize> = tokens.iter().map(|t| t.line).collect();
        assert_eq!(lines, [1, 3, 5]);
    }
}
