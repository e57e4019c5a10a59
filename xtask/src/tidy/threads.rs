//! The rule that the reference host starts its threads in one place, `reference-host/src/threads.rs`,
//! which blocks the signals the host's loops wait for in every thread it starts (so the kernel
//! gives SIGHUP, SIGINT and SIGTERM to the loop's thread, even right after a SIGCONT). Anywhere
//! else in `reference-host/src/`, tests included, `thread::spawn`, `thread::Builder` or
//! `thread::scope` in code is a problem; the hook's signal watcher, the thread that must take
//! them, is the one file allowed.

use super::lex::lex;

/// The sources the rule covers.
const COVERED: &str = "reference-host/src/";
/// The one place that starts threads.
const HOME: &str = "reference-host/src/threads.rs";
/// The thread that is there to take the signals (`hook::interrupted`).
const SIGNAL_WATCHER: &str = "reference-host/src/hook/mod.rs";

/// Every thread started outside [`HOME`] in `shown`'s text, one line each.
pub fn check(shown: &str, text: &str) -> Vec<String> {
    let shown_unix = shown.replace('\\', "/");
    if !shown_unix.starts_with(COVERED) || shown_unix == HOME || shown_unix == SIGNAL_WATCHER {
        return Vec::new();
    }
    let tokens = lex(text);
    tokens
        .windows(3)
        .filter(|w| {
            w[0].is("thread")
                && w[1].is("::")
                && ["spawn", "Builder", "scope"].contains(&&*w[2].text)
        })
        .map(|w| {
            format!(
                "{shown}:{}: `thread::{}` starts a thread that can take SIGHUP/SIGTERM: start it \
                 with crate::threads::spawn",
                w[0].line, w[2].text
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_started_outside_the_home_is_reported_with_its_line() {
        let text = "//! x\nfn f() {\n    std::thread::spawn(|| {});\n    let b = std::thread::Builder::new();\n}\n";
        assert_eq!(
            check("reference-host/src/serve/mod.rs", text),
            [
                "reference-host/src/serve/mod.rs:3: `thread::spawn` starts a thread that can take \
                 SIGHUP/SIGTERM: start it with crate::threads::spawn",
                "reference-host/src/serve/mod.rs:4: `thread::Builder` starts a thread that can \
                 take SIGHUP/SIGTERM: start it with crate::threads::spawn",
            ]
        );
    }

    #[test]
    fn the_home_the_watcher_other_crates_comments_and_strings_pass() {
        let text = "//! x\nfn f() { std::thread::spawn(|| {}); }\n";
        assert!(check(HOME, text).is_empty());
        assert!(check(SIGNAL_WATCHER, text).is_empty());
        assert!(check("client/src/main.rs", text).is_empty());
        let quiet = "//! x\n// std::thread::spawn\nfn f() { let _ = \"thread::spawn\"; crate::threads::spawn(|| {}); }\n";
        assert!(check("reference-host/src/push.rs", quiet).is_empty());
    }
}
