//! The HTML report (`--report-html`): one page, as Autobahn's testsuite report is, with the
//! run's closing line, a table of suites, every case with its grade (filtered by grade, suite and
//! case id in the page), each case unfolding to its failure, notes, requirements and wire log,
//! and every ledger requirement with what this run showed of it. Its rules: the page reaches
//! for nothing outside itself (its style and script are inline, its links its own anchors, and
//! its Content-Security-Policy forbids every fetch), and every text of the run is escaped.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use golden::{Backend, Ledger, Level, Requirement, Status, Suite};

use super::outcome::{CaseResult, Failure, Grade};
use super::report::{Coverage, Summary, by_suite, cases_by_requirement, closing_line};

/// The grades, in the order the page lists them (its filters, its counts).
const GRADES: [Grade; 4] = [Grade::Pass, Grade::Fail, Grade::NonStrict, Grade::Skipped];

/// The page of a run.
pub fn html(backend: Backend, host: &str, ledger: &Ledger, results: &[CaseResult]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <title>corral conformance: {} backend</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        backend.as_str()
    );
    header(&mut out, backend, host, ledger, results);
    suites(&mut out, ledger, results);
    cases(&mut out, results);
    requirements(&mut out, ledger, results);
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// Text for an HTML text node or a double-quoted attribute: the markup characters as references,
/// control characters but tab and newline as their Control Pictures (U+2400…), seen, not obeyed.
struct Text<'a>(&'a str);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&#39;")?,
                '\t' | '\n' => f.write_char(c)?,
                '\u{0}'..='\u{1f}' => {
                    f.write_char(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'))?
                }
                '\u{7f}' => f.write_char('\u{2421}')?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// The mark shown before a grade's name, so that a grade never reads by its colour alone.
fn mark(grade: Grade) -> &'static str {
    match grade {
        Grade::Pass => "✓",
        Grade::Fail => "✗",
        Grade::NonStrict => "!",
        Grade::Skipped => "–",
    }
}

/// A grade as a badge: its mark and its name, coloured by its class.
fn badge(grade: Grade) -> String {
    format!(
        "<span class=\"badge g-{0}\">{1} {0}</span>",
        grade.as_str(),
        mark(grade)
    )
}

fn level(level: Level) -> &'static str {
    match level {
        Level::Must => "must",
        Level::Should => "should",
        Level::May => "may",
    }
}

fn status(status: Status) -> &'static str {
    match status {
        Status::Tested => "tested",
        Status::Pending => "pending",
        Status::Excluded => "excluded",
    }
}

/// The backend, the host command and the closing line.
fn header(out: &mut String, backend: Backend, host: &str, ledger: &Ledger, results: &[CaseResult]) {
    let summary = Summary::of(results);
    let verdict = if summary.failed > 0 { "bad" } else { "good" };
    let _ = write!(
        out,
        "<header>\n<h1>corral conformance</h1>\n<dl class=\"run\">\n\
         <dt>backend</dt><dd>{}</dd>\n<dt>host</dt><dd><code>{}</code></dd>\n\
         <dt>cases</dt><dd>{} run: {} passed, {} failed, {} non-strict, {} skipped</dd>\n</dl>\n\
         <p id=\"closing-line\" class=\"{verdict}\">{}</p>\n</header>\n",
        backend.as_str(),
        Text(host),
        results.len(),
        summary.passed,
        summary.failed,
        summary.non_strict,
        summary.skipped,
        Text(&closing_line(ledger, results)),
    );
}

/// One row of the suites' table: the cases' counts, then the requirements'.
fn tally_row(out: &mut String, head: &str, summary: &Summary, coverage: &Coverage) {
    let bad = |n: usize| if n > 0 { " class=\"bad\"" } else { "" };
    let _ = writeln!(
        out,
        "{head}<td>{}</td><td{}>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td{}>{}</td><td>{}</td><td>{}</td></tr>",
        summary.passed,
        bad(summary.failed),
        summary.failed,
        summary.non_strict,
        summary.skipped,
        coverage.tested,
        bad(coverage.failing),
        coverage.failing,
        coverage.not_run,
        coverage.total,
    );
}

