//! tmux 3.3a's `send-keys` arguments as the bytes a pane receives for them, and those bytes read
//! back as keys and text: what `corral-sim pane input` prints, the same on both backends.
//!
//! Probed against tmux 3.3a with a pane in raw mode recording its input: an argument that names
//! a key (`Enter`, `C-c`, `M-x`, `Up`, `^A`; names are case-insensitive) sends that key's bytes;
//! any other argument, and every argument of `send-keys -l`, is typed as its UTF-8 text. Keys are
//! sent as an xterm with no extended-keys mode would: `Up` is `ESC [ A`, `C-Up` is
//! `ESC [ 1 ; 5 A`, `M-a` is `ESC a`. A control modifier tmux cannot apply (`C-1`, `C-Enter`)
//! sends nothing; a shift it does not know (`S-a`, `S-Enter`) makes the argument text. Rarer
//! combinations (`C-M-Enter`, mouse and `User` keys) are not modelled.

use serde::Serialize;

/// One line of `pane input`: a run of keys or a run of text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Received {
    /// Key names, one per control byte.
    Keys(Vec<String>),
    /// Text: every other byte, as UTF-8 (an invalid sequence reads as U+FFFD).
    Text(String),
}

/// The bytes a pane receives for one `send-keys` invocation's arguments.
pub fn send_keys_bytes(args: &[String], literal: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for arg in args {
        match (literal, key(arg)) {
            (false, Some(bytes)) => out.extend(bytes),
            _ => out.extend_from_slice(arg.as_bytes()),
        }
    }
    out
}

/// The xterm modifier parameter: 1, plus 1 for shift, 2 for meta, 4 for control.
fn xterm_modifier(shift: bool, meta: bool, ctrl: bool) -> u8 {
    1 + u8::from(shift) + 2 * u8::from(meta) + 4 * u8::from(ctrl)
}

/// Keys sent as a CSI sequence that takes xterm modifiers: the unmodified bytes, and the
/// modified form with `{}` for the modifier parameter.
const XTERM_KEYS: &[(&[&str], &str, &str)] = &[
    (&["Up"], "\x1b[A", "\x1b[1;{}A"),
    (&["Down"], "\x1b[B", "\x1b[1;{}B"),
    (&["Right"], "\x1b[C", "\x1b[1;{}C"),
    (&["Left"], "\x1b[D", "\x1b[1;{}D"),
    (&["Home"], "\x1b[1~", "\x1b[1;{}H"),
    (&["End"], "\x1b[4~", "\x1b[1;{}F"),
    (&["IC", "Insert"], "\x1b[2~", "\x1b[2;{}~"),
    (&["DC", "Delete"], "\x1b[3~", "\x1b[3;{}~"),
    (&["PPage", "PageUp", "PgUp"], "\x1b[5~", "\x1b[5;{}~"),
    (&["NPage", "PageDown", "PgDn"], "\x1b[6~", "\x1b[6;{}~"),
    (&["F1"], "\x1bOP", "\x1b[1;{}P"),
    (&["F2"], "\x1bOQ", "\x1b[1;{}Q"),
    (&["F3"], "\x1bOR", "\x1b[1;{}R"),
    (&["F4"], "\x1bOS", "\x1b[1;{}S"),
    (&["F5"], "\x1b[15~", "\x1b[15;{}~"),
    (&["F6"], "\x1b[17~", "\x1b[17;{}~"),
    (&["F7"], "\x1b[18~", "\x1b[18;{}~"),
    (&["F8"], "\x1b[19~", "\x1b[19;{}~"),
    (&["F9"], "\x1b[20~", "\x1b[20;{}~"),
    (&["F10"], "\x1b[21~", "\x1b[21;{}~"),
    (&["F11"], "\x1b[23~", "\x1b[23;{}~"),
    (&["F12"], "\x1b[24~", "\x1b[24;{}~"),
];

/// Named keys that send fixed bytes; a meta modifier puts `ESC` in front, a control modifier
/// sends nothing.
const PLAIN_KEYS: &[(&str, &str)] = &[
    ("Enter", "\r"),
    ("Escape", "\x1b"),
    ("Tab", "\t"),
    ("BTab", "\x1b[Z"),
    ("BSpace", "\x7f"),
    ("KP/", "/"),
    ("KP*", "*"),
    ("KP-", "-"),
    ("KP+", "+"),
    ("KP.", "."),
    ("KPEnter", "\n"),
    ("KP0", "0"),
    ("KP1", "1"),
    ("KP2", "2"),
    ("KP3", "3"),
    ("KP4", "4"),
    ("KP5", "5"),
    ("KP6", "6"),
    ("KP7", "7"),
    ("KP8", "8"),
    ("KP9", "9"),
];

