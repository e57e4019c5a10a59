//! The rule that no test is ignored or expected to panic: a test asserts on the error value or the
//! error frame instead, and always runs. Read from the attributes as the compiler reads them, not
//! from line starts: `ignore` or `should_panic` anywhere an attribute can carry it is a problem,
//! whatever its arguments (`= "why"`, `(expected = "...")`), however many attributes share its
//! line, and inside `cfg_attr(predicate, ...)` at any depth. Comments and strings are not code.

use super::lex::{Token, lex};

/// The attributes no test may carry.
pub const BANNED: &[&str] = &["ignore", "should_panic"];

/// Every banned attribute in `text`: its line and its name.
pub fn banned(text: &str) -> Vec<(usize, &'static str)> {
    let tokens = lex(text);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !tokens[i].is("#") {
            i += 1;
            continue;
        }
        let mut open = i + 1;
        if tokens.get(open).is_some_and(|token| token.is("!")) {
            open += 1;
        }
        if !tokens.get(open).is_some_and(|token| token.is("[")) {
            i += 1;
            continue;
        }
        let close = closing(&tokens, open);
        meta(&tokens[open + 1..close], &mut found);
        i = close + 1;
    }
    found
}

/// The index of the bracket that closes the one at `open` (or the end, in a file cut short).
fn closing(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (at, token) in tokens.iter().enumerate().skip(open) {
        match token.text.as_str() {
            "[" | "(" | "{" => depth += 1,
            "]" | ")" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// One attribute's contents (`path`, `path = value`, `path(args)`): banned when its path is, and
/// searched within when it is a `cfg_attr`, whose arguments after the predicate are attributes.
fn meta(tokens: &[Token], found: &mut Vec<(usize, &'static str)>) {
    let path_end = tokens
        .iter()
        .position(|token| !(token.is_ident() || token.is("::")))
        .unwrap_or(tokens.len());
    let path = &tokens[..path_end];
    let [name] = path else {
        return;
    };
    if let Some(banned) = BANNED.iter().find(|banned| name.is(banned)) {
        found.push((name.line, *banned));
    } else if name.is("cfg_attr") && tokens.get(path_end).is_some_and(|token| token.is("(")) {
        let close = closing(tokens, path_end).min(tokens.len());
        for attribute in split_commas(&tokens[path_end + 1..close])
            .into_iter()
            .skip(1)
        {
            meta(attribute, found);
        }
    }
}

/// `tokens` split at the commas outside brackets.
fn split_commas(tokens: &[Token]) -> Vec<&[Token]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, token) in tokens.iter().enumerate() {
        match token.text.as_str() {
            "[" | "(" | "{" => depth += 1,
            "]" | ")" | "}" => depth = depth.saturating_sub(1),
            "," if depth == 0 => {
                parts.push(&tokens[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(usize, &'static str)> {
        banned(text)
    }

    #[test]
    fn an_attribute_at_a_lines_start_is_found() {
        assert_eq!(
            found("#[ignore]\nfn a() {}\n    #[should_panic]\nfn b() {}\n"),
            [(1, "ignore"), (3, "should_panic")]
        );
    }

    #[test]
    fn an_attribute_after_another_on_its_line_is_found() {
        assert_eq!(
            found("#[test] #[ignore] fn a() {}\n#[test]#[should_panic] fn b() {}"),
            [(1, "ignore"), (2, "should_panic")]
        );
    }

    #[test]
    fn an_attribute_with_arguments_is_found() {
        assert_eq!(
            found(
                "#[test]\n#[ignore = \"slow\"]\nfn a() {}\n#[should_panic(expected = \"boom\")]\n"
            ),
            [(2, "ignore"), (4, "should_panic")]
        );
    }

    #[test]
    fn an_attribute_inside_cfg_attr_is_found() {
        assert_eq!(
            found("#[cfg_attr(not(feature = \"slow\"), ignore)]\nfn a() {}"),
            [(1, "ignore")]
        );
        assert_eq!(
            found("#[cfg_attr(all(unix, target_os = \"linux\"), test, ignore = \"why\")]"),
            [(1, "ignore")]
        );
        assert_eq!(
            found("#[test] #[cfg_attr(unix, should_panic(expected = \"x\"))] fn a() {}"),
            [(1, "should_panic")]
        );
        assert_eq!(
            found("#[cfg_attr(\n    unix,\n    cfg_attr(test, ignore)\n)]\nfn a() {}"),
            [(3, "ignore")]
        );
        assert_eq!(found("#![cfg_attr(unix, ignore)]"), [(1, "ignore")]);
    }

    #[test]
    fn the_words_elsewhere_are_no_attribute() {
        let text = "\
// #[ignore]
/// #[should_panic]
/* #[ignore] */
const A: &str = \"#[ignore]\";
const B: &str = r#\"#[should_panic]\"#;
#[cfg(ignore)]
#[cfg_attr(ignore, test)]
#[allow(clippy::should_panic_without_expect)]
#[doc = \"#[ignore]\"]
fn ignore() { let should_panic = [1]; let _ = should_panic[0]; }
macro_rules! m { ($(#[$meta:meta])*) => {} }
";
        assert_eq!(found(text), []);
    }
}
