//! Expanding a parsed format: each `#{...}`'s value, then its modifiers in tmux's order (a
//! looked-up value's time, basename, dirname and quoting; then expand again, substitute, trim,
//! pad, measure).

use super::{
    Arith, Body, Compare, Cond, Format, FormatError, Lookup, Measure, Piece, Quote, Replace,
};

pub(super) fn format(format: &Format, lookup: &Lookup<'_>) -> Result<String, FormatError> {
    let mut out = String::new();
    for piece in &format.pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Replace(replace) => out.push_str(&self::replace(replace, lookup)?),
            Piece::Stop => break,
        }
    }
    Ok(out)
}

/// tmux's truth: neither empty nor `0`.
fn truth(text: &str) -> bool {
    !text.is_empty() && text != "0"
}

fn replace(replace: &Replace, lookup: &Lookup<'_>) -> Result<String, FormatError> {
    let mods = &replace.mods;
    let mut value = match &replace.body {
        Body::Nothing => String::new(),
        Body::Literal(text) => text.clone(),
        Body::Lookup(var) => match lookup(var)? {
            None => String::new(),
            Some(found) => found_value(found, mods)?,
        },
        Body::Nested(nested) => format(nested, lookup)?,
        Body::Char(number) => match format(number, lookup)?.parse::<u8>() {
            Ok(code @ 32..=126) => char::from(code).to_string(),
            _ => String::new(),
        },
        Body::Cond { cond, yes, no } => {
            let found = match cond {
                Cond::Var(var) => lookup(var)?.unwrap_or_default(),
                Cond::Text { raw, format: text } => {
                    let expanded = format(text, lookup)?;
                    if expanded == *raw {
                        String::new()
                    } else {
                        expanded
                    }
                }
            };
            format(if truth(&found) { yes } else { no }, lookup)?
        }
        Body::Compare { op, left, right } => {
            let (left, right) = (format(left, lookup)?, format(right, lookup)?);
            let yes = match op {
                Compare::Eq => left == right,
                Compare::Ne => left != right,
                Compare::Lt => left < right,
                Compare::Gt => left > right,
                Compare::Le => left <= right,
                Compare::Ge => left >= right,
                Compare::Or => truth(&left) || truth(&right),
                Compare::And => truth(&left) && truth(&right),
                Compare::Match { icase } => glob(&left, &right, *icase),
            };
            (if yes { "1" } else { "0" }).to_owned()
        }
        Body::Arith {
            op,
            float,
            digits,
            left,
            right,
        } => arith(
            *op,
            *float,
            *digits,
            &format(left, lookup)?,
            &format(right, lookup)?,
        ),
    };
    if mods.again {
        if mods.strftime && value.contains('%') {
            return Err(FormatError::new(format!(
                "T: of a value with a strftime specifier ({value:?}) is not modelled by the fake"
            )));
        }
        value = format(&Format::parse(&value)?, lookup)?;
    }
    for (from, to) in &mods.subs {
        let (from, to) = (format(from, lookup)?, format(to, lookup)?);
        if from.contains(|c| "\\^$.[]|()*+?{}".contains(c)) || to.contains('\\') {
            return Err(FormatError::new(format!(
                "s/{from}/{to}/: a regular expression is not modelled by the fake (plain text is)"
            )));
        }
        if !from.is_empty() {
            value = value.replace(&from, &to);
        }
    }
    if let Some((limit, marker)) = &mods.trim {
        let limit: i64 = format(limit, lookup)?.parse().unwrap_or(0);
        let marker = marker
            .as_ref()
            .map(|m| format(m, lookup))
            .transpose()?
            .unwrap_or_default();
        let chars: Vec<char> = value.chars().collect();
        let keep = usize::try_from(limit.unsigned_abs()).unwrap_or(usize::MAX);
        if limit != 0 && chars.len() > keep {
            value = if limit > 0 {
                chars[..keep].iter().collect::<String>() + &marker
            } else {
                marker + &chars[chars.len() - keep..].iter().collect::<String>()
            };
        }
    }
    if let Some(width) = &mods.pad {
        let width: i64 = format(width, lookup)?.parse().unwrap_or(0);
        let want = usize::try_from(width.unsigned_abs()).unwrap_or(0);
        let pad = " ".repeat(want.saturating_sub(value.chars().count()));
        // As tmux 3.3a prints it: a positive width pads after the value, a negative before.
        value = if width > 0 {
            value + &pad
        } else {
            pad + &value
        };
    }
    match mods.measure {
        Some(Measure::Length) => value = value.len().to_string(),
        Some(Measure::Width) => value = value.chars().count().to_string(),
        None => {}
    }
    Ok(value)
}