/// Characters a control modifier leaves alone (tmux then sends nothing for the key).
const CTRL_KEEPS: &str = "!#()+,-.0123456789:;<=>'\r\t\x7f`~";

/// The bytes of an argument that names a key; `None` when it names none (it is then text).
fn key(arg: &str) -> Option<Vec<u8>> {
    let (mut ctrl, mut meta, mut shift) = (false, false, false);
    let mut rest = arg;
    if let Some(after) = rest.strip_prefix('^')
        && !after.is_empty()
    {
        ctrl = true;
        rest = after;
    }
    loop {
        let bytes = rest.as_bytes();
        if bytes.len() < 2 || bytes[1] != b'-' {
            break;
        }
        match bytes[0] {
            b'C' | b'c' => ctrl = true,
            b'M' | b'm' => meta = true,
            b'S' | b's' => shift = true,
            _ => return None,
        }
        rest = &rest[2..];
    }
    let mut chars = rest.chars();
    let single = match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        // tmux's `Space` is the character itself, so a control modifier applies to it.
        _ if rest.eq_ignore_ascii_case("Space") => Some(' '),
        _ => None,
    };
    let escape = |bytes: Vec<u8>| {
        if meta {
            let mut out = vec![0x1b];
            out.extend(bytes);
            out
        } else {
            bytes
        }
    };
    if let Some(c) = single.or_else(|| hex_key(rest)) {
        if (c as u32) < 32 || shift {
            return None;
        }
        if !ctrl {
            return Some(escape(c.to_string().into_bytes()));
        }
        if !c.is_ascii() {
            // A control modifier on a character outside ASCII is dropped.
            return Some(escape(c.to_string().into_bytes()));
        }
        let code = match c as u8 {
            _ if CTRL_KEEPS.contains(c) => return Some(Vec::new()),
            b @ b'a'..=b'z' => b - 96,
            b @ b'@'..=b'_' => b - 64,
            b' ' => 0,
            b'?' => 0x7f,
            _ => return None,
        };
        return Some(escape(vec![code]));
    }
    if let Some((_, plain, modified)) = XTERM_KEYS
        .iter()
        .find(|(names, _, _)| names.iter().any(|n| n.eq_ignore_ascii_case(rest)))
    {
        if !(ctrl || meta || shift) {
            return Some(plain.as_bytes().to_vec());
        }
        let text = modified.replace("{}", &xterm_modifier(shift, meta, ctrl).to_string());
        return Some(text.into_bytes());
    }
    let (_, bytes) = PLAIN_KEYS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(rest))?;
    if shift {
        return None;
    }
    if ctrl {
        return Some(Vec::new());
    }
    Some(escape(bytes.as_bytes().to_vec()))
}

/// `0x41`: a key given as its code.
fn hex_key(text: &str) -> Option<char> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    u32::from_str_radix(digits, 16)
        .ok()
        .and_then(char::from_u32)
}

/// The name a control byte reads as.
fn key_name(byte: u8) -> String {
    match byte {
        b'\r' => "Enter".into(),
        0x1b => "Escape".into(),
        b'\t' => "Tab".into(),
        0x7f => "BSpace".into(),
        0 => "C-Space".into(),
        1..=26 => format!("C-{}", char::from(b'a' + byte - 1)),
        other => format!("C-{}", char::from(other + 64)),
    }
}

