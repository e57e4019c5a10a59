//! A golden session turned into the host's half of one connection: what the app must send, and
//! the concrete frames the replayer writes. Everything that can be wrong with a session is found
//! here, before the app connects: a step a real app cannot play (not replayable), a pattern that
//! does not parse, a frame the replayer would write that is not a valid response.
//!
//! The rule, per step kind, on the chosen connection:
//!
//! | step | replay |
//! |---|---|
//! | `comment` | nothing |
//! | `spawn` | the app connecting: nothing; a second `spawn` (a reconnection) is not replayable |
//! | `send` | the app sends a frame; it is judged |
//! | `send_raw` | judged like `send` when its bytes are one request line an app may send (a key left to its default, an unknown key); else not replayable: bad input on purpose |
//! | `expect`, `expect_unordered` | written, wildcards as samples; unordered in the order given |
//! | `expect_silence` | nothing is written for that long |
//! | `barrier` | the app sends the barrier's `snapshot`; the empty answer is written |
//! | `sim`, `sim_background`, `revoke`, `terminate` | nothing: host-side causes whose effect on the app is the frames (or the end) the session expects next |
//! | `run`, `file`, `write`, `background`, `signal` | nothing: host-side commands, programs and files, which no app sees |
//! | `close` | the app closes its end (end of input) |
//! | `exit`, `kill` | the replayer stops: its stdout ends, as the host's would |
//! | `repeat` | each iteration, its counter bound: the app sends the frame (judged), and the answer is written when the step has an `expect` |
//! | `stderr` | nothing: the host's log, which no app sees |
//! | `pause_reading`, `resume_reading` | nothing: when the app reads is not judged |
//! | `close_stdout` | not replayable: the app closing its read end on cue is a fault a session scripts, not an app's flow |
//!
//! Steps of other connections are not played; their `expect` patterns are still sampled in order,
//! so a capture one of them binds (`$string:name`) has the same value on every connection.
//!
//! The session itself comes from the kit's one loader ([`golden::session::load()`]), so a session
//! the replayer reads is exactly one the host runner reads.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use golden::Error;
use golden::pattern::{self, Captures};
use golden::session::limits::EXPECT_MS;
use golden::session::{Prebound, RawBytes, Session, Step, barrier_answer, barrier_request};
use golden::validate::FrameSchema;
use schema::{Envelope, Frames as _, Request, Response, decode_line, encode_line};
use serde_json::Value;

/// What `${sim_dir}` stands for (the runner binds the case's `$CORRAL_SIM_DIR`).
pub const SIM_DIR: &str = "/home/replay/corral-sim";

/// What `${socket_path}` stands for (the runner binds the tmux socket's path).
pub const SOCKET_PATH: &str = "/tmp/tmux-1000/corral-replay";

/// What `${host_name}` stands for (the runner binds the machine's name).
pub const HOST_NAME: &str = "replay-host";

/// The stand-ins of every prebound name, and the given fixture panes' ids: `${uid}` is `1000`,
/// `${run_dir}`, `${config_dir}` and `${home_dir}` are `/run/user/1000`, `/home/replay/.config`
/// and `/home/replay`, the host's files corral's places in them (only host-side steps, `run` and
/// `file`, use them, and those are not replayed),
/// every pane's `${transcript.<name>}` is `<sim_dir>/transcripts/<name>.jsonl`, and every
/// `${label.<agent>.<action>}` the label corral's profile declares (the replayer stands in for
/// corral).
pub fn prebound(panes: BTreeMap<String, String>) -> Prebound {
    let transcripts = panes
        .keys()
        .map(|name| (name.clone(), format!("{SIM_DIR}/transcripts/{name}.jsonl")))
        .collect();
    Prebound {
        host_tool: "corral".to_owned(),
        transcripts,
        host_name: HOST_NAME.to_owned(),
        uid: "1000".to_owned(),
        socket_path: SOCKET_PATH.to_owned(),
        tmux_socket: SOCKET_PATH
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned(),
        sim_dir: SIM_DIR.to_owned(),
        run_dir: "/run/user/1000".to_owned(),
        config_dir: "/home/replay/.config".to_owned(),
        home_dir: "/home/replay".to_owned(),
        runtime_dir: "/run/user/1000/corral".to_owned(),
        device_store: "/home/replay/.config/corral/devices.toml".to_owned(),
        config_file: "/home/replay/.config/corral/config.toml".to_owned(),
        panes,
        labels: golden::HostProfile::corral().labels(),
    }
}

