//! `corral-sim replay --app <command> <session or dir>...`: every connection of every session
//! played against a fresh run of the app, one after the other, and one report: a line per case
//! as it ends (`PASS`, `FAIL` with its failed verdicts and the end of the app's stderr, `SKIP`
//! with why a session cannot be replayed, `ERROR` for one that does not load), then
//! `N passed, N failed, N skipped`.

use std::path::{Path, PathBuf};

use golden::session::{MAIN_CONN, Session};
use golden::validate::FrameSchema;
use serde::Serialize;

use super::app::{self, AppEnd};
use super::play::{Outcome, Settings};
use super::script::{self, ScriptError};

/// How one case went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    /// Every app frame passed and the script completed.
    Pass,
    /// An app frame failed, or the script did not complete.
    Fail,
    /// The connection cannot be replayed (the session sends bad input on purpose, or reconnects).
    Skipped,
    /// The session does not load, or the app could not be started.
    Error,
}

/// One case of the report: a connection of a session.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// The session file.
    pub session: String,
    /// Its case id (the file stem when it does not load).
    pub case: String,
    /// The connection played; empty when the session does not load.
    pub conn: String,
    /// How it went.
    pub grade: Grade,
    /// Why it was skipped, or the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The verdicts, when it was played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// How the app ended, when it was played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<AppEnd>,
}

impl Case {
    /// `case` for the main connection, `case@conn` for another.
    pub fn name(&self) -> String {
        if self.conn == MAIN_CONN || self.conn.is_empty() {
            self.case.clone()
        } else {
            format!("{}@{}", self.case, self.conn)
        }
    }

    /// The case's lines in the report.
    pub fn render(&self) -> Vec<String> {
        let name = self.name();
        match self.grade {
            Grade::Pass => vec![format!("PASS  {name}")],
            Grade::Skipped => vec![format!(
                "SKIP  {name}: {}",
                self.reason.as_deref().unwrap_or_default()
            )],
            Grade::Error => vec![format!(
                "ERROR {name}: {}",
                self.reason.as_deref().unwrap_or_default()
            )],
            Grade::Fail => {
                let mut lines = vec![format!("FAIL  {name}")];
                if let Some(outcome) = &self.outcome {
                    lines.extend(
                        outcome
                            .verdicts
                            .iter()
                            .filter(|v| v.verdict == "fail")
                            .map(|v| format!("    {}", v.render())),
                    );
                    if !outcome.complete && outcome.failed == 0 {
                        lines.push("    the script did not complete".to_owned());
                    }
                }
                if let Some(end) = &self.app {
                    let tail: Vec<&str> = end.stderr.lines().rev().take(10).collect();
                    if !tail.is_empty() {
                        lines.push("    the app's stderr ends:".to_owned());
                        lines.extend(tail.iter().rev().map(|line| format!("      {line}")));
                    }
                }
                lines
            }
        }
    }
}

/// The whole run: the `--report` document.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The app command.
    pub app: String,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed, and sessions in error.
    pub failed: usize,
    /// Cases that cannot be replayed.
    pub skipped: usize,
    /// Every case, in order.
    pub cases: Vec<Case>,
}

impl Report {
    /// The closing line.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }

    /// Whether a session did not load (or the app did not start).
    pub fn broken(&self) -> bool {
        self.cases.iter().any(|case| case.grade == Grade::Error)
    }
}

/// What a run needs besides the sessions.
pub struct Run<'a> {
    /// The app command, for `sh -c`.
    pub app: &'a str,
    /// Only this connection of every session (a session without it is skipped); `None`: every
    /// connection.
    pub conn: Option<&'a str>,
    /// The player's settings.
    pub settings: Settings,
    /// `requests.schema.json`.
    pub requests: &'a FrameSchema,
    /// `responses.schema.json`.
    pub responses: &'a FrameSchema,
}

impl std::fmt::Debug for Run<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("app", &self.app)
            .field("conn", &self.conn)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

fn errored(path: &Path, case: String, conn: &str, reason: String) -> Case {
    Case {
        session: path.display().to_string(),
        case,
        conn: conn.to_owned(),
        grade: Grade::Error,
        reason: Some(reason),
        outcome: None,
        app: None,
    }
}

/// Plays every file's connections against the app; `each` gets every case as it ends.
pub fn run(files: &[PathBuf], run: &Run<'_>, mut each: impl FnMut(&Case)) -> Report {
    let mut cases = Vec::new();
    for file in files {
        let session = match script::load(file) {
            Ok(session) => session,
            Err(err) => {
                let stem = file.file_stem().unwrap_or_default().to_string_lossy();
                let case = errored(file, stem.into_owned(), "", err.to_string());
                each(&case);
                cases.push(case);
                continue;
            }
        };
        for conn in conns(&session, run.conn) {
            let case = play_case(&session, &conn, run);
            each(&case);
            cases.push(case);
        }
    }
    let count = |grade: Grade| cases.iter().filter(|case| case.grade == grade).count();
    Report {
        app: run.app.to_owned(),
        passed: count(Grade::Pass),
        failed: count(Grade::Fail) + count(Grade::Error),
        skipped: count(Grade::Skipped),
        cases,
    }
}

fn conns(session: &Session, only: Option<&str>) -> Vec<String> {
    match only {
        Some(conn) => vec![conn.to_owned()],
        None => session.conns(),
    }
}

fn play_case(session: &Session, conn: &str, run: &Run<'_>) -> Case {
    let path = session.path.as_path();
    let case = session.header.case.clone();
    let mut report = Case {
        session: path.display().to_string(),
        case: case.clone(),
        conn: conn.to_owned(),
        grade: Grade::Skipped,
        reason: None,
        outcome: None,
        app: None,
    };
    if !session.conns().iter().any(|c| c == conn) {
        report.reason = Some(format!("the session has no connection `{conn}`"));
        return report;
    }
    let script = match script::script(session, conn, run.requests, run.responses) {
        Ok(script) => script,
        Err(err @ ScriptError::NotReplayable { .. }) => {
            report.reason = Some(err.to_string());
            return report;
        }
        Err(err) => return errored(path, case, conn, err.to_string()),
    };
    let env = app::app_env(session, conn);
    match app::run(run.app, &env, &script, run.requests, run.settings) {
        Ok(played) => {
            report.grade = if played.outcome.success() {
                Grade::Pass
            } else {
                Grade::Fail
            };
            report.outcome = Some(played.outcome);
            report.app = Some(played.end);
            report
        }
        Err(err) => errored(path, case, conn, format!("{err:#}")),
    }
}
