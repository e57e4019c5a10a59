//! The requirement ledger against the golden sessions: every id a session names exists, statuses
//! agree with the sessions in both directions, a case's grade follows its requirements' levels,
//! and the coverage rule (every frame variant of the schemas appears in some session or is stood
//! for by a pending requirement's `frames`).

use std::collections::{BTreeMap, BTreeSet};

use golden::ledger::{CaseBasis, CaseEntry};
use golden::session::Session;
use golden::validate::FrameSchema;
use golden::{Ledger, Level, Status, Step, Suite};
use serde_json::Value;

/// Ids a session names that the ledger does not have. The runner refuses such a session.
pub fn unknown_ids(ledger: &Ledger, session: &Session) -> Vec<String> {
    let ids = ledger.by_id();
    session
        .header
        .requirements
        .iter()
        .filter(|id| !ids.contains_key(id.as_str()))
        .cloned()
        .collect()
}

/// Whether a failure of this case fails the run: true when any of its requirements is a `must`.
pub fn strict(ledger: &Ledger, requirements: &[String]) -> bool {
    let ids = ledger.by_id();
    requirements
        .iter()
        .any(|id| ids.get(id.as_str()).is_none_or(|r| r.level == Level::Must))
}

/// Every inconsistency between the ledger and the full set of sessions, one line each.
pub fn check(ledger: &Ledger, sessions: &[Session], variants: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for requirement in &ledger.requirements {
        if !seen.insert(requirement.id.as_str()) {
            problems.push(format!("requirement `{}` is listed twice", requirement.id));
        }
    }
    let by_case: BTreeMap<&str, &Session> = sessions
        .iter()
        .map(|session| (session.header.case.as_str(), session))
        .collect();
    for session in sessions {
        for id in unknown_ids(ledger, session) {
            problems.push(format!(
                "{}: names requirement `{id}`, which the ledger does not have",
                session.path.display()
            ));
        }
    }
    for requirement in &ledger.requirements {
        let id = &requirement.id;
        match requirement.status {
            Status::Tested if requirement.cases.is_empty() => {
                problems.push(format!("`{id}` is tested but names no case"));
            }
            Status::Pending | Status::Excluded if requirement.reason.is_none() => {
                problems.push(format!("`{id}` is not tested and gives no reason"));
            }
            Status::Pending | Status::Excluded if !requirement.cases.is_empty() => {
                problems.push(format!("`{id}` is not tested but names cases"));
            }
            _ => {}
        }
        if !requirement.frames.is_empty() && requirement.status != Status::Pending {
            problems.push(format!("`{id}` lists `frames` but is not pending"));
        }
        for frame in &requirement.frames {
            if !variants.contains(frame) {
                problems.push(format!("`{id}` lists `{frame}`, which is no frame variant"));
            }
        }
        let only_cli = requirement.status == Status::Tested
            && requirement.cases.iter().all(|case| {
                by_case
                    .get(case.as_str())
                    .is_some_and(|session| session.header.suite == Suite::CorralCli)
            });
        if only_cli != requirement.corral_only {
            problems.push(if only_cli {
                format!(
                    "`{id}` is tested only by corral-cli cases: mark it `corral_only = true`, or \
                     test it in a suite any host runs"
                )
            } else {
                format!("`{id}` says `corral_only` but a suite any host runs tests it")
            });
        }
        for case in &requirement.cases {
            match by_case.get(case.as_str()) {
                None => problems.push(format!("`{id}` names case `{case}`, which does not exist")),
                Some(session) if !session.header.requirements.contains(id) => {
                    problems.push(format!(
                        "`{id}` names case `{case}`, but that session does not name `{id}`"
                    ));
                }
                Some(_) => {}
            }
        }
    }
    problems.extend(check_cases(ledger, &by_case));
    let ids = ledger.by_id();
    for session in sessions {
        for id in &session.header.requirements {
            if let Some(requirement) = ids.get(id.as_str())
                && !requirement.cases.contains(&session.header.case)
            {
                problems.push(format!(
                    "case `{}` tests `{id}`, but the ledger does not list it there (status `{}`)",
                    session.header.case,
                    match requirement.status {
                        Status::Tested => "tested",
                        Status::Pending => "pending",
                        Status::Excluded => "excluded",
                    }
                ));
            }
        }
    }
    problems
}

