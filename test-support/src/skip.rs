//! A test that cannot run its real subject on this machine (a full disk needs a tmpfs mounted,
//! another owner's file needs a chown: both need root) says so where a person sees it, and where
//! CI counts it, instead of passing in silence. [`skipped`] writes one line straight to stderr,
//! which `cargo test` shows even for a passing test, and appends the skip to the file that
//! [`SKIPS`] names, when it is set: `.ci/run` sets it, prints the list after the tests, and,
//! running as root, where nothing needs to be skipped, fails the run on any line in it.

use std::fmt::Display;
use std::io::Write;
use std::panic::Location;
use std::path::Path;

/// The variable naming the file a test run's skips are appended to, one line each:
/// `<package> <test>\t<file>:<line>: <reason>`.
pub const SKIPS: &str = "CORRAL_TEST_SKIPS";

/// Records that the running test did not run (all or part of) its real subject here, and why.
/// The test is named after its thread (the test harness names it after the test's path) and the
/// package under test (`CARGO_PKG_NAME`, which cargo sets for the tests it runs); the reason is
/// one line. Panics when [`SKIPS`] names a file it cannot append to: a skip that cannot be
/// recorded must not pass unseen.
#[track_caller]
pub fn skipped(reason: impl Display) {
    let line = skip_line(
        std::env::var("CARGO_PKG_NAME").ok().as_deref(),
        std::thread::current().name(),
        Location::caller(),
        &reason.to_string(),
    );
    // Straight to stderr: the test harness captures `eprintln!` of a passing test.
    let _ = writeln!(std::io::stderr(), "SKIPPED {}", line.replace('\t', " at "));
    if let Some(file) = std::env::var_os(SKIPS).filter(|file| !file.is_empty()) {
        record(Path::new(&file), &line);
    }
}

/// One skip as a line of the [`SKIPS`] file (without its `\n`).
fn skip_line(
    package: Option<&str>,
    thread: Option<&str>,
    at: &Location<'_>,
    reason: &str,
) -> String {
    let test = match thread {
        Some(name) if name != "main" => name,
        _ => "a test off the harness's threads",
    };
    let package = package.unwrap_or("?");
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{package} {test}\t{}:{}: {reason}", at.file(), at.line())
}

/// Appends `line` to `file` in one write, as concurrent tests and test binaries may.
fn record(file: &Path, line: &str) {
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut out| out.write_all(format!("{line}\n").as_bytes()));
    if let Err(err) = appended {
        panic!(
            "{SKIPS}={}: cannot record this skip ({err}): {line}",
            file.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_is_one_line_naming_the_package_the_test_the_place_and_the_reason() {
        let at = Location::caller();
        let line = skip_line(
            Some("reference-host"),
            Some("disk::a_full_disk::fake"),
            at,
            "mount was refused:\n  permission denied\t(EPERM)",
        );
        assert_eq!(
            line,
            format!(
                "reference-host disk::a_full_disk::fake\t{}:{}: mount was refused: permission \
                 denied (EPERM)",
                at.file(),
                at.line()
            )
        );
        let off = skip_line(None, Some("main"), at, "r");
        assert!(
            off.starts_with("? a test off the harness's threads\t"),
            "{off}"
        );
    }

    #[test]
    fn skips_are_appended_one_line_each() {
        let dir = std::env::temp_dir().join(format!("test-support-skips-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("skips");
        record(&file, "p a\tx.rs:1: one");
        record(&file, "p b\tx.rs:2: two");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(text, "p a\tx.rs:1: one\np b\tx.rs:2: two\n");
    }

    #[test]
    fn a_skip_that_cannot_be_recorded_fails_its_test() {
        let refused = std::panic::catch_unwind(|| record(Path::new("/dev/null/skips"), "p a\tr"));
        let message = *refused.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.starts_with("CORRAL_TEST_SKIPS=/dev/null/skips: cannot record this skip"),
            "{message}"
        );
    }
}