/// Each suite with a case in the run, and the run as a whole.
fn suites(out: &mut String, ledger: &Ledger, results: &[CaseResult]) {
    out.push_str(
        "<section id=\"suites\">\n<h2>Suites</h2>\n<table class=\"suites\">\n<thead>\
         <tr><th rowspan=\"2\">suite</th><th colspan=\"4\">cases</th><th colspan=\"4\">requirements</th></tr>\n\
         <tr><th>passed</th><th>failed</th><th>non-strict</th><th>skipped</th>\
         <th>tested by passing cases</th><th>with a failing case</th><th>not run</th><th>of</th></tr>\
         </thead>\n<tbody>\n",
    );
    for tally in by_suite(ledger, results) {
        let head = format!(
            "<tr data-suite=\"{0}\"><th scope=\"row\">{0}</th>",
            tally.suite.as_str()
        );
        tally_row(out, &head, &tally.summary, &tally.coverage);
    }
    out.push_str("</tbody>\n<tfoot>\n");
    tally_row(
        out,
        "<tr><th scope=\"row\">all</th>",
        &Summary::of(results),
        &Coverage::of(ledger, results),
    );
    out.push_str(
        "</tfoot>\n</table>\n<p class=\"note\">A suite's requirements are those its cases name; \
         one is tested by passing cases when at least one of its cases ran and every one of them \
         that ran passed.</p>\n</section>\n",
    );
}