/// The `[[case]]` entries against the sessions: every case of a suite any host runs has one
/// entry, resting on the protocol (`declared` exactly when its header needs declared actions);
/// every entry names a case, and one in a suite only corral runs says it was moved.
fn check_cases(ledger: &Ledger, by_case: &BTreeMap<&str, &Session>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut entries: BTreeMap<&str, &CaseEntry> = BTreeMap::new();
    for entry in &ledger.cases {
        if entries.insert(entry.id.as_str(), entry).is_some() {
            problems.push(format!("case `{}` has two [[case]] entries", entry.id));
        }
    }
    for (id, entry) in &entries {
        let Some(session) = by_case.get(id) else {
            problems.push(format!("[[case]] `{id}` names no golden case"));
            continue;
        };
        let suite = session.header.suite;
        let any_host = matches!(suite, Suite::Wire | Suite::HostFiles);
        let declares = !session.header.manifests.is_empty();
        match entry.basis {
            CaseBasis::Moved if any_host => problems.push(format!(
                "case `{id}` says it was moved, but it is in the {suite} suite"
            )),
            CaseBasis::Moved if entry.note.is_none() => {
                problems.push(format!("case `{id}` was moved: its `note` says why"))
            }
            CaseBasis::Moved => {}
            _ if !any_host => problems.push(format!(
                "case `{id}` is in the {suite} suite, which only some hosts run: its entry says \
                 `moved`, or it has none"
            )),
            CaseBasis::Protocol if declares => problems.push(format!(
                "case `{id}` needs declared actions (its header's `manifests`): its basis is \
                 `declared`"
            )),
            CaseBasis::Declared if !declares => problems.push(format!(
                "case `{id}` says `declared`, but its header needs no declared action"
            )),
            CaseBasis::Protocol | CaseBasis::Declared => {}
        }
    }
    for (id, session) in by_case {
        let any_host = matches!(session.header.suite, Suite::Wire | Suite::HostFiles);
        if any_host && !entries.contains_key(id) {
            problems.push(format!(
                "case `{id}` ({}) has no [[case]] entry saying which passages it rests on",
                session.header.suite
            ));
        }
    }
    problems
}

/// Every frame variant of the wire: `request:<t>`, `response:<t>`, and for a body tagged again
/// (cards) `response:card:<tag>` instead of `response:card`.
pub fn variants(requests: &FrameSchema, responses: &FrameSchema) -> Vec<String> {
    let mut out = Vec::new();
    for (direction, schema) in [("request", requests), ("response", responses)] {
        let all = schema.variants();
        for variant in &all {
            match variant.split_once('/') {
                Some((t, inner)) => {
                    let tag = inner.split_once('=').map_or(inner, |(_, tag)| tag);
                    out.push(format!("{direction}:{t}:{tag}"));
                }
                None if all.iter().any(|v| v.starts_with(&format!("{variant}/"))) => {}
                None => out.push(format!("{direction}:{variant}")),
            }
        }
    }
    out
}

fn frame_variant(direction: &str, frame: &Value) -> Option<String> {
    let t = frame.get("t")?.as_str()?;
    if t.starts_with('$') {
        return None;
    }
    Some(match frame.get("card").and_then(Value::as_str) {
        Some(card) if t == "card" && !card.starts_with('$') => format!("{direction}:card:{card}"),
        _ => format!("{direction}:{t}"),
    })
}

