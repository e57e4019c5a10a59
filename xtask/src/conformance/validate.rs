//! Schema validation of every frame, both directions, against the committed `schema/json/`
//! files (through `golden::validate`, which narrows a `oneOf` failure to the branch the frame's own
//! tag picks), and of local documents such as the config file.

use std::path::Path;

use serde_json::Value;

/// Validators for one direction of the wire, read from a committed file.
#[derive(Debug)]
pub struct FrameSchema(golden::validate::FrameSchema);

fn read(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))
}

fn compile(schema: &Value, what: &str) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|err| format!("{what} is not a schema: {err}"))
}

impl FrameSchema {
    /// Loads `schema/json/<file>` and prepares a validator per tag.
    pub fn load(dir: &Path, file: &str) -> Result<FrameSchema, String> {
        golden::validate::FrameSchema::new(file, &read(&dir.join(file))?).map(FrameSchema)
    }

    /// Every tag this direction knows: `t` values, and `t/key=tag` for tagged bodies.
    pub fn variants(&self) -> Vec<String> {
        self.0.variants()
    }

    /// Validates one frame; the error lists each violation with its path.
    pub fn validate(&self, frame: &Value) -> Result<(), String> {
        self.0.validate(frame)
    }
}

/// A plain validator for a local document (the config file).
pub fn document(dir: &Path, file: &str) -> Result<jsonschema::Validator, String> {
    compile(&read(&dir.join(file))?, file)
}

/// Validates a local document, one line per violation.
pub fn check_document(
    validator: &jsonschema::Validator,
    file: &str,
    value: &Value,
) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("violates {file}: {}", errors.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::workspace_root;

    #[test]
    fn the_committed_files_load_and_validate_with_paths() {
        let responses = FrameSchema::load(
            &workspace_root().join("schema/json"),
            "responses.schema.json",
        )
        .unwrap();
        assert_eq!(
            responses.validate(&json!({"schema": 1, "id": "1", "t": "ack"})),
            Ok(())
        );
        let err = responses
            .validate(&json!({"schema": 1, "t": "ack"}))
            .unwrap_err();
        assert!(err.contains("\"id\" is a required property"), "{err}");
        assert!(
            responses
                .variants()
                .contains(&"card/card=question".to_owned())
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = FrameSchema::load(&workspace_root(), "nope.schema.json").unwrap_err();
        assert!(err.contains("nope.schema.json"), "{err}");
    }
}
