//! tmux's output escaping, byte for byte as tmux 3.3a does it: `args_escape` (the quoting of a
//! value in `show-options` without `-v`), `vis` with tmux's flags, and the sanitizing of every
//! output line for a client that is not UTF-8 capable (each byte outside printable ASCII becomes
//! `_`, one per column of a valid UTF-8 character).

/// Quotes and escapes `value` as tmux's `args_escape` does.
pub fn args_escape(value: &str) -> String {
    const DQUOTED: &[char] = &[' ', '#', '\'', ';', '$', '{', '}', '%'];
    const SQUOTED: &[char] = &[' ', '"'];
    if value.is_empty() {
        return "''".to_owned();
    }
    let quote = if value.contains(DQUOTED) {
        Some('"')
    } else if value.contains(SQUOTED) {
        Some('\'')
    } else {
        None
    };
    let mut chars = value.chars();
    if let (Some(first), None) = (chars.next(), chars.next())
        && first != ' '
        && (quote.is_some() || first == '~')
    {
        return format!("\\{first}");
    }
    let escaped = stravis(value.as_bytes(), quote == Some('"'));
    match quote {
        Some('\'') => format!("'{escaped}'"),
        Some(_) if escaped.starts_with('~') => format!("\"\\{escaped}\""),
        Some(_) => format!("\"{escaped}\""),
        None if escaped.starts_with('~') => format!("\\{escaped}"),
        None => escaped,
    }
}

/// tmux's `utf8_stravis` with `VIS_OCTAL|VIS_CSTYLE|VIS_TAB|VIS_NL` (plus `VIS_DQ` when
/// `double_quoted`): valid UTF-8 characters pass, everything else is escaped.
fn stravis(bytes: &[u8], double_quoted: bool) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c >= 0x80
            && let Some(len) = utf8_len_at(bytes, i)
        {
            out.push_str(std::str::from_utf8(&bytes[i..i + len]).unwrap_or_default());
            i += len;
            continue;
        }
        if double_quoted && c == b'$' {
            if let Some(&next) = bytes.get(i + 1)
                && (next.is_ascii_alphabetic() || next == b'_' || next == b'{')
            {
                out.push('\\');
            }
            out.push('$');
            i += 1;
            continue;
        }
        vis(&mut out, c, double_quoted);
        i += 1;
    }
    out
}

fn vis(out: &mut String, c: u8, double_quoted: bool) {
    if c.is_ascii_graphic() || c == b' ' {
        if (c == b'"' && double_quoted) || c == b'\\' {
            out.push('\\');
        }
        out.push(c as char);
        return;
    }
    let cstyle = match c {
        b'\n' => Some('n'),
        b'\r' => Some('r'),
        0x08 => Some('b'),
        0x07 => Some('a'),
        0x0b => Some('v'),
        b'\t' => Some('t'),
        0x0c => Some('f'),
        0 => Some('0'),
        _ => None,
    };
    match cstyle {
        Some(letter) => {
            out.push('\\');
            out.push(letter);
        }
        None => out.push_str(&format!("\\{:03o}", c)),
    }
}

/// The length of the valid UTF-8 character starting at `i`, if one does.
fn utf8_len_at(bytes: &[u8], i: usize) -> Option<usize> {
    let len = match bytes[i] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let chunk = bytes.get(i..i + len)?;
    std::str::from_utf8(chunk).ok().map(|_| len)
}

/// Display width of a character in a terminal, close to what tmux uses: 2 for East Asian wide
/// and emoji ranges, 0 for combining marks, else 1.
fn width(c: char) -> usize {
    let u = c as u32;
    let combining = matches!(u, 0x0300..=0x036f | 0x200b..=0x200f | 0xfe00..=0xfe0f);
    let wide = matches!(u,
        0x1100..=0x115f | 0x2e80..=0x303e | 0x3041..=0x33ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff
        | 0xa000..=0xa4cf | 0xac00..=0xd7a3 | 0xf900..=0xfaff | 0xfe30..=0xfe4f
        | 0xff00..=0xff60 | 0xffe0..=0xffe6 | 0x1f300..=0x1f64f | 0x1f900..=0x1f9ff
        | 0x20000..=0x3fffd);
    if combining {
        0
    } else if wide {
        2
    } else {
        1
    }
}

/// tmux's `utf8_sanitize`: what a client without UTF-8 support receives for an output line.
pub fn sanitize(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c >= 0x80
            && let Some(len) = utf8_len_at(bytes, i)
        {
            let ch = std::str::from_utf8(&bytes[i..i + len])
                .ok()
                .and_then(|s| s.chars().next())
                .unwrap_or('_');
            out.extend(std::iter::repeat_n(b'_', width(ch)));
            i += len;
            continue;
        }
        out.push(if (0x20..0x7f).contains(&c) { c } else { b'_' });
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pair was printed by tmux 3.3a's `show-options -p` for the value on the left.
    #[test]
    fn args_escape_matches_tmux() {
        let cases: &[(&str, &str)] = &[
            ("plain", "plain"),
            ("two words", "\"two words\""),
            ("a\"b", "'a\"b'"),
            ("a'b", "\"a'b\""),
            ("a$b", "\"a\\$b\""),
            ("a\\b", "a\\\\b"),
            ("~home", "\\~home"),
            ("#", "\\#"),
            ("x", "x"),
            ("~", "\\~"),
            (" ", "\" \""),
            ("\"", "\\\""),
            ("'", "\\'"),
            ("a;b", "\"a;b\""),
            ("a{b}", "\"a{b}\""),
            ("a%b", "\"a%b\""),
            ("tab\tx", "tab\\tx"),
            ("", "''"),
            ("a b\"c", "\"a b\\\"c\""),
            ("~a b", "\"\\~a b\""),
            ("a*b?[c]", "a*b?[c]"),
            ("é ü", "\"é ü\""),
            ("-5", "-5"),
            ("a,b=c", "a,b=c"),
            ("a`b c", "\"a`b c\""),
            ("a\\b c", "\"a\\\\b c\""),
            ("~a\"b", "'~a\"b'"),
            ("a\"b c", "\"a\\\"b c\""),
            ("a\nb c", "\"a\\nb c\""),
            (
                "a\tb\x1fc\x1ed|e\x01f\x7fgéh#i",
                "\"a\\tb\\037c\\036d|e\\001f\\177géh#i\"",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(&args_escape(value), expected, "value {value:?}");
        }
    }

    #[test]
    fn invalid_utf8_is_octal_escaped() {
        assert_eq!(stravis(b"x\ny\xffz\xc3", false), "x\\ny\\377z\\303");
    }

    /// tmux 3.3a with `LC_ALL=C` printed the right side for the left.
    #[test]
    fn sanitize_matches_a_non_utf8_client() {
        assert_eq!(
            sanitize("a\tb\x1fc\x1ed|e\x01f\x7fgéh#i".as_bytes()),
            b"a_b_c_d|e_f_g_h#i"
        );
        assert_eq!(sanitize(b"x\ny\xffz\xc3"), b"x_y_z_");
        assert_eq!(sanitize("漢".as_bytes()), b"__");
    }
}
