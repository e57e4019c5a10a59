//! The catch judgement against mutants fed the recorded traffic of real sessions: misfiring
//! ones (one that changes nothing, one that breaks what it does not declare) are never caught,
//! and a catch needs the failure to name what the mutant changed, in a line it changed, with the
//! control passing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use golden::clock::Window;
use golden::pattern::{self, Captures};
use golden::session::Step;
use serde_json::Value;

use super::*;
use crate::mutants::{self, Lines, Transparent};
use crate::traffic;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// What `mutant` does to the recorded traffic of `case`, host process by host process.
fn changes(mutant: &Mutant, case: &str) -> Vec<Vec<Entry>> {
    let path = root().join(format!("src/traffic/{case}.ndjson"));
    let text = std::fs::read_to_string(&path).unwrap();
    traffic::processes(&text)
        .unwrap()
        .iter()
        .map(|process| traffic::replay(mutant.filter(), process))
        .collect()
}

/// The lines the mutant passed on in place of the host's (rewritten ones, copies, moved ones).
fn passed(changes: &[Vec<Entry>]) -> Vec<String> {
    changes
        .iter()
        .flatten()
        .flat_map(|entry| match entry {
            Entry::Changed { passed, .. } | Entry::Released(passed) => passed.clone(),
            _ => Vec::new(),
        })
        .collect()
}

/// Where the runner finds `line` wrong: the session's `expect` for its id, matched against it
/// (the sessions used here expect literal frames).
fn found_in_session(case: &str, line: &str) -> (usize, Found) {
    let session =
        golden::session::load(&root().join(format!("../golden/sessions/{case}.ndjson"))).unwrap();
    let frame: Value = serde_json::from_str(line).unwrap();
    let located = session
        .steps
        .iter()
        .find(|located| matches!(&located.step.step, Step::Expect(p) if p["id"] == frame["id"]))
        .expect("the session expects a frame with the line's id");
    let Step::Expect(expected) = &located.step.step else {
        unreachable!()
    };
    let mismatch = pattern::matches(expected, &frame, &mut Captures::new(), Window::ANY)
        .expect_err("the line differs from what the session expects");
    (
        located.line,
        Found::Member {
            pointer: mismatch.path,
            received: line.to_owned(),
        },
    )
}

fn result(case: &str, failed_at: Option<(usize, Found)>) -> CaseResult {
    CaseResult {
        case: case.to_owned(),
        file: PathBuf::new(),
        shown: format!("golden/sessions/{case}.ndjson"),
        requirements: Vec::new(),
        suite: golden::Suite::Wire,
        grade: if failed_at.is_some() {
            Grade::Fail
        } else {
            Grade::Pass
        },
        notes: Vec::new(),
        log: Vec::new(),
        duration: Duration::ZERO,
        skip_reason: None,
        failure: failed_at.map(|(line, found)| Failure {
            location: format!("golden/sessions/{case}.ndjson:{line}"),
            checking: None,
            step: String::new(),
            message: "the frame does not match".to_owned(),
            diff: None,
            found: Some(found),
            transcript: Vec::new(),
            stderr: String::new(),
            rerun: String::new(),
        }),
        blessed: Vec::new(),
    }
}

fn judged(mutant: &Mutant, result: &CaseResult, changes: &[Vec<Entry>]) -> Verdict {
    judge(
        mutant,
        &[CaseRun {
            result,
            changes,
            control_passed: true,
        }],
    )
}

fn says(verdict: &Verdict, what: &str) -> bool {
    verdict
        .problems
        .iter()
        .any(|problem| problem.contains(what))
}

const INFORMATIONAL: &str = "card.informational";

