//! The requirement ledger, `golden/requirements.toml`: every normative sentence of the protocol,
//! each mapped to the golden cases that test it or to the reason it is not tested
//! (`golden/README.md`, "The requirement ledger"). Unknown keys are refused, and every entry
//! names a section of `docs/protocol.md` that exists ([`Ledger::misplaced`]).
//!
//! Beside the requirements, one `[[case]]` per golden case of a suite any host runs (`wire`,
//! `host-files`) says which passages of the protocol everything the case expects rests on, and
//! whether it also rests on what the host declares in its profile; a case moved out of those
//! suites (corral's own choice) says so and why ([`CaseBasis`], [`Ledger::dangling_passages`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Error;

/// `golden/requirements.toml`: every normative sentence of the specs, each mapped to the cases
/// that test it or to the reason it is not tested.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ledger {
    /// The requirements, in spec order.
    #[serde(rename = "requirement", default)]
    pub requirements: Vec<Requirement>,
    /// The golden cases of the suites any host runs, each with the passages it rests on; and the
    /// cases moved out of them, with why.
    #[serde(rename = "case", default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<CaseEntry>,
}

/// What one golden case rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseEntry {
    /// The case id (`golden/sessions/<id>.ndjson`).
    pub id: String,
    /// What it rests on: the protocol alone, the protocol and the host's declared profile, or
    /// nothing any host owes (moved to a suite of corral's own).
    pub basis: CaseBasis,
    /// The passages that state everything the case expects: `protocol.md#<anchor>` (a heading
    /// of `docs/protocol.md`) or a page it names normative (`agents.md#<anchor>`). At least one,
    /// unless it was moved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<String>,
    /// Why: what the profile declares for it, or why it was moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a golden case rests on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CaseBasis {
    /// Everything it expects is stated in the passages: any host owes it.
    Protocol,
    /// Stated in the passages, with what the host declares in its profile in place of corral's
    /// choices (its action manifests: the keys fired, the labels, what it covers); its header's
    /// `manifests` says what.
    Declared,
    /// corral's own choice, not the protocol's: moved to a suite only corral runs; `note` says
    /// why.
    Moved,
}

/// The pages a passage may name: the protocol, and the page it names normative for how a host
/// reads each transcript store.
pub const PASSAGE_PAGES: [(&str, &str); 2] = [
    ("protocol.md", PROTOCOL_DOC),
    ("agents.md", "docs/agents.md"),
];

/// The anchor of a Markdown heading as GitHub makes it: lower case, each space a `-`, every
/// character but letters, digits, `-` and `_` dropped.
pub fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// One normative sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// A stable slug, `area.topic` (`framing.line-cap`).
    pub id: String,
    /// The document it lives in: always [`PROTOCOL_SPEC`] (`docs/protocol.md`).
    pub spec: String,
    /// The heading of `docs/protocol.md` it sits under: its exact text, without the `#`s.
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
    /// The kit observes it only for corral: every case that tests it is of the `corral-cli`
    /// suite (corral's own command line), so a run for another host leaves it not run. The
    /// ledger check keeps it true exactly for those.
    #[serde(default, skip_serializing_if = "is_false")]
    pub corral_only: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
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

/// The one `spec` a requirement may name: `docs/protocol.md`.
pub const PROTOCOL_SPEC: &str = "protocol";

/// Where [`PROTOCOL_SPEC`] is, relative to the workspace root.
pub const PROTOCOL_DOC: &str = "docs/protocol.md";

/// The headings of a Markdown document: every line that starts with `#`, its text after the
/// `#`s trimmed. A heading written twice is an error at the line of its second: a `section`
/// naming it could not say which of the two it means.
pub fn headings(markdown: &str) -> Result<BTreeSet<String>, Error> {
    let mut headings = BTreeSet::new();
    for (index, line) in markdown.lines().enumerate() {
        if let Some(text) = line.strip_prefix('#') {
            let text = text.trim_start_matches('#').trim();
            if !headings.insert(text.to_owned()) {
                let twice = format!("the heading `{text}` is written twice");
                return Err(Error::new(twice).at_line(index + 1));
            }
        }
    }
    Ok(headings)
}