/// The filters, then one row per case, each unfolding to what the run knows of it.
fn cases(out: &mut String, results: &[CaseResult]) {
    out.push_str(
        "<section id=\"cases\">\n<h2>Cases</h2>\n<form id=\"filters\" class=\"filters\" hidden>\n\
         <fieldset><legend>grade</legend>\n",
    );
    for grade in GRADES {
        let count = results.iter().filter(|r| r.grade == grade).count();
        let _ = writeln!(
            out,
            "<label><input type=\"checkbox\" name=\"grade\" value=\"{}\" checked> {} \
             <span class=\"count\" data-count-grade=\"{0}\">{count}</span></label>",
            grade.as_str(),
            badge(grade),
        );
    }
    out.push_str(
        "</fieldset>\n<label>suite <select id=\"filter-suite\"><option value=\"\">every suite</option>",
    );
    for suite in Suite::ALL {
        if results.iter().any(|r| r.suite == suite) {
            let _ = write!(out, "<option>{}</option>", suite.as_str());
        }
    }
    let _ = write!(
        out,
        "</select></label>\n<label>case <input type=\"search\" id=\"filter-case\" \
         placeholder=\"part of a case id\" autocomplete=\"off\"></label>\n</form>\n\
         <p class=\"shown\"><span id=\"shown-count\">{0}</span> of {0} cases shown</p>\n\
         <table class=\"cases\">\n<colgroup><col class=\"c-grade\"><col><col class=\"c-suite\">\
         <col class=\"c-time\"></colgroup>\n<thead><tr><th>grade</th><th>case</th><th>suite</th>\
         <th>time</th></tr></thead>\n<tbody>\n",
        results.len()
    );
    for result in results {
        case(out, result);
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// One case's row.
fn case(out: &mut String, result: &CaseResult) {
    let id = Text(&result.case);
    let grade = result.grade.as_str();
    let suite = result.suite.as_str();
    let _ = write!(
        out,
        "<tr id=\"case-{id}\" class=\"case\" data-case=\"{id}\" data-suite=\"{suite}\" \
         data-grade=\"{grade}\"><td>{}</td><td><details><summary><code>{id}</code>",
        badge(result.grade)
    );
    let gist = match (&result.failure, &result.skip_reason) {
        (Some(failure), _) => failure.message.lines().next().unwrap_or("").to_owned(),
        (None, Some(reason)) => reason.clone(),
        (None, None) if !result.notes.is_empty() => {
            format!("{} strict-grade note(s)", result.notes.len())
        }
        (None, None) => String::new(),
    };
    if !gist.is_empty() {
        let _ = write!(out, " <span class=\"gist\">{}</span>", Text(&gist));
    }
    let _ = write!(
        out,
        "</summary>\n<div class=\"detail\">\n<p class=\"meta\">session <code>{}</code></p>\n",
        Text(&result.shown)
    );
    if let Some(reason) = &result.skip_reason {
        let _ = writeln!(out, "<p class=\"skip\">skipped: {}</p>", Text(reason));
    }
    if let Some(failure) = &result.failure {
        failure_block(out, result.grade, failure);
    }
    if !result.notes.is_empty() {
        let _ = write!(
            out,
            "<h4>strict-grade notes ({})</h4>\n<ul class=\"notes\">",
            result.notes.len()
        );
        for note in &result.notes {
            let _ = write!(out, "<li>{}</li>", Text(note));
        }
        out.push_str("</ul>\n");
    }
    let _ = write!(
        out,
        "<h4>requirements ({})</h4>\n<ul class=\"reqs\">",
        result.requirements.len()
    );
    for requirement in &result.requirements {
        let _ = write!(
            out,
            "<li><a href=\"#req-{0}\">{0}</a></li>",
            Text(requirement)
        );
    }
    out.push_str("</ul>\n");
    if result.log.is_empty() {
        out.push_str("<p class=\"meta\">no wire log: no connection was made</p>\n");
    } else {
        let _ = write!(
            out,
            "<details class=\"log\"><summary>wire log: {} line(s), → sent, ← received</summary>\
             <pre class=\"log\">",
            result.log.len()
        );
        for line in &result.log {
            log_line(out, line);
        }
        out.push_str("</pre></details>\n");
    }
    let _ = writeln!(
        out,
        "</div></details></td><td>{suite}</td><td class=\"num\">{:.2} s</td></tr>",
        result.duration.as_secs_f64()
    );
}

/// A failure: where, the step, the message, the diff, the host's stderr and the rerun command.
fn failure_block(out: &mut String, grade: Grade, failure: &Failure) {
    let what = if grade == Grade::NonStrict {
        "failed (non-strict: its requirements are all should or may)"
    } else {
        "failed"
    };
    let _ = write!(
        out,
        "<div class=\"failure\">\n<h4>{what} at <code>{}</code></h4>\n\
         <p class=\"label\">expected step</p><pre class=\"step\">{}</pre>\n\
         <p class=\"label\">message</p><pre class=\"message\">{}</pre>\n",
        Text(&failure.location),
        Text(&failure.step),
        Text(&failure.message),
    );
    if let Some(checking) = &failure.checking {
        let _ = writeln!(
            out,
            "<p class=\"label\">checking</p><pre class=\"message\">{}</pre>",
            Text(checking)
        );
    }
    if let Some(diff) = &failure.diff {
        out.push_str(
            "<p class=\"label\">diff of what was expected against what was received</p>\
             <pre class=\"diff\">",
        );
        for line in diff.lines() {
            let class = if line.starts_with("+++") || line.starts_with("---") {
                "d-file"
            } else if line.starts_with("@@") {
                "d-hunk"
            } else if line.starts_with('+') {
                "d-add"
            } else if line.starts_with('-') {
                "d-del"
            } else {
                "d-same"
            };
            let _ = writeln!(out, "<span class=\"{class}\">{}</span>", Text(line));
        }
        out.push_str("</pre>\n");
    }
    if !failure.stderr.trim().is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"label\">host stderr (last lines)</p><pre class=\"stderr\">{}</pre>",
            Text(&failure.stderr)
        );
    }
    let _ = writeln!(
        out,
        "<p class=\"label\">rerun</p><pre class=\"rerun\">{}</pre>\n</div>",
        Text(&failure.rerun)
    );
}