/// Frame keys whose value a real app chooses itself: the envelope `id` of every frame, and these
/// keys of a `hello`.
pub const HELLO_OWN_KEYS: [&str; 3] = ["app", "app_version", "device"];

pub use schema::LINE_CAP;

/// Why a session (one connection of it) cannot be replayed, or cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptError {
    /// A step a real app cannot play.
    NotReplayable {
        /// The golden line.
        line: usize,
        /// Why.
        reason: String,
    },
    /// The session (or the chosen connection) is wrong.
    Invalid(Error),
}

impl From<Error> for ScriptError {
    fn from(err: Error) -> ScriptError {
        ScriptError::Invalid(err)
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptError::NotReplayable { line, reason } => {
                write!(f, "not replayable: line {line}: {reason}")
            }
            ScriptError::Invalid(err) => write!(f, "{err}"),
        }
    }
}

/// One thing the replayer does, in order.
#[derive(Debug, Clone)]
pub enum Action {
    /// Read one frame from the app and judge it.
    Receive(Receive),
    /// Write these frames (ids as in the session; the player maps them to the app's).
    Write {
        /// The golden line.
        line: usize,
        /// The frames, in order.
        frames: Vec<Envelope<Response>>,
    },
    /// Write nothing for this long (milliseconds, before the scale).
    Silence {
        /// The golden line.
        line: usize,
        /// Milliseconds.
        ms: u64,
    },
    /// The app closes its end.
    Close {
        /// The golden line.
        line: usize,
        /// Milliseconds, before the scale.
        wait_ms: u64,
    },
    /// Stop: the host's half ends here (it exited, or was killed).
    Exit {
        /// The golden line.
        line: usize,
    },
}

/// A frame the app must send.
#[derive(Debug, Clone)]
pub struct Receive {
    /// The golden line.
    pub line: usize,
    /// The frame's `t` in the session.
    pub t: String,
    /// The id the session's client gave it.
    pub session_id: String,
    /// The client-neutral pattern the app's frame (decoded and re-encoded) must match.
    pub pattern: Value,
    /// Milliseconds the app has, before the scale.
    pub wait_ms: u64,
}

/// The host's half of one connection.
#[derive(Debug, Clone)]
pub struct Script {
    /// The session file.
    pub path: PathBuf,
    /// Its case id.
    pub case: String,
    /// The connection played.
    pub conn: String,
    /// What to do, in order.
    pub actions: Vec<Action>,
}

/// Reads a session with the kit's loader.
pub fn load(path: &Path) -> Result<Session, ScriptError> {
    Ok(golden::session::load(path)?)
}

/// The captures a runner binds before the first step, with the replayer's values; the fixture
/// is read only when the session names a pane through `${pane.<name>}`. A client replaying the
/// session binds the same ones.
pub fn replay_prebound(session: &Session) -> Result<Captures, ScriptError> {
    let mut panes = BTreeMap::new();
    if session.names_panes() {
        let fixture = session.fixture_path();
        panes = pane_ids(&fixture).map_err(|err| {
            Error::in_file(
                &session.path,
                format!(
                    "the session names fixture panes, and their ids come from {}: {err}",
                    fixture.display()
                ),
            )
        })?;
    }
    Ok(prebound(panes).captures())
}

