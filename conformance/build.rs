//! With the `embed` feature, embeds the kit's data (the ledger, sessions, fixtures and generated
//! schemas, by golden's one rule of which files make up the kit: `golden/src/kit/files.rs`, which
//! golden reads a checkout with) in the crate: writes `$OUT_DIR/kit_files.rs`, a table of
//! `(path, include_bytes!(..))` that `conformance::embedded::files` returns, so an installed
//! `corral-conformance` needs no checkout. Reruns when any of those files or folders changes (so
//! editing a session recompiles this crate and what links it, never golden or the simulator);
//! without the feature, does nothing and never reruns for them.

#![allow(
    clippy::print_stdout,
    reason = "cargo reads a build script's directives from its stdout"
)]

// golden's rule, compiled here on its own (plain `std`), so there is one list of the kit's files.
#[path = "../golden/src/kit/files.rs"]
mod files;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .expect("conformance/ sits in the workspace");
    println!("cargo:rerun-if-changed=build.rs");
    let rule = root.join("golden/src/kit/files.rs");
    println!("cargo:rerun-if-changed={}", rule.display());
    if std::env::var_os("CARGO_FEATURE_EMBED").is_none() {
        return;
    }
    for entry in files::ROOTS {
        // A directory is scanned whole: a file added, changed or removed reruns this script.
        println!("cargo:rerun-if-changed={}", root.join(entry).display());
    }
    let listed = files::list(root).unwrap_or_else(|err| panic!("the kit's files: {err}"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("kit_files.rs"), table(root, &listed))
        .expect("writing $OUT_DIR/kit_files.rs");
}

/// The table's source: one `(path, bytes)` per file, in the listing's order.
fn table(root: &Path, listed: &[String]) -> String {
    let mut text = String::from("&[\n");
    for relative in listed {
        let absolute = root.join(relative);
        let absolute = absolute
            .to_str()
            .unwrap_or_else(|| panic!("{} is not UTF-8", absolute.display()));
        let _ = writeln!(text, "    ({relative:?}, include_bytes!({absolute:?})),");
    }
    text.push(']');
    text
}