/// One line of a wire log, `<conn> → <sent>` or `<conn> ← <received>`, its parts styled.
fn log_line(out: &mut String, line: &str) {
    let split = [(" → ", "sent"), (" ← ", "received")]
        .into_iter()
        .filter_map(|(arrow, class)| line.find(arrow).map(|at| (at, arrow, class)))
        .min_by_key(|(at, ..)| *at);
    match split {
        Some((at, arrow, class)) => {
            let _ = writeln!(
                out,
                "<span class=\"{class}\"><span class=\"conn\">{}</span>{arrow}{}</span>",
                Text(&line[..at]),
                Text(&line[at + arrow.len()..])
            );
        }
        None => {
            let _ = writeln!(out, "{}", Text(line));
        }
    }
}

/// What the run showed of one requirement: the grade the closing line's rule gives it, or why
/// it has none.
fn outcome(requirement: &Requirement, grades: &[Grade]) -> (&'static str, String) {
    match requirement.status {
        Status::Tested => {
            let ran: Vec<Grade> = grades
                .iter()
                .copied()
                .filter(|grade| *grade != Grade::Skipped)
                .collect();
            let worst = [Grade::Fail, Grade::NonStrict, Grade::Pass]
                .into_iter()
                .find(|grade| ran.contains(grade));
            match worst {
                Some(grade) => (grade.as_str(), badge(grade)),
                None if grades.is_empty() => ("not-run", "not run".to_owned()),
                None => ("not-run", "not run (skipped)".to_owned()),
            }
        }
        Status::Pending => ("pending", "pending".to_owned()),
        Status::Excluded => ("excluded", "excluded".to_owned()),
    }
}

