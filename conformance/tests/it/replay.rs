//! `corral-sim replay` as a client team runs it: every replayable golden session against a
//! perfect client built from the session itself (its own ids and app name, reading the host's
//! frames and checking them against the session's expectations), and scripted broken clients
//! whose verdicts are asserted line by line.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use conformance::replay::script::replay_prebound;
use golden::clock::Window;
use golden::pattern::{self, Captures, Str};
use golden::session::{MAIN_CONN, Step, barrier_answer, barrier_request};
use golden::validate::FrameSchema;
use schema::{Response, decode_line, encode_line};
use serde_json::{Value, json};

use crate::common::{SIM, command};

fn golden(case: &str) -> PathBuf {
    sessions_dir().join(format!("{case}.ndjson"))
}

fn sessions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/sessions")
}

fn replay(args: &[&str]) -> assert_cmd::Command {
    let mut replay = assert_cmd::Command::from_std(command(SIM));
    replay.arg("replay").args(args).env_remove("CORRAL_SIM_DIR");
    replay
}

/// Every stdout line is a valid response frame in canonical form whose id is one the app chose
/// (or `"0"`); returns the frames.
fn check_frames(stdout: &str, app_ids: &[&str]) -> Vec<Value> {
    let responses = FrameSchema::generated("responses.schema.json").unwrap();
    stdout
        .lines()
        .map(|line| {
            let decoded = decode_line::<Response>(line).unwrap();
            assert_eq!(encode_line(&decoded).trim_end(), line, "not canonical");
            let frame: Value = serde_json::from_str(line).unwrap();
            responses.validate(&frame).unwrap();
            assert!(
                decoded.id == "0" || app_ids.contains(&decoded.id.as_str()),
                "id {} is not the app's: {line}",
                decoded.id
            );
            frame
        })
        .collect()
}

// ---- The perfect client ----

/// A client app following a session's script on one connection, with its own ids and name.
struct PerfectClient {
    captures: Captures,
    /// The session's ids → this client's.
    ids: BTreeMap<String, String>,
    sent: usize,
}

impl PerfectClient {
    fn new(session: &golden::session::Session) -> PerfectClient {
        PerfectClient {
            captures: replay_prebound(session).unwrap(),
            ids: BTreeMap::new(),
            sent: 0,
        }
    }

    /// The frame with this client's own id (and, in a hello, its own name, version and device).
    fn own(&mut self, mut frame: Value) -> String {
        self.sent += 1;
        let own_id = format!("app-{}", self.sent);
        let session_id = frame["id"].as_str().unwrap().to_owned();
        self.ids.insert(session_id, own_id.clone());
        frame["id"] = json!(own_id);
        if frame["t"] == "hello" {
            frame["app"] = json!("replay-test-app");
            frame["app_version"] = json!("7.7.7");
            frame["device"] = json!("SHA256:test-device");
        }
        format!("{frame}\n")
    }

