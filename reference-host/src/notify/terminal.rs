//! The bytes the notifier writes to a pane's tty (docs/protocol.md "Terminal sequences"): BEL,
//! OSC 9, OSC 777 and the OSC 9;4 progress pair, each OSC wrapped in tmux's passthrough
//! envelope, and the one way a tty is opened and written.
//!
//! Text inside a sequence is filtered to printable ASCII (0x20 to 0x7e) and capped at
//! [`TEXT_CAP`] bytes: a control byte, or an 8-bit C1 byte such as ST (0x9c), in an agent name
//! must not end the sequence early or start another one.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most text bytes one sequence (or one OSC 777 field) carries.
pub const TEXT_CAP: usize = 200;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// The bell, written raw.
pub fn bell() -> Vec<u8> {
    vec![BEL]
}

/// OSC 9 carrying `text` (`<agent> <state>` for a fire), wrapped for tmux.
pub fn osc9(text: &str) -> Vec<u8> {
    let mut seq = vec![ESC, b']', b'9', b';'];
    seq.extend(printable(text, false));
    seq.push(BEL);
    passthrough(&seq)
}

/// OSC 777 `notify` with `title` and `body` (the agent and the state for a fire), wrapped for
/// tmux; `;` is dropped from both fields.
pub fn osc777(title: &str, body: &str) -> Vec<u8> {
    let mut seq = vec![ESC, b']'];
    seq.extend_from_slice(b"777;notify;");
    seq.extend(printable(title, true));
    seq.push(b';');
    seq.extend(printable(body, true));
    seq.push(BEL);
    passthrough(&seq)
}

/// The OSC 9;4 progress sequence, wrapped for tmux: indeterminate when `working`, else clear.
pub fn progress(working: bool) -> Vec<u8> {
    let seq: &[u8] = if working {
        b"\x1b]9;4;3;0\x07"
    } else {
        b"\x1b]9;4;0;0\x07"
    };
    passthrough(seq)
}

/// `ESC P tmux ; <sequence, every ESC doubled> ESC \`.
pub fn passthrough(seq: &[u8]) -> Vec<u8> {
    let mut out = vec![ESC, b'P'];
    out.extend_from_slice(b"tmux;");
    for &byte in seq {
        if byte == ESC {
            out.push(ESC);
        }
        out.push(byte);
    }
    out.extend_from_slice(&[ESC, b'\\']);
    out
}

/// `text`'s printable ASCII bytes (without `;` when `no_semicolon`), at most [`TEXT_CAP`].
fn printable(text: &str, no_semicolon: bool) -> impl Iterator<Item = u8> + '_ {
    text.bytes()
        .filter(move |b| (0x20..=0x7e).contains(b) && !(no_semicolon && *b == b';'))
        .take(TEXT_CAP)
}

/// Writes `bytes` to the tty at `path` in one write. The tty is opened without becoming this
/// process's controlling terminal and without blocking: a pane whose terminal is not being read
/// loses the write instead of holding the notifier. Nothing is created: a path that is gone
/// stays gone.
pub fn write_tty(path: &str, bytes: &[u8]) -> io::Result<()> {
    if path.is_empty() || !Path::new(path).is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a tty path: {path:?}"),
        ));
    }
    let flags = rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::NONBLOCK;
    let mut tty = OpenOptions::new()
        .append(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    tty.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc9_is_wrapped_with_every_esc_doubled() {
        assert_eq!(
            osc9("claude blocked"),
            b"\x1bPtmux;\x1b\x1b]9;claude blocked\x07\x1b\\".to_vec()
        );
    }

    #[test]
    fn osc777_carries_agent_and_state_without_semicolons() {
        assert_eq!(
            osc777("cl;aude", "blocked"),
            b"\x1bPtmux;\x1b\x1b]777;notify;claude;blocked\x07\x1b\\".to_vec()
        );
    }

    #[test]
    fn progress_has_exactly_two_forms() {
        assert_eq!(
            progress(true),
            b"\x1bPtmux;\x1b\x1b]9;4;3;0\x07\x1b\\".to_vec()
        );
        assert_eq!(
            progress(false),
            b"\x1bPtmux;\x1b\x1b]9;4;0;0\x07\x1b\\".to_vec()
        );
        assert_eq!(bell(), b"\x07");
    }

    #[test]
    fn text_is_filtered_to_printable_ascii_and_capped() {
        let hostile = "a\x1b]9;x\x07b\u{9c}c\té\n";
        assert_eq!(
            osc9(hostile),
            b"\x1bPtmux;\x1b\x1b]9;a]9;xbc\x07\x1b\\".to_vec()
        );
        let long = "z".repeat(500);
        let seq = osc9(&long);
        let text = seq.iter().filter(|b| **b == b'z').count();
        assert_eq!(text, TEXT_CAP);
        let seq = osc777(&long, &long);
        assert_eq!(seq.iter().filter(|b| **b == b'z').count(), 2 * TEXT_CAP);
    }

    #[test]
    fn a_tty_is_appended_to_and_never_created() {
        let tmp = tempfile::tempdir().unwrap();
        let tty = tmp.path().join("tty");
        std::fs::write(&tty, b"before").unwrap();
        write_tty(tty.to_str().unwrap(), &bell()).unwrap();
        assert_eq!(std::fs::read(&tty).unwrap(), b"before\x07");
        let gone = tmp.path().join("gone");
        assert!(write_tty(gone.to_str().unwrap(), b"x").is_err());
        assert!(!gone.exists());
        assert!(write_tty("", b"x").is_err());
        assert!(write_tty("relative", b"x").is_err());
    }
}
