//! The kit judges the protocol, not corral: `minimal-host` (the example built from
//! `minimal/host/`, written from docs/protocol.md alone, with its profile `minimal/minimal.toml`)
//! has no action manifests and no transcript reader, declares neither, and fails exactly the
//! cases that rest on what it lacks on purpose: every case that reads a window or an event of a
//! served store (`transcript.served-stores`: the protocol has a host serve Claude Code's and
//! Codex's transcripts, and it serves none). Every other case of `wire` and `host-files` passes,
//! or is skipped because it needs an action the profile does not declare (the keys an action
//! types, the labels a card shows and what a manifest covers are a host's own).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{command, locate_in};

const RUNNER: &str = env!("CARGO_BIN_EXE_corral-conformance");

/// The requirement the host breaks on purpose: it reads no transcript store.
const BROKEN: &str = "transcript.served-stores";

/// Every case the host fails, each because it serves no window or event of a store.
const FAILS: [&str; 28] = [
    "card.none",
    "cursor.echoed-exactly",
    "cursor.foreign",
    "cursor.grown",
    "cursor.replaced",
    "cursor.rewritten",
    "cursor.rotated",
    "cursor.tampered",
    "cursor.truncated",
    "event.claude-2.0-corpus",
    "event.claude-2.1-early-corpus",
    "event.claude-2.1-late-corpus",
    "event.claude-2.1-subagent-corpus",
    "event.claude-corpus",
    "event.codex-0.104-corpus",
    "event.codex-0.40-corpus",
    "event.codex-corpus",
    "event.codex-legacy-corpus",
    "transcript.store-walk",
    "window.bookkeeping-runs",
    "window.budget-floor",
    "window.budget-frame",
    "window.budget-header",
    "window.budget-read",
    "window.claude-corpus",
    "window.codex-corpus",
    "window.last",
    "window.sparse-terabyte",
];

fn minimal_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/minimal")
}

/// The host, an example of this crate that `cargo test` builds.
fn minimal_host() -> PathBuf {
    let built = Path::new(RUNNER)
        .parent()
        .unwrap()
        .join("examples/minimal-host");
    assert!(
        built.is_file(),
        "{} is not built: `cargo test -p conformance` builds it",
        built.display()
    );
    built
}

/// The cases of a run's report that ended `grade`.
fn graded(report: &serde_json::Value, grade: &str) -> BTreeSet<String> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| case["grade"] == grade)
        .map(|case| case["case"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_minimal_host_from_the_protocol_fails_only_the_cases_it_breaks_on_purpose() {
    let root = tempfile::tempdir().unwrap();
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let report = root.path().join("report.json");
    let mut cmd = command(RUNNER);
    locate_in(&mut cmd, root.path());
    // The run's work dir where an ordinary run makes it (in memory, without $TMPDIR), as the
    // disguised host's test does: window sessions count what fits in a frame of the fleet's paths.
    cmd.env_remove("TMPDIR")
        .arg("--kit")
        .arg(checkout)
        .arg("--profile")
        .arg(minimal_dir().join("minimal.toml"))
        .arg("--host-cli")
        .arg(minimal_host())
        .args(["--suite", "wire", "--suite", "host-files", "--report-json"])
        .arg(&report);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "it breaks rules on purpose:\n{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let failed: BTreeSet<String> = graded(&report, "fail")
        .union(&graded(&report, "non-strict"))
        .cloned()
        .collect();
    let expected: BTreeSet<String> = FAILS.iter().map(|case| (*case).to_owned()).collect();
    assert_eq!(failed, expected, "{stdout}");
    // Each rests on the requirement the host breaks.
    for case in FAILS {
        let session = golden::session::load(
            &checkout
                .join("golden/sessions")
                .join(format!("{case}.ndjson")),
        )
        .unwrap();
        assert!(
            session.header.requirements.iter().any(|id| id == BROKEN),
            "{case} fails, and does not rest on {BROKEN}"
        );
    }
    // What it skips, it skips for what its profile does not declare (its actions, its hook) or
    // for being long, never for anything else.
    for case in report["cases"].as_array().unwrap() {
        if case["grade"] == "skipped" {
            let reason = case["skip_reason"].as_str().unwrap_or_default();
            let declared = reason.contains("the host profile declares")
                || reason.contains("the host profile has no `hook`")
                || reason.starts_with("a long case");
            assert!(declared, "{}: {reason}", case["case"]);
        }
    }
    let passed = graded(&report, "pass");
    assert!(passed.len() > 70, "{passed:?}");
    for case in [
        "handshake.hello-scopes",
        "dispatch.unlisted-action",
        "card.no-manifest",
        "transcript.unsupported",
        "pane-options.one-list-panes-per-cycle",
        "serve.no-server-logged",
    ] {
        assert!(passed.contains(case), "{case} passes: {stdout}");
    }
}
