//! When a mutant counts as caught: a catch proves its cause. In one run of the sessions its rule
//! lists, a case catches the mutant only when the mutant changed at least one line of that
//! case's traffic (the wrapper's log says so), the case failed at a step whose failure names what
//! the mutant changed (the member at its pointer, in a frame it rewrote; a frame it added, moved
//! or dropped; the exit code it changed), and the case passed through the transparent filter in
//! the same run. A mutant that changes nothing, changes what it does not declare, or makes a case
//! fail anywhere else is not caught, whatever else fails.
//!
//! Pure: a mutant, each case's result and what the mutant did to its traffic in, a verdict out.

use serde_json::Value;

use super::mutants::{Mutant, Touch, on_one_path, within};
use super::outcome::{CaseResult, Failure, Found, Grade};
use super::traffic::Entry;

/// One case of a mutant's run.
#[derive(Debug)]
pub struct CaseRun<'a> {
    pub result: &'a CaseResult,
    /// What the mutant did to the case's traffic, host process by host process.
    pub changes: &'a [Vec<Entry>],
    /// Whether the case passed through the transparent filter in the same run.
    pub control_passed: bool,
}

/// A case that caught a mutant, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catch {
    pub case: String,
    /// The failing step: `golden/sessions/<case>.ndjson:<line>`.
    pub location: String,
    /// What the failure named: `at /at_ms`, `a frame it added`, `exit code 1 for 2`.
    pub at: String,
}

/// What one mutant's run came to.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Host lines the mutant did not pass on as they were, over every case (and exit codes).
    pub changed: usize,
    pub catches: Vec<Catch>,
    /// Why the mutant is not caught (empty when it is).
    pub problems: Vec<String>,
}

impl Verdict {
    pub fn caught(&self) -> bool {
        self.problems.is_empty() && !self.catches.is_empty()
    }
}

