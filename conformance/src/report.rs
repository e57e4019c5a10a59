//! What a run tells people and machines: one console line per case (a failure block under a
//! failing one), the closing line (the cases' counts and what they showed of the requirement
//! ledger, so a count of passed cases never reads as "the protocol passes"), and the JSON, JUnit
//! XML and Markdown compliance reports, each with the same counts.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use golden::{Backend, Ledger, Level, Requirement, Status, Suite};
use serde_json::{Value, json};

use super::outcome::{CaseResult, Failure, Grade};

/// Counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub non_strict: usize,
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let mut summary = Summary::default();
        for result in results {
            match result.grade {
                Grade::Pass => summary.passed += 1,
                Grade::Fail => summary.failed += 1,
                Grade::Skipped => summary.skipped += 1,
                Grade::NonStrict => summary.non_strict += 1,
            }
        }
        summary
    }

    /// The cases' part of the closing line.
    pub fn line(&self) -> String {
        format!(
            "conformance: {} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// What a run showed of the requirement ledger. A requirement the ledger marks tested counts as
/// tested in this run when at least one of its cases ran and every one of its cases that ran
/// passed; with a failing case when one of them failed (a should-level, non-strict failure too);
/// not run when none of them ran (filtered out by `--case`, or skipped). Pending and excluded
/// requirements are the ledger's, which no run changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub tested: usize,
    pub failing: usize,
    pub not_run: usize,
    pub pending: usize,
    pub excluded: usize,
    pub total: usize,
}

impl Coverage {
    pub fn of(ledger: &Ledger, results: &[CaseResult]) -> Coverage {
        Coverage::over(ledger.requirements.iter(), results)
    }

    /// The coverage of `requirements` by `results` (a suite's requirements by its cases).
    fn over<'a>(
        requirements: impl Iterator<Item = &'a Requirement>,
        results: &[CaseResult],
    ) -> Coverage {
        let mut grades: BTreeMap<&str, Vec<Grade>> = BTreeMap::new();
        for result in results {
            for id in &result.requirements {
                grades.entry(id.as_str()).or_default().push(result.grade);
            }
        }
        let mut coverage = Coverage::default();
        for requirement in requirements {
            coverage.total += 1;
            let ran: Vec<Grade> = grades
                .get(requirement.id.as_str())
                .into_iter()
                .flatten()
                .copied()
                .filter(|grade| *grade != Grade::Skipped)
                .collect();
            let count = match requirement.status {
                Status::Pending => &mut coverage.pending,
                Status::Excluded => &mut coverage.excluded,
                Status::Tested if ran.is_empty() => &mut coverage.not_run,
                Status::Tested if ran.iter().all(|grade| *grade == Grade::Pass) => {
                    &mut coverage.tested
                }
                Status::Tested => &mut coverage.failing,
            };
            *count += 1;
        }
        coverage
    }

    /// The requirements' part of the closing line; its words state the rule.
    pub fn line(&self) -> String {
        format!(
            "requirements: {} tested by passing cases, {} with a failing case, {} not run, \
             {} pending, {} excluded of {}",
            self.tested, self.failing, self.not_run, self.pending, self.excluded, self.total
        )
    }
}

/// One suite's part of a run: its cases' counts, and what they showed of the requirements
/// they name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteTally {
    pub suite: Suite,
    pub summary: Summary,
    pub coverage: Coverage,
}

impl SuiteTally {
    /// The suite's part of the closing line: `wire 119 of 119 passed` (`, 3 skipped`).
    fn short(&self) -> String {
        let ran = self.summary.passed + self.summary.failed + self.summary.non_strict;
        let mut text = format!("{} {} of {ran} passed", self.suite, self.summary.passed);
        if self.summary.skipped > 0 {
            text.push_str(&format!(", {} skipped", self.summary.skipped));
        }
        text
    }

    /// The suite's own line: its counts and its requirement coverage.
    pub fn line(&self) -> String {
        let counts = self.summary.line();
        let counts = counts.trim_start_matches("conformance: ");
        format!("suite {}: {counts} · {}", self.suite, self.coverage.line())
    }
}

