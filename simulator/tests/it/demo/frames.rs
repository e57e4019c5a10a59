//! golden/README.md's worked example (an approval, its repeat and a question answer, as the
//! frames an app sends and gets) kept true: every frame of the demo section is in canonical form
//! and valid against the committed schemas, and its requests, sent in order to a live demo of the
//! seed the section names, get the answers it shows. Only what a live fleet picks afresh is set
//! aside: times, paths, the parked request's id, the host's name and version. What the doc's
//! later requests quote of them (a binder, a slot) is quoted from the live answers instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use golden::FrameSchema;
use serde_json::{Value, json};

use super::{Client, Demo};

/// The keys whose values a live fleet picks afresh.
const VOLATILE: &[&str] = &[
    "host",
    "tool_version",
    "since_ms",
    "episode_ms",
    "stamped_at_ms",
    "context_at_ms",
    "at_ms",
    "expect_episode_ms",
    "transcript",
    "worktree",
    "server",
    "permission_request",
    "expect_permission_request",
    "option_id",
];

/// The demo the section's frames come from (it says so above them).
const ARGS: [&str; 4] = ["--seed", "3", "--panes", "4"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The section "For app developers: the demo fleet" of golden/README.md.
fn section() -> String {
    let text = std::fs::read_to_string(root().join("golden/README.md")).unwrap();
    let start = text
        .find("\n## For app developers: the demo fleet\n")
        .expect("golden/README.md has the demo section");
    let rest = &text[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |end| end + 3);
    rest[..end].to_owned()
}

/// The section's frames, in order: `(sent, line)`, `→` lines sent and `←` lines received.
fn frames() -> Vec<(bool, String)> {
    section()
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            if let Some(sent) = line.strip_prefix("→ ") {
                Some((true, sent.to_owned()))
            } else {
                line.strip_prefix("← ")
                    .map(|received| (false, received.to_owned()))
            }
        })
        .collect()
}

/// The section's frames as request and answer pairs, each answer carrying its request's id.
fn exchanges() -> Vec<(String, String)> {
    let frames = frames();
    assert!(
        frames.len() >= 14,
        "the worked example is gone: {frames:#?}"
    );
    frames
        .chunks(2)
        .map(|pair| {
            let [(true, sent), (false, received)] = pair else {
                panic!("a → frame and its ← answer, in turn: {pair:#?}");
            };
            let (a, b): (Value, Value) = (
                serde_json::from_str(sent).unwrap(),
                serde_json::from_str(received).unwrap(),
            );
            assert_eq!(a["id"], b["id"], "{sent}\n{received}");
            (sent.clone(), received.clone())
        })
        .collect()
}

#[test]
fn every_frame_of_the_demo_section_is_canonical_and_valid() {
    let schemas = root().join("schema/json");
    let requests = FrameSchema::load(&schemas, "requests.schema.json").unwrap();
    let responses = FrameSchema::load(&schemas, "responses.schema.json").unwrap();
    for (sent, received) in exchanges() {
        let request = schema::decode_line::<schema::Request>(&sent)
            .unwrap_or_else(|e| panic!("{sent}: {e:?}"));
        assert_eq!(schema::encode_line(&request), format!("{sent}\n"));
        requests
            .validate(&serde_json::from_str(&sent).unwrap())
            .unwrap_or_else(|e| panic!("{sent}: {e}"));
        let response = schema::decode_line::<schema::Response>(&received)
            .unwrap_or_else(|e| panic!("{received}: {e:?}"));
        assert_eq!(schema::encode_line(&response), format!("{received}\n"));
        responses
            .validate(&serde_json::from_str(&received).unwrap())
            .unwrap_or_else(|e| panic!("{received}: {e}"));
    }
    // What the section's prose walks through is there: a permission card approved and the
    // approval repeated, a question card answered.
    let received: Vec<Value> = exchanges()
        .iter()
        .map(|(_, received)| serde_json::from_str(received).unwrap())
        .collect();
    let has = |t: &str, key: &str, value: Value| {
        received
            .iter()
            .any(|frame| frame["t"] == t && frame[key] == value)
    };
    assert!(has("card", "card", json!("permission")));
    assert!(has("card", "card", json!("question")));
    assert!(has("receipt", "cached", json!(true)));
    assert!(has("receipt", "action", json!("question_reply")));
    // And how to run it from a checkout, here and in the README.
    let run = "cargo run -p conformance --bin corral-sim -- demo";
    assert!(section().contains(run));
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains(run));
}

/// Every value of a volatile key in `doc`, and the value `live` has there: what to quote instead
/// of it from now on.
fn learn(doc: &Value, live: &Value, quotes: &mut Vec<(Value, Value)>) {
    match (doc, live) {
        (Value::Object(doc), Value::Object(live)) => {
            for (key, value) in doc {
                let Some(other) = live.get(key) else {
                    continue;
                };
                if !VOLATILE.contains(&key.as_str()) {
                    learn(value, other, quotes);
                } else if (value.is_string() || value.is_u64()) && value != other {
                    // The latest answer wins: a dispatch quotes the card it answers.
                    quotes.retain(|(seen, _)| seen != value);
                    quotes.push((value.clone(), other.clone()));
                }
            }
        }
        (Value::Array(doc), Value::Array(live)) => {
            for (value, other) in doc.iter().zip(live) {
                learn(value, other, quotes);
            }
        }
        _ => {}
    }
}

