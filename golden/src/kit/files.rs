//! Which files make up the kit's data, by one rule that both the `conformance` crate's `build.rs`
//! (which embeds them) and [`crate::kit`] (which reads a checkout, and writes one out) use: the
//! ledger, every session, every fixture (hook payloads and transcript samples included) and every
//! generated JSON Schema, by their paths relative to a checkout's root. Plain `std`, since that
//! `build.rs` compiles this file on its own: its errors are I/O errors that name their path, which
//! [`crate::kit::list`] turns into the crate's.

use std::io;
use std::path::Path;

/// What is taken, relative to the root: a file, or a directory walked recursively.
pub const ROOTS: [&str; 4] = [
    "golden/requirements.toml",
    "golden/sessions",
    "golden/fixtures",
    "schema/json",
];

/// The extensions of the files taken from the directories (their READMEs are for people):
/// sessions, fixtures, hook payloads and schemas, and the transcript samples fixtures name.
const EXTENSIONS: [&str; 4] = ["ndjson", "toml", "json", "jsonl"];

/// Every kit file under `root`: paths relative to it with `/` separators, sorted. An entry of
/// [`ROOTS`] that is missing is an error naming it.
pub fn list(root: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in ROOTS {
        let path = root.join(entry);
        if path.is_file() {
            out.push(entry.to_owned());
        } else if path.is_dir() {
            walk(&path, entry, &mut out)?;
        } else {
            let missing = format!("{} is missing", path.display());
            return Err(io::Error::new(io::ErrorKind::NotFound, missing));
        }
    }
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, relative: &str, out: &mut Vec<String>) -> io::Result<()> {
    let in_dir = |err: io::Error| io::Error::new(err.kind(), format!("{}: {err}", dir.display()));
    for entry in std::fs::read_dir(dir).map_err(in_dir)? {
        let entry = entry.map_err(in_dir)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            let named = format!("{}: a file name that is not UTF-8", entry.path().display());
            return Err(io::Error::new(io::ErrorKind::InvalidData, named));
        };
        let path = entry.path();
        let inner = format!("{relative}/{name}");
        if path.is_dir() {
            walk(&path, &inner, out)?;
        } else if Path::new(name)
            .extension()
            .and_then(|ext| ext.to_str())
            .is_some_and(|ext| EXTENSIONS.contains(&ext))
        {
            out.push(inner);
        }
    }
    Ok(())
}
