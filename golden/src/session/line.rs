//! The lines of a golden session as types: the first line a [`SessionHeader`], every later line
//! a [`StepLine`]. The JSON Schema of a line (`golden-session.schema.json`) is generated from
//! them, and a line is in canonical form when it re-encodes through them to the same bytes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use schema::DeviceRecord;

use super::raw::{RawBytes, RawSegment};
use crate::backend::Backend;
use crate::profile::Coverage;
use crate::suite::Suite;

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
    /// What the case needs of a host: `wire` (its `serve` and hook command only), `host-files`
    /// (files the protocol names), `notify` (its daemon, through the host profile), or
    /// `corral-cli` (corral's own command line, run only for corral).
    pub suite: Suite,
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
    /// What the case needs of the host's action manifests, as its profile declares them
    /// (`[actions]`), by `<agent>.<action>`: `keys`, `text`, `api` or `hook` (declared, fired
    /// so), `covered` (declared, however fired) or `none` (not declared). A host whose profile
    /// declares otherwise skips the case, saying which; corral's own declares its manifests.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub manifests: BTreeMap<String, Coverage>,
    /// When present, every received line is scanned for these strings and for every pane title
    /// of the fixture; finding one fails the case (a pane title never rides the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canaries: Option<Vec<String>>,
    /// The least time the case takes, in milliseconds, because it waits out a time the spec
    /// fixes (a host may not shorten it, and no option changes it), such as the 10 s a dispatch
    /// waits for a slot in flight. The runner starts the cases with the highest floor first, and
    /// `cargo xtask bench` reports the suite's wall time without them too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ms: Option<u64>,
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
    /// Names the moment this step starts (the wall clock's), for a later `now_from`: the step
    /// that makes the change a later frame reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<String>,
    /// On an `expect` or `expect_unordered`: every `$now` in the frames falls between the moment
    /// an earlier step's `mark` names and the frame's arrival, instead of from the case's start
    /// (an edge reports the time its change was seen, not an older one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now_from: Option<String>,
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
    /// Sends SIGKILL to the connection's host process (a host that dies mid-request, whatever
    /// it was doing) and waits for its end. Every frame it wrote before must have been expected;
    /// a later `spawn` may start the connection again.
    Kill(Empty),
    /// The host process exits with this code. Every frame it wrote before must have been
    /// expected.
    Exit(i32),
    /// Runs a program of the kit (the host's own command line, or the simulator's) in the case's
    /// environment and waits for it to end; its exit code, stdout and stderr must be as stated.
    Run(Run),
    /// Checks a path of the case: a file, a directory or nothing there, its mode, and what it
    /// holds.
    File(FileCheck),
    /// Starts a program of the kit (a `corral daemon`) for the rest of the case, or until a
    /// `signal` step ends it, under a name; waits until its ready file exists.
    Background(Started),
    /// Sends a signal to a program a `background` step started; with `exit`, waits for its end
    /// and judges its exit code (and its stderr).
    Signal(SignalStep),
    /// Writes a file of the case whole (a config a reload reads, an action manifest, a config
    /// file no header could hold because it is broken on purpose).
    Write(WriteFile),
    /// Sends a frame and expects its answer, again and again, a counter replaced in both: many
    /// requests at the host's own pace (4097 dispatches that fill the ledger past its cap).
    Repeat(Repeat),
    /// Judges what the connection's host has written to stderr so far: its text, and how many
    /// of its lines hold given data (a log line written once).
    Stderr(StderrCheck),
    /// Closes the runner's end of the connection's stdout (a client that went away): what the
    /// host writes then meets a closed pipe. Frames received and not yet expected are dropped.
    CloseStdout(Empty),
    /// Stops reading the connection's stdout: what the host writes from then on waits unread,
    /// in the pipe and then in the host, until a `resume_reading` step (a client that stopped
    /// reading).
    PauseReading(Empty),
    /// Reads the connection's stdout again after a `pause_reading` step: what waited arrives in
    /// order, for the next steps to expect.
    ResumeReading(Empty),
}

