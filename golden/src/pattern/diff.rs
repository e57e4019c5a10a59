//! The diff of a pattern against a received value, aligned by structure: object members by key,
//! array elements by the longest run of elements that match (so an element missing from the
//! front shows as one missing element, not as every element after it shifted), and each
//! directive shown as the pattern wrote it (`"$now"`, `"$string:call"`), never filled with the
//! received value. A `${name}` shows the value it is bound to: that is what was expected. Pure:
//! values in, lines out.

use serde_json::Value;

use super::captures::{Captures, render_template};
use super::matching::{matches, refusal};
use super::syntax::{MORE_KEY, Str, is_absent, parse_key, parse_str};
use crate::clock::Window;

/// Which side of a diff a line is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Both: what was expected and held (a directive that matched shows as the pattern).
    Both,
    /// Only what was expected.
    Expected,
    /// Only what was received.
    Received,
}

/// One line of a diff: its side, its depth and its text (`"key": value`, `[`, `}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub side: Side,
    pub depth: usize,
    pub text: String,
}

/// The lines of `pattern` against `actual`, given the captures bound so far and the span a
/// `$now` must fall in.
pub fn diff(pattern: &Value, actual: &Value, captures: &Captures, now: Window) -> Vec<DiffLine> {
    let mut differ = Differ {
        captures,
        now,
        out: Vec::new(),
    };
    differ.node(pattern, actual, "", 0);
    differ.out
}

struct Differ<'a> {
    captures: &'a Captures,
    now: Window,
    out: Vec<DiffLine>,
}

/// What a pattern string stands for, as far as a diff is concerned.
enum Leaf {
    /// A value to compare with: a literal, or a bound `${name}` rendered.
    Exact(Value),
    /// A directive: shown as written, held when the received value satisfies it.
    Directive { held: bool },
}

