//! The frames of `herd`, the disguised host of the kit's test that it judges any host
//! (`conformance/tests/it/herd/`): corral's frames as another host would write them, a key of its
//! own on every frame, its version under `herd_version`, its own error messages. Run as
//! `herd_filter <host command...>`; it passes stdin and stderr through, and behaves as a filter
//! between a client and a host must (the kit's own wrappers' [`forward`]).

use conformance::selftest::forward;
use serde_json::{Map, Value};

/// One of corral's lines as herd writes it.
fn as_herd(line: &str) -> String {
    let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(line) else {
        return line.to_owned();
    };
    let error = frame.get("t").and_then(Value::as_str) == Some("error");
    let mut out = Map::new();
    out.insert("x_herd".to_owned(), Value::from(1));
    for (key, value) in frame {
        match (key.as_str(), value) {
            ("tool_version", value) => {
                out.insert("herd_version".to_owned(), value);
            }
            ("message", Value::String(text)) if error => {
                out.insert(key, Value::String(format!("herd could not: {text}")));
            }
            (_, value) => {
                out.insert(key, value);
            }
        }
    }
    Value::Object(out).to_string()
}

fn main() {
    let command: Vec<String> = std::env::args().skip(1).collect();
    match forward(&command, as_herd) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("herd_filter: {err:#}");
            std::process::exit(1);
        }
    }
}
