//! The committed schemas of the wire and the local documents (`schema/json/`) are exactly what
//! `cargo xtask schema` generates now: plain `cargo test` catches a wire type changed without
//! regenerating its schema. The kit's schemas, in the same folder, are the `golden` crate's; that
//! no stale file is left beside them both is checked by `xtask`, which writes them all.

use std::path::PathBuf;

use schema::generate::{GENERATOR_COMMAND, documents};

#[test]
fn committed_schemas_match_the_wire_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("json");
    let mut drifted = Vec::new();
    for document in documents() {
        let committed = std::fs::read_to_string(dir.join(document.file)).unwrap_or_default();
        if committed != document.render() {
            drifted.push(document.file);
        }
    }
    assert!(
        drifted.is_empty(),
        "stale schemas {drifted:?}: run `{GENERATOR_COMMAND}`"
    );
}

#[test]
fn every_schema_names_the_command_that_made_it() {
    for document in documents() {
        assert!(
            document.render().contains(GENERATOR_COMMAND),
            "{}",
            document.file
        );
    }
}
