//! What every line a host sends goes through before it is matched: UTF-8, no pane-title canary,
//! JSON, valid against `responses.schema.json`, and decoded and re-encoded through the wire types
//! to the same bytes. Pure: a line in, the line with its problems out, so a caller can still show
//! a broken line beside the frame it expected.

use golden::validate::FrameSchema;
use schema::{Response, decode_line, encode_line};
use serde_json::Value;

use super::{StepError, StepResult};

/// A received line and what is wrong with it beyond matching its pattern.
#[derive(Debug)]
pub(super) struct Received {
    /// The line (lossily decoded when it is not UTF-8).
    pub text: String,
    /// The line as JSON, when it is.
    pub frame: Option<Value>,
    /// Every rule the line breaks.
    pub problems: Vec<String>,
}

impl Received {
    /// An error listing the line's problems, if it has any.
    pub fn fail_on_problems(&self) -> StepResult {
        if self.problems.is_empty() {
            return Ok(());
        }
        Err(StepError::new(format!(
            "{}\nreceived: {}",
            self.problems.join("\n"),
            self.text
        )))
    }
}

/// Checks one line (without its `\n`) against the kit's rules for every received line.
pub(super) fn check(bytes: Vec<u8>, responses: &FrameSchema, canaries: &[String]) -> Received {
    let mut problems = Vec::new();
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            problems.push("the line is not UTF-8".to_owned());
            String::from_utf8_lossy(err.as_bytes()).into_owned()
        }
    };
    for canary in canaries {
        if text.contains(canary.as_str()) {
            problems.push(format!("a pane title canary `{canary}` rode the wire"));
        }
    }
    let frame = match serde_json::from_str::<Value>(&text) {
        Ok(frame) => Some(frame),
        Err(err) => {
            problems.push(format!("the line is not JSON ({err})"));
            None
        }
    };
    if let Some(frame) = &frame {
        if let Err(err) = responses.validate(frame) {
            problems.push(format!("the frame {err}"));
        } else {
            match decode_line::<Response>(&text) {
                Ok(decoded) if encode_line(&decoded).trim_end() == text => {}
                Ok(decoded) => problems.push(format!(
                    "the frame is not in canonical form (key order or spacing differ from \
                     wire-details.md); canonical: {}",
                    encode_line(&decoded).trim_end()
                )),
                Err(err) => problems.push(format!(
                    "the frame does not decode through the wire types: {err}"
                )),
            }
        }
    }
    Received {
        text,
        frame,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(line: &[u8]) -> Received {
        let responses = FrameSchema::generated("responses.schema.json").unwrap();
        check(line.to_vec(), &responses, &["TITLE-CANARY".to_owned()])
    }

    #[test]
    fn a_canonical_valid_frame_has_no_problems() {
        let received = checked(br#"{"schema":1,"id":"1","t":"ack"}"#);
        assert!(received.frame.is_some());
        assert!(
            received.fail_on_problems().is_ok(),
            "{:?}",
            received.problems
        );
    }

    #[test]
    fn every_broken_rule_is_listed() {
        assert_eq!(checked(b"\xff").problems[0], "the line is not UTF-8");
        let canary = checked(br#"{"schema":1,"id":"TITLE-CANARY-x","t":"ack"}"#);
        assert_eq!(
            canary.problems,
            ["a pane title canary `TITLE-CANARY` rode the wire"]
        );
        let spaced = checked(br#"{"schema":1, "id":"1","t":"ack"}"#);
        assert!(
            spaced.problems[0].contains("not in canonical form"),
            "{:?}",
            spaced.problems
        );
        let invalid = checked(br#"{"schema":1,"t":"ack"}"#);
        assert!(
            invalid.problems[0].starts_with("the frame violates"),
            "{:?}",
            invalid.problems
        );
        assert!(checked(b"{").frame.is_none());
    }
}