/// The frame variants one session shows, in the names [`variants`] uses.
pub fn shown(session: &Session) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for located in &session.steps {
        match &located.step.step {
            Step::Send(frame) => out.extend(frame_variant("request", frame)),
            Step::Expect(frame) => out.extend(frame_variant("response", frame)),
            Step::ExpectUnordered(frames) => {
                out.extend(frames.iter().filter_map(|f| frame_variant("response", f)))
            }
            Step::Barrier(_) => {
                out.insert("request:snapshot".into());
                out.insert("response:snapshot".into());
            }
            _ => {}
        }
    }
    out
}

/// Variants no session shows and no pending requirement stands for.
pub fn uncovered(variants: &[String], sessions: &[Session], ledger: &Ledger) -> Vec<String> {
    let shown: BTreeSet<String> = sessions.iter().flat_map(shown).collect();
    let pending: BTreeSet<&str> = ledger
        .requirements
        .iter()
        .filter(|r| r.status == Status::Pending)
        .flat_map(|r| r.frames.iter().map(String::as_str))
        .collect();
    variants
        .iter()
        .filter(|v| !shown.contains(*v) && !pending.contains(v.as_str()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use golden::Requirement;

    use super::*;
    use crate::checkout as workspace_root;
    use golden::session;

    fn requirement(id: &str, level: Level, status: Status) -> Requirement {
        Requirement {
            id: id.into(),
            spec: "protocol".into(),
            section: "Lines".into(),
            level,
            text: "t".into(),
            status,
            reason: (status != Status::Tested).then(|| "later".to_owned()),
            cases: Vec::new(),
            refines: None,
            frames: Vec::new(),
            corral_only: false,
        }
    }

    fn session_naming(case: &str, ids: &[&str], steps: &[&str]) -> Session {
        let header = serde_json::json!({"case": case, "suite": "wire", "about": "a", "requirements": ids, "fixture": "small"});
        let mut text = format!("{header}\n");
        for step in steps {
            text.push_str(step);
            text.push('\n');
        }
        session::parse(&PathBuf::from(format!("s/{case}.ndjson")), &text).unwrap()
    }

    #[test]
    fn an_unknown_requirement_id_is_reported() {
        let ledger = Ledger {
            requirements: vec![requirement("a.b", Level::Must, Status::Pending)],
            ..Ledger::default()
        };
        let session = session_naming("x", &["a.c"], &[]);
        assert_eq!(unknown_ids(&ledger, &session), ["a.c"]);
        let problems = check(&ledger, &[session], &[]);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`a.c`, which the ledger does not have")),
            "{problems:?}"
        );
    }

    #[test]
    fn statuses_must_agree_with_sessions_both_ways() {
        let mut tested = requirement("a.b", Level::Must, Status::Tested);
        tested.cases = vec!["y".into()];
        let pending = requirement("a.c", Level::Must, Status::Pending);
        let ledger = Ledger {
            requirements: vec![tested, pending],
            ..Ledger::default()
        };
        let session = session_naming("x", &["a.b", "a.c"], &[]);
        let problems = check(&ledger, &[session], &[]);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("names case `y`, which does not exist")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("case `x` tests `a.c`") && p.contains("pending")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("case `x` tests `a.b`")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_consistent_pair_has_no_problem() {
        let mut tested = requirement("a.b", Level::Must, Status::Tested);
        tested.cases = vec!["x".into()];
        let ledger = Ledger {
            requirements: vec![tested],
            cases: vec![case_entry("x", CaseBasis::Protocol)],
        };
        assert!(check(&ledger, &[session_naming("x", &["a.b"], &[])], &[]).is_empty());
    }

    fn case_entry(id: &str, basis: CaseBasis) -> CaseEntry {
        CaseEntry {
            id: id.into(),
            basis,
            passages: vec!["protocol.md#lines".into()],
            note: None,
        }
    }

    #[test]
    fn every_case_any_host_runs_says_what_it_rests_on() {
        let mut tested = requirement("a.b", Level::Must, Status::Tested);
        tested.cases = vec!["w".into(), "d".into(), "c".into(), "m".into()];
        let declared = session::parse(
            &PathBuf::from("s/d.ndjson"),
            concat!(
                r#"{"case":"d","suite":"wire","about":"a","requirements":["a.b"],"fixture":"small","manifests":{"claude.approve":"keys"}}"#,
                "\n"
            ),
        )
        .unwrap();
        let cli = session::parse(
            &PathBuf::from("s/c.ndjson"),
            concat!(
                r#"{"case":"c","suite":"corral-cli","about":"a","requirements":["a.b"],"fixture":"small"}"#,
                "\n"
            ),
        )
        .unwrap();
        let sessions = [
            session_naming("w", &["a.b"], &[]),
            declared,
            cli,
            session_naming("m", &["a.b"], &[]),
        ];
        let ledger = Ledger {
            requirements: vec![tested],
            cases: vec![
                case_entry("d", CaseBasis::Protocol),
                case_entry("c", CaseBasis::Protocol),
                case_entry("m", CaseBasis::Moved),
                case_entry("gone", CaseBasis::Protocol),
            ],
        };
        let problems: Vec<String> = check(&ledger, &sessions, &[])
            .into_iter()
            .filter(|p| !p.contains("corral_only"))
            .collect();
        assert_eq!(
            problems,
            [
                "case `c` is in the corral-cli suite, which only some hosts run: its entry says \
                 `moved`, or it has none",
                "case `d` needs declared actions (its header's `manifests`): its basis is \
                 `declared`",
                "[[case]] `gone` names no golden case",
                "case `m` says it was moved, but it is in the wire suite",
                "case `w` (wire) has no [[case]] entry saying which passages it rests on",
            ]
        );
    }

    #[test]
    fn a_case_of_only_should_requirements_is_not_strict() {
        let ledger = Ledger {
            requirements: vec![
                requirement("a.must", Level::Must, Status::Pending),
                requirement("a.should", Level::Should, Status::Pending),
                requirement("a.may", Level::May, Status::Pending),
            ],
            ..Ledger::default()
        };
        assert!(!strict(&ledger, &["a.should".into(), "a.may".into()]));
        assert!(strict(&ledger, &["a.should".into(), "a.must".into()]));
    }

    #[test]
    fn coverage_counts_sends_expects_and_card_tags() {
        let session = session_naming(
            "x",
            &["a.b"],
            &[
                r#"{"send":{"schema":1,"id":"1","t":"card","pane":"%1"}}"#,
                r#"{"expect":{"schema":1,"id":"1","t":"card","card":"none"}}"#,
                r#"{"expect":{"schema":1,"id":"$string","t":"$string","$more":true}}"#,
            ],
        );
        let shown = shown(&session);
        assert_eq!(
            shown.into_iter().collect::<Vec<_>>(),
            ["request:card", "response:card:none"]
        );
    }

    #[test]
    fn a_pending_requirement_covers_the_frames_it_lists() {
        let mut pending = requirement("a.b", Level::Must, Status::Pending);
        pending.frames = vec!["response:window".into()];
        let ledger = Ledger {
            requirements: vec![pending],
            ..Ledger::default()
        };
        let variants = ["response:window".to_owned(), "response:event".to_owned()];
        assert_eq!(uncovered(&variants, &[], &ledger), ["response:event"]);
    }

    #[test]
    fn variants_come_from_the_schemas() {
        let dir = workspace_root().join("schema/json");
        let requests = FrameSchema::load(&dir, "requests.schema.json").unwrap();
        let responses = FrameSchema::load(&dir, "responses.schema.json").unwrap();
        let all = variants(&requests, &responses);
        for expected in [
            "request:hello",
            "request:receipts",
            "response:ack",
            "response:card:informational",
        ] {
            assert!(all.contains(&expected.to_owned()), "{expected} in {all:?}");
        }
        assert!(!all.contains(&"response:card".to_owned()));
    }
}