/// Judges one mutant's run of its sessions.
pub fn judge(mutant: &Mutant, runs: &[CaseRun<'_>]) -> Verdict {
    let name = mutant.name;
    let touch = mutant.touches;
    let mut verdict = Verdict::default();
    for run in runs {
        let case = &run.result.case;
        let changed = changed(run.changes);
        verdict.changed += changed;
        for what in undeclared(touch, run.changes) {
            verdict.problems.push(format!(
                "`{name}` {what} in `{case}`, which it does not declare (it touches {touch})"
            ));
        }
        let Some(failure) = run
            .result
            .failure
            .as_ref()
            .filter(|_| matches!(run.result.grade, Grade::Fail | Grade::NonStrict))
        else {
            continue;
        };
        let place = format!("{} ({})", failure.location, found(failure));
        if !run.control_passed {
            verdict.problems.push(format!(
                "`{case}` failed at {place} against `{name}`, and it fails through the \
                 transparent filter too: its failure proves nothing of `{name}`"
            ));
        } else if changed == 0 {
            verdict.problems.push(format!(
                "`{name}` is caught elsewhere: `{case}` failed at {place}, though `{name}` \
                 changed none of its lines"
            ));
        } else {
            match at_the_change(touch, failure.found.as_ref(), run.changes) {
                Ok(at) => verdict.catches.push(Catch {
                    case: case.clone(),
                    location: failure.location.clone(),
                    at,
                }),
                Err(why) => verdict.problems.push(format!(
                    "`{name}` is caught elsewhere: `{case}` failed at {place}, not at {touch}: \
                     {why}"
                )),
            }
        }
    }
    let cases: Vec<&str> = runs.iter().map(|run| run.result.case.as_str()).collect();
    if verdict.changed == 0 {
        verdict.problems.push(format!(
            "`{name}` never fired: it changed no line of {}",
            cases.join(", ")
        ));
    } else if verdict.catches.is_empty() && verdict.problems.is_empty() {
        verdict.problems.push(format!(
            "`{name}` ({}) changed {} line(s) of {} and every one of them passed",
            mutant.breaks,
            verdict.changed,
            cases.join(", ")
        ));
    }
    verdict
}

/// How many host lines (and exit codes) the filter did not pass on as they were.
pub fn changed(processes: &[Vec<Entry>]) -> usize {
    processes
        .iter()
        .flatten()
        .filter(|entry| matches!(entry, Entry::Changed { .. } | Entry::ExitChanged { .. }))
        .count()
}

/// What a failure found, in words.
fn found(failure: &Failure) -> String {
    match &failure.found {
        Some(Found::Member { pointer, .. }) if pointer.is_empty() => "the frame".to_owned(),
        Some(Found::Member { pointer, .. }) => format!("at {pointer}"),
        Some(Found::Unexpected { .. }) => "a frame where none was expected".to_owned(),
        Some(Found::Missing) => "a frame that never came".to_owned(),
        Some(Found::ExitCode { expected, got }) => match got {
            Some(got) => format!("exit code {got}, not {expected}"),
            None => format!("killed by a signal, not exit code {expected}"),
        },
        None => format!("not a frame's member: {}", first_line(&failure.message)),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// Whether the failure names what the mutant changed: `Ok` with what it named, or why not.
fn at_the_change(
    touch: Touch,
    found: Option<&Found>,
    processes: &[Vec<Entry>],
) -> Result<String, String> {
    let changes = || processes.iter().flatten();
    match (touch, found) {
        (Touch::Member(pattern), Some(Found::Member { pointer, received })) => {
            if !within(pointer, pattern) {
                return Err(format!("{} lies outside {pattern}", shown(pointer)));
            }
            let host = changes()
                .find_map(|entry| match entry {
                    Entry::Changed { host, passed }
                        if passed.len() == 1 && passed[0] == *received =>
                    {
                        Some(host)
                    }
                    _ => None,
                })
                .ok_or("the frame it failed on is not one the mutant rewrote")?;
            let differs = differences_of(host, received);
            if differs.iter().any(|d| on_one_path(d, pointer)) {
                Ok(format!("at {}", shown(pointer)))
            } else {
                Err(format!(
                    "the mutant changed that frame at {}, not at {}",
                    differs.join(", "),
                    shown(pointer)
                ))
            }
        }
        (Touch::Order, Some(Found::Member { pointer, received })) => {
            let moved = changes().any(|entry| match entry {
                Entry::Changed { passed, .. } | Entry::Released(passed) => {
                    passed.contains(received)
                }
                _ => false,
            });
            if !within(pointer, "/id") {
                Err(format!("{} is not the frame's id", shown(pointer)))
            } else if !moved {
                Err("the frame it failed on is not one the mutant moved".to_owned())
            } else {
                Ok(format!("at {pointer}, a frame it moved"))
            }
        }
        (Touch::Added, Some(Found::Member { received, .. } | Found::Unexpected { received })) => {
            let added = changes().any(|entry| match entry {
                Entry::Changed { passed, .. } => passed.len() > 1 && passed.contains(received),
                _ => false,
            });
            if added {
                Ok("a frame it added".to_owned())
            } else {
                Err("the frame it failed on is not one the mutant added".to_owned())
            }
        }
        (Touch::Dropped, Some(Found::Missing)) => {
            let dropped = changes()
                .any(|entry| matches!(entry, Entry::Changed { passed, .. } if passed.is_empty()));
            if dropped {
                Ok("a frame it dropped never came".to_owned())
            } else {
                Err("no frame was dropped".to_owned())
            }
        }
        (
            Touch::ExitCode,
            Some(Found::ExitCode {
                expected,
                got: Some(got),
            }),
        ) => {
            let changed = changes()
                .any(|entry| matches!(entry, Entry::ExitChanged { passed, .. } if passed == got));
            if changed {
                Ok(format!("exit code {got}, not {expected}"))
            } else {
                Err(format!("the mutant did not make the exit code {got}"))
            }
        }
        (_, None) => Err("the failure names no member, frame or exit code".to_owned()),
        (_, Some(found)) => Err(format!("the failure is {}", describe(found))),
    }
}

fn describe(found: &Found) -> String {
    match found {
        Found::Member { pointer, .. } => format!("a frame differing at {}", shown(pointer)),
        Found::Unexpected { .. } => "a frame where none was expected".to_owned(),
        Found::Missing => "a frame that never came".to_owned(),
        Found::ExitCode { expected, got } => format!("exit code {got:?}, not {expected}"),
    }
}

/// A pointer as a failure names it (the empty one is the frame).
fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the frame"
    } else {
        pointer
    }
}

/// What the filter changed beyond what the mutant declares, in words (none when it kept to it).
pub fn undeclared(touch: Touch, processes: &[Vec<Entry>]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut say = |what: String| {
        if !found.contains(&what) {
            found.push(what);
        }
    };
    for entries in processes {
        let mut host_lines: Vec<&String> = Vec::new();
        let mut passed_lines: Vec<&String> = Vec::new();
        for entry in entries {
            match (touch, entry) {
                (Touch::ExitCode, Entry::ExitChanged { .. }) => {}
                (_, Entry::ExitChanged { .. }) => say("changes the exit code".into()),
                (Touch::Member(pattern), Entry::Changed { host, passed }) => match &passed[..] {
                    [one] => {
                        let differs = differences_of(host, one);
                        if differs.is_empty() {
                            say("rewrites a line that is not JSON".into());
                        }
                        for pointer in differs {
                            if !within(&pointer, pattern) {
                                say(format!("changes {}", shown(&pointer)));
                            }
                        }
                    }
                    [] => say("drops a frame".into()),
                    _ => say("adds a frame".into()),
                },
                (Touch::Order, Entry::Changed { host, passed }) => {
                    host_lines.push(host);
                    passed_lines.extend(passed);
                }
                (Touch::Order, Entry::Released(passed)) => passed_lines.extend(passed),
                (Touch::Added, Entry::Changed { host, passed })
                    if passed.len() < 2 || passed.iter().any(|line| line != host) =>
                {
                    say("passes a frame other than the host's and its copies".into());
                }
                (Touch::Added, Entry::Changed { .. }) => {}
                (Touch::Dropped, Entry::Changed { passed, .. }) if passed.is_empty() => {}
                (_, Entry::Changed { .. }) => say("rewrites, adds or drops a frame".into()),
                (_, Entry::Released(_)) => say("holds frames back".into()),
                _ => {}
            }
        }
        host_lines.sort();
        passed_lines.sort();
        if host_lines != passed_lines {
            say("passes other frames than the host wrote, not only in another order".into());
        }
    }
    found
}

/// Where two lines differ, as JSON pointers (a member one of them lacks, an array of another
/// length, any other value that differs); none when either is not JSON.
pub fn differences_of(a: &str, b: &str) -> Vec<String> {
    match (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) {
        (Ok(a), Ok(b)) => {
            let mut out = Vec::new();
            differences(&a, &b, String::new(), &mut out);
            out
        }
        _ => Vec::new(),
    }
}

fn differences(a: &Value, b: &Value, path: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, value) in x {
                match y.get(key) {
                    Some(other) => differences(value, other, format!("{path}/{key}"), out),
                    None => out.push(format!("{path}/{key}")),
                }
            }
            for key in y.keys().filter(|key| !x.contains_key(*key)) {
                out.push(format!("{path}/{key}"));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (value, other)) in x.iter().zip(y).enumerate() {
                differences(value, other, format!("{path}/{i}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(path),
    }
}

#[cfg(test)]
mod tests;
