//! Unified diffs of what a step expected against what it received.

use golden::clock::Window;
use golden::pattern::{self, Captures};
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

/// The diff of a pattern against a received frame, wildcards that matched filled in.
pub fn frame_diff(pattern: &Value, actual: &Value, captures: &Captures, now: Window) -> String {
    let expected = pattern::render_expected(pattern, Some(actual), captures, now);
    diff(&pretty(&expected), &pretty(actual))
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
    fn a_frame_diff_shows_only_real_differences() {
        let pattern = json!({"id": "1", "at_ms": "$int", "to": "idle"});
        let actual = json!({"at_ms": 17, "to": "idle"});
        let shown = frame_diff(&pattern, &actual, &Captures::new(), Window::ANY);
        assert!(shown.contains("-  \"id\": \"1\","), "{shown}");
        assert!(!shown.contains("-  \"at_ms\""), "{shown}");
    }
}