/// A looked-up value through the modifiers tmux applies only to one: `t`, `b`, `d`, `q`.
fn found_value(mut found: String, mods: &super::Mods) -> Result<String, FormatError> {
    if mods.time {
        match found.parse::<u64>() {
            Ok(secs) if secs > 0 => found = ctime(secs),
            _ => return Ok(String::new()),
        }
    }
    if mods.basename {
        found = basename(&found);
    }
    if mods.dirname {
        found = dirname(&found);
    }
    match mods.quote {
        Some(Quote::Shell) => {
            found = found
                .chars()
                .flat_map(|c| {
                    let escape = "|&;<>()$`\\\"'*?[# =%".contains(c);
                    escape.then_some('\\').into_iter().chain(std::iter::once(c))
                })
                .collect();
        }
        Some(Quote::Hash) => found = found.replace('#', "##"),
        None => {}
    }
    Ok(found)
}

/// basename(3).
fn basename(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if path.is_empty() {
        ".".into()
    } else if trimmed.is_empty() {
        "/".into()
    } else {
        trimmed.rsplit('/').next().unwrap_or(trimmed).to_owned()
    }
}

/// dirname(3).
fn dirname(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "." } else { "/" }.into();
    }
    match trimmed.rfind('/') {
        None => ".".into(),
        Some(at) => {
            let head = trimmed[..at].trim_end_matches('/');
            if head.is_empty() {
                "/".into()
            } else {
                head.to_owned()
            }
        }
    }
}

/// ctime(3) without its newline, in UTC: `Fri Nov 27 03:08:59 2026`.
fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm, restated).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// A number as strtod(3) reads a whole argument (leading blanks, decimal, exponent, `0x`);
/// `None` when something is left over.
fn number(text: &str) -> Option<f64> {
    let text = text.trim_start();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return u64::from_str_radix(hex, 16).ok().map(|n| sign * n as f64);
    }
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    digits.parse::<f64>().ok().map(|n| sign * n)
}

/// `e|op|`: integers unless `f`, printed with `digits` decimal places; nothing when a side is
/// not a number, as tmux expands it.
fn arith(op: Arith, float: bool, digits: usize, left: &str, right: &str) -> String {
    let (Some(mut a), Some(mut b)) = (number(left), number(right)) else {
        return String::new();
    };
    if !float {
        a = a.trunc();
        b = b.trunc();
    }
    let truth = |yes: bool| if yes { 1.0 } else { 0.0 };
    let result = match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Div => a / b,
        Arith::Mod => a % b,
        Arith::Eq => truth((a - b).abs() < 1e-9),
        Arith::Ne => truth((a - b).abs() > 1e-9),
        Arith::Gt => truth(a > b),
        Arith::Ge => truth(a >= b),
        Arith::Lt => truth(a < b),
        Arith::Le => truth(a <= b),
    };
    if float {
        format!("{result:.digits$}")
    } else {
        // A C cast of what is no integer (a division by zero) gives the smallest one.
        let whole = if result.is_finite() && result.abs() < 9.2e18 {
            result.trunc() as i64
        } else {
            i64::MIN
        };
        format!("{:.digits$}", whole as f64)
    }
}

