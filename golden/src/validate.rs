//! Frames and local documents checked against the generated JSON Schemas of the wire: the
//! committed files under `schema/json/` (the host runner's way, so it judges a host by what is
//! published), or the schemas the wire types make in this process (the replayer's way, which needs
//! no checkout). A `oneOf` failure says only "no branch matched", so a frame is validated against
//! the branch its own tag picks (`t`, then `card` inside a card): the error names the exact path.
//! A local document whose writer's key order the protocol fixes is also checked for it, as a
//! frame's canonical form is.

use std::collections::BTreeMap;
use std::path::Path;

use schema::manifest::ActionList;
use schema::{
    CompletionPayload, DeviceList, LsDocument, NotifyLogLine, NotifyPayload, Receipts,
    TransitionRing,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Error;

/// Validators for one direction of the wire.
#[derive(Debug)]
pub struct FrameSchema {
    file: String,
    whole: jsonschema::Validator,
    /// Keyed `t` or `t/key=tag`.
    narrowed: BTreeMap<String, jsonschema::Validator>,
}

/// A committed schema file, as JSON.
fn read(path: &Path) -> Result<Value, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|err| Error::in_file(path, err.to_string()))?;
    serde_json::from_str(&text).map_err(|err| Error::in_file(path, err.to_string()))
}

fn compile(schema: &Value, what: &str) -> Result<jsonschema::Validator, Error> {
    jsonschema::validator_for(schema)
        .map_err(|err| Error::new(format!("{what} is not a schema: {err}")))
}

/// The `const` of a branch's `properties.<key>`.
fn tag_of(branch: &Value, key: &str) -> Option<String> {
    branch
        .pointer(&format!("/properties/{key}/const"))?
        .as_str()
        .map(str::to_owned)
}

/// The `$defs` entry a branch refers to, when its `$ref` is local.
fn def_name(branch: &Value) -> Option<String> {
    branch
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/$defs/")
        .map(str::to_owned)
}

/// A schema whose root `oneOf` is replaced by `allOf: [branch]`.
fn with_branch(root: &Map<String, Value>, branch: &Value) -> Map<String, Value> {
    let mut narrowed = root.clone();
    narrowed.remove("oneOf");
    narrowed.insert("allOf".into(), Value::Array(vec![branch.clone()]));
    narrowed
}

impl FrameSchema {
    /// Prepares a validator for the whole schema and one per tag; `file` names the schema in
    /// errors (`responses.schema.json`).
    pub fn new(file: &str, schema: &Value) -> Result<FrameSchema, Error> {
        let whole = compile(schema, file)?;
        let root = schema
            .as_object()
            .ok_or_else(|| Error::new(format!("{file} is not an object")))?;
        let mut narrowed = BTreeMap::new();
        for branch in root
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(t) = tag_of(branch, "t") else {
                continue;
            };
            let top = with_branch(root, branch);
            narrowed.insert(t.clone(), compile(&Value::Object(top.clone()), file)?);
            // A branch whose body is itself tagged (a card's `card`): one validator per inner tag.
            let Some(def) = def_name(branch) else {
                continue;
            };
            let Some(inner) = root
                .get("$defs")
                .and_then(|defs| defs.get(&def))
                .and_then(|def| def.get("oneOf"))
                .and_then(Value::as_array)
            else {
                continue;
            };
            for inner_branch in inner {
                let Some(key) = inner_branch
                    .get("properties")
                    .and_then(Value::as_object)
                    .and_then(|props| props.iter().find(|(_, p)| p.get("const").is_some()))
                    .map(|(key, _)| key.clone())
                else {
                    continue;
                };
                let Some(tag) = tag_of(inner_branch, &key) else {
                    continue;
                };
                let mut deeper = top.clone();
                if let Some(Value::Object(defs)) = deeper.get_mut("$defs")
                    && let Some(Value::Object(def_schema)) = defs.get_mut(&def)
                {
                    def_schema.remove("oneOf");
                    def_schema.insert("allOf".into(), Value::Array(vec![inner_branch.clone()]));
                }
                narrowed.insert(
                    format!("{t}/{key}={tag}"),
                    compile(&Value::Object(deeper), file)?,
                );
            }
        }
        Ok(FrameSchema {
            file: file.to_owned(),
            whole,
            narrowed,
        })
    }

    /// The validators of a committed file, `<dir>/<file>` (`schema/json/responses.schema.json`).
    pub fn load(dir: &Path, file: &str) -> Result<FrameSchema, Error> {
        FrameSchema::new(file, &read(&dir.join(file))?)
    }

    /// The validators of a schema the `schema` crate generates (`requests.schema.json`,
    /// `responses.schema.json`), built from the wire types in this process: the same schema as
    /// the committed file, which a test keeps in step.
    pub fn generated(file: &str) -> Result<FrameSchema, Error> {
        let document = schema::generate::documents()
            .into_iter()
            .find(|document| document.file == file)
            .ok_or_else(|| Error::new(format!("`{file}` is not a generated schema")))?;
        FrameSchema::new(file, document.schema.as_value())
    }

    /// Every tag this direction knows: `t` values, and `t/key=tag` for tagged bodies.
    pub fn variants(&self) -> Vec<String> {
        self.narrowed.keys().cloned().collect()
    }

    /// Validates one frame; the error lists each violation with its path.
    pub fn validate(&self, frame: &Value) -> Result<(), Error> {
        if self.whole.is_valid(frame) {
            return Ok(());
        }
        let t = frame.get("t").and_then(Value::as_str);
        let validator = t
            .and_then(|t| {
                let inner = self
                    .narrowed
                    .iter()
                    .find(|(key, _)| {
                        key.strip_prefix(t)
                            .and_then(|rest| rest.strip_prefix('/'))
                            .and_then(|rest| rest.split_once('='))
                            .is_some_and(|(k, tag)| {
                                frame.get(k).and_then(Value::as_str) == Some(tag)
                            })
                    })
                    .map(|(_, v)| v);
                inner.or_else(|| self.narrowed.get(t))
            })
            .unwrap_or(&self.whole);
        let errors: Vec<String> = validator
            .iter_errors(frame)
            .map(|err| {
                let path = err.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("{path}: {err}")
            })
            .collect();
        let errors = if errors.is_empty() {
            match t {
                Some(t) => vec![format!("`t` = \"{t}\" is not a frame of {}", self.file)],
                None => vec!["the frame has no string `t`".to_owned()],
            }
        } else {
            errors
        };
        Err(Error::new(format!(
            "violates {}: {}",
            self.file,
            errors.join("; ")
        )))
    }
}

