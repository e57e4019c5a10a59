//! The kit's data as one set of files, wherever it comes from: the copy embedded in this crate
//! when it was built with the `embed` feature (`build.rs` writes the table), or a checkout read
//! from disk by the same rule (`files`). A runner writes the embedded copy out ([`write()`]) and
//! loads it like a checkout, so there is one loader per format whichever copy it runs.

mod files;

use std::path::Path;

pub use files::ROOTS;

use crate::Error;

/// One file of the kit: its path relative to the kit's root (`golden/sessions/x.ndjson`,
/// `schema/json/requests.schema.json`) and its bytes.
pub type File<'a> = (&'a str, &'a [u8]);

#[cfg(feature = "embed")]
static EMBEDDED: &[File<'static>] = include!(concat!(env!("OUT_DIR"), "/kit_files.rs"));

/// The kit's files as they were when this crate was built, sorted by path; `None` when it was
/// built without the `embed` feature.
#[cfg(feature = "embed")]
pub fn embedded() -> Option<&'static [File<'static>]> {
    Some(EMBEDDED)
}

/// The kit's files as they were when this crate was built: `None`, as it was built without the
/// `embed` feature.
#[cfg(not(feature = "embed"))]
pub fn embedded() -> Option<&'static [File<'static>]> {
    None
}

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

    #[cfg(feature = "embed")]
    fn checkout() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    #[test]
    #[cfg(feature = "embed")]
    fn the_embedded_kit_is_the_checkouts_file_for_file() {
        let on_disk = read(checkout()).unwrap();
        let embedded: Vec<(String, Vec<u8>)> = embedded()
            .unwrap()
            .iter()
            .map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec()))
            .collect();
        let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
            files.iter().map(|(path, _)| path.clone()).collect()
        };
        assert_eq!(names(&embedded), names(&on_disk));
        for ((path, embedded), (_, on_disk)) in embedded.iter().zip(&on_disk) {
            assert!(embedded == on_disk, "{path} differs from the checkout's");
        }
    }

    #[test]
    #[cfg(feature = "embed")]
    fn the_kit_holds_every_kind_of_file_a_run_reads() {
        let paths: Vec<&str> = embedded().unwrap().iter().map(|(path, _)| *path).collect();
        for wanted in [
            "golden/requirements.toml",
            "golden/sessions/handshake.second-hello.ndjson",
            "golden/fixtures/small.toml",
            "golden/fixtures/hooks/claude/stop.json",
            "schema/json/requests.schema.json",
            "schema/json/responses.schema.json",
        ] {
            assert!(paths.contains(&wanted), "{wanted} is not in the kit");
        }
        assert!(
            !paths.iter().any(|path| path.ends_with("README.md")),
            "{paths:?}"
        );
    }

    #[test]
    #[cfg(feature = "embed")]
    fn a_written_kit_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), embedded().unwrap()).unwrap();
        let back = read(dir.path()).unwrap();
        assert_eq!(back.len(), embedded().unwrap().len());
        for ((path, bytes), (back_path, back_bytes)) in embedded().unwrap().iter().zip(&back) {
            assert_eq!(*path, back_path);
            assert!(*bytes == back_bytes.as_slice(), "{path}");
        }
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