/// The host's half of a session's connection, or why it cannot be played.
pub fn script(
    session: &Session,
    conn: &str,
    requests: &FrameSchema,
    responses: &FrameSchema,
) -> Result<Script, ScriptError> {
    let conns = session.conns();
    if !conns.iter().any(|c| c == conn) {
        return Err(ScriptError::Invalid(Error::in_file(
            &session.path,
            format!(
                "no connection `{conn}` (the session has {})",
                conns.join(", ")
            ),
        )));
    }
    let mut captures = replay_prebound(session)?;
    let mut actions = Vec::new();
    let (mut spawned, mut exited) = (false, false);
    for located in &session.steps {
        let line = located.line;
        let step = &located.step;
        let on = located.conn() == conn;
        let wait_ms = step.timeout_ms.unwrap_or(EXPECT_MS);
        let refuse = |reason: &str| ScriptError::NotReplayable {
            line,
            reason: reason.to_owned(),
        };
        let at = |err: Error| ScriptError::Invalid(err.at(&session.path, line));
        match &step.step {
            Step::Expect(expect) => {
                let frame = pattern::sample(expect, &mut captures).map_err(at)?;
                if on {
                    let frames = vec![written(&frame, responses).map_err(at)?];
                    actions.push(Action::Write { line, frames });
                }
            }
            Step::ExpectUnordered(expects) => {
                let mut frames = Vec::new();
                for expect in expects {
                    let frame = pattern::sample(expect, &mut captures).map_err(at)?;
                    frames.push(written(&frame, responses).map_err(at)?);
                }
                if on {
                    actions.push(Action::Write { line, frames });
                }
            }
            _ if !on => {}
            Step::Spawn(_) if spawned => {
                return Err(refuse(
                    "the connection is spawned again; one replayer plays one host process",
                ));
            }
            Step::Spawn(_) => spawned = true,
            _ if exited => {}
            Step::Send(send) => {
                let frame = pattern::instantiate(send, &captures).map_err(at)?;
                let receive = received(&frame, wait_ms, line, requests).map_err(at)?;
                actions.push(Action::Receive(receive));
            }
            Step::SendRaw(raw) => {
                let frame = raw_frame(raw, requests).map_err(|why| {
                    refuse(&format!(
                        "send_raw sends bad input on purpose, which a real app does not: {why}"
                    ))
                })?;
                let receive = received(&frame, wait_ms, line, requests).map_err(at)?;
                actions.push(Action::Receive(receive));
            }
            Step::Barrier(id) => {
                let receive =
                    received(&barrier_request(id), wait_ms, line, requests).map_err(at)?;
                actions.push(Action::Receive(receive));
                let frames = vec![written(&barrier_answer(id), responses).map_err(at)?];
                actions.push(Action::Write { line, frames });
            }
            Step::ExpectSilence(ms) => actions.push(Action::Silence { line, ms: *ms }),
            Step::Repeat(repeat) => {
                for n in repeat.from..=repeat.from + (repeat.times - 1) {
                    let mut scoped = captures.clone();
                    scoped.insert(repeat.counter.clone(), Value::from(n));
                    let frame = pattern::instantiate(&repeat.send, &scoped).map_err(at)?;
                    let receive = received(&frame, wait_ms, line, requests).map_err(at)?;
                    actions.push(Action::Receive(receive));
                    if let Some(expect) = &repeat.expect {
                        let frame = pattern::sample(expect, &mut scoped).map_err(at)?;
                        let frames = vec![written(&frame, responses).map_err(at)?];
                        actions.push(Action::Write { line, frames });
                    }
                }
            }
            Step::CloseStdout(_) => {
                return Err(refuse(
                    "close_stdout closes the app's read end on cue, a fault a session scripts, \
                     not an app's flow",
                ));
            }
            Step::Close(_) => actions.push(Action::Close { line, wait_ms }),
            // A killed host's stdout ends as an exiting one's does.
            Step::Exit(_) | Step::Kill(_) => {
                actions.push(Action::Exit { line });
                exited = true;
            }
            Step::Comment(_)
            | Step::Sim(_)
            | Step::SimBackground(_)
            | Step::Revoke(_)
            | Step::Terminate(_)
            | Step::Run(_)
            | Step::File(_)
            | Step::Background(_)
            | Step::Signal(_)
            | Step::Write(_)
            | Step::Stderr(_)
            | Step::PauseReading(_)
            | Step::ResumeReading(_) => {}
        }
    }
    Ok(Script {
        path: session.path.clone(),
        case: session.header.case.clone(),
        conn: conn.to_owned(),
        actions,
    })
}

/// The frame a `send_raw` sends when its bytes are one request line an app may send: text
/// segments making one `\n`-terminated line, within [`LINE_CAP`], of JSON that validates and
/// decodes. A session sends
/// such a line raw when the request types cannot write it byte for byte (a key left to its default,
/// an unknown key); anything else is bad input on purpose, and the error says what is bad.
fn raw_frame(raw: &RawBytes, requests: &FrameSchema) -> Result<Value, Error> {
    if raw.segments().iter().any(|segment| segment.hex.is_some()) {
        return Err(Error::new("hex bytes"));
    }
    let text = std::str::from_utf8(raw.bytes()).expect("text segments make UTF-8");
    let Some(line) = text.strip_suffix('\n').filter(|line| !line.contains('\n')) else {
        return Err(Error::new("not one `\\n`-terminated line"));
    };
    if line.len() > LINE_CAP {
        return Err(Error::new(format!(
            "a line of {} bytes, over the {LINE_CAP}-byte cap",
            line.len()
        )));
    }
    let frame: Value = serde_json::from_str(line).map_err(|_| Error::new("not JSON"))?;
    requests.validate(&frame)?;
    decode_line::<Request>(line).map_err(|err| Error::new(format!("not a request ({err})")))?;
    Ok(frame)
}