/// Every ledger requirement: its level, status, text, its cases and what this run showed of it.
fn requirements(out: &mut String, ledger: &Ledger, results: &[CaseResult]) {
    let by_case: BTreeMap<&str, &CaseResult> =
        results.iter().map(|r| (r.case.as_str(), r)).collect();
    let cases_of = cases_by_requirement(ledger, results);
    let count = |status: Status| {
        ledger
            .requirements
            .iter()
            .filter(|r| r.status == status)
            .count()
    };
    let _ = write!(
        out,
        "<section id=\"requirements\">\n<h2>Requirements</h2>\n<p class=\"note\">The ledger: {} \
         requirements; {} tested, {} pending, {} excluded.</p>\n<table class=\"requirements\">\n\
         <colgroup><col class=\"c-req\"><col class=\"c-level\"><col class=\"c-status\">\
         <col class=\"c-result\"><col class=\"c-cases\"><col></colgroup>\n\
         <thead><tr><th>requirement</th><th>level</th><th>status</th><th>this run</th>\
         <th>cases</th><th>text</th></tr></thead>\n<tbody>\n",
        ledger.requirements.len(),
        count(Status::Tested),
        count(Status::Pending),
        count(Status::Excluded),
    );
    for requirement in &ledger.requirements {
        let cases = cases_of
            .get(requirement.id.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let grades: Vec<Grade> = cases
            .iter()
            .filter_map(|case| by_case.get(case).map(|r| r.grade))
            .collect();
        let (class, shown) = outcome(requirement, &grades);
        let id = Text(&requirement.id);
        let _ = write!(
            out,
            "<tr id=\"req-{id}\" data-status=\"{}\" data-result=\"{class}\"><td><code>{id}</code>\
             <div class=\"section\">{} § {}</div></td><td>{}</td><td>{}</td>\
             <td class=\"r-{class}\">{shown}</td><td>",
            status(requirement.status),
            Text(&requirement.spec),
            Text(&requirement.section),
            level(requirement.level),
            status(requirement.status),
        );
        for (n, case) in cases.iter().enumerate() {
            if n > 0 {
                out.push_str(", ");
            }
            match by_case.get(case) {
                Some(result) => {
                    let _ = write!(
                        out,
                        "<a href=\"#case-{0}\">{0}</a> ({1})",
                        Text(case),
                        result.grade.as_str()
                    );
                }
                None => {
                    let _ = write!(out, "{} (not run)", Text(case));
                }
            }
        }
        let _ = write!(out, "</td><td>{}", Text(&requirement.text));
        if let Some(reason) = &requirement.reason {
            let _ = write!(
                out,
                "<p class=\"reason\">{}: {}</p>",
                status(requirement.status),
                Text(reason)
            );
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

/// Nothing may be fetched: no script, style, image, font, frame or connection but the page's own
/// inline style and script.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                   base-uri 'none'; form-action 'none'";

const STYLE: &str = r#"
:root { --pass: #1a7f37; --pass-bg: #dafbe1; --fail: #cf222e; --fail-bg: #ffebe9;
  --warn: #9a6700; --warn-bg: #fff8c5; --skip: #57606a; --skip-bg: #eaeef2; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
  margin: 0 auto; padding: 1em 2em 4em; max-width: 90em; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12.5px; }
h1 { font-size: 1.6em; margin: 0.2em 0; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.5em; border-bottom: 1px solid var(--line); }
h4 { font-size: 1em; margin: 0.8em 0 0.3em; }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: 0.2em 1em; margin: 0.5em 0; }
dl.run dt { font-weight: 600; } dl.run dd { margin: 0; overflow-wrap: anywhere; }
#closing-line { padding: 0.6em 0.9em; border-left: 6px solid var(--pass); background: var(--pass-bg);
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; overflow-wrap: anywhere; }
#closing-line.bad { border-color: var(--fail); background: var(--fail-bg); }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
table.suites { width: auto; } table.suites td { text-align: right; min-width: 5em; }
table.suites td.bad { color: var(--fail); font-weight: 700; }
table.suites tfoot th, table.suites tfoot td { font-weight: 700; background: #f6f8fa; }
.note { color: var(--skip); }
.badge { display: inline-block; padding: 0 0.5em; border-radius: 1em; font-weight: 600;
  white-space: nowrap; border: 1px solid currentColor; }
.g-pass { color: var(--pass); background: var(--pass-bg); }
.g-fail { color: var(--fail); background: var(--fail-bg); }
.g-non-strict { color: var(--warn); background: var(--warn-bg); }
.g-skipped { color: var(--skip); background: var(--skip-bg); }
tr.case > td:first-child { border-left: 5px solid var(--skip); }
tr.case[data-grade=pass] > td:first-child { border-left-color: var(--pass); }
tr.case[data-grade=fail] > td:first-child { border-left-color: var(--fail); }
tr.case[data-grade=non-strict] > td:first-child { border-left-color: var(--warn); }
.filters { display: flex; flex-wrap: wrap; gap: 0.6em 1.5em; align-items: center;
  padding: 0.5em 0.8em; background: #f6f8fa; border: 1px solid var(--line); }
.filters fieldset { border: 0; margin: 0; padding: 0; display: flex; gap: 0.9em; flex-wrap: wrap; }
.filters legend { float: left; margin-right: 0.6em; font-weight: 600; }
.filters input[type=search] { width: 18em; }
.count { color: var(--skip); }
.count::before { content: "("; } .count::after { content: ")"; }
table.cases { table-layout: fixed; } table.cases td { overflow-wrap: anywhere; }
col.c-grade { width: 8.5em; } col.c-suite { width: 7em; } col.c-time { width: 5.5em; }
td.num { text-align: right; white-space: nowrap; }
summary { cursor: pointer; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.gist { color: var(--skip); margin-left: 0.5em; }
.detail { padding: 0.3em 0 0.3em 1.2em; border-left: 2px solid var(--line); margin-top: 0.3em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.2em 0 0.6em; padding: 0.5em;
  background: #f6f8fa; border: 1px solid var(--line); max-height: 32em; overflow: auto; }
.label { margin: 0.4em 0 0; font-weight: 600; }
.failure h4 { color: var(--fail); }
.diff .d-add { color: var(--pass); background: var(--pass-bg); display: inline-block; width: 100%; }
.diff .d-del { color: var(--fail); background: var(--fail-bg); display: inline-block; width: 100%; }
.diff .d-hunk { color: #8250df; } .diff .d-file { color: var(--skip); font-weight: 600; }
pre.log { max-height: 40em; }
pre.log .conn { color: var(--skip); }
pre.log .sent { color: #0550ae; } pre.log .received { color: #1f2328; }
.skip { color: var(--skip); font-weight: 600; }
ul.reqs { columns: 2 22em; margin: 0.2em 0; }
table.requirements { table-layout: fixed; }
col.c-req { width: 20em; } col.c-level { width: 4.5em; } col.c-status { width: 6.5em; }
col.c-result { width: 8.5em; } col.c-cases { width: 18em; }
table.requirements td { overflow-wrap: anywhere; }
.section { color: var(--skip); font-size: 0.9em; }
.reason { margin: 0.3em 0 0; color: var(--skip); }
.r-not-run, .r-pending, .r-excluded { color: var(--skip); }
:target > td { background: var(--warn-bg) !important; }
"#;

/// The filters: by grade, by suite and by part of a case id, from the form or from the page's
/// query (`?grade=fail,non-strict&suite=wire&case=hello`); the counts follow what is shown. A
/// link to a case a filter hides clears the filters and opens the case.
const SCRIPT: &str = r#"
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-case]"));
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=grade]"));
  var suite = document.getElementById("filter-suite");
  var text = document.getElementById("filter-case");
  function apply() {
    var grades = {}, counts = {}, shown = 0;
    boxes.forEach(function (box) { grades[box.value] = box.checked; counts[box.value] = 0; });
    var s = suite.value, q = text.value.trim().toLowerCase();
    rows.forEach(function (row) {
      var match = (!s || row.dataset.suite === s) &&
        (!q || row.dataset.case.toLowerCase().indexOf(q) >= 0);
      if (match) { counts[row.dataset.grade] = (counts[row.dataset.grade] || 0) + 1; }
      row.hidden = !(match && grades[row.dataset.grade]);
      if (!row.hidden) { shown += 1; }
    });
    document.getElementById("shown-count").textContent = String(shown);
    form.querySelectorAll("[data-count-grade]").forEach(function (el) {
      el.textContent = String(counts[el.dataset.countGrade] || 0);
    });
  }
  function clear() {
    boxes.forEach(function (box) { box.checked = true; });
    suite.value = ""; text.value = ""; apply();
  }
  function reveal() {
    var row = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (!row || !row.hasAttribute("data-case")) { return; }
    if (row.hidden) { clear(); }
    row.querySelector("details").open = true;
    row.scrollIntoView();
  }
  var query = new URLSearchParams(location.search);
  if (query.has("grade")) {
    var wanted = query.get("grade").split(",");
    boxes.forEach(function (box) { box.checked = wanted.indexOf(box.value) >= 0; });
  }
  if (query.has("suite")) { suite.value = query.get("suite"); }
  if (query.has("case")) { text.value = query.get("case"); }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  window.addEventListener("hashchange", reveal);
  form.hidden = false;
  apply();
  reveal();
  document.body.setAttribute("data-script", "ready");
})();
"#;

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    fn result(case: &str, grade: Grade, suite: Suite) -> CaseResult {
        CaseResult {
            case: case.into(),
            file: PathBuf::from(format!("/kit/golden/sessions/{case}.ndjson")),
            shown: format!("golden/sessions/{case}.ndjson"),
            requirements: vec!["r.one".into(), "r.<two>".into()],
            suite,
            grade,
            notes: vec!["a key the protocol does not name: `x_\"grown\"`".into()],
            log: vec![
                "c1 → {\"t\":\"hello\",\"id\":\"1\"}".into(),
                "c1 ← {\"t\":\"frame\",\"text\":\"</script><b>&amp; 'q' \u{1b}[31m ünï 🐑\"}".into(),
                "c1 ← <img src=\"http://example.com/x.png\">".into(),
            ],
            duration: Duration::from_millis(1250),
            skip_reason: (grade == Grade::Skipped).then(|| "needs --host-cli <corral>".into()),
            failure: matches!(grade, Grade::Fail | Grade::NonStrict).then(|| Failure {
                location: format!("golden/sessions/{case}.ndjson:4"),
                checking: None,
                step: "{\"expect\":{\"id\":\"1\"}}".into(),
                message: "the frame does not match: at /id: expected `id` <&>".into(),
                diff: Some(
                    "--- expected (golden)\n+++ received\n@@ -1,3 +1,2 @@\n {\n-  \"id\": \"1\",\n+  \"t\": \"</script>\"\n }\n"
                        .into(),
                ),
                found: None,
                transcript: Vec::new(),
                stderr: "WARN <host> & friends\n".into(),
                rerun: format!("corral-conformance --backend fake --case {case}"),
            }),
            blessed: Vec::new(),
        }
    }

    fn requirement(id: &str, status: Status, cases: &[&str]) -> Requirement {
        Requirement {
            id: id.into(),
            spec: "protocol".into(),
            section: "Framing & <lines>".into(),
            level: Level::Must,
            text: "A host <must> answer & \"quote\".".into(),
            status,
            reason: (status != Status::Tested).then(|| "later <maybe>".to_owned()),
            cases: cases.iter().map(|s| (*s).to_owned()).collect(),
            refines: None,
            frames: Vec::new(),
            corral_only: false,
        }
    }

    fn page() -> (Ledger, Vec<CaseResult>, String) {
        let ledger = Ledger {
            requirements: vec![
                requirement("r.one", Status::Tested, &["a.pass", "b.fail"]),
                requirement("r.<two>", Status::Tested, &["c.skip"]),
                requirement("r.unrun", Status::Tested, &["z.elsewhere"]),
                requirement("r.pending", Status::Pending, &[]),
            ],
            ..Ledger::default()
        };
        let results = vec![
            result("a.pass", Grade::Pass, Suite::Wire),
            result("b.fail", Grade::Fail, Suite::Wire),
            result("c.skip", Grade::Skipped, Suite::CorralCli),
            result("d.non-strict", Grade::NonStrict, Suite::HostFiles),
        ];
        let page = html(
            Backend::Fake,
            "corral serve --stdio --device {device} <&>",
            &ledger,
            &results,
        );
        (ledger, results, page)
    }

    /// The attribute values of `name` in the page's markup (text is escaped, so a `name="` in
    /// it is an attribute).
    fn attributes<'a>(page: &'a str, name: &str) -> Vec<&'a str> {
        let needle = format!(" {name}=\"");
        page.match_indices(&needle)
            .map(|(at, _)| {
                let value = &page[at + needle.len()..];
                &value[..value.find('"').unwrap()]
            })
            .collect()
    }

    #[test]
    fn run_text_shows_literally_never_as_markup() {
        let (_, _, page) = page();
        // The page's own script is the only one, and no frame made an element.
        assert_eq!(page.matches("</script>").count(), 1, "{page}");
        assert_eq!(page.matches("<script>").count(), 1);
        assert!(!page.contains("<b>"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(
            page.contains("&lt;/script&gt;&lt;b&gt;&amp;amp; &#39;q&#39; ␛[31m ünï 🐑"),
            "{page}"
        );
        assert!(page.contains("<span class=\"d-del\">-  &quot;id&quot;: &quot;1&quot;,</span>"));
        assert!(page.contains(
            "<span class=\"d-add\">+  &quot;t&quot;: &quot;&lt;/script&gt;&quot;</span>"
        ));
        assert!(page.contains("expected `id` &lt;&amp;&gt;"));
        assert!(page.contains("WARN &lt;host&gt; &amp; friends"));
        assert!(page.contains("<code>corral serve --stdio --device {device} &lt;&amp;&gt;</code>"));
        assert!(page.contains("<a href=\"#req-r.&lt;two&gt;\">r.&lt;two&gt;</a>"));
        assert!(page.contains("<tr id=\"req-r.&lt;two&gt;\""));
        assert!(page.contains("A host &lt;must&gt; answer &amp; &quot;quote&quot;."));
        assert!(
            page.contains("<span class=\"sent\"><span class=\"conn\">c1</span> → {&quot;t&quot;")
        );
        // Every attribute value is escaped: no quote or angle bracket inside one.
        for name in [
            "id",
            "class",
            "data-case",
            "href",
            "data-suite",
            "data-grade",
        ] {
            for value in attributes(&page, name) {
                assert!(!value.contains(['<', '>', '\'']), "{name}=\"{value}\"");
            }
        }
    }

    #[test]
    fn every_case_appears_with_its_grade_in_words() {
        let (_, results, page) = page();
        let rows = page.matches("<tr id=\"case-").count();
        assert_eq!(rows, results.len());
        for result in &results {
            let (case, grade) = (&result.case, result.grade.as_str());
            let row = format!(
                "<tr id=\"case-{case}\" class=\"case\" data-case=\"{case}\" \
                 data-suite=\"{}\" data-grade=\"{grade}\"><td><span class=\"badge g-{grade}\">{} \
                 {grade}</span></td>",
                result.suite.as_str(),
                mark(result.grade)
            );
            assert!(page.contains(&row), "no {row} in\n{page}");
        }
        assert!(page.contains("skipped: needs --host-cli &lt;corral&gt;"));
        assert!(page.contains("failed (non-strict"));
        assert!(page.contains("corral-conformance --backend fake --case b.fail"));
        for suite in ["wire", "host-files", "corral-cli"] {
            assert!(
                page.contains(&format!("<tr data-suite=\"{suite}\">")),
                "{suite}"
            );
        }
        assert!(!page.contains("<tr data-suite=\"notify\">"));
        // Each ledger requirement is listed, with what the run showed of it.
        assert!(page.contains("id=\"req-r.one\" data-status=\"tested\" data-result=\"fail\""));
        assert!(page.contains("id=\"req-r.unrun\" data-status=\"tested\" data-result=\"not-run\""));
        assert!(page.contains("<a href=\"#case-b.fail\">b.fail</a> (fail)"));
        assert!(page.contains("z.elsewhere (not run)"));
        assert!(page.contains("id=\"req-r.pending\" data-status=\"pending\""));
        assert!(page.contains("pending: later &lt;maybe&gt;"));
    }

    #[test]
    fn the_closing_line_is_in_its_own_element() {
        let (ledger, results, page) = page();
        let line = closing_line(&ledger, &results);
        assert!(
            page.contains(&format!(
                "<p id=\"closing-line\" class=\"bad\">{}</p>",
                Text(&line)
            )),
            "{page}"
        );
        assert_eq!(page.matches("id=\"closing-line\"").count(), 1);
        assert!(page.contains("<dt>backend</dt><dd>fake</dd>"));
    }

    #[test]
    fn the_page_reaches_for_nothing_outside_itself() {
        let (_, _, page) = page();
        for href in attributes(&page, "href") {
            assert!(href.starts_with('#'), "href=\"{href}\" leaves the page");
        }
        for fetching in ["src", "srcset", "action", "poster", "data"] {
            assert!(
                attributes(&page, fetching).is_empty(),
                "{fetching}= in the page"
            );
        }
        for reference in ["url(", "@import", "<link", "<iframe", "<object", "<embed"] {
            assert!(!page.contains(reference), "{reference} in the page");
        }
        // The only web address is a frame's text, escaped, in the wire log.
        let addresses: Vec<usize> = ["http://", "https://", "//"]
            .into_iter()
            .flat_map(|scheme| page.match_indices(scheme).map(|(at, _)| at))
            .collect();
        assert!(!addresses.is_empty());
        for at in addresses {
            let before = &page[..at];
            assert!(
                before.ends_with("src=&quot;") || before.ends_with("src=&quot;http:"),
                "a web address at byte {at}"
            );
        }
        assert!(page.contains(&format!("content=\"{CSP}\"")));
        assert!(CSP.starts_with("default-src 'none';"));
    }

    #[test]
    fn control_characters_show_as_control_pictures() {
        assert_eq!(Text("a\u{0}\u{7}\t\r\n\u{7f}").to_string(), "a␀␇\t␍\n␡");
    }
}
