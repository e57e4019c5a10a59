//! `corral-sim replay --app 'corral-remote --replay'` over the golden sessions a client can play:
//! every one passes. Every other golden session is named, with the reason, in the harness's
//! lists ([`client::replay::flows`]), so a new session is classified before it is forgotten.

use std::path::PathBuf;

use client::replay::flows::{FLOWS, Verdict, verdict};
use serde_json::Value;

use crate::support::{REMOTE, command, sim};

fn sessions() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../golden/sessions")
}

fn cases() -> Vec<String> {
    let mut cases: Vec<String> = std::fs::read_dir(sessions())
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".ndjson").map(str::to_owned)
        })
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_golden_session_is_played_or_said_why_not() {
    let cases = cases();
    let unknown: Vec<&String> = cases
        .iter()
        .filter(|case| verdict(case) == Verdict::Unknown)
        .collect();
    assert!(
        unknown.is_empty(),
        "sessions the harness neither plays nor excludes: {unknown:?}"
    );
    for case in FLOWS {
        assert!(
            cases.iter().any(|c| c == case),
            "{case} has a flow but no session"
        );
    }
}

#[test]
fn the_replayer_passes_every_flow() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    let files: Vec<PathBuf> = FLOWS
        .iter()
        .map(|case| sessions().join(format!("{case}.ndjson")))
        .collect();
    let out = command(sim(), tmp.path())
        .arg("replay")
        .arg("--app")
        .arg(format!("'{REMOTE}' --replay"))
        .arg("--report")
        .arg(&report)
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["failed"], 0, "{stdout}");
    assert_eq!(report["skipped"], 0, "{stdout}");
    let passed: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| case["grade"] == "pass")
        .map(|case| case["case"].as_str().unwrap())
        .collect();
    for case in FLOWS {
        assert!(passed.contains(case), "{case} did not pass:\n{stdout}");
    }
}

#[test]
fn the_list_names_every_flow_and_every_exclusion() {
    let tmp = tempfile::tempdir().unwrap();
    let out = command(REMOTE, tmp.path())
        .args(["--replay", "--list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("subscribe.edges ") && l.ends_with(" flow"))
    );
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("framing.* ") && l.contains("not for a client"))
    );
}