/// The tally of every suite with a selected case, in [`Suite::ALL`] order. A suite's
/// requirements are those its cases name.
pub fn by_suite(ledger: &Ledger, results: &[CaseResult]) -> Vec<SuiteTally> {
    Suite::ALL
        .into_iter()
        .filter_map(|suite| {
            let cases: Vec<CaseResult> = results
                .iter()
                .filter(|result| result.suite == suite)
                .cloned()
                .collect();
            if cases.is_empty() {
                return None;
            }
            let named: std::collections::BTreeSet<&str> = cases
                .iter()
                .flat_map(|result| result.requirements.iter().map(String::as_str))
                .collect();
            let requirements = ledger
                .requirements
                .iter()
                .filter(|requirement| named.contains(requirement.id.as_str()));
            Some(SuiteTally {
                suite,
                summary: Summary::of(&cases),
                coverage: Coverage::over(requirements, &cases),
            })
        })
        .collect()
}

/// The closing line of a run: the cases' counts, what they showed of the ledger, and each
/// suite's counts.
pub fn closing_line(ledger: &Ledger, results: &[CaseResult]) -> String {
    let suites: Vec<String> = by_suite(ledger, results)
        .iter()
        .map(SuiteTally::short)
        .collect();
    format!(
        "{} · {} · suites: {}",
        Summary::of(results).line(),
        Coverage::of(ledger, results).line(),
        suites.join(", ")
    )
}

fn seconds(result: &CaseResult) -> String {
    format!("{:.2}s", result.duration.as_secs_f64())
}

/// The console text of one case: its line, and a failure block under a failure.
pub fn console(result: &CaseResult) -> String {
    let mut out = String::new();
    let label = match result.grade {
        Grade::Pass => "pass",
        Grade::Fail => "FAIL",
        Grade::NonStrict => "NON-STRICT",
        Grade::Skipped => "skip",
    };
    let _ = write!(out, "{label:<10} {}", result.case);
    match (&result.skip_reason, result.grade) {
        (Some(reason), _) => {
            let _ = write!(out, "  ({reason})");
        }
        (None, _) => {
            let _ = write!(out, "  {}", seconds(result));
        }
    }
    if !result.blessed.is_empty() {
        let _ = write!(out, "  (blessed {} line(s))", result.blessed.len());
    }
    out.push('\n');
    if result.failure.is_none() {
        for note in result.notes.iter().take(NOTES_SHOWN) {
            let _ = writeln!(out, "    strict: {note}");
        }
        if result.notes.len() > NOTES_SHOWN {
            let _ = writeln!(
                out,
                "    strict: … and {} more",
                result.notes.len() - NOTES_SHOWN
            );
        }
    }
    if let Some(failure) = &result.failure {
        out.push_str(&failure_block(failure));
    }
    out
}

/// Strict-grade notes a console line shows under a case (the reports carry them all).
const NOTES_SHOWN: usize = 3;

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|line| format!("{by}{line}\n")).collect()
}

/// The failure block: where, what, the lines sent and received, the diff, stderr, the rerun.
pub fn failure_block(failure: &Failure) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "    at {}", failure.location);
    if let Some(checking) = &failure.checking {
        let _ = writeln!(out, "    checking: {checking}");
    }
    out.push_str(&indent(&failure.step, "      "));
    out.push_str(&indent(&failure.message, "    "));
    if !failure.transcript.is_empty() {
        out.push_str("    lines sent (→) and received (←) on this connection, last ones last:\n");
        for line in &failure.transcript {
            let _ = writeln!(out, "      {line}");
        }
    }
    if let Some(diff) = &failure.diff {
        out.push_str("    diff of what was expected against what was received:\n");
        out.push_str(&indent(diff, "      "));
    }
    if !failure.stderr.trim().is_empty() {
        out.push_str("    host stderr (last lines):\n");
        out.push_str(&indent(&failure.stderr, "      "));
    }
    let _ = writeln!(out, "    rerun: {}", failure.rerun);
    out
}

fn failure_json(failure: &Failure) -> Value {
    json!({
        "location": failure.location,
        "checking": failure.checking,
        "step": failure.step,
        "message": failure.message,
        "diff": failure.diff,
        "transcript": failure.transcript,
        "stderr": failure.stderr,
        "rerun": failure.rerun,
    })
}

