//! A text judged against what a step says it holds ([`Content`]): a `run` step's stdout or
//! stderr, a `file` step's content or a directory's listing. Exact text and a part of it after
//! `${name}` replacement; JSON lines each against its own pattern, or all against one; a TOML
//! document against a pattern. Every value parsed is validated against the step's local document
//! schema when it names one, and captures bind as they do in frames. Pure: a text in, a verdict
//! out.

use golden::clock::Window;
use golden::pattern::{self, Captures};
use golden::session::Content;
use golden::validate::DocumentSchema;
use serde_json::Value;

use super::StepError;
use super::diff::{diff, frame_diff};

/// What is judged and against what: `what` names the text in messages (`stdout`, a path).
pub(super) struct Judge<'a> {
    pub what: &'a str,
    pub document: Option<&'a DocumentSchema>,
    pub now: Window,
}

impl Judge<'_> {
    /// Judges `text` against `content` (absent: the text is empty), binding captures into
    /// `captures` only when it holds.
    pub fn judge(
        &self,
        content: Option<&Content>,
        text: &str,
        captures: &mut Captures,
    ) -> Result<(), StepError> {
        let mut trial = captures.clone();
        match content {
            None if text.is_empty() => {}
            None => {
                return Err(StepError {
                    message: format!("{} holds text where nothing was expected", self.what),
                    diff: Some(diff("", text)),
                    conn: None,
                    found: None,
                });
            }
            Some(Content::Text(expected)) => {
                let expected = self.text(expected, &trial)?;
                if expected != text {
                    return Err(StepError {
                        message: format!("{} differs from the text expected", self.what),
                        diff: Some(diff(&expected, text)),
                        conn: None,
                        found: None,
                    });
                }
            }
            Some(Content::Contains(part)) => {
                self.contains_all(std::slice::from_ref(part), text, &trial)?
            }
            Some(Content::ContainsAll(parts)) => self.contains_all(parts, text, &trial)?,
            Some(Content::JsonLines(patterns)) => {
                let lines = self.json_lines(text)?;
                if lines.len() != patterns.len() {
                    return Err(StepError::new(format!(
                        "{} holds {} JSON line(s), expected {}:\n{}",
                        self.what,
                        lines.len(),
                        patterns.len(),
                        shown(text)
                    )));
                }
                for (index, (pattern, line)) in patterns.iter().zip(&lines).enumerate() {
                    let which = format!("line {}", index + 1);
                    self.value(pattern, line, &which, Parsed::Json, &mut trial)?;
                }
            }
            Some(Content::JsonEach(pattern)) => {
                let lines = self.json_lines(text)?;
                if lines.is_empty() {
                    return Err(StepError::new(format!(
                        "{} holds no line; at least one was expected",
                        self.what
                    )));
                }
                for (index, line) in lines.iter().enumerate() {
                    let which = format!("line {}", index + 1);
                    self.value(pattern, line, &which, Parsed::Json, &mut trial)?;
                }
            }
            Some(Content::Json(pattern)) => {
                let value: Value = serde_json::from_str(text).map_err(|err| {
                    StepError::new(format!(
                        "{} is not one JSON value ({err}):\n{}",
                        self.what,
                        shown(text)
                    ))
                })?;
                self.value(pattern, &value, "the document", Parsed::Json, &mut trial)?;
            }
            Some(Content::Fired(_)) => {
                return Err(StepError::new(format!(
                    "{}: a `fired` expectation is judged as the lines the host profile declares \
                     (the `run` step expands it)",
                    self.what
                )));
            }
            Some(Content::Toml(pattern)) => {
                let value: Value = toml::from_str(text)
                    .map_err(|err| StepError::new(format!("{} is not TOML: {err}", self.what)))?;
                self.value(pattern, &value, "the document", Parsed::Toml, &mut trial)?;
            }
        }
        *captures = trial;
        Ok(())
    }

    /// `text` holds each of `parts` (with `${name}` replaced); the first missing one is the
    /// error.
    fn contains_all(
        &self,
        parts: &[String],
        text: &str,
        captures: &Captures,
    ) -> Result<(), StepError> {
        for part in parts {
            let part = self.text(part, captures)?;
            if !text.contains(&part) {
                return Err(StepError::new(format!(
                    "{} does not contain {part:?}; it holds:\n{}",
                    self.what,
                    shown(text)
                )));
            }
        }
        Ok(())
    }

    /// An expected text with `${name}` replaced.
    fn text(&self, text: &str, captures: &Captures) -> Result<String, StepError> {
        pattern::instantiate_text(text, captures)
            .map_err(|err| StepError::new(format!("the text expected of {}: {err}", self.what)))
    }

    /// One JSON value per line, every line ended by `\n`.
    fn json_lines(&self, text: &str) -> Result<Vec<Value>, StepError> {
        if !text.is_empty() && !text.ends_with('\n') {
            return Err(StepError::new(format!(
                "{}: the last line has no `\\n`:\n{}",
                self.what,
                shown(text)
            )));
        }
        text.lines()
            .enumerate()
            .map(|(index, line)| {
                serde_json::from_str(line).map_err(|err| {
                    StepError::new(format!(
                        "{}: line {} is not JSON ({err}): {}",
                        self.what,
                        index + 1,
                        shown(line)
                    ))
                })
            })
            .collect()
    }

    /// A parsed value: valid against the document (a JSON one in the key order the protocol
    /// fixes for it), matching its pattern.
    fn value(
        &self,
        pattern: &Value,
        value: &Value,
        which: &str,
        parsed: Parsed,
        captures: &mut Captures,
    ) -> Result<(), StepError> {
        if let Some(document) = self.document {
            let valid = match parsed {
                Parsed::Json => document.validate_written(value),
                Parsed::Toml => document.validate(value),
            };
            valid.map_err(|err| StepError::new(format!("{} {which} {err}: {value}", self.what)))?;
        }
        pattern::matches(pattern, value, captures, self.now).map_err(|mismatch| StepError {
            message: format!("{} {which} does not match: {mismatch}", self.what),
            diff: Some(frame_diff(pattern, value, captures, self.now)),
            conn: None,
            found: None,
        })
    }
}

