//! The lines of a golden session as types: the first line a [`SessionHeader`], every later line
//! a [`StepLine`]. The JSON Schema of a line (`golden-session.schema.json`) is generated from
//! them, and a line is in canonical form when it re-encodes through them to the same bytes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use schema::DeviceRecord;

use super::raw::{RawBytes, RawSegment};
use crate::backend::Backend;

fn both_backends() -> Vec<Backend> {
    Backend::ALL.to_vec()
}

fn is_both_backends(backends: &[Backend]) -> bool {
    backends == Backend::ALL
}

/// One line of a golden session: the header (first line) or a step (every later line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GoldenLine {
    /// The first line.
    Header(SessionHeader),
    /// Every later line.
    Step(StepLine),
}

/// The first line of a golden session: what the case proves and what it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionHeader {
    /// Case id; the file is `golden/sessions/<case>.ndjson`.
    pub case: String,
    /// One sentence: what the case shows.
    pub about: String,
    /// Ledger requirement ids (`golden/requirements.toml`) this case tests; at least one. A
    /// session naming an unknown id is refused.
    pub requirements: Vec<String>,
    /// Fleet fixture, by file stem under `golden/fixtures/` (`small` is `small.toml`).
    pub fixture: String,
    /// Backends the case runs on; both when absent. A case skipped on a backend says why in
    /// `backends_reason`.
    #[serde(default = "both_backends", skip_serializing_if = "is_both_backends")]
    pub backends: Vec<Backend>,
    /// Why the case does not run on every backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backends_reason: Option<String>,
    /// The device store written before the first host starts (`devices.toml`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceRecord>,
    /// The host's config file (`config.toml`) as TOML maps onto JSON; validated against
    /// `config.schema.json`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub config: Map<String, Value>,
    /// When present, every received line is scanned for these strings and for every pane title
    /// of the fixture; finding one fails the case (a pane title never rides the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canaries: Option<Vec<String>>,
}

/// A step, with the connection it acts on and its own time limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepLine {
    /// What to do.
    #[serde(flatten)]
    pub step: Step,
    /// The host connection (one host process) the step acts on; `main` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn: Option<String>,
    /// This step's time limit in milliseconds before the global multiplier, instead of the
    /// step kind's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What one step does. Each line holds exactly one of these keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// A remark for the reader; does nothing.
    Comment(String),
    /// Starts a host process for the line's connection: `serve --stdio --device <device>`.
    Spawn(Spawn),
    /// Sends one frame, after replacing `${name}` with bound captures. It must validate against
    /// `requests.schema.json`.
    Send(Value),
    /// Sends raw bytes (bad input): the segments concatenated, nothing added. A line's `\n` is a
    /// segment like any other.
    SendRaw(#[schemars(with = "Vec<RawSegment>")] RawBytes),
    /// The next frame the connection receives matches this pattern.
    Expect(Value),
    /// The next frames, as many as there are patterns, match these patterns in some order. The
    /// frames are assigned to patterns as a whole (an assignment, not a greedy first match).
    ExpectUnordered(Vec<Value>),
    /// Nothing arrives on the connection for this many milliseconds (scaled by the global
    /// multiplier). Only where silence is the point, such as a subscription's baseline cycle.
    ExpectSilence(u64),
    /// Sends a request whose answer proves that everything before it was processed, and expects
    /// that answer as the next frame: a `snapshot` with this id and a selector that matches no
    /// pane, answered with no rows. Use it instead of sleeping.
    Barrier(String),
    /// Runs `corral-sim` with these arguments against the case's simulator state, and waits for
    /// it to finish successfully.
    Sim(Vec<String>),
    /// Starts `corral-sim` with these arguments in the background for the rest of the case (a
    /// server such as `api serve`), and waits until its ready file exists.
    SimBackground(Background),
    /// Rewrites the device store without the record of this device id (a revocation).
    Revoke(String),
    /// Closes the connection's stdin (end of file).
    Close(Empty),
    /// Sends SIGTERM to the connection's host process.
    Terminate(Empty),
    /// The host process exits with this code. Every frame it wrote before must have been
    /// expected.
    Exit(i32),
}

/// An empty object, for steps that need no argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// A background simulator process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Background {
    /// The `corral-sim` arguments (`["api", "serve"]`); `${name}` is replaced.
    pub args: Vec<String>,
    /// A path relative to `$CORRAL_SIM_DIR` whose appearance means the process is ready
    /// (`api.json`); the step does not wait when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_file: Option<String>,
}

/// Starts a host process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spawn {
    /// The fingerprint passed as `--device`.
    pub device: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_line_round_trips_with_its_connection_and_timeout() {
        let line = r#"{"expect":{"schema":1,"id":"1","t":"ack"},"conn":"b","timeout_ms":900}"#;
        let parsed: StepLine = serde_json::from_str(line).unwrap();
        assert_eq!(parsed.conn.as_deref(), Some("b"));
        assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
    }

    #[test]
    fn a_header_and_a_step_are_told_apart() {
        let header = r#"{"case":"x","about":"y","requirements":["a.b"],"fixture":"small"}"#;
        let GoldenLine::Header(parsed) = serde_json::from_str(header).unwrap() else {
            panic!("a header line parses as a header");
        };
        assert_eq!(parsed.backends, Backend::ALL);
        assert_eq!(serde_json::to_string(&parsed).unwrap(), header);
        let step = r#"{"close":{}}"#;
        let parsed: GoldenLine = serde_json::from_str(step).unwrap();
        assert!(matches!(parsed, GoldenLine::Step(_)));
    }
}