/// A `repeat` step: `send` then `expect` (when given) for each value of a counter, `from`,
/// `from + 1`, ..., `times` values in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// How many times; at least 1.
    pub times: u64,
    /// The counter's first value; 1 when absent.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub from: u64,
    /// The counter's name: `${<counter>}` is its value (an integer; inside a longer string, its
    /// digits), bound inside each iteration only.
    pub counter: String,
    /// The frame sent in each iteration, as a `send` step's.
    pub send: Value,
    /// The pattern the iteration's answer matches, as an `expect` step's; the captures it binds
    /// hold within the iteration only. Absent, nothing is read (requests whose answers later
    /// steps read, or none do: a client that stopped reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Value>,
}

fn one() -> u64 {
    1
}

fn is_one(value: &u64) -> bool {
    *value == 1
}

/// A `stderr` step: what the connection's host wrote to stderr so far, checked at once (or,
/// with the step's `timeout_ms`, again and again until it holds). At least one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StderrCheck {
    /// What the whole text holds, as a `run` step's `stderr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// How many lines hold given data: each count must be exact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<LineCount>,
}

/// Lines of a text that hold every one of some texts, counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineCount {
    /// The texts a counted line holds, each somewhere, in any order (`${name}` replaced, `$$` a
    /// literal `$`): data such as a fingerprint or a socket, never a host's wording.
    pub with: Vec<String>,
    /// How many lines hold them all.
    pub count: u64,
}

/// A program a `run` step may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Program {
    /// `corral`: the command line of the host under test (`corral ls`, `corral device ...`), in
    /// the host processes' environment. A run against another host implementation skips the
    /// case unless it names that host's own command line.
    Corral,
    /// `corral-sim`: the simulator, in its environment (the pinned clock included); for its
    /// observers, whose output a step matches (a `sim` step only waits for success).
    CorralSim,
}

impl Program {
    /// The program's name, as a session writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Program::Corral => "corral",
            Program::CorralSim => "corral-sim",
        }
    }
}

/// A `run` step: a program, its arguments and input, and what it must answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// The program.
    pub program: Program,
    /// Its arguments; `${name}` is replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Changes to the program's environment, by variable, as a `spawn` step's (`TMUX_PANE` for
    /// `corral mute` run "inside" a pane).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Option<String>>,
    /// Text written to its stdin, which is then closed (`${name}` is replaced); absent, its
    /// stdin is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Its exit code.
    pub exit: i32,
    /// The local document stdout holds, by the stem of its JSON Schema in `schema/json/`
    /// (`ls` is `ls.schema.json`): every value the `stdout` expectation parses must be valid
    /// against it. Only with a `stdout` of `json_lines`, `json_each`, `json` or `toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    /// What stdout holds; absent, nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<Content>,
    /// What stderr holds; absent, nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<Content>,
    /// Runs the program again and again until its exit code, stdout and stderr are as stated,
    /// within the step's limit: a wait for something another process does in its own time (a
    /// daemon's cycle). Only for observers, whose runs change nothing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub retry: bool,
}

/// What a text must be: a command's stdout or stderr, a file's content, or a directory's
/// listing. Exactly one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Content {
    /// Exactly this text (`${name}` replaced, `$$` a literal `$`).
    Text(String),
    /// Text that holds this text (`${name}` replaced, `$$` a literal `$`).
    Contains(String),
    /// Text that holds each of these texts, anywhere, in any order (an error message that
    /// must name a key and its line, however it is worded).
    ContainsAll(Vec<String>),
    /// One JSON value per line, as many lines as patterns, each line matching its pattern in
    /// order (captures bind).
    JsonLines(Vec<Value>),
    /// One JSON value per line, at least one line, every line matching this one pattern (a log
    /// whose length depends on timing, such as a tmux call per cycle).
    JsonEach(Value),
    /// The whole text is TOML, and as JSON it matches this pattern (the device store).
    Toml(Value),
    /// The whole text is one JSON value, with or without a final newline, matching this pattern
    /// (a file a host writes as one document, such as a parked permission request).
    Json(Value),
    /// What a pane received (`corral-sim pane input`'s JSON lines) when these actions fired, in
    /// order: each one's records as the host's profile declares them (`[actions]`, its `input`
    /// with the dispatch's text in place of `{text}`), never corral's keys. Each must be one
    /// the header's `manifests` needs as `keys` or `text`.
    Fired(Vec<Fired>),
}