/// The JSON report.
pub fn json_report(
    backend: Backend,
    host: &str,
    ledger: &Ledger,
    results: &[CaseResult],
) -> String {
    let summary = Summary::of(results);
    let coverage = Coverage::of(ledger, results);
    let cases: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "case": r.case,
                "suite": r.suite.as_str(),
                "file": r.shown,
                "requirements": r.requirements,
                "grade": r.grade.as_str(),
                "duration_ms": r.duration.as_millis() as u64,
                "skip_reason": r.skip_reason,
                "failure": r.failure.as_ref().map(failure_json),
                "notes": r.notes,
            })
        })
        .collect();
    let report = json!({
        "backend": backend.as_str(),
        "host": host,
        "summary": {
            "passed": summary.passed,
            "failed": summary.failed,
            "skipped": summary.skipped,
            "non_strict": summary.non_strict,
        },
        "requirements": coverage_json(&coverage),
        "suites": by_suite(ledger, results).iter().map(|tally| json!({
            "suite": tally.suite.as_str(),
            "passed": tally.summary.passed,
            "failed": tally.summary.failed,
            "skipped": tally.summary.skipped,
            "non_strict": tally.summary.non_strict,
            "requirements": coverage_json(&tally.coverage),
        })).collect::<Vec<Value>>(),
        "closing_line": closing_line(ledger, results),
        "cases": cases,
    });
    let mut text = serde_json::to_string_pretty(&report).expect("reports encode");
    text.push('\n');
    text
}

fn coverage_json(coverage: &Coverage) -> Value {
    json!({
        "tested": coverage.tested,
        "failing": coverage.failing,
        "not_run": coverage.not_run,
        "pending": coverage.pending,
        "excluded": coverage.excluded,
        "total": coverage.total,
    })
}

fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The JUnit XML report: one testsuite per run, its properties the requirements' counts, one
/// testcase per case.
pub fn junit(backend: Backend, ledger: &Ledger, results: &[CaseResult]) -> String {
    let summary = Summary::of(results);
    let coverage = Coverage::of(ledger, results);
    let total: f64 = results.iter().map(|r| r.duration.as_secs_f64()).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let name = format!("corral conformance ({} backend)", backend.as_str());
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{total:.3}\">",
        xml(&name),
        results.len(),
        summary.failed,
        summary.skipped
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{total:.3}\">",
        xml(&name),
        results.len(),
        summary.failed,
        summary.skipped
    );
    out.push_str("    <properties>\n");
    for (name, value) in [
        ("requirements.tested", coverage.tested),
        ("requirements.failing", coverage.failing),
        ("requirements.not_run", coverage.not_run),
        ("requirements.pending", coverage.pending),
        ("requirements.excluded", coverage.excluded),
        ("requirements.total", coverage.total),
    ] {
        let _ = writeln!(out, "      <property name=\"{name}\" value=\"{value}\"/>");
    }
    out.push_str("    </properties>\n");
    for result in results {
        let _ = writeln!(
            out,
            "    <testcase classname=\"golden.{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\">",
            result.suite,
            xml(&result.case),
            xml(&result.shown),
            result.duration.as_secs_f64()
        );
        out.push_str("      <properties>\n");
        for requirement in &result.requirements {
            let _ = writeln!(
                out,
                "        <property name=\"requirement\" value=\"{}\"/>",
                xml(requirement)
            );
        }
        out.push_str("      </properties>\n");
        match (result.grade, &result.failure) {
            (Grade::Skipped, _) => {
                let _ = writeln!(
                    out,
                    "      <skipped message=\"{}\"/>",
                    xml(result.skip_reason.as_deref().unwrap_or(""))
                );
            }
            (Grade::Fail, Some(failure)) => {
                let _ = writeln!(
                    out,
                    "      <failure message=\"{}\" type=\"conformance\">{}</failure>",
                    xml(&failure.message),
                    xml(&failure_block(failure))
                );
            }
            (Grade::NonStrict, Some(failure)) => {
                let _ = writeln!(
                    out,
                    "      <system-out>non-strict (should-level) failure:\n{}</system-out>",
                    xml(&failure_block(failure))
                );
            }
            _ => {}
        }
        out.push_str("    </testcase>\n");
    }
    let _ = writeln!(
        out,
        "    <system-out>{}</system-out>",
        xml(&closing_line(ledger, results))
    );
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Each requirement's cases: those the ledger lists, then any case of the run that names it
/// and the ledger does not list (in run order).
pub fn cases_by_requirement<'a>(
    ledger: &'a Ledger,
    results: &'a [CaseResult],
) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut cases_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for requirement in &ledger.requirements {
        cases_of
            .entry(requirement.id.as_str())
            .or_default()
            .extend(requirement.cases.iter().map(String::as_str));
    }
    for result in results {
        for id in &result.requirements {
            let list = cases_of.entry(id.as_str()).or_default();
            if !list.contains(&result.case.as_str()) {
                list.push(result.case.as_str());
            }
        }
    }
    cases_of
}

