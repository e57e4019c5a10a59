//! `cargo xtask schema [--check]`: writes `schema/json/*.schema.json` from the wire types
//! (`schema`) and the kit's formats (`golden`), or with `--check` fails when a committed file
//! differs from what would be written, or is a file neither crate generates.

use std::path::Path;

use anyhow::{Context, bail};
use schema::generate::{GENERATOR_COMMAND, SchemaDocument};

use crate::workspace_root;

/// Every generated file: the wire's and local documents', then the kit's.
fn documents() -> Vec<SchemaDocument> {
    let mut documents = schema::generate::documents();
    documents.extend(golden::generate::documents());
    documents
}

/// A file under `schema/json/` that is not what `cargo xtask schema` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Drift {
    /// A generated file whose committed text differs (or that is missing).
    Changed(&'static str),
    /// A file no crate generates.
    Stale(String),
}

impl Drift {
    fn describe(&self) -> String {
        match self {
            Drift::Changed(file) => (*file).to_owned(),
            Drift::Stale(file) => format!("{file} (stale)"),
        }
    }
}

/// How the files in `dir` differ from `documents`.
fn drift(dir: &Path, documents: &[SchemaDocument]) -> anyhow::Result<Vec<Drift>> {
    let mut found = Vec::new();
    for document in documents {
        let committed = std::fs::read_to_string(dir.join(document.file)).unwrap_or_default();
        if committed != document.render() {
            found.push(Drift::Changed(document.file));
        }
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if !documents.iter().any(|d| d.file == name) {
            found.push(Drift::Stale(name));
        }
    }
    Ok(found)
}

pub fn run(check: bool) -> anyhow::Result<()> {
    let dir = workspace_root().join("schema/json");
    let documents = documents();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let found = drift(&dir, &documents)?;
    if check {
        if !found.is_empty() {
            let names: Vec<String> = found.iter().map(Drift::describe).collect();
            bail!(
                "generated schemas drifted: {}; run `{GENERATOR_COMMAND}`",
                names.join(", ")
            );
        }
        return Ok(());
    }
    for drifted in found {
        match drifted {
            Drift::Changed(file) => {
                let document = documents.iter().find(|d| d.file == file).expect("listed");
                let path = dir.join(file);
                std::fs::write(&path, document.render())
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
            Drift::Stale(name) => {
                std::fs::remove_file(dir.join(&name))?;
                eprintln!("removed stale {name}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_schemas_are_exactly_what_it_writes() {
        let found = drift(&workspace_root().join("schema/json"), &documents()).unwrap();
        assert!(found.is_empty(), "{found:?}: run `{GENERATOR_COMMAND}`");
    }

    #[test]
    fn a_changed_and_a_stale_file_are_both_found() {
        let dir = tempfile::tempdir().unwrap();
        let documents = schema::generate::documents();
        for document in &documents {
            std::fs::write(dir.path().join(document.file), document.render()).unwrap();
        }
        std::fs::write(dir.path().join(documents[0].file), "{}\n").unwrap();
        std::fs::write(dir.path().join("old.schema.json"), "{}\n").unwrap();
        let mut found = drift(dir.path(), &documents).unwrap();
        found.sort_by_key(Drift::describe);
        assert_eq!(
            found,
            [
                Drift::Changed(documents[0].file),
                Drift::Stale("old.schema.json".into())
            ]
        );
    }
}