/// One action whose declared input reached a pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fired {
    /// The pane's agent (`claude`).
    pub agent: String,
    /// The action (`approve`).
    pub action: String,
    /// The dispatch's text, for a `text` action (`${name}` replaced, `$$` a literal `$`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Content {
    /// Whether it parses the text into values (which a `document` can then validate).
    pub fn parses(&self) -> bool {
        matches!(
            self,
            Content::JsonLines(_) | Content::JsonEach(_) | Content::Toml(_) | Content::Json(_)
        )
    }
}

/// What a path must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// A regular file (symbolic links followed).
    File,
    /// A directory.
    Dir,
    /// A unix-domain socket (a daemon's).
    Socket,
    /// Nothing.
    Absent,
}

/// A `file` step: what a path of the case is, checked at once (or, with the step's
/// `timeout_ms`, retried until it holds, for a file a process writes in its own time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileCheck {
    /// The path, absolute after `${name}` is replaced, inside the case's dirs
    /// (`${run_dir}/corral`, `${config_dir}/corral/devices.toml`, `${sim_dir}/...`).
    pub path: String,
    /// What is there.
    pub is: Entry,
    /// Its permission bits, four octal digits (`"0600"`, `"0700"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Whether the file is another file than the one an earlier `file` step on the same `path`
    /// saw (a write that renames a new file over it), or the same one (written in place or not
    /// at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<bool>,
    /// The `content` expectation applies only to what was appended since an earlier `file` step
    /// on the same `path` (a log); the file must be the same one, not shorter.
    #[serde(default, skip_serializing_if = "is_false")]
    pub appended: bool,
    /// Whether a process holds a lock on the file (`flock`, as a host holds its lock files: a
    /// notification command's slot, a pane's single-flight lock): `true` held, `false` free.
    /// The runner tries to take it without waiting, and gives it back at once. Only for a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked: Option<bool>,
    /// The local document the file holds, by the stem of its JSON Schema in `schema/json/`
    /// (`device-store`): every value the `content` expectation parses must be valid against it.
    /// Only with a `content` of `json_lines`, `json_each`, `json` or `toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    /// What a file holds, or a directory's entries: their names, sorted, each on its own line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
}

fn is_false(value: &bool) -> bool {
    !*value
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

/// A program a `background` step starts and keeps running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Started {
    /// The name later `signal` steps give it; unique among the programs running.
    pub name: String,
    /// The program, in the environment a `run` step gives it.
    pub program: Program,
    /// Its arguments; `${name}` is replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Changes to its environment, as a `spawn` step's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Option<String>>,
    /// A path (absolute after `${name}` is replaced, inside the case's dirs) whose appearance
    /// means it is ready (a daemon's socket); the step does not wait when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_file: Option<String>,
}

/// A signal a `signal` step may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SignalName {
    /// SIGHUP (a daemon reloads its config).
    #[serde(rename = "HUP")]
    Hup,
    /// SIGINT.
    #[serde(rename = "INT")]
    Int,
    /// SIGTERM.
    #[serde(rename = "TERM")]
    Term,
    /// SIGKILL: the program cannot answer it, so the step waits for its end and takes no
    /// `exit` or `stderr`.
    #[serde(rename = "KILL")]
    Kill,
}

impl SignalName {
    /// The name `kill -s` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            SignalName::Hup => "HUP",
            SignalName::Int => "INT",
            SignalName::Term => "TERM",
            SignalName::Kill => "KILL",
        }
    }
}

/// A `signal` step: a signal to a program a `background` step started, and how it must end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalStep {
    /// The `background` step's name.
    pub name: String,
    /// The signal.
    pub signal: SignalName,
    /// When present, the program must then exit with this code (within the step's limit); the
    /// name is free again. Absent, it must keep running (a reload), except after `KILL`, which
    /// it cannot survive: then the step waits for its end and the name is free again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// With `exit`: what its whole stderr holds (a daemon's log); absent, not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<Content>,
}

