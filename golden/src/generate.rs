//! The JSON Schemas of the kit's formats (fleet fixtures, golden-session lines, the requirement
//! ledger), made the way `schema` makes the wire's ([`schema::generate::document`]).
//! `cargo xtask schema` writes both sets into `schema/json/`. Pure: this module builds text.

use schema::generate::{Contract, SchemaDocument, document};

use crate::fixture::Fixture;
use crate::ledger::Ledger;
use crate::profile::HostProfile;
use crate::session::GoldenLine;

/// The crate named in the header of these files.
const ORIGIN: &str = "golden";

/// Every schema of a kit format, in file-name order.
pub fn documents() -> Vec<SchemaDocument> {
    vec![
        document::<Fixture>(
            ORIGIN,
            "fixture.schema.json",
            Contract::Read,
            "corral-sim fleet fixture",
            "A fleet fixture (golden/fixtures/*.toml), as TOML maps onto JSON.",
        ),
        document::<GoldenLine>(
            ORIGIN,
            "golden-session.schema.json",
            Contract::Read,
            "corral golden session line",
            "One line of a golden session (golden/sessions/*.ndjson): the header, then steps.",
        ),
        document::<HostProfile>(
            ORIGIN,
            "host-profile.schema.json",
            Contract::Read,
            "corral conformance host profile",
            "What the conformance kit needs to know about a host (golden/profiles/*.toml, \
             `corral-conformance --profile FILE`), as TOML maps onto JSON.",
        ),
        document::<Ledger>(
            ORIGIN,
            "golden-requirements.schema.json",
            Contract::Read,
            "corral requirement ledger",
            "golden/requirements.toml, as TOML maps onto JSON: `[[requirement]]` tables.",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use schema::generate::GENERATOR_COMMAND;

    use super::*;

    #[test]
    fn committed_kit_schemas_match_the_kit_types() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/json");
        let drifted: Vec<&str> = documents()
            .into_iter()
            .filter(|document| {
                std::fs::read_to_string(dir.join(document.file)).unwrap_or_default()
                    != document.render()
            })
            .map(|document| document.file)
            .collect();
        assert!(
            drifted.is_empty(),
            "stale schemas {drifted:?}: run `{GENERATOR_COMMAND}`"
        );
    }

    #[test]
    fn no_kit_schema_shares_a_file_with_the_wire() {
        let wire = schema::generate::documents();
        for document in documents() {
            assert!(
                wire.iter().all(|w| w.file != document.file),
                "{}",
                document.file
            );
        }
    }
}