/// Name → `%N` for every pane of a fixture, as `corral-sim up` assigns them.
fn pane_ids(fixture: &Path) -> Result<BTreeMap<String, String>, Error> {
    let fixture = golden::fixture::load(fixture)?;
    let sessions = golden::plan::expand(&fixture, golden::clock::NOW_MS)?;
    Ok(golden::plan::ids(&sessions))
}

/// A sampled expectation as the frame the replayer writes: it must decode through the wire types,
/// re-encode to the same JSON value (nothing the types cannot carry is lost), and validate.
fn written(frame: &Value, responses: &FrameSchema) -> Result<Envelope<Response>, Error> {
    let text = frame.to_string();
    let decoded = decode_line::<Response>(&text).map_err(|err| {
        Error::new(format!(
            "the frame the replayer would write does not decode ({err}): {text}"
        ))
    })?;
    let encoded = encode_line(&decoded);
    let again: Value = serde_json::from_str(&encoded).expect("encoded frames are JSON");
    if again != *frame {
        return Err(Error::new(format!(
            "the frame the replayer would write changes through the wire types: {text} becomes {}",
            encoded.trim_end()
        )));
    }
    responses
        .validate(&again)
        .map_err(|err| Error::new(format!("the frame the replayer would write {err}: {text}")))?;
    Ok(decoded)
}

/// A session's send (every `${name}` replaced) as what the app must send: its canonical form with
/// the values an app chooses itself (the `id`, hello's `app`, `app_version`, `device`) left open.
fn received(
    frame: &Value,
    wait_ms: u64,
    line: usize,
    requests: &FrameSchema,
) -> Result<Receive, Error> {
    let text = frame.to_string();
    let wrong = |message: String| Error::new(format!("the session's frame {message}: {text}"));
    requests
        .validate(frame)
        .map_err(|err| wrong(err.to_string()))?;
    let decoded =
        decode_line::<Request>(&text).map_err(|err| wrong(format!("does not decode ({err})")))?;
    let canonical: Value =
        serde_json::from_str(&encode_line(&decoded)).expect("encoded frames are JSON");
    Ok(Receive {
        line,
        t: decoded.body.name().to_owned(),
        session_id: decoded.id,
        pattern: client_neutral(&canonical),
        wait_ms,
    })
}

