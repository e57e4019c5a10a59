//! The kit's data as one set of files, by one rule (`files`): a checkout's, listed and read from
//! disk, or the copy the `conformance` crate embeds (its `build.rs` compiles the same rule). A
//! runner writes the embedded copy out ([`write()`]) and loads it like a checkout, so there is one
//! loader per format whichever copy it runs. This crate holds none of the data itself.

mod files;

use std::path::Path;

pub use files::ROOTS;

use crate::Error;

/// One file of the kit: its path relative to the kit's root (`golden/sessions/x.ndjson`,
/// `schema/json/requests.schema.json`) and its bytes.
pub type File<'a> = (&'a str, &'a [u8]);

/// Every kit file in a checkout at `root`: paths relative to it with `/` separators, sorted. An
/// entry of [`ROOTS`] that is missing is an error naming it.
pub fn list(root: &Path) -> Result<Vec<String>, Error> {
    files::list(root).map_err(|err| Error::new(err.to_string()))
}

/// The kit's files in a checkout (or a kit written out by [`write()`]) at `root`, sorted by path.
pub fn read(root: &Path) -> Result<Vec<(String, Vec<u8>)>, Error> {
    list(root)?
        .into_iter()
        .map(|relative| {
            let path = root.join(&relative);
            let bytes =
                std::fs::read(&path).map_err(|err| Error::in_file(&path, err.to_string()))?;
            Ok((relative, bytes))
        })
        .collect()
}

/// Writes files under `root` (their folders made), laid out as a checkout.
pub fn write(root: &Path, files: &[File<'_>]) -> Result<(), Error> {
    for (relative, bytes) in files {
        let path = root.join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|err| Error::in_file(dir, err.to_string()))?;
        }
        std::fs::write(&path, bytes).map_err(|err| Error::in_file(&path, err.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_kit_reads_back_the_same() {
        let files: [File<'_>; 4] = [
            ("golden/fixtures/hooks/claude/stop.json", b"{}"),
            ("golden/requirements.toml", b"[[requirement]]\n"),
            ("golden/sessions/a.ndjson", b"{}\n"),
            ("schema/json/a.schema.json", &[0xff, 0]),
        ];
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &files).unwrap();
        let back = read(dir.path()).unwrap();
        let back: Vec<File<'_>> = back
            .iter()
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
            .collect();
        assert_eq!(back, files);
    }

    #[test]
    fn a_checkout_gives_its_transcript_samples_and_keeps_its_readmes() {
        let dir = tempfile::tempdir().unwrap();
        for (relative, text) in [
            ("golden/requirements.toml", ""),
            ("golden/sessions/a.ndjson", "{}"),
            ("golden/fixtures/a.toml", ""),
            ("golden/fixtures/README.md", "for people"),
            ("golden/fixtures/hooks/claude/stop.json", "{}"),
            ("golden/fixtures/transcripts/claude-2.0.jsonl", "{}\n"),
            ("golden/fixtures/transcripts/README.md", "for people"),
            ("schema/json/a.schema.json", "{}"),
        ] {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        assert_eq!(
            list(dir.path()).unwrap(),
            [
                "golden/fixtures/a.toml",
                "golden/fixtures/hooks/claude/stop.json",
                "golden/fixtures/transcripts/claude-2.0.jsonl",
                "golden/requirements.toml",
                "golden/sessions/a.ndjson",
                "schema/json/a.schema.json",
            ]
        );
    }

    #[test]
    fn a_missing_part_of_a_checkout_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("golden/sessions")).unwrap();
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("golden/requirements.toml is missing"), "{err}");
    }
}
