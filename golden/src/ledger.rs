//! The requirement ledger, `golden/requirements.toml`: every normative sentence of the specs,
//! each mapped to the golden cases that test it or to the reason it is not tested
//! (`golden/README.md`, "The requirement ledger"). Unknown keys are refused.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `golden/requirements.toml`: every normative sentence of the specs, each mapped to the cases
/// that test it or to the reason it is not tested.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ledger {
    /// The requirements, in spec order.
    #[serde(rename = "requirement", default)]
    pub requirements: Vec<Requirement>,
}

/// One normative sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// A stable slug, `area.topic` (`framing.line-cap`).
    pub id: String,
    /// The document it comes from: `fleet-wire-protocol`, `wire-details` or `pane-options`.
    pub spec: String,
    /// The section heading it sits under.
    pub section: String,
    /// How binding it is.
    pub level: Level,
    /// The sentence, quoted or closely paraphrased.
    pub text: String,
    /// Whether a golden session tests it.
    pub status: Status,
    /// Why it is pending or excluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The cases that test it (status `tested`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<String>,
    /// The id of a broader requirement this one makes precise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refines: Option<String>,
    /// Frame variants (`request:window`, `response:card:question`) a pending requirement stands
    /// for: the coverage check accepts a variant that no golden session shows when a pending
    /// requirement lists it here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<String>,
}

/// RFC 2119 strength of a requirement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Absolute.
    Must,
    /// Expected unless there is a good reason; a case whose requirements are all `should` or
    /// `may` is graded non-strict when it fails.
    Should,
    /// Optional.
    May,
}

/// Whether a requirement is covered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// At least one golden session tests it (`cases`).
    Tested,
    /// Not tested yet; `reason` says what it waits for.
    Pending,
    /// Never tested by the kit; `reason` says why.
    Excluded,
}

impl Ledger {
    /// Requirements by id.
    pub fn by_id(&self) -> BTreeMap<&str, &Requirement> {
        self.requirements
            .iter()
            .map(|requirement| (requirement.id.as_str(), requirement))
            .collect()
    }
}

/// Reads a ledger file (`golden/requirements.toml`).
pub fn load(path: &Path) -> Result<Ledger, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    toml::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_requirement_reads_from_toml_shaped_json() {
        let ledger: Ledger = serde_json::from_value(serde_json::json!({
            "requirement": [{
                "id": "framing.line-cap", "spec": "wire-details", "section": "Framing",
                "level": "must", "text": "A request line longer than 64 KiB is answered bad-request.",
                "status": "pending", "reason": "waits for the host", "frames": ["response:error"]
            }]
        }))
        .unwrap();
        assert_eq!(ledger.by_id()["framing.line-cap"].level, Level::Must);
    }

    #[test]
    fn the_committed_ledger_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("requirements.toml");
        let ledger = load(&path).unwrap();
        assert!(ledger.by_id().contains_key("framing.line-cap"));
    }
}