#[test]
fn a_mutant_that_changes_nothing_never_fires_and_a_failure_without_its_change_is_no_catch() {
    let idle = Mutant::new(
        "changes-nothing",
        "card.informational-no-detail",
        "passes every line as it is",
        Touch::Member("/detail"),
        || Box::new(Transparent),
    );
    let changes = changes(&idle, INFORMATIONAL);
    assert_eq!(changed(&changes), 0);
    let verdict = judged(&idle, &result(INFORMATIONAL, None), &changes);
    assert!(!verdict.caught());
    assert!(says(&verdict, "never fired"), "{:?}", verdict.problems);
    // The case fails anyway (a broken host, a flaky fleet): still no catch.
    let failing = result(
        INFORMATIONAL,
        Some((
            32,
            Found::Member {
                pointer: "/detail".into(),
                received: "{}".into(),
            },
        )),
    );
    let verdict = judged(&idle, &failing, &changes);
    assert!(!verdict.caught());
    assert!(
        says(&verdict, "changed none of its lines"),
        "{:?}",
        verdict.problems
    );
}

#[test]
fn a_mutant_that_breaks_what_it_does_not_declare_is_caught_elsewhere() {
    // Declares the detail, shortens the headline: `card.informational` fails, at /headline.
    let misfiring = Mutant::new(
        "detail-but-headline",
        "card.informational-no-detail",
        "says it nulls a missing detail, shortens a headline instead",
        Touch::Member("/detail"),
        || {
            Box::new(Lines(|line| {
                line.replace("\"Waiting for you\"", "\"Waiting\"")
            }))
        },
    );
    let changes = changes(&misfiring, INFORMATIONAL);
    assert!(changed(&changes) > 0);
    assert_eq!(
        undeclared(misfiring.touches, &changes),
        ["changes /headline"]
    );
    let first = passed(&changes).remove(0);
    let failed_at = found_in_session(INFORMATIONAL, &first);
    assert!(
        matches!(&failed_at.1, Found::Member { pointer, .. } if pointer == "/headline"),
        "{failed_at:?}"
    );
    let verdict = judged(
        &misfiring,
        &result(INFORMATIONAL, Some(failed_at)),
        &changes,
    );
    assert!(!verdict.caught());
    assert!(
        says(
            &verdict,
            "changes /headline in `card.informational`, which it does not declare"
        ),
        "{:?}",
        verdict.problems
    );
    assert!(
        says(
            &verdict,
            "caught elsewhere: `card.informational` failed at golden/sessions/card.informational.ndjson:13 (at /headline)"
        ),
        "{:?}",
        verdict.problems
    );
}

#[test]
fn no_detail_left_null_is_caught_at_the_detail_it_nulls_and_nowhere_else() {
    let mutant = mutants::find("no-detail-left-null").unwrap();
    let changes = changes(mutant, INFORMATIONAL);
    assert_eq!(
        changed(&changes),
        1,
        "only the card whose detail is `unknown`"
    );
    assert!(undeclared(mutant.touches, &changes).is_empty());
    let nulled = passed(&changes).remove(0);
    let failed_at = found_in_session(INFORMATIONAL, &nulled);
    let verdict = judged(
        mutant,
        &result(INFORMATIONAL, Some(failed_at.clone())),
        &changes,
    );
    assert!(verdict.caught(), "{:?}", verdict.problems);
    assert_eq!(verdict.catches[0].at, "at /detail");
    // Without the expectation it is about, the session passes: the mutant is missed.
    let verdict = judged(mutant, &result(INFORMATIONAL, None), &changes);
    assert!(!verdict.caught());
    assert!(
        says(&verdict, "every one of them passed"),
        "{:?}",
        verdict.problems
    );
    // A failure the transparent filter shares proves nothing.
    let verdict = judge(
        mutant,
        &[CaseRun {
            result: &result(INFORMATIONAL, Some(failed_at)),
            changes: &changes,
            control_passed: false,
        }],
    );
    assert!(!verdict.caught());
    assert!(
        says(&verdict, "transparent filter too"),
        "{:?}",
        verdict.problems
    );
}