/// A `write` step: a file of the case written whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// The path, absolute after `${name}` is replaced, inside the case's dirs; missing parent
    /// directories are made.
    pub path: String,
    /// What it holds (`${name}` replaced, `$$` a literal `$`).
    pub text: String,
    /// Its permission bits, four octal digits; `0600` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// Starts a host process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spawn {
    /// The fingerprint passed as `--device`.
    pub device: String,
    /// Changes to the case's environment for this host process only, by variable: set to a
    /// text (`${name}` replaced), or removed (`null`). For rules about where a host looks
    /// (`{"XDG_RUNTIME_DIR":null,"TMPDIR":"${home_dir}"}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Option<String>>,
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
    fn run_and_file_steps_round_trip_in_their_canonical_form() {
        for line in [
            r#"{"run":{"program":"corral","args":["ls","--json"],"exit":0,"document":"ls","stdout":{"json_lines":[{"schema":1,"agents":"$array"}]}}}"#,
            r#"{"run":{"program":"corral-sim","args":["x"],"stdin":"hi\n","exit":2,"stderr":{"contains":"usage"}}}"#,
            r#"{"file":{"path":"${run_dir}/corral","is":"dir","mode":"0700"}}"#,
            r#"{"file":{"path":"${sim_dir}/log","is":"file","appended":true,"content":{"json_each":{"argv":"$array"}}},"timeout_ms":900}"#,
            r#"{"file":{"path":"${config_dir}/corral/devices.toml","is":"file","replaced":true,"document":"device-store","content":{"toml":{"device":[]}}}}"#,
            r#"{"run":{"program":"corral","args":["mute"],"env":{"TMUX_PANE":"${pane.a}"},"exit":0,"retry":true},"timeout_ms":900}"#,
            r#"{"file":{"path":"${run_dir}/corral/notify/daemon-${server_key}.sock","is":"socket","mode":"0600"}}"#,
        ] {
            let parsed: StepLine = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
        }
        let parsed: StepLine =
            serde_json::from_str(r#"{"run":{"program":"corral","exit":0}}"#).unwrap();
        let Step::Run(run) = parsed.step else {
            panic!("a run step");
        };
        assert_eq!((run.program.as_str(), run.stdout), ("corral", None));
    }

    #[test]
    fn background_signal_and_write_steps_round_trip() {
        for line in [
            r#"{"background":{"name":"daemon","program":"corral","args":["daemon"],"env":{"CORRAL_TITLE":"leak","X":null},"ready_file":"${run_dir}/x.sock"}}"#,
            r#"{"signal":{"name":"daemon","signal":"HUP"}}"#,
            r#"{"signal":{"name":"daemon","signal":"TERM","exit":0,"stderr":{"contains":"stopped"}},"timeout_ms":2000}"#,
            r#"{"write":{"path":"${config_dir}/corral/config.toml","text":"[notify]\n","mode":"0644"}}"#,
        ] {
            let parsed: StepLine = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
        }
        let refused = r#"{"signal":{"name":"daemon","signal":"STOP"}}"#;
        assert!(serde_json::from_str::<StepLine>(refused).is_err());
        for line in [
            r#"{"signal":{"name":"daemon","signal":"KILL"}}"#,
            r#"{"kill":{},"conn":"b"}"#,
        ] {
            let parsed: StepLine = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
        }
    }

    #[test]
    fn repeat_stderr_and_stdout_steps_round_trip() {
        for line in [
            r#"{"repeat":{"times":3,"counter":"n","send":{"schema":1,"id":"r${n}","t":"receipts"},"expect":{"schema":1,"id":"r${n}","t":"receipts","receipts":[]}}}"#,
            r#"{"repeat":{"times":2,"from":7,"counter":"i","send":{"schema":1,"id":"x${i}","t":"receipts"}},"conn":"b"}"#,
            r#"{"stderr":{"content":{"contains":"SHA256:kit-phone"}}}"#,
            r#"{"stderr":{"lines":[{"with":["${socket_path}"],"count":1}]},"timeout_ms":900}"#,
            r#"{"close_stdout":{}}"#,
            r#"{"pause_reading":{},"conn":"b"}"#,
            r#"{"resume_reading":{}}"#,
        ] {
            let parsed: StepLine = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
        }
        let parsed: StepLine =
            serde_json::from_str(r#"{"repeat":{"times":2,"from":1,"counter":"n","send":{}}}"#)
                .unwrap();
        let Step::Repeat(repeat) = &parsed.step else {
            panic!("a repeat step");
        };
        assert_eq!((repeat.from, repeat.expect.as_ref()), (1, None));
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            r#"{"repeat":{"times":2,"counter":"n","send":{}}}"#,
            "`from` 1 is the default and is left out"
        );
    }

    #[test]
    fn a_header_and_a_step_are_told_apart() {
        let header =
            r#"{"case":"x","suite":"wire","about":"y","requirements":["a.b"],"fixture":"small"}"#;
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