/// The pattern an app's frame must match: the frame's values as literals, except the ones an app
/// chooses itself, which may be any string.
pub fn client_neutral(canonical: &Value) -> Value {
    let mut pattern = pattern::escape_literal(canonical);
    if let Value::Object(members) = &mut pattern {
        let hello = members.get("t") == Some(&Value::from("hello"));
        for (key, value) in members.iter_mut() {
            if key == "id" || (hello && HELLO_OWN_KEYS.contains(&key.as_str())) {
                *value = Value::from("$string");
            }
        }
    }
    pattern
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const HEADER: &str =
        r#"{"case":"x","suite":"wire","about":"a","requirements":["a.b"],"fixture":"small"}"#;
    const HELLO: &str = r#"{"send":{"schema":1,"id":"1","t":"hello","app":"corral-kit","app_version":"1.0.0","device":"d"}}"#;
    const HELLO_REPLY: &str = r#"{"expect":{"schema":1,"id":"1","t":"hello","host":"$string:host","tool_version":"$string","reconcile_interval_ms":200,"scopes":["read"]}}"#;

    fn schemas() -> (FrameSchema, FrameSchema) {
        (
            FrameSchema::generated("requests.schema.json").unwrap(),
            FrameSchema::generated("responses.schema.json").unwrap(),
        )
    }

    fn script(lines: &[&str], conn: &str) -> Result<Script, ScriptError> {
        let text = format!("{HEADER}\n{}\n", lines.join("\n"));
        let session = golden::session::parse(Path::new("golden/sessions/x.ndjson"), &text)?;
        let (requests, responses) = schemas();
        super::script(&session, conn, &requests, &responses)
    }

    fn written_text(action: &Action) -> Vec<String> {
        match action {
            Action::Write { frames, .. } => frames
                .iter()
                .map(|f| encode_line(f).trim_end().to_owned())
                .collect(),
            other => panic!("expected a write, got {other:?}"),
        }
    }

    #[test]
    fn sends_become_receives_and_expects_become_concrete_frames() {
        let script = script(&[r#"{"spawn":{"device":"d"}}"#, HELLO, HELLO_REPLY], "main").unwrap();
        assert_eq!(script.actions.len(), 2);
        let Action::Receive(receive) = &script.actions[0] else {
            panic!("a send is a receive");
        };
        assert_eq!((receive.line, receive.t.as_str()), (3, "hello"));
        assert_eq!(receive.session_id, "1");
        assert_eq!(
            receive.pattern,
            json!({"schema": 1, "id": "$string", "t": "hello", "app": "$string",
                   "app_version": "$string", "device": "$string"})
        );
        assert_eq!(
            written_text(&script.actions[1]),
            [
                r#"{"schema":1,"id":"1","t":"hello","host":"replay-host","tool_version":"replay","reconcile_interval_ms":200,"scopes":["read"]}"#
            ]
        );
    }

    #[test]
    fn only_the_id_is_open_outside_a_hello() {
        let pattern = client_neutral(&json!({"schema": 1, "id": "2", "t": "snapshot",
                                            "selector": {"agent": "$x", "device": "d"}}));
        assert_eq!(
            pattern,
            json!({"schema": 1, "id": "$string", "t": "snapshot",
                   "selector": {"agent": "$$x", "device": "d"}})
        );
    }

    #[test]
    fn captures_bound_on_another_connection_reach_this_one() {
        let script = script(
            &[
                r#"{"spawn":{"device":"d"},"conn":"b"}"#,
                r#"{"expect":{"schema":1,"id":"0","t":"error","code":"not-found","message":"$string:said"},"conn":"b"}"#,
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"send":{"schema":1,"id":"1","t":"card","pane":"${said}"}}"#,
            ],
            "main",
        )
        .unwrap();
        let Action::Receive(receive) = &script.actions[0] else {
            panic!("a send is a receive");
        };
        assert_eq!(receive.pattern["pane"], json!("replay-said"));
        assert_eq!(script.actions.len(), 1);
    }

    #[test]
    fn a_barrier_is_a_snapshot_request_and_its_empty_answer() {
        let script = script(
            &[r#"{"spawn":{"device":"d"}}"#, r#"{"barrier":"9"}"#],
            "main",
        )
        .unwrap();
        let Action::Receive(receive) = &script.actions[0] else {
            panic!("a barrier starts with a receive");
        };
        assert_eq!(
            receive.pattern,
            json!({"schema": 1, "id": "$string", "t": "snapshot",
                   "selector": {"session": "corral-kit-barrier"}})
        );
        assert_eq!(
            written_text(&script.actions[1]),
            [r#"{"schema":1,"id":"9","t":"snapshot","agents":[]}"#]
        );
    }

    #[test]
    fn a_repeat_is_each_iteration_played_and_a_closed_read_end_is_not_replayable() {
        let repeat = r#"{"repeat":{"times":2,"from":4,"counter":"n","send":{"schema":1,"id":"r${n}","t":"receipts","slot":"s${n}"},"expect":{"schema":1,"id":"r${n}","t":"receipts","receipts":[]}}}"#;
        let played = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                repeat,
                r#"{"stderr":{"content":{"contains":"x"}}}"#,
                r#"{"pause_reading":{}}"#,
                r#"{"resume_reading":{}}"#,
            ],
            "main",
        )
        .unwrap();
        let [
            Action::Receive(first),
            Action::Write { .. },
            Action::Receive(second),
            Action::Write { .. },
        ] = played.actions.as_slice()
        else {
            panic!("two sends and two answers: {:?}", played.actions);
        };
        assert_eq!((first.session_id.as_str(), first.line), ("r4", 3));
        assert_eq!(second.pattern["slot"], json!("s5"));
        assert_eq!(
            written_text(&played.actions[3]),
            [r#"{"schema":1,"id":"r5","t":"receipts","receipts":[]}"#]
        );
        let err = script(
            &[r#"{"spawn":{"device":"d"}}"#, r#"{"close_stdout":{}}"#],
            "main",
        )
        .unwrap_err();
        assert!(
            matches!(&err, ScriptError::NotReplayable { line: 3, reason } if reason.contains("close_stdout")),
            "{err}"
        );
    }

    #[test]
    fn a_killed_host_ends_the_script_as_an_exit_does() {
        let script = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"kill":{}}"#,
                r#"{"expect_silence":600}"#,
            ],
            "main",
        )
        .unwrap();
        assert!(matches!(
            script.actions.as_slice(),
            [Action::Exit { line: 3 }]
        ));
    }

    #[test]
    fn host_side_steps_are_skipped_and_exit_ends_the_script() {
        let script = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"comment":"x"}"#,
                r#"{"sim":["step","--pane","a","--state","idle"]}"#,
                r#"{"revoke":"d"}"#,
                r#"{"run":{"program":"corral","args":["device","revoke","d"],"exit":0}}"#,
                r#"{"file":{"path":"${config_dir}/corral/devices.toml","is":"file","mode":"0600"}}"#,
                r#"{"terminate":{}}"#,
                r#"{"expect_silence":600}"#,
                r#"{"close":{},"timeout_ms":100}"#,
                r#"{"exit":0}"#,
                r#"{"comment":"after"}"#,
            ],
            "main",
        )
        .unwrap();
        assert!(matches!(
            script.actions.as_slice(),
            [
                Action::Silence { line: 9, ms: 600 },
                Action::Close {
                    line: 10,
                    wait_ms: 100
                },
                Action::Exit { line: 11 }
            ]
        ));
    }

    fn raw_refusal(segments: &str) -> String {
        let step = format!(r#"{{"send_raw":{segments}}}"#);
        match script(&[r#"{"spawn":{"device":"d"}}"#, &step], "main") {
            Err(ScriptError::NotReplayable { line: 3, reason }) => reason,
            other => panic!("{segments}: {other:?}"),
        }
    }

    #[test]
    fn a_raw_request_line_an_app_may_send_is_judged_like_a_send() {
        let script = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"send_raw":[{"text":"{\"schema\":1,\"id\":\"2\",\"t\":\"subscribe\","},{"text":"\"x\":1}\n"}]}"#,
            ],
            "main",
        )
        .unwrap();
        let Action::Receive(receive) = &script.actions[0] else {
            panic!("a request line is a receive");
        };
        // The canonical form: `events` written with its default, the unknown key gone.
        assert_eq!(
            receive.pattern,
            json!({"schema": 1, "id": "$string", "t": "subscribe", "events": false})
        );
    }

    #[test]
    fn raw_bad_input_is_not_replayable_and_says_what_is_bad() {
        let prefix = "send_raw sends bad input on purpose, which a real app does not: ";
        for (segments, why) in [
            (r#"[{"text":"\n"}]"#, "not JSON"),
            (r#"[{"hex":"ff 0a"}]"#, "hex bytes"),
            (
                r#"[{"text":"{\"schema\":1,\"id\":\"2\",\"t\":\"ack\"}"}]"#,
                "not one `\\n`-terminated line",
            ),
            (
                r#"[{"text":"{\"schema\":1,\"id\":\"2\",\"t\":\"snapshot\",\"pad\":\""},{"text":"x","repeat":65536},{"text":"\"}\n"}]"#,
                "a line of 65581 bytes, over the 65536-byte cap",
            ),
            (
                r#"[{"text":"{\"schema\":2,\"id\":\"2\",\"t\":\"snapshot\"}\n"}]"#,
                "violates requests.schema.json: /schema: ",
            ),
        ] {
            let reason = raw_refusal(segments);
            assert!(reason.starts_with(&format!("{prefix}{why}")), "{reason}");
        }
    }

    #[test]
    fn a_second_spawn_is_not_replayable() {
        let respawn = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"close":{}}"#,
                r#"{"exit":0}"#,
                r#"{"spawn":{"device":"d"}}"#,
            ],
            "main",
        )
        .unwrap_err();
        assert_eq!(
            respawn.to_string(),
            "not replayable: line 5: the connection is spawned again; one replayer plays one \
             host process"
        );
    }

    #[test]
    fn another_connections_raw_bytes_do_not_matter() {
        let script = script(
            &[
                r#"{"spawn":{"device":"d"},"conn":"b"}"#,
                r#"{"send_raw":[{"text":"\n"}],"conn":"b"}"#,
                r#"{"spawn":{"device":"d"}}"#,
                HELLO,
            ],
            "main",
        );
        assert!(script.is_ok());
    }

    #[test]
    fn an_unknown_connection_is_named_with_the_ones_there_are() {
        let err = script(&[r#"{"spawn":{"device":"d"}}"#], "z").unwrap_err();
        assert_eq!(
            err.to_string(),
            "golden/sessions/x.ndjson: no connection `z` (the session has main)"
        );
    }

    #[test]
    fn a_frame_the_replayer_cannot_write_validly_is_a_load_error() {
        // `state` is a closed vocabulary: the sample string is not one of its tokens.
        let err = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"expect":{"schema":1,"id":"1","t":"edge","at_ms":"$int","pane":"%1","agent":"a","from":"idle","to":"$string","detail":null,"locator":"s:0.0","repo":null,"branch":null}}"#,
            ],
            "main",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("golden/sessions/x.ndjson:3: the frame the replayer would write"),
            "{err}"
        );
        let unknown_key = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"expect":{"schema":1,"id":"1","t":"ack","extra":"$string"}}"#,
            ],
            "main",
        )
        .unwrap_err();
        assert!(
            unknown_key
                .to_string()
                .contains("changes through the wire types"),
            "{unknown_key}"
        );
    }

    #[test]
    fn a_bad_pattern_or_a_bad_line_names_its_line() {
        let err = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"expect":{"schema":1,"id":"$ID","t":"ack"}}"#,
            ],
            "main",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("golden/sessions/x.ndjson:3: at /id:"),
            "{err}"
        );
        let err = script(&["{\"spawn\":"], "main").unwrap_err();
        assert!(err.to_string().contains(":2: not JSON"), "{err}");
        let err = script(&[r#"{"spawn":{}}"#], "main").unwrap_err();
        assert!(err.to_string().contains(":2: not a step"), "{err}");
    }

    #[test]
    fn a_session_send_that_is_not_a_valid_request_is_a_load_error() {
        // A concrete frame is refused by the kit's loader, before any replaying.
        let err = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"send":{"schema":1,"id":"1","t":"card"}}"#,
            ],
            "main",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("golden/sessions/x.ndjson:3: the frame does not decode"),
            "{err}"
        );
        // A frame with `${name}` in it is known only once the name is replaced.
        let err = script(
            &[
                r#"{"spawn":{"device":"d"}}"#,
                r#"{"send":{"schema":1,"id":"${sim_dir}","t":"card"}}"#,
            ],
            "main",
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "golden/sessions/x.ndjson:3: the session's frame violates requests.schema.json"
            ),
            "{err}"
        );
    }

    #[test]
    fn every_golden_session_loads_and_the_rule_splits_them_as_documented() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/sessions");
        let (requests, responses) = schemas();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        let mut refused = Vec::new();
        for file in &files {
            let session = load(file).unwrap();
            for conn in session.conns() {
                match super::script(&session, &conn, &requests, &responses) {
                    Ok(_) => {}
                    Err(ScriptError::NotReplayable { reason, .. })
                        if reason.starts_with("close_stdout closes") =>
                    {
                        let text = std::fs::read_to_string(file).unwrap();
                        assert!(text.contains("\"close_stdout\""), "{}", file.display());
                    }
                    Err(ScriptError::NotReplayable { reason, .. }) => {
                        assert!(reason.starts_with("send_raw sends bad input"), "{reason}");
                        refused.push(session.header.case.clone());
                    }
                    Err(other) => panic!("{}: {other}", file.display()),
                }
            }
        }
        // Only sessions whose client sends raw bytes (or closes its read end) are refused, and not
        // all of the former: a raw line
        // an app may send (subscribe without `events`, hello with an unknown key) is replayed.
        for case in &refused {
            let text = std::fs::read_to_string(dir.join(format!("{case}.ndjson"))).unwrap();
            assert!(text.contains("\"send_raw\""), "{case}");
        }
        for case in [
            "framing.empty-line",
            "framing.unterminated-eof",
            "handshake.downgrade",
        ] {
            assert!(refused.iter().any(|c| c == case), "{case} is bad input");
        }
        for case in [
            "subscribe.snapshots",
            "handshake.hello-scopes",
            "serve.connection-cap",
        ] {
            assert!(!refused.iter().any(|c| c == case), "{case} is replayable");
        }
    }
}