#[test]
fn stale_edges_is_caught_at_at_ms_in_an_edge_it_restamped_only() {
    let mutant = mutants::find("stale-edges").unwrap();
    let changes = changes(mutant, "subscribe.edges");
    assert!(changed(&changes) > 0);
    assert!(undeclared(mutant.touches, &changes).is_empty());
    let edge = passed(&changes).remove(0);
    let at = |pointer: &str, received: &str| {
        result(
            "subscribe.edges",
            Some((
                10,
                Found::Member {
                    pointer: pointer.into(),
                    received: received.into(),
                },
            )),
        )
    };
    assert!(judged(mutant, &at("/at_ms", &edge), &changes).caught());
    let elsewhere = judged(mutant, &at("/pane", &edge), &changes);
    assert!(!elsewhere.caught());
    assert!(
        says(&elsewhere, "/pane lies outside /at_ms"),
        "{:?}",
        elsewhere.problems
    );
    let host_line = r#"{"schema":1,"id":"x","t":"edge","at_ms":1}"#;
    let unchanged = judged(mutant, &at("/at_ms", host_line), &changes);
    assert!(
        says(&unchanged, "not one the mutant rewrote"),
        "{:?}",
        unchanged.problems
    );
}

#[test]
fn frames_moved_added_or_dropped_and_exit_codes_are_caught_where_they_show() {
    let swap = mutants::find("answers-out-of-order").unwrap();
    let swapped = changes(swap, "framing.pipelined");
    assert!(undeclared(swap.touches, &swapped).is_empty());
    let moved = passed(&swapped).remove(0);
    let member = |case: &str, pointer: &str, received: &str| {
        result(
            case,
            Some((
                9,
                Found::Member {
                    pointer: pointer.into(),
                    received: received.into(),
                },
            )),
        )
    };
    assert!(judged(swap, &member("framing.pipelined", "/id", &moved), &swapped).caught());
    assert!(!judged(swap, &member("framing.pipelined", "/t", &moved), &swapped).caught());

    let twice = mutants::find("edges-twice").unwrap();
    let doubled = changes(twice, "subscribe.edges");
    assert!(undeclared(twice.touches, &doubled).is_empty());
    let copy = passed(&doubled).remove(1);
    let unexpected = |received: &str| {
        result(
            "subscribe.edges",
            Some((
                12,
                Found::Unexpected {
                    received: received.into(),
                },
            )),
        )
    };
    assert!(judged(twice, &unexpected(&copy), &doubled).caught());
    assert!(!judged(twice, &unexpected("{\"t\":\"ack\"}"), &doubled).caught());

    let silent = mutants::find("silent-empty-first-snapshot").unwrap();
    let dropped = changes(silent, "subscribe.empty-selection");
    assert!(undeclared(silent.touches, &dropped).is_empty());
    let missing = result("subscribe.empty-selection", Some((8, Found::Missing)));
    assert!(judged(silent, &missing, &dropped).caught());
    let other = member("subscribe.empty-selection", "/id", "{}");
    assert!(!judged(silent, &other, &dropped).caught());

    let revoked = mutants::find("revoked-exit-one").unwrap();
    let exits = changes(revoked, "revoke.next-request");
    assert!(undeclared(revoked.touches, &exits).is_empty());
    let exit = |got: i32| {
        result(
            "revoke.next-request",
            Some((
                10,
                Found::ExitCode {
                    expected: 2,
                    got: Some(got),
                },
            )),
        )
    };
    assert!(judged(revoked, &exit(1), &exits).caught());
    assert!(!judged(revoked, &exit(3), &exits).caught());
    // A mutant that declares a member but changes the exit code says so.
    assert_eq!(
        undeclared(Touch::Member("/code"), &exits),
        ["changes the exit code"]
    );
}

#[test]
fn differences_name_members_missing_or_added_arrays_resized_and_values_changed() {
    assert_eq!(
        differences_of(
            r#"{"a":1,"b":[1,2],"c":{"d":null},"e":[1]}"#,
            r#"{"a":2,"b":[1,3],"c":{},"e":[1,2],"f":0}"#
        ),
        ["/a", "/b/1", "/c/d", "/e", "/f"]
    );
    assert!(differences_of("not json", "{}").is_empty());
    assert!(differences_of(r#"{"a":1}"#, r#"{"a":1}"#).is_empty());
}
