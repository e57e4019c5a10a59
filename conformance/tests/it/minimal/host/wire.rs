//! Lines in and frames out, as docs/protocol.md "Framing", "Envelope" and "Frames" say: a request
//! line is checked in the order of "Malformed lines" (an integer `schema` other than 1 before
//! anything else, a string `id`, a known `t`, a body of the right shape), and every answer is one
//! compact JSON object whose keys are in the documented order (`serde_json`'s map keeps the order
//! they are inserted in).

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The id of an answer whose request id cannot be recovered.
pub const NO_ID: &str = "0";

/// An error frame.
pub fn error(id: &str, code: &str, message: &str) -> Value {
    json!({"schema": 1, "id": id, "t": "error", "code": code, "message": message})
}

/// A frame: the envelope, then `body`'s keys in order.
pub fn frame(id: &str, t: &str, body: Vec<(&str, Value)>) -> Value {
    let mut out = Map::new();
    out.insert("schema".into(), json!(1));
    out.insert("id".into(), json!(id));
    out.insert("t".into(), json!(t));
    for (key, value) in body {
        out.insert(key.into(), value);
    }
    Value::Object(out)
}

/// A request line's verdict.
#[derive(Debug)]
pub enum Line {
    /// A request to handle: its id, `t` and body (the line's other keys).
    Request {
        id: String,
        t: String,
        body: Map<String, Value>,
    },
    /// A line answered with an error frame and nothing else.
    Refused(Value),
}

/// The request frames this host knows.
const FRAMES: [&str; 8] = [
    "hello",
    "snapshot",
    "subscribe",
    "card",
    "window",
    "event",
    "dispatch",
    "receipts",
];

/// Reads one line (without its newline), in the order "Malformed lines" gives.
pub fn read(bytes: &[u8]) -> Line {
    let bad = |id: &str, why: &str| Line::Refused(error(id, "bad-request", why));
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bad(NO_ID, "the line is not UTF-8");
    };
    if text.trim().is_empty() {
        return bad(NO_ID, "the line is empty");
    }
    let Ok(raw) = serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(text) else {
        return bad(NO_ID, "the line is not a JSON object");
    };
    let id = raw
        .get("id")
        .and_then(|value| serde_json::from_str::<Value>(value.get()).ok())
        .and_then(|value| value.as_str().map(str::to_owned));
    let shown = id.clone().unwrap_or_else(|| NO_ID.to_owned());
    match raw.get("schema").map(|value| value.get().trim()) {
        Some("1") => {}
        Some(number) if is_integer(number) => {
            return Line::Refused(error(
                &shown,
                "unsupported-schema",
                "this host speaks schema 1 only",
            ));
        }
        _ => return bad(&shown, "the line has no integer `schema`"),
    }
    let Some(id) = id else {
        return bad(NO_ID, "the line has no string `id`");
    };
    let mut body = Map::new();
    for (key, value) in &raw {
        if key == "schema" || key == "id" {
            continue;
        }
        match serde_json::from_str::<Value>(value.get()) {
            Ok(value) => {
                body.insert(key.clone(), value);
            }
            Err(_) => return bad(&id, "a value does not read"),
        }
    }
    let t = match body.remove("t") {
        Some(Value::String(t)) if FRAMES.contains(&t.as_str()) => t,
        _ => return bad(&id, "`t` is missing or names no request"),
    };
    if let Err(why) = check_body(&t, &body) {
        return bad(&id, &why);
    }
    Line::Request { id, t, body }
}

/// A JSON integer as written: digits, with an optional minus.
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// What a body key may hold.
#[derive(Debug, Clone, Copy)]
enum Kind {
    String,
    /// A non-empty string (a token of an open vocabulary).
    Token,
    Bool,
    /// A whole number of at least 0.
    Count,
    Selector,
    Budget,
    Binder,
    Answers,
}

/// The body's keys by request: each required or not, and what it holds. Absent or `null` is the
/// same for an optional key; unknown keys are ignored.
fn keys(t: &str) -> &'static [(&'static str, bool, Kind)] {
    match t {
        "hello" => &[
            ("app", true, Kind::String),
            ("app_version", true, Kind::String),
            ("device", true, Kind::String),
        ],
        "snapshot" => &[("selector", false, Kind::Selector)],
        "subscribe" => &[
            ("events", false, Kind::Bool),
            ("selector", false, Kind::Selector),
        ],
        "card" => &[("pane", true, Kind::String)],
        "window" => &[
            ("pane", true, Kind::String),
            ("last", false, Kind::Count),
            ("before", false, Kind::String),
            ("budget", false, Kind::Budget),
        ],
        "event" => &[("pane", true, Kind::String), ("cursor", true, Kind::String)],
        "dispatch" => &[
            ("slot", true, Kind::String),
            ("host", true, Kind::String),
            ("pane", true, Kind::String),
            ("action", true, Kind::Token),
            ("binder", true, Kind::Binder),
            ("text", false, Kind::String),
            ("answers", false, Kind::Answers),
        ],
        "receipts" => &[
            ("slot", false, Kind::String),
            ("since_ms", false, Kind::Count),
        ],
        _ => &[],
    }
}

fn check_body(t: &str, body: &Map<String, Value>) -> Result<(), String> {
    for (key, required, kind) in keys(t) {
        match body.get(*key) {
            None | Some(Value::Null) if *required => {
                return Err(format!("`{key}` is required"));
            }
            None | Some(Value::Null) => {}
            Some(value) if !holds(*kind, value) => {
                return Err(format!("`{key}` is not what it must be"));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn holds(kind: Kind, value: &Value) -> bool {
    let count = |value: &Value| value.is_u64();
    match kind {
        Kind::String => value.is_string(),
        Kind::Token => value.as_str().is_some_and(|text| !text.is_empty()),
        Kind::Bool => value.is_boolean(),
        Kind::Count => count(value),
        Kind::Selector => value.as_object().is_some_and(|selector| {
            selector.iter().all(|(key, value)| match key.as_str() {
                "session" | "repo" | "branch" | "agent" => value.is_null() || value.is_string(),
                "state" => {
                    value.is_null()
                        || value.as_array().is_some_and(|tokens| {
                            tokens
                                .iter()
                                .all(|token| token.as_str().is_some_and(|t| !t.is_empty()))
                        })
                }
                _ => true,
            })
        }),
        Kind::Budget => value.as_object().is_some_and(|budget| {
            ["header_bytes", "read_bytes", "frame_bytes"]
                .iter()
                .all(|key| budget.get(*key).is_none_or(|v| v.is_null() || count(v)))
        }),
        Kind::Binder => value.as_object().is_some_and(|binder| {
            binder.get("expect_episode_ms").is_some_and(count)
                && binder
                    .get("expect_permission_request")
                    .is_none_or(|v| v.is_null() || v.is_string())
        }),
        Kind::Answers => value.as_array().is_some_and(|answers| {
            answers.iter().all(|answer| {
                answer
                    .as_array()
                    .is_some_and(|labels| labels.iter().all(Value::is_string))
            })
        }),
    }
}