    /// The pattern with the session's ids replaced by this client's, and every `${name}` bound on
    /// a connection this client does not see turned into a capture of that name.
    fn adapt(&self, pattern: &Value) -> Value {
        match pattern {
            Value::String(text) => match pattern::parse_str(text) {
                Ok(Str::Ref(name)) if !self.captures.contains_key(&name) => {
                    json!(format!("$any:{name}"))
                }
                _ => pattern.clone(),
            },
            Value::Array(items) => Value::Array(items.iter().map(|i| self.adapt(i)).collect()),
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| {
                        let value = match (key.as_str(), value.as_str()) {
                            ("id", Some(id)) if self.ids.contains_key(id) => json!(self.ids[id]),
                            _ => self.adapt(value),
                        };
                        (key.clone(), value)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn expect(&mut self, pattern: &Value, line: &str, at: &str) {
        let frame: Value = serde_json::from_str(line).unwrap();
        let pattern = self.adapt(pattern);
        // The replayer writes every `$now` as the pinned clock's time, not the wall clock's.
        if let Err(mismatch) = pattern::matches(&pattern, &frame, &mut self.captures, Window::ANY) {
            panic!("{at}: the replayer wrote {line}, which fails {pattern}: {mismatch}");
        }
    }
}

fn read_frame(stdout: &mut impl BufRead, at: &str) -> String {
    let mut line = String::new();
    let n = stdout.read_line(&mut line).unwrap();
    assert!(n > 0 && line.ends_with('\n'), "{at}: stdout ended");
    line.pop();
    line
}

/// Plays one connection of a session as a perfect client; returns (stdout lines, stderr, code,
/// frames sent).
fn play_perfectly(path: &Path, conn: &str) -> (Vec<String>, String, i32, usize) {
    let session = golden::session::load(path).unwrap();
    let mut child = command(SIM)
        .args(["replay", path.to_str().unwrap(), "--conn", conn])
        .env_remove("CORRAL_SIM_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let mut client = PerfectClient::new(&session);
    let mut frames = Vec::new();
    let send = |stdin: &mut Option<std::process::ChildStdin>, line: String| {
        stdin.as_mut().unwrap().write_all(line.as_bytes()).unwrap();
    };
    for located in &session.steps {
        let at = format!("{}:{}", path.display(), located.line);
        if located.conn() != conn {
            continue;
        }
        match &located.step.step {
            Step::Send(frame) => {
                let frame = pattern::instantiate(frame, &client.captures).unwrap();
                let line = client.own(frame);
                send(&mut stdin, line);
            }
            Step::SendRaw(raw) => {
                // Only a raw line an app may send is replayable; send it as written (a key left
                // to its default stays left out), with this client's own values.
                let line = client.own(serde_json::from_slice(raw.bytes()).unwrap());
                send(&mut stdin, line);
            }
            Step::Barrier(id) => {
                let line = client.own(barrier_request(id));
                send(&mut stdin, line);
                let got = read_frame(&mut stdout, &at);
                client.expect(&barrier_answer(id), &got, &at);
                frames.push(got);
            }
            Step::Expect(pattern) => {
                let got = read_frame(&mut stdout, &at);
                client.expect(pattern, &got, &at);
                frames.push(got);
            }
            Step::ExpectUnordered(patterns) => {
                // The replayer writes them in the order the session gives.
                for pattern in patterns {
                    let got = read_frame(&mut stdout, &at);
                    client.expect(pattern, &got, &at);
                    frames.push(got);
                }
            }
            Step::Repeat(repeat) => {
                // One iteration at a time, the counter bound for that iteration only.
                for n in repeat.from..=repeat.from + (repeat.times - 1) {
                    let saved = client.captures.clone();
                    client.captures.insert(repeat.counter.clone(), n.into());
                    let frame = pattern::instantiate(&repeat.send, &client.captures).unwrap();
                    let line = client.own(frame);
                    send(&mut stdin, line);
                    if let Some(expect) = &repeat.expect {
                        // The answer's id is this iteration's request id, which the client
                        // sent as its own.
                        let mut expect = expect.clone();
                        if let Some(id) = expect.get("id").and_then(Value::as_str) {
                            let id = pattern::instantiate_text(id, &client.captures).unwrap();
                            expect["id"] = Value::String(id);
                        }
                        let got = read_frame(&mut stdout, &at);
                        client.expect(&expect, &got, &at);
                        frames.push(got);
                    }
                    client.captures = saved;
                }
            }
            Step::Close(_) => drop(stdin.take()),
            Step::Exit(_) | Step::Kill(_) => break,
            Step::Spawn(_)
            | Step::Comment(_)
            | Step::ExpectSilence(_)
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
            | Step::ResumeReading(_)
            // A session that closes stdout is never replayed.
            | Step::CloseStdout(_) => {}
        }
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(
        rest,
        "",
        "{}: frames the session does not expect",
        path.display()
    );
    let code = child.wait().unwrap().code().unwrap_or(-1);
    let own_ids: Vec<String> = client.ids.values().cloned().collect();
    let own_ids: Vec<&str> = own_ids.iter().map(String::as_str).collect();
    check_frames(&frames.join("\n"), &own_ids);
    (frames, stderr.join().unwrap(), code, client.sent)
}

/// Every connection of every golden session that `--list` calls replayable.
fn replayable() -> Vec<(String, String)> {
    let listed = replay(&["--list", sessions_dir().to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(listed)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [case, conn, "replayable"] => Some(((*case).to_owned(), (*conn).to_owned())),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn every_replayable_golden_session_passes_a_perfect_client() {
    let cases = replayable();
    assert!(cases.len() >= 30, "{cases:?}");
    // A few at a time: the replayer keeps each step's time limit, and a hundred replayers at
    // once on two loaded cores can outrun them.
    let results: Vec<_> = cases
        .chunks(8)
        .flat_map(|chunk| {
            std::thread::scope(|scope| {
                let runs: Vec<_> = chunk
                    .iter()
                    .map(|(case, conn)| {
                        scope.spawn(move || (case, conn, play_perfectly(&golden(case), conn)))
                    })
                    .collect();
                runs.into_iter()
                    .map(|run| run.join().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (case, conn, (_, stderr, code, sent)) in results {
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(
            lines.last().copied(),
            Some(format!("{sent} passed, 0 failed").as_str()),
            "{case} {conn}: {stderr}"
        );
        assert_eq!(lines.len(), sent + 1, "{case} {conn}: {stderr}");
        assert!(
            lines[..sent]
                .iter()
                .all(|line| line.starts_with("PASS line ")),
            "{case} {conn}: {stderr}"
        );
        assert_eq!(code, 0, "{case} {conn}: {stderr}");
    }
}

#[test]
fn a_stream_carries_the_apps_subscribe_id_and_raw_sessions_replay_their_request_line() {
    // subscribe.snapshots' client sends a subscribe without `events`; an app writing `false`
    // means the same and passes too.
    let (frames, stderr, code, sent) = play_perfectly(&golden("subscribe.snapshots"), MAIN_CONN);
    assert_eq!((code, sent), (0, 3), "{stderr}");
    let ids: Vec<Value> = frames
        .iter()
        .map(|f| serde_json::from_str::<Value>(f).unwrap()["id"].clone())
        .collect();
    assert_eq!(ids, ["app-1", "app-2", "app-2", "app-2", "app-3"]);
    let explicit = "{\"schema\":1,\"id\":\"h\",\"t\":\"hello\",\"app\":\"a\",\"app_version\":\"1\",\"device\":\"d\"}\n\
                    {\"schema\":1,\"id\":\"s\",\"t\":\"subscribe\",\"events\":false,\"selector\":{\"session\":\"ops\",\"agent\":\"codex\"}}\n\
                    {\"schema\":1,\"id\":\"b\",\"t\":\"snapshot\",\"selector\":{\"session\":\"corral-kit-barrier\"}}\n";
    replay(&[golden("subscribe.snapshots").to_str().unwrap()])
        .write_stdin(explicit)
        .assert()
        .success()
        .stderr(
            "PASS line 1: hello (golden line 3)\n\
             PASS line 2: subscribe (golden line 5)\n\
             PASS line 3: snapshot (golden line 12)\n\
             3 passed, 0 failed\n",
        );
}

// ---- Broken clients ----

const SESSION: &str = "snapshot.selector-agent";
const HELLO: &str = r#"{"schema":1,"id":"h1","t":"hello","app":"test-app","app_version":"2.0","device":"SHA256:test"}"#;
const SNAPSHOT: &str = r#"{"schema":1,"id":"q1","t":"snapshot","selector":{"agent":"gemini"}}"#;
const WANT_SNAPSHOT: &str =
    r#"{"schema":1,"id":"q1","t":"snapshot","selector":{"agent":"gemini"}}"#;

/// Runs the session against these lines; returns (stdout, stderr, code).
fn against(lines: &[&str]) -> (String, String, i32) {
    let mut input = lines.join("\n");
    input.push('\n');
    let output = replay(&[golden(SESSION).to_str().unwrap()])
        .write_stdin(input)
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code().unwrap(),
    )
}

#[test]
fn a_wrong_t_fails_with_the_frame_that_was_expected() {
    let (stdout, stderr, code) =
        against(&[HELLO, r#"{"schema":1,"id":"q1","t":"card","pane":"%9"}"#]);
    assert_eq!(
        stderr,
        format!(
            "PASS line 1: hello (golden line 3)\n\
             FAIL line 2: expected a `snapshot` frame, received `card` (golden line 5); \
             expected {WANT_SNAPSHOT}\n\
             1 passed, 1 failed\n"
        )
    );
    assert_eq!(code, 1);
    // The script goes on: the answer still reaches the app, with the app's id.
    let frames = check_frames(&stdout, &["h1", "q1"]);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1]["t"], "snapshot");
}

#[test]
fn an_invalid_frame_fails_with_the_schema_path() {
    let (stdout, stderr, code) = against(&[
        HELLO,
        r#"{"schema":1,"id":7,"t":"snapshot","selector":{"agent":"gemini"}}"#,
    ]);
    assert_eq!(
        stderr,
        format!(
            "PASS line 1: hello (golden line 3)\n\
             FAIL line 2: the frame violates requests.schema.json: /id: 7 is not of type \
             \"string\" (golden line 5); expected {}\n\
             1 passed, 1 failed\n",
            r#"{"schema":1,"id":"$string","t":"snapshot","selector":{"agent":"gemini"}}"#
        )
    );
    assert_eq!(code, 1);
    // With no id of the app's to answer to, the answer keeps the session's.
    let session_id = sent_id(SESSION, 1);
    let frames = check_frames(&stdout, &["h1", &session_id]);
    assert_eq!(frames[1]["id"], session_id.as_str());
}

/// The id of a session's `index`-th `send` (from 0).
fn sent_id(case: &str, index: usize) -> String {
    let session = golden::session::load(&golden(case)).unwrap();
    session
        .steps
        .iter()
        .filter_map(|located| match &located.step.step {
            Step::Send(frame) => frame["id"].as_str().map(str::to_owned),
            _ => None,
        })
        .nth(index)
        .unwrap()
}

#[test]
fn a_missing_field_fails_whether_the_schema_or_the_session_requires_it() {
    let (_, stderr, code) = against(&[
        r#"{"schema":1,"id":"h1","t":"hello","app":"test-app","app_version":"2.0"}"#,
        r#"{"schema":1,"id":"q1","t":"snapshot"}"#,
    ]);
    assert_eq!(
        stderr,
        format!(
            "FAIL line 1: the frame violates requests.schema.json: /: \"device\" is a required \
             property (golden line 3); expected {}\n\
             FAIL line 2: the frame differs at /selector: expected `selector`, but the frame has \
             none (golden line 5); expected {WANT_SNAPSHOT}\n\
             0 passed, 2 failed\n",
            r#"{"schema":1,"id":"h1","t":"hello","app":"test-app","app_version":"2.0","device":"$string"}"#
        )
    );
    assert_eq!(code, 1);
}

#[test]
fn an_unexpected_extra_frame_fails_with_its_line_number() {
    let (stdout, stderr, code) = against(&[HELLO, SNAPSHOT, SNAPSHOT]);
    assert_eq!(
        stderr,
        "PASS line 1: hello (golden line 3)\n\
         PASS line 2: snapshot (golden line 5)\n\
         FAIL line 3: unexpected frame: the script ended at golden line 6; nothing more was \
         expected\n\
         2 passed, 1 failed\n"
    );
    assert_eq!(code, 1);
    assert_eq!(check_frames(&stdout, &["h1", "q1"]).len(), 2);
}

#[test]
fn an_early_end_of_input_names_the_pending_step() {
    let (stdout, stderr, code) = against(&[HELLO]);
    assert_eq!(
        stderr,
        "PASS line 1: hello (golden line 3)\n\
         FAIL: the app's input ended after line 1; golden line 5 (a `snapshot` frame) was \
         pending\n\
         1 passed, 1 failed\n"
    );
    assert_eq!(code, 1);
    let frames = check_frames(&stdout, &["h1"]);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["host"], "replay-host");
}

#[test]
fn a_line_that_is_not_a_frame_fails_and_the_script_goes_on() {
    let (_, stderr, code) = against(&["hello?", SNAPSHOT]);
    assert_eq!(
        stderr.lines().next().unwrap(),
        "FAIL line 1: the line is not JSON (expected value at line 1 column 1) (golden line 3); \
         expected {\"schema\":1,\"id\":\"$string\",\"t\":\"hello\",\"app\":\"$string\",\
         \"app_version\":\"$string\",\"device\":\"$string\"}"
    );
    assert!(stderr.ends_with("1 passed, 1 failed\n"), "{stderr}");
    assert_eq!(code, 1);
}

#[test]
fn the_report_holds_every_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    replay(&[
        golden(SESSION).to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ])
    .write_stdin(format!(
        "{HELLO}\n{{\"schema\":1,\"id\":\"q1\",\"t\":\"snapshot\"}}\n"
    ))
    .assert()
    .code(1);
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        report,
        json!({
            "session": golden(SESSION).display().to_string(),
            "case": SESSION,
            "conn": "main",
            "passed": 1,
            "failed": 1,
            "complete": true,
            "verdicts": [
                {"verdict": "pass", "line": 1, "golden_line": 3,
                 "message": "hello (golden line 3)"},
                {"verdict": "fail", "line": 2, "golden_line": 5,
                 "message": "the frame differs at /selector: expected `selector`, but the frame \
                             has none (golden line 5)",
                 "expected": serde_json::from_str::<Value>(WANT_SNAPSHOT).unwrap(),
                 "received": "{\"schema\":1,\"id\":\"q1\",\"t\":\"snapshot\"}"}
            ]
        })
    );
}

/// A client that keeps its end open and sends these lines; returns (stderr, code).
fn open_client(session: &str, conn: &str, lines: &str, scale: &str) -> (String, i32) {
    let mut child = command(SIM)
        .args(["replay", golden(session).to_str().unwrap(), "--conn", conn])
        .args(["--timeout-scale", scale])
        .env_remove("CORRAL_SIM_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(lines.as_bytes()).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let code = child.wait().unwrap().code().unwrap();
    drop(stdin);
    (stderr, code)
}

#[test]
fn an_app_that_never_sends_fails_when_its_wait_is_over() {
    let (stderr, code) = open_client(SESSION, MAIN_CONN, "", "0.02");
    assert_eq!(
        stderr,
        "FAIL: no frame within 100 ms before the app sent a line; golden line 3 (a `hello` \
         frame) was pending\n\
         0 passed, 1 failed\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn an_app_must_close_where_the_session_closes() {
    // serve.connection-cap, connection b: hello, then the client closes and the host exits 0.
    let hello = format!("{HELLO}\n");
    let (stderr, code) = open_client("serve.connection-cap", "b", &hello, "0.02");
    assert_eq!(
        stderr,
        "PASS line 1: hello (golden line 6)\n\
         FAIL: the app did not close its end within 100 ms (golden line 11)\n\
         1 passed, 1 failed\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn an_exit_step_ends_the_replay_with_the_verdict() {
    // revoke.next-request: the host answers scope-denied and exits 2; the replayer stops there
    // and exits with its own verdict.
    let lines = format!(
        "{HELLO}\n{}\n{}\n",
        r#"{"schema":1,"id":"a","t":"snapshot","selector":{"agent":"opencode"}}"#,
        r#"{"schema":1,"id":"b","t":"snapshot","selector":{"agent":"opencode"}}"#
    );
    let output = replay(&[golden("revoke.next-request").to_str().unwrap()])
        .write_stdin(lines)
        .assert()
        .success()
        .get_output()
        .clone();
    let frames = check_frames(
        &String::from_utf8(output.stdout).unwrap(),
        &["h1", "a", "b"],
    );
    assert_eq!(frames.last().unwrap()["code"], "scope-denied");
    assert_eq!(frames.last().unwrap()["id"], "b");
}

// ---- Listing and refusals ----

#[test]
fn list_names_every_connection_and_why_one_is_not_replayable() {
    let output = replay(&["--list", sessions_dir().to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    // `<case>  <conn>  <verdict>`, padded into columns.
    let has = |case: &str, conn: &str, verdict: &str| {
        lines.iter().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 2
                && fields[..2] == [case, conn]
                && fields[2..].join(" ").starts_with(verdict)
        })
    };
    assert!(has("subscribe.snapshots", "main", "replayable"), "{stdout}");
    assert!(has("serve.connection-cap", "c", "replayable"), "{stdout}");
    assert!(
        has(
            "framing.empty-line",
            "main",
            "not replayable: line 5: send_raw sends bad input on purpose, which a real app does \
             not: not JSON"
        ),
        "{stdout}"
    );
    let files = std::fs::read_dir(sessions_dir()).unwrap().count();
    let main_replayable = lines
        .iter()
        .filter(|line| line.split_whitespace().nth(1) == Some("main"))
        .filter(|line| line.split_whitespace().nth(2) == Some("replayable"))
        .count();
    assert_eq!(
        lines.last().copied(),
        Some(
            format!("{main_replayable} of {files} sessions replayable (connection main)").as_str()
        )
    );
}

#[test]
fn a_session_that_cannot_be_replayed_is_refused_in_one_line() {
    replay(&[golden("framing.empty-line").to_str().unwrap()])
        .write_stdin("")
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "corral-sim replay: not replayable: line 5: send_raw sends bad input on purpose, \
             which a real app does not: not JSON\n",
        );
    let missing = replay(&["no-such-session.ndjson"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(missing.stderr).unwrap(),
        "corral-sim replay: no-such-session.ndjson: No such file or directory (os error 2)\n"
    );
    let conn = golden(SESSION);
    replay(&[conn.to_str().unwrap(), "--conn", "b"])
        .assert()
        .code(2)
        .stderr(format!(
            "corral-sim replay: {}: no connection `b` (the session has main)\n",
            conn.display()
        ));
    replay(&[conn.to_str().unwrap(), "--timeout-scale", "0"])
        .assert()
        .code(2)
        .stderr("corral-sim replay: --timeout-scale must be a positive number, not 0\n");
    replay(&[conn.to_str().unwrap(), conn.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(
            "corral-sim replay: give one session to replay (several are for --list and --app)\n",
        );
    replay(&[]).assert().code(2);
}

// ---- A directory of sessions against an app the replayer starts ----

/// The example app of golden/README.md ("Wiring an app to the replayer"), as written there.
fn readme_app(dir: &Path) -> PathBuf {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/README.md"))
            .unwrap();
    let start = readme
        .find("#!/bin/sh\n# app.sh")
        .expect("golden/README.md shows app.sh");
    let script = &readme[start..];
    let script = &script[..script.find("```").unwrap()];
    let path = dir.join("app.sh");
    std::fs::write(&path, script).unwrap();
    path
}

/// A dir holding copies of these golden sessions.
fn sessions_copy(dir: &Path, cases: &[&str]) -> PathBuf {
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    for case in cases {
        std::fs::copy(golden(case), sessions.join(format!("{case}.ndjson"))).unwrap();
    }
    sessions
}

#[test]
fn a_directory_against_an_app_is_one_report_with_a_line_per_case() {
    let tmp = tempfile::tempdir().unwrap();
    let app = readme_app(tmp.path());
    let sessions = sessions_copy(
        tmp.path(),
        &[
            "handshake.default-interval",
            "handshake.second-hello",
            "handshake.request-before-hello",
            "framing.empty-line",
        ],
    );
    let report = tmp.path().join("report.json");
    let out = replay(&[
        "--app",
        &format!("sh {}", app.display()),
        sessions.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("SKIP  framing.empty-line: not replayable: line "),
        "{stdout}"
    );
    assert_eq!(lines[1], "PASS  handshake.default-interval", "{stdout}");
    assert_eq!(lines[2], "FAIL  handshake.request-before-hello", "{stdout}");
    assert!(
        lines[3].starts_with(
            "    FAIL: the app's input ended before the app sent a line; golden line 3"
        ),
        "{stdout}"
    );
    assert_eq!(lines[4], "    the app's stderr ends:");
    assert_eq!(
        lines[5],
        "      app.sh: no flow for handshake.request-before-hello"
    );
    assert_eq!(lines[6], "PASS  handshake.second-hello", "{stdout}");
    assert_eq!(lines[7], "2 passed, 1 failed, 1 skipped");
    assert_eq!(lines.len(), 8, "{stdout}");

    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        (&report["passed"], &report["failed"], &report["skipped"]),
        (&json!(2), &json!(1), &json!(1))
    );
    let grades: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["grade"].as_str().unwrap())
        .collect();
    assert_eq!(grades, ["skipped", "pass", "fail", "pass"]);
    let passed = &report["cases"][1];
    assert_eq!(passed["outcome"]["passed"], 2, "{passed}");
    assert_eq!(passed["app"]["exit"], 0);
    assert_eq!(passed["app"]["killed"], false);

    // Only the passing ones: exit 0.
    std::fs::remove_file(sessions.join("handshake.request-before-hello.ndjson")).unwrap();
    let out = replay(&[
        "--app",
        &format!("sh {}", app.display()),
        sessions.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.ends_with("2 passed, 0 failed, 1 skipped\n"),
        "{stdout}"
    );
}

#[test]
fn the_app_is_told_its_session_and_every_connection_is_a_case() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = sessions_copy(tmp.path(), &["handshake.two-devices"]);
    let session = sessions.join("handshake.two-devices.ndjson");
    let report = tmp.path().join("report.json");
    let out = replay(&[
        "--app",
        "env | grep '^CORRAL_REPLAY_' | sort >&2",
        session.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        "--timeout-scale",
        "0.2",
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let loaded = golden::session::load(&session).unwrap();
    let conns = loaded.conns();
    assert!(conns.len() >= 2, "{conns:?}");
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), conns.len());
    for (case, conn) in cases.iter().zip(&conns) {
        let device = loaded
            .steps
            .iter()
            .filter(|s| s.conn() == conn)
            .find_map(|s| match &s.step.step {
                Step::Spawn(spawn) => Some(spawn.device.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(case["conn"], conn.as_str());
        assert_eq!(
            case["app"]["stderr"],
            format!(
                "CORRAL_REPLAY_CASE=handshake.two-devices\nCORRAL_REPLAY_CONN={conn}\n\
                 CORRAL_REPLAY_DEVICE={device}\nCORRAL_REPLAY_SESSION={}\n",
                session.display()
            )
        );
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("FAIL  handshake.two-devices\n"), "{stdout}");
    assert!(
        stdout.contains(&format!("FAIL  handshake.two-devices@{}\n", conns[1])),
        "{stdout}"
    );

    // One connection only; a session without it is skipped.
    let out = replay(&[
        "--app",
        "true",
        session.to_str().unwrap(),
        "--conn",
        "nobody",
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout,
        "SKIP  handshake.two-devices@nobody: the session has no connection `nobody`\n\
         0 passed, 0 failed, 1 skipped\n"
    );
}

#[test]
fn an_app_that_hangs_is_killed_with_its_group_and_a_broken_session_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = sessions_copy(tmp.path(), &["handshake.default-interval"]);
    std::fs::write(sessions.join("broken.ndjson"), "{not json\n").unwrap();
    let report = tmp.path().join("report.json");
    let out = replay(&[
        "--app",
        "sleep 3071 & wait",
        sessions.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        "--timeout-scale",
        "0.2",
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.starts_with("ERROR broken: "), "{stdout}");
    assert!(
        stdout.contains("FAIL  handshake.default-interval\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("0 passed, 2 failed, 0 skipped\n"),
        "{stdout}"
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["cases"][1]["app"]["killed"], true);
    // The app's own child went with it.
    let sleeping = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|cmdline| cmdline == b"sleep\x003071\x00");
    assert!(!sleeping, "the app's child is still running");
}