/// A validator for a local document (the host's config file, what `corral ls --json` prints),
/// read from a committed file.
#[derive(Debug)]
pub struct DocumentSchema {
    file: String,
    validator: jsonschema::Validator,
    /// The document's type, when the protocol fixes its writer's key order.
    ordered: Option<Reencode>,
}

/// A document decoded through its type and encoded again.
type Reencode = fn(&Value) -> Result<Value, serde_json::Error>;

fn reencode<T: Serialize + DeserializeOwned>(value: &Value) -> Result<Value, serde_json::Error> {
    let decoded: T = serde_json::from_value(value.clone())?;
    serde_json::to_value(decoded)
}

/// The JSON documents a host writes whose key order the protocol states (as it states a frame's),
/// by schema file: `corral ls --json` (a row's keys in wire order, `title` right after
/// `locator`), `corral device list --json`, `corral actions --json`, a `notify.log` line, the
/// payload a notification command reads (a fire's, a detached action's completion's), the
/// transition ring `corral debug transitions --json` prints and the receipts `corral receipts
/// --json` prints (a receipt's keys in wire order).
fn ordered(file: &str) -> Option<Reencode> {
    Some(match file {
        "ls.schema.json" => reencode::<LsDocument>,
        "device-list.schema.json" => reencode::<DeviceList>,
        "action-list.schema.json" => reencode::<ActionList>,
        "notify-log-line.schema.json" => reencode::<NotifyLogLine>,
        "notify-payload.schema.json" => reencode::<NotifyPayload>,
        "notify-completion.schema.json" => reencode::<CompletionPayload>,
        "receipts.schema.json" => reencode::<Receipts>,
        "transition-ring.schema.json" => reencode::<TransitionRing>,
        _ => return None,
    })
}

impl DocumentSchema {
    /// Loads `<dir>/<file>` (`schema/json/config.schema.json`).
    pub fn load(dir: &Path, file: &str) -> Result<DocumentSchema, Error> {
        Ok(DocumentSchema {
            file: file.to_owned(),
            validator: compile(&read(&dir.join(file))?, file)?,
            ordered: ordered(file),
        })
    }

