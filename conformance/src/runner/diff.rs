//! Unified diffs of what a step expected against what it received.

use golden::clock::Window;
use golden::pattern::{self, Captures, Side};
use serde_json::Value;
use similar::TextDiff;

/// A unified diff of two texts; control characters but the line ends are shown escaped (`\u{1b}`),
/// so the bytes written to a tty (BEL, ESC) are seen, not obeyed by the reader's terminal.
pub fn diff(expected: &str, received: &str) -> String {
    let (expected, received) = (visible(expected), visible(received));
    TextDiff::from_lines(&expected, &received)
        .unified_diff()
        .context_radius(4)
        .header("expected (golden)", "received")
        .to_string()
}

/// `text` with every control character but `\n` written as an escape.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

pub fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("values encode");
    text.push('\n');
    text
}

/// How many unchanged lines a frame diff shows around each change.
const CONTEXT: usize = 4;

/// The diff of a pattern against a received frame, aligned by structure (array elements by the
/// run that matches, members by key), each directive shown as the pattern wrote it
/// ([`pattern::diff`]); runs of unchanged lines far from any change are elided.
pub fn frame_diff(pattern: &Value, actual: &Value, captures: &Captures, now: Window) -> String {
    let lines = pattern::diff::diff(pattern, actual, captures, now);
    let changed: Vec<usize> = (0..lines.len())
        .filter(|at| lines[*at].side != Side::Both)
        .collect();
    let near = |at: usize| changed.iter().any(|c| c.abs_diff(at) <= CONTEXT);
    let mut out = String::from("--- expected (golden)\n+++ received\n");
    let mut elided = false;
    for (at, line) in lines.iter().enumerate() {
        if !near(at) {
            if !elided {
                out.push_str(" …\n");
            }
            elided = true;
            continue;
        }
        elided = false;
        let sign = match line.side {
            Side::Both => ' ',
            Side::Expected => '-',
            Side::Received => '+',
        };
        let text = visible(&line.text);
        out.push_str(&format!("{sign}{}{text}\n", "  ".repeat(line.depth)));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        let shown = diff("\u{7}a\n", "\u{1b}a\n");
        assert!(shown.contains("-\\u{7}a"), "{shown}");
        assert!(shown.contains("+\\u{1b}a"), "{shown}");
    }

    #[test]
    fn a_frame_diff_shows_only_real_differences_and_wildcards_as_written() {
        let pattern = json!({"id": "1", "at_ms": "$int", "to": "idle"});
        let actual = json!({"at_ms": 17, "to": "idle"});
        let shown = frame_diff(&pattern, &actual, &Captures::new(), Window::ANY);
        assert_eq!(
            shown,
            "--- expected (golden)\n+++ received\n {\n-  \"id\": \"1\"\n   \"at_ms\": \"$int\"\n   \
             \"to\": \"idle\"\n }\n"
        );
    }

    /// The failure the issue reported: a host that passes no `-u` sees that one argument
    /// missing, not `"-L","list-panes"` side by side on the expected side.
    #[test]
    fn an_argv_without_its_first_argument_shows_that_argument_missing() {
        let pattern = json!({"argv": ["-u", "-L", "$string", "list-panes", "-a", "-F", "$string"], "exit": 0});
        let actual =
            json!({"argv": ["-L", "kit-1", "list-panes", "-a", "-F", "#{pane_id}"], "exit": 0});
        let shown = frame_diff(&pattern, &actual, &Captures::new(), Window::ANY);
        let changed: Vec<&str> = shown
            .lines()
            .skip(2)
            .filter(|line| !line.starts_with(' '))
            .collect();
        assert_eq!(changed, ["-    \"-u\""], "{shown}");
        assert!(shown.contains("     \"$string\"\n"), "{shown}");
    }

    #[test]
    fn unchanged_lines_far_from_a_change_are_elided() {
        let rows: Vec<_> = (0..20).map(|n| json!({"pane": format!("%{n}")})).collect();
        let mut got = rows.clone();
        got[19] = json!({"pane": "%99"});
        let shown = frame_diff(&json!(rows), &json!(got), &Captures::new(), Window::ANY);
        assert!(
            shown.starts_with("--- expected (golden)\n+++ received\n …\n"),
            "{shown}"
        );
        assert!(
            shown.contains("-    \"pane\": \"%19\"\n+    \"pane\": \"%99\"\n"),
            "{shown}"
        );
        assert!(!shown.contains("\"%3\""), "{shown}");
    }
}
