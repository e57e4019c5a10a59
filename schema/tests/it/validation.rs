//! The committed JSON Schemas are useful to a validator: the example frames of the spec and of
//! wire-details validate, every broken frame is rejected by the schema *and* by the decoder, and
//! the Rust samples of every variant validate too.

use schema::{DecodeError, Envelope, Request, Response, decode_line, encode_line};
use serde::Deserialize;
use serde_json::Value;

use crate::common::{data, data_lines, errors, validator};
use crate::round_trip;

fn assert_valid(file: &str, schema_file: &str) {
    let v = validator(schema_file);
    for (n, line) in data_lines(file).iter().enumerate() {
        let instance: Value = serde_json::from_str(line).unwrap();
        let errs = errors(&v, &instance);
        assert!(
            errs.is_empty(),
            "{file}:{} against {schema_file}: {errs:#?}",
            n + 1
        );
    }
}

#[test]
fn example_requests_validate() {
    assert_valid("requests.ndjson", "requests.schema.json");
}

#[test]
fn example_responses_validate() {
    assert_valid("responses.ndjson", "responses.schema.json");
}

#[test]
fn example_local_documents_validate() {
    assert_valid("ls.json", "ls.schema.json");
    assert_valid("notify-payload.json", "notify-payload.schema.json");
    assert_valid("notify-log.ndjson", "notify-log-line.schema.json");
    assert_valid("transition-ring.json", "transition-ring.schema.json");
    assert_valid("device-list.json", "device-list.schema.json");
    for (file, schema_file) in [
        ("devices.toml", "device-store.schema.json"),
        ("config.toml", "config.schema.json"),
    ] {
        let instance: Value = toml::from_str(&data(file)).unwrap();
        let errs = errors(&validator(schema_file), &instance);
        assert!(errs.is_empty(), "{file}: {errs:#?}");
    }
}

#[test]
fn every_sampled_variant_validates() {
    let requests = validator("requests.schema.json");
    for request in round_trip::requests() {
        let value: Value =
            serde_json::from_str(&encode_line(&Envelope::new("1", request))).unwrap();
        let errs = errors(&requests, &value);
        assert!(errs.is_empty(), "{value}: {errs:#?}");
    }
    let responses = validator("responses.schema.json");
    for response in round_trip::responses() {
        let value: Value =
            serde_json::from_str(&encode_line(&Envelope::new("1", response))).unwrap();
        let errs = errors(&responses, &value);
        assert!(errs.is_empty(), "{value}: {errs:#?}");
    }
}

#[derive(Deserialize)]
struct Broken {
    direction: String,
    why: String,
    decode: String,
    frame: Value,
}

fn decode_class(err: &DecodeError) -> &'static str {
    match err {
        DecodeError::Unaddressed { .. } => "unaddressed",
        DecodeError::UnsupportedSchema { .. } => "unsupported-schema",
        DecodeError::BadFrame { .. } => "bad-frame",
    }
}

#[test]
fn broken_frames_are_rejected_by_the_schema_and_the_decoder() {
    let requests = validator("requests.schema.json");
    let responses = validator("responses.schema.json");
    let cases = data_lines("broken.ndjson");
    assert!(cases.len() >= 25, "{} broken cases", cases.len());
    for line in cases {
        let case: Broken = serde_json::from_str(&line).unwrap();
        let text = case.frame.to_string();
        let (schema_ok, decoded) = match case.direction.as_str() {
            "request" => (
                requests.is_valid(&case.frame),
                decode_line::<Request>(&text).map(|_| ()),
            ),
            "response" => (
                responses.is_valid(&case.frame),
                decode_line::<Response>(&text).map(|_| ()),
            ),
            other => panic!("direction {other}"),
        };
        assert!(
            !schema_ok,
            "the schema accepts a frame with {}: {text}",
            case.why
        );
        match decoded {
            Ok(()) => panic!("the decoder accepts a frame with {}: {text}", case.why),
            Err(err) => assert_eq!(decode_class(&err), case.decode, "{}: {err}", case.why),
        }
    }
}

#[test]
fn an_informational_card_with_options_is_rejected_at_the_card() {
    let frame: Value = serde_json::json!({
        "schema": 1, "id": "6", "t": "card", "card": "informational",
        "detail": "permission", "headline": "Permission",
        "options": [{"kind": "allow-once", "name": "Yes"}]
    });
    let errs = errors(&validator("responses.schema.json"), &frame);
    assert!(!errs.is_empty());
    let err = decode_line::<Response>(&frame.to_string()).unwrap_err();
    assert!(err.to_string().contains("cannot carry `options`"), "{err}");
}
