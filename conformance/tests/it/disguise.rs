//! The kit judges a host that is not corral by name: corral disguised as `herd` (the script and
//! its profile in `herd/`), with its own tool name, command words, environment names, device
//! store and runtime dir, hello version key, a key of its own on every frame and its own error
//! messages. Every case of the `wire`, `host-files` and `notify` suites passes through the
//! profile alone, with strict-grade notes for the extra key, and `corral-cli` is not run. The
//! script refuses to run when the kit hands it one of corral's variables, and its places are
//! not corral's, so a session that depends on a corral name again fails here.

use std::path::{Path, PathBuf};

use crate::common::{command, corral, locate_in};

const RUNNER: &str = env!("CARGO_BIN_EXE_corral-conformance");

fn herd_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/herd")
}

/// herd's frame filter, an example of this crate that `cargo test` builds.
fn herd_filter() -> PathBuf {
    let built = Path::new(RUNNER)
        .parent()
        .unwrap()
        .join("examples/herd_filter");
    assert!(
        built.is_file(),
        "{} is not built: `cargo test -p conformance` builds it",
        built.display()
    );
    built
}

/// Runs the runner against herd with `args` after the profile's, every location it writes to
/// in `env`; stdout, stderr and whether it succeeded.
fn run_herd(env: &Path, args: &[&str]) -> (String, String, bool) {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cmd = command(RUNNER);
    locate_in(&mut cmd, env);
    // The run's work dir where an ordinary run makes it (in memory, without $TMPDIR): a
    // daemon's socket path lives under it and must be under SUN_LEN, and window.budget-frame's
    // count of events depends on how long the fleet's paths are.
    cmd.env_remove("TMPDIR")
        .arg("--kit")
        .arg(checkout)
        .arg("--profile")
        .arg(herd_dir().join("herd.toml"))
        .arg("--host-cli")
        .arg(herd_dir().join("herd"))
        .args(args)
        .env("HERD_REAL", corral())
        .env("HERD_FILTER", herd_filter());
    let out = cmd.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[test]
fn a_host_that_is_not_corral_by_name_passes_wire_host_files_and_notify_through_its_profile() {
    let root = tempfile::tempdir().unwrap();
    let (stdout, stderr, ok) = run_herd(
        root.path(),
        &[
            "--suite",
            "wire",
            "--suite",
            "host-files",
            "--suite",
            "notify",
            "--long",
        ],
    );
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let closing = stdout.lines().last().unwrap_or_default();
    assert!(
        closing.contains(" 0 failed, 0 skipped ·"),
        "every case ran and passed: {closing}"
    );
    for suite in ["wire", "host-files", "notify"] {
        assert!(
            closing.contains(&format!("{suite} ")),
            "{suite} ran: {closing}"
        );
    }
    assert!(!closing.contains("corral-cli"), "{closing}");
    // The key herd adds to every frame is a strict-grade note, never a failure.
    assert!(
        stdout.contains("keys the protocol does not name: /x_herd"),
        "{stdout}"
    );
    assert!(stdout.contains("strict grade: "), "{stdout}");
}

#[test]
fn herds_extra_key_fails_strict_and_corrals_cli_is_not_herds() {
    let root = tempfile::tempdir().unwrap();
    let (stdout, _, ok) = run_herd(
        root.path(),
        &["--case", "handshake.second-hello", "--strict"],
    );
    assert!(!ok, "{stdout}");
    assert!(
        stdout.contains("--strict: the host sent what the protocol allows"),
        "{stdout}"
    );
    let (stdout, _, ok) = run_herd(root.path(), &["--case", "ls.json"]);
    assert!(ok, "{stdout}");
    assert!(
        stdout.contains("the corral-cli suite checks corral's own command line; the host is herd"),
        "{stdout}"
    );
}

#[test]
fn profile_init_writes_a_starting_profile_that_reads_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    let out = command(RUNNER)
        .args(["profile", "init"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let profile = golden::HostProfile::load(&file).unwrap();
    assert_eq!(profile.tool, "mytool");
    let again = command(RUNNER)
        .args(["profile", "init"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("exists") && err.lines().count() == 1, "{err}");
    let printed = command(RUNNER).args(["profile", "init"]).output().unwrap();
    assert_eq!(printed.stdout, std::fs::read(&file).unwrap());
}