/// A doc line with what it quotes of the doc's answers replaced by the live ones: a number
/// wherever its digits are (inside a slot too), a string where it is a whole JSON string.
fn quote(line: &str, quotes: &[(Value, Value)]) -> String {
    let mut line = line.to_owned();
    for (doc, live) in quotes {
        line = match (doc, live) {
            (Value::Number(doc), live) => {
                let live = live.as_str().map_or(live.to_string(), str::to_owned);
                line.replace(&doc.to_string(), &live)
            }
            (doc, live) => line.replace(&doc.to_string(), &live.to_string()),
        };
    }
    line
}

/// `frame` with every volatile value set to null.
fn normalized(frame: &Value) -> Value {
    match frame {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = if VOLATILE.contains(&key.as_str()) {
                        Value::Null
                    } else {
                        normalized(value)
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// Asks for snapshots (ids the doc does not use) until `pane` is blocked on `detail`.
fn wait_blocked(client: &mut Client, pane: &str, detail: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    for n in 1.. {
        let id = format!("wait-{n}");
        client.send_line(
            &json!({"schema":1,"id":id,"t":"snapshot","selector":{"state":["blocked"]}})
                .to_string(),
        );
        let (snapshot, _) = client.answer(&id);
        let blocked = snapshot["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|agent| agent["pane"] == pane && agent["detail"] == detail);
        if blocked {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{pane} did not block on a {detail} in time"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_demo_sections_requests_get_its_answers_from_a_live_demo() {
    let tmp = tempfile::tempdir().unwrap();
    let mut demo = Demo::start(tmp.path(), &ARGS);
    let banner = demo.banner();
    let mut client = Client::connect(banner.script.to_str().unwrap());
    let mut quotes = Vec::new();
    for (sent, received) in exchanges() {
        let doc: Value = serde_json::from_str(&received).unwrap();
        // The fleet the answer shows, first: a story moves at its own pace.
        match doc["t"].as_str().unwrap() {
            "snapshot" => {
                for agent in doc["agents"].as_array().unwrap() {
                    let (pane, detail) = (agent["pane"].as_str().unwrap(), &agent["detail"]);
                    wait_blocked(&mut client, pane, detail.as_str().unwrap_or_default());
                }
            }
            "card" => wait_blocked(
                &mut client,
                doc["pane"].as_str().unwrap(),
                doc["card"].as_str().unwrap(),
            ),
            _ => {}
        }
        let line = quote(&sent, &quotes);
        client.send_line(&line);
        let id = doc["id"].as_str().unwrap();
        let (mut live, _) = client.answer(id);
        if doc["t"] == "snapshot" {
            // Other panes may have blocked meanwhile; the doc's are the ones it shows.
            let panes: Vec<&Value> = doc["agents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| &a["pane"])
                .collect();
            let shown: Vec<Value> = live["agents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| panes.contains(&&a["pane"]))
                .cloned()
                .collect();
            live["agents"] = Value::Array(shown);
        }
        learn(&doc, &live, &mut quotes);
        let expected: Value = serde_json::from_str(&quote(&received, &quotes)).unwrap();
        assert_eq!(
            normalized(&live),
            normalized(&expected),
            "golden/README.md's answer to\n  → {line}\nis not what a live demo ({ARGS:?}) answers:\n  \
             ← {live}"
        );
    }
    assert_eq!(client.close(), 0);
    demo.signal(rustix::process::Signal::INT);
    let (code, _, stderr) = demo.end();
    assert_eq!(code, 0, "{stderr}");
    assert!(!banner.dir.exists());
}

#[test]
fn quoting_replaces_numbers_inside_slots_and_whole_strings_only() {
    let quotes = vec![(json!(17), json!(42)), (json!("req-a"), json!("req-b"))];
    assert_eq!(
        quote(
            r#"{"slot":"%0:17:approve","binder":{"expect_episode_ms":17,"expect_permission_request":"req-a"},"x":"req-ab"}"#,
            &quotes
        ),
        r#"{"slot":"%0:42:approve","binder":{"expect_episode_ms":42,"expect_permission_request":"req-b"},"x":"req-ab"}"#
    );
    let mut learned = Vec::new();
    learn(
        &json!({"t":"card","pane":"%0","binder":{"expect_episode_ms":17}}),
        &json!({"t":"card","pane":"%9","binder":{"expect_episode_ms":42}}),
        &mut learned,
    );
    assert_eq!(
        learned,
        [(json!(17), json!(42))],
        "only volatile keys are learned"
    );
}
