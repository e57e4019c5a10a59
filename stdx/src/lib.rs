//! Chores every binary of the workspace needs, once (in the spirit of rust-analyzer's `stdx` and
//! cargo's `cargo-util`): [`process`] (the one place a child process is built, in a process group
//! of its own, waited for with a deadline, signalled, and ended with its whole group), [`lines`]
//! (a capped line reader), [`shell_quote`], [`now_ms`], and [`world`] (the locations a process
//! writes to, pointed into a temp dir, in the two layouts the workspace uses).
//!
//! Nothing the protocol specifies lives here: the kit, which judges the host, shares no protocol
//! code with it. The reference host keeps its own child runner (`reference-host/src/process.rs`,
//! poll on the pipes and a pidfd against one deadline, so that a serve loop never blocks on a
//! grandchild's pipe); everything else spawns through [`process::command`].

pub mod lines;
pub mod process;
pub mod world;

/// Epoch milliseconds now (0 before 1970).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A word `sh` reads back as itself: left bare when it holds only characters `sh` never reads
/// specially (ASCII letters and digits, `%+,-./:=@_`), else single-quoted with each `'` written
/// `'\''`. The empty word is `''`.
pub fn shell_quote(word: &str) -> String {
    let bare = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"%+,-./:=@_".contains(&b));
    if bare {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_word_survives_the_shell() {
        for word in [
            "plain/path-1.2_x",
            "",
            "a b",
            "it's",
            "$HOME",
            "*",
            "a\nb",
            "ünï",
            "SHA256:k+/=",
        ] {
            let quoted = shell_quote(word);
            let out = process::command("sh")
                .arg("-c")
                .arg(format!("printf '%s' {quoted}"))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), word, "{quoted}");
        }
        assert_eq!(shell_quote("SHA256:k+/="), "SHA256:k+/=");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn now_is_after_this_code_was_written() {
        assert!(now_ms() > 1_760_000_000_000);
    }
}