/// What a pane received, read back: each control byte (below `0x20`, and `0x7f`) is a key, runs
/// of keys and runs of text are one item each. A byte stream cannot tell a key from the same byte
/// typed in a text: `Tab` and a tab in a text, `C-j` and a newline, read the same.
pub fn decode(bytes: &[u8]) -> Vec<Received> {
    let mut out: Vec<Received> = Vec::new();
    let mut text: Vec<u8> = Vec::new();
    let flush = |text: &mut Vec<u8>, out: &mut Vec<Received>| {
        if !text.is_empty() {
            out.push(Received::Text(String::from_utf8_lossy(text).into_owned()));
            text.clear();
        }
    };
    for &byte in bytes {
        if byte < 0x20 || byte == 0x7f {
            flush(&mut text, &mut out);
            match out.last_mut() {
                Some(Received::Keys(keys)) => keys.push(key_name(byte)),
                _ => out.push(Received::Keys(vec![key_name(byte)])),
            }
        } else {
            text.push(byte);
        }
    }
    flush(&mut text, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(args: &[&str]) -> Vec<u8> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        send_keys_bytes(&args, false)
    }

    /// Every row was probed against tmux 3.3a: `send-keys -t %0 -- <arg>`, the pane's stdin raw.
    #[test]
    fn key_names_send_what_tmux_sends() {
        let cases: &[(&str, &[u8])] = &[
            ("Enter", b"\r"),
            ("enter", b"\r"),
            ("Escape", b"\x1b"),
            ("Tab", b"\t"),
            ("BTab", b"\x1b[Z"),
            ("BSpace", b"\x7f"),
            ("Space", b" "),
            ("Up", b"\x1b[A"),
            ("Left", b"\x1b[D"),
            ("Home", b"\x1b[1~"),
            ("End", b"\x1b[4~"),
            ("PgUp", b"\x1b[5~"),
            ("NPage", b"\x1b[6~"),
            ("IC", b"\x1b[2~"),
            ("Delete", b"\x1b[3~"),
            ("F1", b"\x1bOP"),
            ("F5", b"\x1b[15~"),
            ("F12", b"\x1b[24~"),
            ("C-a", b"\x01"),
            ("C-A", b"\x01"),
            ("c-z", b"\x1a"),
            ("C-Space", b"\0"),
            ("C-@", b"\0"),
            ("C-[", b"\x1b"),
            ("C-\\", b"\x1c"),
            ("C-_", b"\x1f"),
            ("C-?", b"\x7f"),
            ("^A", b"\x01"),
            ("^[", b"\x1b"),
            ("C-M-a", b"\x1b\x01"),
            ("M-C-x", b"\x1b\x18"),
            ("M-a", b"\x1ba"),
            ("M-A", b"\x1bA"),
            ("M-Enter", b"\x1b\r"),
            ("M-BSpace", b"\x1b\x7f"),
            ("M-Escape", b"\x1b\x1b"),
            ("M-BTab", b"\x1b\x1b[Z"),
            ("S-Up", b"\x1b[1;2A"),
            ("C-Up", b"\x1b[1;5A"),
            ("M-Up", b"\x1b[1;3A"),
            ("M-C-Up", b"\x1b[1;7A"),
            ("C-S-Right", b"\x1b[1;6C"),
            ("C-Home", b"\x1b[1;5H"),
            ("M-End", b"\x1b[1;3F"),
            ("S-PPage", b"\x1b[5;2~"),
            ("C-F1", b"\x1b[1;5P"),
            ("M-F5", b"\x1b[15;3~"),
            ("C-DC", b"\x1b[3;5~"),
            ("C-Enter", b""),
            ("C-Tab", b""),
            ("C-1", b""),
            ("C-\u{e9}", "\u{e9}".as_bytes()),
            ("S-a", b"S-a"),
            ("S-Enter", b"S-Enter"),
            ("S-Tab", b"S-Tab"),
            ("0x41", b"A"),
            ("1", b"1"),
            ("KP0", b"0"),
            ("KPEnter", b"\n"),
            ("NoSuchKey", b"NoSuchKey"),
            ("hello", b"hello"),
            ("a\nb", b"a\nb"),
        ];
        for (arg, want) in cases {
            assert_eq!(sent(&[arg]), *want, "{arg}");
        }
        let literal = send_keys_bytes(&["Enter".into(), "C-c".into()], true);
        assert_eq!(literal, b"EnterC-c");
    }

    #[test]
    fn bytes_read_back_as_runs_of_keys_and_text() {
        let got = decode(b"\x1bhello w\xc3\xb6rld\r\r\x03\x1b[A\t");
        assert_eq!(
            got,
            [
                Received::Keys(vec!["Escape".into()]),
                Received::Text("hello w\u{f6}rld".into()),
                Received::Keys(vec![
                    "Enter".into(),
                    "Enter".into(),
                    "C-c".into(),
                    "Escape".into()
                ]),
                Received::Text("[A".into()),
                Received::Keys(vec!["Tab".into()]),
            ]
        );
        assert_eq!(
            serde_json::to_string(&got[0]).unwrap(),
            r#"{"keys":["Escape"]}"#
        );
        assert_eq!(
            serde_json::to_string(&got[1]).unwrap(),
            r#"{"text":"hello wörld"}"#
        );
        assert_eq!(
            decode(b"\x00\x1c\x1f\x7f\n"),
            [Received::Keys(vec![
                "C-Space".into(),
                "C-\\".into(),
                "C-_".into(),
                "BSpace".into(),
                "C-j".into()
            ])]
        );
        assert!(decode(b"").is_empty());
    }
}
