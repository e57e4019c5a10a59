//! The kit's data as it was when this crate was built, embedded with the `embed` feature (a
//! default, and what `cargo install` builds): `build.rs` writes the table, by golden's one rule of
//! which files make up the kit (`golden::kit`), so an installed `corral-conformance` needs no
//! checkout. A run writes it out (`golden::kit::write`) and loads it as it loads a checkout.

use golden::kit::File;

#[cfg(feature = "embed")]
static EMBEDDED: &[File<'static>] = include!(concat!(env!("OUT_DIR"), "/kit_files.rs"));

/// The kit's files as they were when this crate was built, sorted by path; `None` when it was
/// built without the `embed` feature.
#[cfg(feature = "embed")]
pub fn files() -> Option<&'static [File<'static>]> {
    Some(EMBEDDED)
}

/// The kit's files as they were when this crate was built: `None`, as it was built without the
/// `embed` feature.
#[cfg(not(feature = "embed"))]
pub fn files() -> Option<&'static [File<'static>]> {
    None
}

#[cfg(all(test, feature = "embed"))]
mod tests {
    use std::path::Path;

    use super::*;

    fn checkout() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    #[test]
    fn the_embedded_kit_is_the_checkouts_file_for_file() {
        let on_disk = golden::kit::read(checkout()).unwrap();
        let embedded: Vec<(String, Vec<u8>)> = files()
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
    fn the_kit_holds_every_kind_of_file_a_run_reads() {
        let paths: Vec<&str> = files().unwrap().iter().map(|(path, _)| *path).collect();
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
    fn a_written_kit_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        golden::kit::write(dir.path(), files().unwrap()).unwrap();
        let back = golden::kit::read(dir.path()).unwrap();
        assert_eq!(back.len(), files().unwrap().len());
        for ((path, bytes), (back_path, back_bytes)) in files().unwrap().iter().zip(&back) {
            assert_eq!(*path, back_path);
            assert!(*bytes == back_bytes.as_slice(), "{path}");
        }
    }
}