/// The Markdown compliance table: every ledger requirement, its status, its cases and their
/// results; untested ones with their reason.
pub fn markdown(backend: Backend, host: &str, ledger: &Ledger, results: &[CaseResult]) -> String {
    let summary = Summary::of(results);
    let by_case: BTreeMap<&str, &CaseResult> =
        results.iter().map(|r| (r.case.as_str(), r)).collect();
    let cases_of = cases_by_requirement(ledger, results);
    let mut out = String::new();
    let _ = writeln!(out, "# corral conformance: {} backend\n", backend.as_str());
    let _ = writeln!(out, "Host command: `{}`\n", host.replace('`', "'"));
    let _ = writeln!(
        out,
        "{}\n\n{} non-strict (should-level failures). A requirement is tested by passing cases when \
         at least one of its cases ran and every one of them that ran passed.\n",
        closing_line(ledger, results),
        summary.non_strict
    );
    out.push_str(
        "| suite | passed | failed | skipped | requirements tested / failing / not run of |\n",
    );
    out.push_str("|---|---|---|---|---|\n");
    for tally in by_suite(ledger, results) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} / {} / {} of {} |",
            tally.suite,
            tally.summary.passed,
            tally.summary.failed + tally.summary.non_strict,
            tally.summary.skipped,
            tally.coverage.tested,
            tally.coverage.failing,
            tally.coverage.not_run,
            tally.coverage.total
        );
    }
    out.push('\n');
    let counts = |status: Status| {
        ledger
            .requirements
            .iter()
            .filter(|r| r.status == status)
            .count()
    };
    let _ = writeln!(
        out,
        "Ledger: {} requirements; {} tested, {} pending, {} excluded.\n",
        ledger.requirements.len(),
        counts(Status::Tested),
        counts(Status::Pending),
        counts(Status::Excluded)
    );
    out.push_str("| requirement | spec | level | status | cases | result |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for requirement in &ledger.requirements {
        let level = match requirement.level {
            Level::Must => "must",
            Level::Should => "should",
            Level::May => "may",
        };
        let cases = cases_of
            .get(requirement.id.as_str())
            .cloned()
            .unwrap_or_default();
        let shown: Vec<String> = cases
            .iter()
            .map(|case| match by_case.get(case) {
                Some(result) => format!("`{case}` ({})", result.grade.as_str()),
                None => format!("`{case}` (not run)"),
            })
            .collect();
        let grades: Vec<Grade> = cases
            .iter()
            .filter_map(|case| by_case.get(case).map(|r| r.grade))
            .collect();
        let (status, result) = match requirement.status {
            Status::Tested => {
                let result = if grades.contains(&Grade::Fail) {
                    "**fail**"
                } else if grades.contains(&Grade::NonStrict) {
                    "non-strict"
                } else if grades.contains(&Grade::Pass) {
                    "pass"
                } else if grades.is_empty() {
                    "not run"
                } else {
                    "skipped"
                };
                ("tested", result.to_owned())
            }
            Status::Pending => (
                "pending",
                format!("pending: {}", requirement.reason.as_deref().unwrap_or("")),
            ),
            Status::Excluded => (
                "excluded",
                format!("excluded: {}", requirement.reason.as_deref().unwrap_or("")),
            ),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            requirement.id,
            requirement.spec,
            level,
            status,
            cell(&shown.join(", ")),
            cell(&result)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use golden::Requirement;

    use super::*;

    fn result(case: &str, grade: Grade, requirements: &[&str]) -> CaseResult {
        CaseResult {
            case: case.into(),
            file: PathBuf::from(format!("/kit/golden/sessions/{case}.ndjson")),
            shown: format!("golden/sessions/{case}.ndjson"),
            requirements: requirements.iter().map(|s| (*s).to_owned()).collect(),
            suite: Suite::Wire,
            grade,
            notes: Vec::new(),
            log: Vec::new(),
            duration: Duration::from_millis(250),
            skip_reason: (grade == Grade::Skipped).then(|| "fake only".to_owned()),
            failure: (grade == Grade::Fail).then(|| Failure {
                location: format!("golden/sessions/{case}.ndjson:4"),
                checking: Some("The hello names the host.".into()),
                step: "{\"expect\":{}}".into(),
                message: "the frame does not match: at /id: expected `id` <&>".into(),
                diff: Some("-  \"id\": \"1\",\n".into()),
                found: None,
                transcript: vec!["→ {}".into(), "← {}".into()],
                stderr: String::new(),
                rerun: format!("cargo xtask conformance --backend fake --case {case}"),
            }),
            blessed: Vec::new(),
        }
    }

    fn requirement(id: &str, status: Status, cases: &[&str]) -> Requirement {
        Requirement {
            id: id.into(),
            spec: "wire-details".into(),
            section: "Framing".into(),
            level: Level::Must,
            text: "t".into(),
            status,
            reason: (status != Status::Tested).then(|| "host part 2 | later".to_owned()),
            cases: cases.iter().map(|s| (*s).to_owned()).collect(),
            refines: None,
            frames: Vec::new(),
            corral_only: false,
        }
    }

    /// A ledger of one requirement per status, and the cases `a` (pass), `b` (fail), `c`
    /// (skipped), `n` (non-strict) and `z` (not run) over it.
    fn ledger_and_results() -> (Ledger, Vec<CaseResult>) {
        let ledger = Ledger {
            requirements: vec![
                requirement("r.pass", Status::Tested, &["a"]),
                requirement("r.pass-and-fail", Status::Tested, &["a", "b"]),
                requirement("r.pass-and-skip", Status::Tested, &["a", "c"]),
                requirement("r.skip", Status::Tested, &["c"]),
                requirement("r.non-strict", Status::Tested, &["n"]),
                requirement("r.unrun", Status::Tested, &["z"]),
                requirement("r.pending", Status::Pending, &[]),
                requirement("r.excluded", Status::Excluded, &[]),
            ],
            ..Ledger::default()
        };
        let results = vec![
            result(
                "a",
                Grade::Pass,
                &["r.pass", "r.pass-and-fail", "r.pass-and-skip"],
            ),
            result("b", Grade::Fail, &["r.pass-and-fail"]),
            result("c", Grade::Skipped, &["r.pass-and-skip", "r.skip"]),
            result("n", Grade::NonStrict, &["r.non-strict"]),
        ];
        (ledger, results)
    }

    #[test]
    fn the_closing_line_counts_cases_and_what_they_showed_of_the_ledger() {
        let (ledger, results) = ledger_and_results();
        let coverage = Coverage::of(&ledger, &results);
        assert_eq!(
            coverage,
            Coverage {
                tested: 2,
                failing: 2,
                not_run: 2,
                pending: 1,
                excluded: 1,
                total: 8,
            }
        );
        let mut results = results;
        results[1].suite = Suite::HostFiles;
        assert_eq!(
            closing_line(&ledger, &results),
            "conformance: 1 passed, 1 failed, 1 skipped · requirements: 2 tested by passing \
             cases, 2 with a failing case, 2 not run, 1 pending, 1 excluded of 8 · suites: wire \
             1 of 2 passed, 1 skipped, host-files 0 of 1 passed"
        );
        let suites: Vec<String> = by_suite(&ledger, &results)
            .iter()
            .map(SuiteTally::line)
            .collect();
        assert_eq!(
            suites,
            [
                // Within the suite, r.pass-and-fail has only its passing case.
                "suite wire: 1 passed, 0 failed, 1 skipped · requirements: 3 tested by passing \
                 cases, 1 with a failing case, 1 not run, 0 pending, 0 excluded of 5",
                "suite host-files: 0 passed, 1 failed, 0 skipped · requirements: 0 tested by \
                 passing cases, 1 with a failing case, 0 not run, 0 pending, 0 excluded of 1",
            ]
        );
    }

    #[test]
    fn a_failure_shows_location_diff_and_rerun() {
        let text = console(&result("x", Grade::Fail, &[]));
        assert!(text.starts_with("FAIL       x  0.25s\n"), "{text}");
        assert!(
            text.contains(
                "at golden/sessions/x.ndjson:4\n    checking: The hello names the host.\n"
            )
        );
        assert!(text.contains("-  \"id\": \"1\","));
        assert!(text.contains("rerun: cargo xtask conformance --backend fake --case x"));
    }

    #[test]
    fn junit_escapes_and_counts() {
        let results = [
            result("a", Grade::Pass, &["r.pass"]),
            result("b", Grade::Fail, &[]),
            result("c", Grade::Skipped, &[]),
        ];
        let (ledger, _) = ledger_and_results();
        let xml = junit(Backend::Fake, &ledger, &results);
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("<property name=\"requirement\" value=\"r.pass\"/>"));
        assert!(xml.contains("expected `id` &lt;&amp;&gt;"), "{xml}");
        assert!(xml.contains("<skipped message=\"fake only\"/>"));
        assert!(xml.contains("file=\"golden/sessions/a.ndjson\""), "{xml}");
        assert!(xml.contains("classname=\"golden.wire\""), "{xml}");
        assert!(
            xml.contains("<property name=\"requirements.not_run\" value=\"5\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains("<system-out>conformance: 1 passed, 1 failed, 1 skipped · requirements: 1 tested by passing cases, 0 with a failing case, 5 not run, 1 pending, 1 excluded of 8 · suites: wire 1 of 2 passed, 1 skipped</system-out>"),
            "{xml}"
        );
    }

    #[test]
    fn markdown_lists_every_requirement_with_its_result() {
        let ledger = Ledger {
            requirements: vec![
                requirement("r.pass", Status::Tested, &["a"]),
                requirement("r.fail", Status::Tested, &["a", "b"]),
                requirement("r.pending", Status::Pending, &[]),
                requirement("r.unrun", Status::Tested, &["z"]),
            ],
            ..Ledger::default()
        };
        let results = [
            result("a", Grade::Pass, &["r.pass", "r.fail"]),
            result("b", Grade::Fail, &["r.fail"]),
        ];
        let md = markdown(Backend::Real, "corral serve", &ledger, &results);
        assert!(
            md.contains("| `r.pass` | wire-details | must | tested | `a` (pass) | pass |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| `r.fail` | wire-details | must | tested | `a` (pass), `b` (fail) | **fail** |"
            ),
            "{md}"
        );
        assert!(md.contains("| `r.pending` | wire-details | must | pending |  | pending: host part 2 \\| later |"), "{md}");
        assert!(md.contains("`z` (not run) | not run |"), "{md}");
        assert!(
            md.contains("conformance: 1 passed, 1 failed, 0 skipped · requirements: 1 tested by passing cases, 1 with a failing case, 1 not run, 1 pending, 0 excluded of 4"),
            "{md}"
        );
    }

    #[test]
    fn the_json_report_carries_grades_and_failures() {
        let (ledger, _) = ledger_and_results();
        let text = json_report(
            Backend::Fake,
            "h",
            &ledger,
            &[result("b", Grade::Fail, &["r.pass-and-fail"])],
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["summary"]["failed"], 1);
        assert_eq!(value["requirements"]["failing"], 1);
        assert_eq!(value["requirements"]["not_run"], 5);
        assert_eq!(value["requirements"]["total"], 8);
        assert_eq!(value["cases"][0]["file"], "golden/sessions/b.ndjson");
        assert_eq!(value["cases"][0]["grade"], "fail");
        assert_eq!(
            value["cases"][0]["failure"]["location"],
            "golden/sessions/b.ndjson:4"
        );
    }
}