    /// Validates a document, one path and reason per violation.
    pub fn validate(&self, value: &Value) -> Result<(), Error> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(value)
            .map(|err| format!("{}: {err}", err.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::new(format!(
                "violates {}: {}",
                self.file,
                errors.join("; ")
            )))
        }
    }

    /// Validates a document a host wrote as JSON (its keys in the order it wrote them): the
    /// schema, and for a document whose key order the protocol fixes, that order (whitespace
    /// aside, it encodes as its type encodes it).
    pub fn validate_written(&self, value: &Value) -> Result<(), Error> {
        self.validate(value)?;
        let Some(reencode) = self.ordered else {
            return Ok(());
        };
        let canonical = reencode(value)
            .map_err(|err| Error::new(format!("does not decode as {}: {err}", self.file)))?;
        // Compared as text: two maps with the same members in another order are equal values.
        let text = |value: &Value| serde_json::to_string(value).expect("values encode");
        if text(&canonical) != text(value) {
            return Err(Error::new(format!(
                "is not in the order of {} (key order, or a key its type does not write); \
                 canonical: {canonical}",
                self.file
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn committed() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/json")
    }

    #[test]
    fn a_written_document_keeps_the_order_its_type_writes() {
        let list = DocumentSchema::load(&committed(), "device-list.schema.json").unwrap();
        let record = r#"{"id":"SHA256:x","name":"phone","scopes":["read"],"paired_at_ms":1}"#;
        let good: Value =
            serde_json::from_str(&format!(r#"{{"schema":1,"devices":[{record}]}}"#)).unwrap();
        assert_eq!(list.validate_written(&good), Ok(()));
        let swapped: Value =
            serde_json::from_str(&format!(r#"{{"devices":[{record}],"schema":1}}"#)).unwrap();
        assert_eq!(list.validate(&swapped), Ok(()));
        let err = list.validate_written(&swapped).unwrap_err().to_string();
        assert!(
            err.starts_with("is not in the order of device-list.schema.json"),
            "{err}"
        );
        let config = DocumentSchema::load(&committed(), "config.schema.json").unwrap();
        let unordered =
            serde_json::json!({"serve": {"reconcile_interval_ms": 200, "max_connections": 2}});
        assert_eq!(config.validate_written(&unordered), Ok(()));
    }

    #[test]
    fn the_committed_files_load_and_validate_with_paths() {
        let responses = FrameSchema::load(&committed(), "responses.schema.json").unwrap();
        assert_eq!(
            responses.validate(&json!({"schema": 1, "id": "1", "t": "ack"})),
            Ok(())
        );
        let err = responses
            .validate(&json!({"schema": 1, "t": "ack"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"id\" is a required property"), "{err}");
        assert_eq!(
            responses.variants(),
            FrameSchema::generated("responses.schema.json")
                .unwrap()
                .variants()
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = FrameSchema::load(&committed(), "nope.schema.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope.schema.json"), "{err}");
    }

    #[test]
    fn a_document_violation_names_the_file_and_the_path() {
        let config = DocumentSchema::load(&committed(), "config.schema.json").unwrap();
        assert_eq!(
            config.validate(&json!({"serve": {"reconcile_interval_ms": 200}})),
            Ok(())
        );
        let err = config
            .validate(&json!({"serve": {"reconcile_interval_ms": "fast"}}))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("violates config.schema.json: /serve/reconcile_interval_ms: "),
            "{err}"
        );
    }

    fn responses() -> FrameSchema {
        FrameSchema::generated("responses.schema.json").unwrap()
    }

    #[test]
    fn a_valid_frame_passes() {
        let frame = json!({"schema": 1, "id": "1", "t": "ack"});
        assert_eq!(responses().validate(&frame), Ok(()));
    }

    #[test]
    fn a_violation_names_the_path_inside_the_branch_its_tag_picked() {
        let frame = json!({"schema": 1, "id": "1", "t": "hello", "host": "h", "tool_version": "1",
                           "reconcile_interval_ms": "fast", "scopes": []});
        let err = responses().validate(&frame).unwrap_err().to_string();
        assert!(err.contains("/reconcile_interval_ms"), "{err}");
        assert!(!err.contains("oneOf"), "{err}");
    }

    #[test]
    fn a_card_is_narrowed_by_its_inner_tag() {
        let frame = json!({"schema": 1, "id": "1", "t": "card", "card": "informational",
                           "detail": "plan", "headline": 5});
        let err = responses().validate(&frame).unwrap_err().to_string();
        assert!(err.contains("/headline"), "{err}");
    }

    #[test]
    fn a_missing_id_is_reported_at_the_root() {
        let frame = json!({"schema": 1, "t": "ack"});
        let err = responses().validate(&frame).unwrap_err().to_string();
        assert!(err.contains("\"id\" is a required property"), "{err}");
    }

    #[test]
    fn an_unknown_t_is_named() {
        let frame = json!({"schema": 1, "id": "1", "t": "teleport"});
        let err = responses().validate(&frame).unwrap_err().to_string();
        assert!(err.starts_with("violates responses.schema.json: "), "{err}");
    }

    #[test]
    fn variants_list_every_frame_and_card() {
        let variants = responses().variants();
        assert!(variants.contains(&"edge".to_owned()));
        assert!(variants.contains(&"card/card=question".to_owned()));
    }

    #[test]
    fn only_generated_frame_schemas_are_offered() {
        assert!(FrameSchema::generated("requests.schema.json").is_ok());
        assert!(
            FrameSchema::generated("nope.schema.json")
                .unwrap_err()
                .message
                .contains("not a generated schema")
        );
    }
}