/// fnmatch(3) without flags (so `*` matches `/` too), or with `FNM_CASEFOLD`: `*`, `?`,
/// `[...]` with `!` or `^` and ranges, and `\` quoting the next character.
pub(super) fn glob(pattern: &str, text: &str, icase: bool) -> bool {
    let fold = |c: char| if icase { c.to_ascii_lowercase() } else { c };
    let p: Vec<char> = pattern.chars().map(fold).collect();
    let t: Vec<char> = text.chars().map(fold).collect();
    glob_at(&p, &t)
}

fn glob_at(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') => (0..=t.len()).any(|skip| glob_at(&p[1..], &t[skip..])),
        Some('?') => !t.is_empty() && glob_at(&p[1..], &t[1..]),
        Some('[') => match (class(&p[1..]), t.first()) {
            (Some((matches, len)), Some(c)) => matches(*c) && glob_at(&p[1 + len..], &t[1..]),
            (None, Some('[')) => glob_at(&p[1..], &t[1..]),
            _ => false,
        },
        Some('\\') if p.len() > 1 => t.first() == Some(&p[1]) && glob_at(&p[2..], &t[1..]),
        Some(c) => t.first() == Some(c) && glob_at(&p[1..], &t[1..]),
    }
}

type Class = Box<dyn Fn(char) -> bool>;

/// A bracket expression after its `[`: what it matches and its length up to its `]`; `None`
/// when it does not close (the `[` is then an ordinary character).
fn class(p: &[char]) -> Option<(Class, usize)> {
    let negate = matches!(p.first(), Some('!' | '^'));
    let mut i = usize::from(negate);
    let mut ranges = Vec::new();
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            let matches =
                move |c: char| ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != negate;
            return Some((Box::new(matches), i + 1));
        }
        first = false;
        let lo = p[i];
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|hi| *hi != ']') {
            ranges.push((lo, p[i + 2]));
            i += 3;
        } else {
            ranges.push((lo, lo));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_as_basename_and_dirname_do() {
        for (path, base, dir) in [
            ("/a/b", "b", "/a"),
            ("a/b/", "b", "a"),
            ("a", "a", "."),
            ("/", "/", "/"),
            ("", ".", "."),
            ("/a", "a", "/"),
            ("a.b", "a.b", "."),
        ] {
            assert_eq!(
                (basename(path), dirname(path)),
                (base.into(), dir.into()),
                "{path}"
            );
        }
    }

    /// `date -u -d @N` printed the same.
    #[test]
    fn times_print_as_ctime_does() {
        assert_eq!(ctime(1_795_748_939), "Fri Nov 27 03:08:59 2026");
        assert_eq!(ctime(1), "Thu Jan  1 00:00:01 1970");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn globs_match_as_fnmatch_does() {
        assert!(glob("*a*", "bab", false));
        assert!(!glob("a", "b", false));
        assert!(glob("A*", "abc", true));
        assert!(!glob("A*", "abc", false));
        assert!(glob("a[bc]?", "abd", false));
        assert!(glob("a\\*", "a*", false));
        assert!(!glob("a\\*", "ab", false));
        assert!(!glob("[!a]*", "abc", false));
        assert!(glob("[a-c]x", "bx", false));
        assert!(glob("*", "", false));
        assert!(glob("*/b", "a/b", false));
        assert!(glob("[", "[", false));
    }

    #[test]
    fn numbers_read_as_strtod_does() {
        assert_eq!(number(" 2"), Some(2.0));
        assert_eq!(number("0x10"), Some(16.0));
        assert_eq!(number("1e1"), Some(10.0));
        assert_eq!(number("-1.5"), Some(-1.5));
        assert_eq!(number("a"), None);
        assert_eq!(number(""), None);
        assert_eq!(number("1 "), None);
    }
}
