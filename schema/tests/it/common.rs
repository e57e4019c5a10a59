//! Shared helpers: test data, the committed schemas, and validators built from them.

use std::path::PathBuf;

use serde_json::Value;

/// `schema/tests/data/<name>`.
pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The text of a test data file.
pub fn data(name: &str) -> String {
    std::fs::read_to_string(data_path(name)).unwrap_or_else(|err| panic!("{name}: {err}"))
}

/// The non-empty lines of an NDJSON test data file.
pub fn data_lines(name: &str) -> Vec<String> {
    data(name)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// A validator for a committed schema file under `schema/json/`.
pub fn validator(file: &str) -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("json")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{file}: {err}"));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|err| panic!("{file} is not a schema: {err}"))
}

/// The validation errors of an instance, one line each.
pub fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|err| format!("{} at {}", err, err.instance_path()))
        .collect()
}
