//! The conformance kit's published formats: golden sessions (`golden/sessions/*.ndjson`) and the
//! requirement ledger (`golden/requirements.toml`).
//!
//! A golden session is NDJSON: the first line is a [`SessionHeader`], every later line a
//! [`StepLine`]. Every line is in canonical form: it decodes into these types and re-encodes to
//! the same bytes. The session describes both halves of a conversation, so a host runner plays
//! the client's half and judges the host's frames, and a replayer can play the host's half and
//! judge a client's frames.
//!
//! Frames inside `send` and `expect` steps are *patterns*: exact JSON by default, where a string
//! that starts with `$` is a directive. `golden/README.md` documents the directives; in short:
//! `$any`, `$int`, `$number`, `$string`, `$bool`, `$array`, `$object` (typed wildcards),
//! `$absent` (the key must be missing), `$int:name` (a typed capture, bound on first sight and
//! compared after), `${name}` (a bound capture, also inside a longer string), `$$` (a literal
//! `$`), and the object key `"$more": true` (other keys may appear). Any other `$` is an error, so
//! a directive can never be mistaken for data silently. [`pattern`] implements them, once, for
//! both sides of the kit: `cargo xtask conformance` (the client's half, judging a host) and
//! `corral-sim replay` (the host's half, judging a client).

pub mod pattern;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::device::DeviceRecord;

/// A backend the simulator runs a fleet on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// `corral-fake-tmux`: tmux's CLI subset over a state directory.
    Fake,
    /// A scratch real tmux server (`tmux -L <unique> -f /dev/null`).
    Real,
}

impl Backend {
    /// Both backends, in the order a session lists them.
    pub const ALL: [Backend; 2] = [Backend::Fake, Backend::Real];

    /// The backend's name as written in sessions and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Fake => "fake",
            Backend::Real => "real",
        }
    }
}

/// The tmux session a barrier's snapshot selects; no fixture has a session of that name, so the
/// answer has no rows.
pub const BARRIER_SESSION: &str = "corral-kit-barrier";

/// The request a `barrier` step sends: a `snapshot` with the barrier's id selecting
/// [`BARRIER_SESSION`].
pub fn barrier_request(id: &str) -> Value {
    serde_json::json!({"schema": 1, "id": id, "t": "snapshot",
                       "selector": {"session": BARRIER_SESSION}})
}

/// The answer a `barrier` step expects next: a `snapshot` with the barrier's id and no rows.
pub fn barrier_answer(id: &str) -> Value {
    serde_json::json!({"schema": 1, "id": id, "t": "snapshot", "agents": []})
}

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
    SendRaw(Vec<RawSegment>),
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

/// A run of raw bytes: `text` (UTF-8) or `hex` (any bytes, pairs of hex digits), repeated
/// `repeat` times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSegment {
    /// UTF-8 text, taken literally (no directives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes as hex digit pairs, spaces allowed (`"ff fe"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
    /// How many times the segment is repeated; 1 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// `golden/requirements.toml`: every normative sentence of the specs, each mapped to the cases
/// that test it or to the reason it is not tested.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ledger {
    /// The requirements, in spec order.
    #[serde(rename = "requirement", default)]
    pub requirements: Vec<Requirement>,
}

/// One normative sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// A stable slug, `area.topic` (`framing.line-cap`).
    pub id: String,
    /// The document it comes from: `fleet-wire-protocol`, `wire-details` or `pane-options`.
    pub spec: String,
    /// The section heading it sits under.
    pub section: String,
    /// How binding it is.
    pub level: Level,
    /// The sentence, quoted or closely paraphrased.
    pub text: String,
    /// Whether a golden session tests it.
    pub status: Status,
    /// Why it is pending or excluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The cases that test it (status `tested`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<String>,
    /// The id of a broader requirement this one makes precise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refines: Option<String>,
    /// Frame variants (`request:window`, `response:card:question`) a pending requirement stands
    /// for: the coverage check accepts a variant that no golden session shows when a pending
    /// requirement lists it here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<String>,
}

/// RFC 2119 strength of a requirement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Absolute.
    Must,
    /// Expected unless there is a good reason; a case whose requirements are all `should` or
    /// `may` is graded non-strict when it fails.
    Should,
    /// Optional.
    May,
}

/// Whether a requirement is covered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// At least one golden session tests it (`cases`).
    Tested,
    /// Not tested yet; `reason` says what it waits for.
    Pending,
    /// Never tested by the kit; `reason` says why.
    Excluded,
}

impl Ledger {
    /// Requirements by id.
    pub fn by_id(&self) -> BTreeMap<&str, &Requirement> {
        self.requirements
            .iter()
            .map(|requirement| (requirement.id.as_str(), requirement))
            .collect()
    }
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

    #[test]
    fn a_ledger_requirement_reads_from_toml_shaped_json() {
        let ledger: Ledger = serde_json::from_value(serde_json::json!({
            "requirement": [{
                "id": "framing.line-cap", "spec": "wire-details", "section": "Framing",
                "level": "must", "text": "A request line longer than 64 KiB is answered bad-request.",
                "status": "pending", "reason": "waits for the host", "frames": ["response:error"]
            }]
        }))
        .unwrap();
        assert_eq!(ledger.by_id()["framing.line-cap"].level, Level::Must);
    }
}