impl Ledger {
    /// Every requirement that does not live where it says, one line each: a `spec` other than
    /// [`PROTOCOL_SPEC`], or a `section` that is none of `headings` (those of
    /// `docs/protocol.md`, from [`headings`]).
    pub fn misplaced(&self, headings: &BTreeSet<String>) -> Vec<String> {
        let mut problems = Vec::new();
        for requirement in &self.requirements {
            let id = &requirement.id;
            if requirement.spec != PROTOCOL_SPEC {
                problems.push(format!(
                    "`{id}` names spec `{}`; every requirement lives in `{PROTOCOL_SPEC}` ({PROTOCOL_DOC})",
                    requirement.spec
                ));
            }
            if !headings.contains(&requirement.section) {
                problems.push(format!(
                    "`{id}` names section `{}`, which is no heading of {PROTOCOL_DOC}",
                    requirement.section
                ));
            }
        }
        problems
    }

    /// Every passage a `[[case]]` names that is not an anchor of its page, and every entry that
    /// names none though it was not moved, one line each. `anchors` holds each page of
    /// [`PASSAGE_PAGES`] by its short name (`protocol.md`) with its headings' anchors.
    pub fn dangling_passages(&self, anchors: &BTreeMap<&str, BTreeSet<String>>) -> Vec<String> {
        let mut problems = Vec::new();
        for case in &self.cases {
            let id = &case.id;
            if case.passages.is_empty() && case.basis != CaseBasis::Moved {
                problems.push(format!("case `{id}` names no passage it rests on"));
            }
            for passage in &case.passages {
                let found = passage.split_once('#').and_then(|(page, anchor)| {
                    anchors.get(page).map(|known| known.contains(anchor))
                });
                match found {
                    Some(true) => {}
                    Some(false) => problems.push(format!(
                        "case `{id}` rests on `{passage}`, which is no heading of its page"
                    )),
                    None => problems.push(format!(
                        "case `{id}` rests on `{passage}`: a passage is `<page>#<anchor>`, the \
                         page one of {}",
                        PASSAGE_PAGES.map(|(page, _)| page).join(", ")
                    )),
                }
            }
        }
        problems
    }

    /// The `[[case]]` entries by case id.
    pub fn cases_by_id(&self) -> BTreeMap<&str, &CaseEntry> {
        self.cases
            .iter()
            .map(|case| (case.id.as_str(), case))
            .collect()
    }

    /// Requirements by id.
    pub fn by_id(&self) -> BTreeMap<&str, &Requirement> {
        self.requirements
            .iter()
            .map(|requirement| (requirement.id.as_str(), requirement))
            .collect()
    }
}

