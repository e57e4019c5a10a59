//! Rust source as the tidy rules need it: identifiers, `::` and punctuation with their lines,
//! and nothing from comments, strings, raw strings, character literals or numbers, so a path
//! written in a comment or a string is never taken for code.

/// A token: an identifier or keyword, `::`, or one punctuation character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The identifier, keyword, `::` or character.
    pub text: String,
    /// Its 1-based line.
    pub line: usize,
}

impl Token {
    /// Whether it is an identifier or a keyword.
    pub fn is_ident(&self) -> bool {
        self.text
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    }
}

/// Rust source as tokens, without comments, strings, character literals and numbers.
pub fn lex(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
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
        } else if let Some(end) = raw_string_end(&chars, i) {
            line += chars[i..end].iter().filter(|c| **c == '\n').count();
            i = end;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
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
                });
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            tokens.push(Token {
                text: c.to_string(),
                line,
            });
            i += 1;
        }
    }
    tokens
}

/// Where a raw string starting at `i` (`r"`, `r#"`, `br##"`, ...) ends, just past it.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
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
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|c| **c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
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
    fn every_token_knows_its_line() {
        let tokens = lex("a\n/* x\n y */ b\n\"s\n\" c");
        let lines: Vec<usize> = tokens.iter().map(|t| t.line).collect();
        assert_eq!(lines, [1, 3, 5]);
    }
}