/// How a value was read: JSON keeps the order its writer wrote its keys in; TOML tables have none.
#[derive(Debug, Clone, Copy)]
enum Parsed {
    Json,
    Toml,
}

/// A text for a message, cut after 2000 characters.
fn shown(text: &str) -> String {
    if text.chars().count() > 2_000 {
        let head: String = text.chars().take(2_000).collect();
        format!("{head}… ({} bytes)", text.len())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn judge(content: Option<Content>, text: &str) -> Result<Captures, StepError> {
        let mut captures = Captures::new();
        captures.insert("dir".into(), json!("/case/run"));
        let judge = Judge {
            what: "stdout",
            document: None,
            now: Window::ANY,
        };
        judge
            .judge(content.as_ref(), text, &mut captures)
            .map(|()| captures)
    }

    #[test]
    fn texts_are_exact_or_contained_after_replacing_names() {
        assert!(judge(None, "").is_ok());
        assert_eq!(
            judge(None, "x").unwrap_err().message,
            "stdout holds text where nothing was expected"
        );
        assert!(
            judge(
                Some(Content::Text("${dir}/corral\n".into())),
                "/case/run/corral\n"
            )
            .is_ok()
        );
        assert!(judge(Some(Content::Text("a\n".into())), "a").is_err());
        assert!(judge(Some(Content::Contains("$$HOME".into())), "set $HOME").is_ok());
        let err = judge(Some(Content::Contains("nope".into())), "text")
            .unwrap_err()
            .message;
        assert!(err.starts_with("stdout does not contain \"nope\""), "{err}");
        let all =
            |parts: &[&str]| Content::ContainsAll(parts.iter().map(|p| (*p).into()).collect());
        assert!(
            judge(
                Some(all(&["`bel`", "line 6"])),
                "line 6: unknown field `bel`"
            )
            .is_ok()
        );
        let err = judge(Some(all(&["`bel`", "line 7"])), "line 6: `bel`")
            .unwrap_err()
            .message;
        assert!(
            err.starts_with("stdout does not contain \"line 7\""),
            "{err}"
        );
    }

    #[test]
    fn json_lines_match_in_order_and_bind_captures() {
        let content = Content::JsonLines(vec![json!({"n": "$int:first"}), json!({"n": 2})]);
        let captures = judge(Some(content.clone()), "{\"n\":1}\n{\"n\":2}\n").unwrap();
        assert_eq!(captures["first"], json!(1));
        let err = judge(Some(content.clone()), "{\"n\":1}\n")
            .unwrap_err()
            .message;
        assert!(
            err.starts_with("stdout holds 1 JSON line(s), expected 2"),
            "{err}"
        );
        let err = judge(Some(content.clone()), "{\"n\":1}\n{\"n\":3}\n")
            .unwrap_err()
            .message;
        assert_eq!(
            err,
            "stdout line 2 does not match: at /n: expected 2, received 3"
        );
        let err = judge(Some(content), "{\"n\":1}\n{\"n\":2}")
            .unwrap_err()
            .message;
        assert!(err.contains("the last line has no"), "{err}");
    }

    #[test]
    fn json_each_needs_a_line_and_every_line_to_match() {
        let content = Content::JsonEach(json!({"argv": ["list-panes", "$string"]}));
        let log = "{\"argv\":[\"list-panes\",\"-a\"]}\n{\"argv\":[\"list-panes\",\"-a\"]}\n";
        assert!(judge(Some(content.clone()), log).is_ok());
        assert!(
            judge(Some(content.clone()), "")
                .unwrap_err()
                .message
                .contains("no line")
        );
        let err = judge(Some(content), "{\"argv\":[\"send-keys\",\"x\"]}\n")
            .unwrap_err()
            .message;
        assert!(
            err.starts_with("stdout line 1 does not match: at /argv/0"),
            "{err}"
        );
    }

    #[test]
    fn one_json_document_matches_with_or_without_its_newline() {
        let content = Content::Json(json!({"id": "$string:id", "n": 1}));
        assert_eq!(
            judge(Some(content.clone()), "{\"id\":\"r\",\"n\":1}").unwrap()["id"],
            json!("r")
        );
        assert!(judge(Some(content.clone()), "{\"id\":\"r\",\"n\":1}\n").is_ok());
        let err = judge(Some(content), "{\"n\":1}\n{\"n\":1}\n")
            .unwrap_err()
            .message;
        assert!(err.starts_with("stdout is not one JSON value"), "{err}");
    }

    #[test]
    fn a_toml_document_matches_as_json_and_is_validated() {
        let content = Content::Toml(json!({"device": [{"name": "phone", "$more": true}]}));
        let store = "[[device]]\nid = \"SHA256:x\"\nname = \"phone\"\n";
        assert!(judge(Some(content.clone()), store).is_ok());
        assert!(
            judge(Some(content.clone()), "[[device")
                .unwrap_err()
                .message
                .contains("not TOML")
        );
        let schemas = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/json");
        let document = DocumentSchema::load(&schemas, "device-store.schema.json").unwrap();
        let judge = Judge {
            what: "devices.toml",
            document: Some(&document),
            now: Window::ANY,
        };
        let err = judge
            .judge(Some(&content), store, &mut Captures::new())
            .unwrap_err();
        assert!(
            err.message
                .starts_with("devices.toml the document violates device-store.schema.json"),
            "{}",
            err.message
        );
    }
}