/// Reads a ledger file (`golden/requirements.toml`).
pub fn load(path: &Path) -> Result<Ledger, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|err| Error::in_file(path, err.to_string()))?;
    toml::from_str(&text).map_err(|err| Error::in_file(path, err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_requirement_reads_from_toml_shaped_json() {
        let ledger: Ledger = serde_json::from_value(serde_json::json!({
            "requirement": [{
                "id": "framing.line-cap", "spec": "protocol", "section": "Lines",
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

    #[test]
    fn headings_are_the_lines_starting_with_a_hash_and_none_is_written_twice() {
        let markdown = "# Title\ntext # not one\n## Lines \n### `hello` request\n";
        let found = headings(markdown).unwrap();
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            ["Lines", "Title", "`hello` request"]
        );
        let err = headings("# A\n## B\n### A\n").unwrap_err();
        assert_eq!(err.to_string(), "line 3: the heading `A` is written twice");
    }

    #[test]
    fn a_requirement_naming_a_missing_section_or_another_spec_is_misplaced() {
        let ledger: Ledger = toml::from_str(
            r#"
            [[requirement]]
            id = "a.here"
            spec = "protocol"
            section = "Lines"
            level = "must"
            text = "t"
            status = "pending"
            reason = "r"

            [[requirement]]
            id = "a.gone"
            spec = "wire-details"
            section = "Framing"
            level = "must"
            text = "t"
            status = "pending"
            reason = "r"
            "#,
        )
        .unwrap();
        let found = headings("# Lines\n").unwrap();
        assert_eq!(
            ledger.misplaced(&found),
            [
                "`a.gone` names spec `wire-details`; every requirement lives in `protocol` (docs/protocol.md)",
                "`a.gone` names section `Framing`, which is no heading of docs/protocol.md",
            ]
        );
    }

    #[test]
    fn anchors_are_githubs() {
        assert_eq!(anchor("Order of checks"), "order-of-checks");
        assert_eq!(anchor("`hello` request"), "hello-request");
        assert_eq!(anchor("What a window shows"), "what-a-window-shows");
        assert_eq!(anchor("Exit codes of serve"), "exit-codes-of-serve");
        assert_eq!(anchor("A hung tmux"), "a-hung-tmux");
    }

    #[test]
    fn a_case_resting_on_no_passage_or_a_dangling_one_is_reported() {
        let ledger: Ledger = toml::from_str(
            r#"
            [[case]]
            id = "a.kept"
            basis = "protocol"
            passages = ["protocol.md#lines", "agents.md#what-a-window-shows"]

            [[case]]
            id = "a.bare"
            basis = "declared"

            [[case]]
            id = "a.gone"
            basis = "protocol"
            passages = ["protocol.md#framing", "spec.md#lines", "lines"]

            [[case]]
            id = "a.moved"
            basis = "moved"
            note = "corral's own"
            "#,
        )
        .unwrap();
        let anchors = BTreeMap::from([
            ("protocol.md", BTreeSet::from(["lines".to_owned()])),
            (
                "agents.md",
                BTreeSet::from(["what-a-window-shows".to_owned()]),
            ),
        ]);
        assert_eq!(
            ledger.dangling_passages(&anchors),
            [
                "case `a.bare` names no passage it rests on",
                "case `a.gone` rests on `protocol.md#framing`, which is no heading of its page",
                "case `a.gone` rests on `spec.md#lines`: a passage is `<page>#<anchor>`, the page \
                 one of protocol.md, agents.md",
                "case `a.gone` rests on `lines`: a passage is `<page>#<anchor>`, the page one of \
                 protocol.md, agents.md",
            ]
        );
        let unknown = toml::from_str::<Ledger>("[[case]]\nid = \"x\"\nbasis = \"kept\"\n");
        assert!(unknown.is_err());
    }

    #[test]
    fn every_passage_the_committed_ledger_names_is_a_heading_of_its_page() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let ledger = load(&root.join("golden/requirements.toml")).unwrap();
        let mut anchors = BTreeMap::new();
        for (page, path) in PASSAGE_PAGES {
            let markdown = std::fs::read_to_string(root.join(path)).unwrap();
            let found = headings(&markdown).unwrap_or_else(|err| panic!("{path}: {err}"));
            anchors.insert(page, found.iter().map(|h| anchor(h)).collect());
        }
        let problems = ledger.dangling_passages(&anchors);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn every_section_the_committed_ledger_names_is_a_heading_of_the_protocol() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let ledger = load(&root.join("golden/requirements.toml")).unwrap();
        let markdown = std::fs::read_to_string(root.join(PROTOCOL_DOC)).unwrap();
        let found = headings(&markdown).unwrap_or_else(|err| panic!("{PROTOCOL_DOC}: {err}"));
        let problems = ledger.misplaced(&found);
        assert!(problems.is_empty(), "{problems:#?}");
    }
}
