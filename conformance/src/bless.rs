//! `--bless`: rewrites the lines of a golden session whose expectations failed, line for line,
//! leaving every other line byte-identical. The new lines come from `pattern::bless`, which takes
//! the received literals and keeps wildcards, captures, references and `$absent` members.

use std::path::Path;

use golden::Error;

/// The file's text with some 1-based lines replaced.
pub fn apply(text: &str, replacements: &[(usize, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.lines().enumerate() {
        match replacements.iter().find(|(n, _)| *n == index + 1) {
            Some((_, new)) => out.push_str(new),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Rewrites a session file in place.
pub fn write(path: &Path, replacements: &[(usize, String)]) -> Result<(), Error> {
    let text =
        std::fs::read_to_string(path).map_err(|err| Error::in_file(path, err.to_string()))?;
    std::fs::write(path, apply(&text, replacements))
        .map_err(|err| Error::in_file(path, err.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use golden::pattern;

    use super::*;

    #[test]
    fn only_the_named_lines_change() {
        let text = "{\"h\":1}\n{\"a\":1}\n{\"b\":2}\n";
        assert_eq!(
            apply(text, &[(2, "{\"a\":9}".into())]),
            "{\"h\":1}\n{\"a\":9}\n{\"b\":2}\n"
        );
    }

    #[test]
    fn a_blessed_expect_line_keeps_its_wildcards() {
        let pattern = json!({"schema": 1, "id": "1", "t": "hello", "host": "$string:host", "tool_version": "0.0.0"});
        let received = json!({"schema": 1, "id": "1", "t": "hello", "host": "studio", "tool_version": "0.1.0"});
        let line = format!("{}", json!({"expect": pattern::bless(&pattern, &received)}));
        assert_eq!(
            line,
            r#"{"expect":{"schema":1,"id":"1","t":"hello","host":"$string:host","tool_version":"0.1.0"}}"#
        );
    }
}