impl Differ<'_> {
    fn push(&mut self, side: Side, depth: usize, text: String) {
        self.out.push(DiffLine { side, depth, text });
    }

    /// What a pattern string means against `actual`.
    fn leaf(&self, text: &str, actual: Option<&Value>) -> Leaf {
        let satisfied = |kind| actual.is_some_and(|a| refusal(kind, a, self.now).is_none());
        match parse_str(text) {
            Ok(Str::Literal(literal)) => Leaf::Exact(Value::String(literal)),
            Ok(Str::Wildcard(kind)) => Leaf::Directive {
                held: satisfied(kind),
            },
            Ok(Str::Capture(kind, name)) => match self.captures.get(&name) {
                Some(bound) => Leaf::Directive {
                    held: actual == Some(bound),
                },
                None => Leaf::Directive {
                    held: satisfied(kind),
                },
            },
            Ok(Str::Ref(name)) => match self.captures.get(&name) {
                Some(bound) => Leaf::Exact(bound.clone()),
                None => Leaf::Directive { held: false },
            },
            Ok(Str::Template(pieces)) => match render_template(&pieces, self.captures) {
                Ok(text) => Leaf::Exact(Value::String(text)),
                Err(_) => Leaf::Directive { held: false },
            },
            Ok(Str::Absent) | Err(_) => Leaf::Directive { held: false },
        }
    }

    /// The pattern as a reader reads what was expected: directives as written, `${name}` as
    /// its bound value, `$$` unescaped in literals.
    fn shown(&self, pattern: &Value) -> Value {
        match pattern {
            Value::String(text) => match self.leaf(text, None) {
                Leaf::Exact(value) => value,
                Leaf::Directive { .. } => pattern.clone(),
            },
            Value::Array(items) => Value::Array(items.iter().map(|i| self.shown(i)).collect()),
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .filter(|(key, value)| *key != MORE_KEY && !is_absent(value))
                    .map(|(key, value)| {
                        let key = parse_key(key).unwrap_or_else(|_| key.clone());
                        (key, self.shown(value))
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// A value on one side, whole, under `prefix` (`"key": ` or nothing).
    fn whole(&mut self, side: Side, value: &Value, prefix: &str, depth: usize) {
        let text = serde_json::to_string_pretty(value).expect("values encode");
        let mut lines = text.lines();
        if let Some(first) = lines.next() {
            self.push(side, depth, format!("{prefix}{first}"));
        }
        for line in lines {
            let inner = line.len() - line.trim_start().len();
            self.push(side, depth + inner / 2, line.trim_start().to_owned());
        }
    }

    fn node(&mut self, pattern: &Value, actual: &Value, prefix: &str, depth: usize) {
        match (pattern, actual) {
            (Value::String(text), _) => match self.leaf(text, Some(actual)) {
                Leaf::Exact(expected) if expected == *actual => {
                    self.whole(Side::Both, actual, prefix, depth);
                }
                Leaf::Directive { held: true } => {
                    self.push(Side::Both, depth, format!("{prefix}{pattern}"));
                }
                Leaf::Exact(expected) => {
                    self.whole(Side::Expected, &expected, prefix, depth);
                    self.whole(Side::Received, actual, prefix, depth);
                }
                Leaf::Directive { held: false } => {
                    self.push(Side::Expected, depth, format!("{prefix}{pattern}"));
                    self.whole(Side::Received, actual, prefix, depth);
                }
            },
            (Value::Object(members), Value::Object(got)) => {
                self.push(Side::Both, depth, format!("{prefix}{{"));
                let more = members.get(MORE_KEY) == Some(&Value::Bool(true));
                let mut listed = Vec::new();
                for (key, value) in members {
                    if key == MORE_KEY {
                        continue;
                    }
                    let key = parse_key(key).unwrap_or_else(|_| key.clone());
                    let inner = format!("{}: ", Value::String(key.clone()));
                    match (is_absent(value), got.get(&key)) {
                        (true, None) => {}
                        (true, Some(received)) => {
                            self.whole(Side::Received, received, &inner, depth + 1);
                        }
                        (false, None) => {
                            let expected = self.shown(value);
                            self.whole(Side::Expected, &expected, &inner, depth + 1);
                        }
                        (false, Some(received)) => self.node(value, received, &inner, depth + 1),
                    }
                    listed.push(key);
                }
                if !more {
                    for (key, value) in got {
                        if !listed.contains(key) {
                            let inner = format!("{}: ", Value::String(key.clone()));
                            self.whole(Side::Received, value, &inner, depth + 1);
                        }
                    }
                }
                self.push(Side::Both, depth, "}".to_owned());
            }
            (Value::Array(items), Value::Array(got)) => {
                self.push(Side::Both, depth, format!("{prefix}["));
                self.elements(items, got, depth + 1);
                self.push(Side::Both, depth, "]".to_owned());
            }
            _ if pattern == actual => self.whole(Side::Both, actual, prefix, depth),
            _ => {
                let expected = self.shown(pattern);
                self.whole(Side::Expected, &expected, prefix, depth);
                self.whole(Side::Received, actual, prefix, depth);
            }
        }
    }

    /// Array elements aligned: the longest common run of elements that match their pattern
    /// (each tried alone, with the captures bound so far) stays in place; between two matched
    /// ones, as many unmatched on each side are paired and diffed, and the rest shown on their
    /// own side.
    fn elements(&mut self, items: &[Value], got: &[Value], depth: usize) {
        let (n, m) = (items.len(), got.len());
        let fit: Vec<Vec<bool>> = items
            .iter()
            .map(|pattern| {
                got.iter()
                    .map(|value| {
                        let mut trial = self.captures.clone();
                        matches(pattern, value, &mut trial, self.now).is_ok()
                    })
                    .collect()
            })
            .collect();
        // lcs[i][j]: the longest run of matches in items[i..] and got[j..].
        let mut lcs = vec![vec![0usize; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if fit[i][j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let (mut missing, mut extra): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        while i < n || j < m {
            if i < n && j < m && fit[i][j] && lcs[i][j] == lcs[i + 1][j + 1] + 1 {
                self.unmatched(items, got, &missing, &extra, depth);
                missing.clear();
                extra.clear();
                self.node(&items[i], &got[j], "", depth);
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
                extra.push(j);
                j += 1;
            } else {
                missing.push(i);
                i += 1;
            }
        }
        self.unmatched(items, got, &missing, &extra, depth);
    }

    /// Unmatched elements between two matched ones: paired in order and diffed, the rest alone.
    fn unmatched(
        &mut self,
        items: &[Value],
        got: &[Value],
        missing: &[usize],
        extra: &[usize],
        depth: usize,
    ) {
        let paired = missing.len().min(extra.len());
        for (i, j) in missing.iter().zip(extra).take(paired) {
            self.node(&items[*i], &got[*j], "", depth);
        }
        for i in &missing[paired..] {
            let expected = self.shown(&items[*i]);
            self.whole(Side::Expected, &expected, "", depth);
        }
        for j in &extra[paired..] {
            self.whole(Side::Received, &got[*j], "", depth);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The lines as a unified diff shows them: `-`, `+` or ` `, then two spaces per depth.
    fn shown(lines: &[DiffLine]) -> Vec<String> {
        lines
            .iter()
            .map(|line| {
                let sign = match line.side {
                    Side::Both => ' ',
                    Side::Expected => '-',
                    Side::Received => '+',
                };
                format!("{sign}{}{}", "  ".repeat(line.depth), line.text)
            })
            .collect()
    }

    #[test]
    fn an_array_missing_its_first_element_lines_up_the_rest() {
        let pattern = json!({"argv": ["-u", "-L", "$string", "list-panes", "-a"]});
        let actual = json!({"argv": ["-L", "kit-7", "list-panes", "-a"]});
        let lines = shown(&diff(&pattern, &actual, &Captures::new(), Window::ANY));
        assert_eq!(
            lines,
            [
                " {",
                "   \"argv\": [",
                "-    \"-u\"",
                "     \"-L\"",
                "     \"$string\"",
                "     \"list-panes\"",
                "     \"-a\"",
                "   ]",
                " }",
            ]
        );
    }

    #[test]
    fn a_directive_shows_as_written_whether_or_not_it_held() {
        let pattern = json!({"at": "$int", "to": "$string", "id": "${id}", "x": "$absent"});
        let actual = json!({"at": 5, "to": 3, "id": "b", "x": 1, "y": true});
        let mut captures = Captures::new();
        captures.insert("id".into(), json!("a"));
        let lines = shown(&diff(&pattern, &actual, &captures, Window::ANY));
        assert_eq!(
            lines,
            [
                " {",
                "   \"at\": \"$int\"",
                "-  \"to\": \"$string\"",
                "+  \"to\": 3",
                "-  \"id\": \"a\"",
                "+  \"id\": \"b\"",
                "+  \"x\": 1",
                "+  \"y\": true",
                " }",
            ]
        );
    }

    #[test]
    fn rows_that_differ_in_one_member_are_paired_not_replaced() {
        let pattern = json!([{"pane": "%1", "state": "idle"}, {"pane": "%2", "state": "$string"}]);
        let actual = json!([{"pane": "%1", "state": "working"}, {"pane": "%2", "state": "idle"}]);
        let lines = shown(&diff(&pattern, &actual, &Captures::new(), Window::ANY));
        assert_eq!(
            lines,
            [
                " [",
                "   {",
                "     \"pane\": \"%1\"",
                "-    \"state\": \"idle\"",
                "+    \"state\": \"working\"",
                "   }",
                "   {",
                "     \"pane\": \"%2\"",
                "     \"state\": \"$string\"",
                "   }",
                " ]",
            ]
        );
        let missing = json!({"a": {"b": [1]}});
        let lines = shown(&diff(&missing, &json!({}), &Captures::new(), Window::ANY));
        assert_eq!(
            lines,
            [
                " {",
                "-  \"a\": {",
                "-    \"b\": [",
                "-      1",
                "-    ]",
                "-  }",
                " }"
            ]
        );
    }
}
