//! `corral-sim replay`: the client side of the conformance kit. It plays the host's half of a
//! golden session over stdio, so a client team points its app at it (as its ssh command) and
//! gets a verdict on every frame the app sent. Stdout carries nothing but the host's frames;
//! verdicts go to stderr (and to `--report`). Exit 0 when every app frame passed and the script
//! completed, 1 otherwise, 2 when the session cannot be loaded or replayed.
//!
//! With `--app <command>` it starts the app itself, once per connection of every session given
//! (files or directories), and prints one report instead.
//!
//! Read in this order: [`script`] (a session as the host's half, and the replayability rule),
//! [`judge`] (one app line against the frame the session expects), [`play`] (the stdio loop),
//! [`app`] (one session against an app the replayer starts), [`suite`] (many sessions, one
//! report).
//! The session's loader and its patterns are the `golden` crate's, the same ones
//! `cargo xtask conformance` uses.

pub mod app;
pub mod judge;
pub mod play;
pub mod script;
pub mod suite;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use golden::Error;
use golden::session::MAIN_CONN;
use golden::validate::FrameSchema;

use self::script::ScriptError;

/// `corral-sim replay`'s arguments.
#[derive(Debug, Clone)]
pub struct ReplayArgs {
    /// The golden session (`golden/sessions/<case>.ndjson`); with `--list` or `--app`, session
    /// files or directories of them.
    pub sessions: Vec<PathBuf>,
    /// Print, for every connection of every session, whether it can be replayed, and why not.
    pub list: bool,
    /// Start the app to judge, a command for `sh -c`, once per connection of every session: the
    /// host's frames on its stdin, its frames read from its stdout; `CORRAL_REPLAY_CASE`,
    /// `CORRAL_REPLAY_CONN`, `CORRAL_REPLAY_SESSION` and `CORRAL_REPLAY_DEVICE` say which.
    /// Prints one line per case and `N passed, N failed, N skipped`.
    pub app: Option<String>,
    /// The connection whose host half is played (default `main`; with `--app`, every
    /// connection of every session).
    pub conn: Option<String>,
    /// Also write the verdicts to this file as JSON (with `--app`, the whole report).
    pub report: Option<PathBuf>,
    /// Multiplies every wait for the app and every silence.
    pub timeout_scale: f64,
}

impl From<simulator::sim::cli::ReplayArgs> for ReplayArgs {
    /// `corral-sim replay`'s command line (the simulator's, which defines every `corral-sim`
    /// subcommand) as the harness's plain options.
    fn from(args: simulator::sim::cli::ReplayArgs) -> ReplayArgs {
        let simulator::sim::cli::ReplayArgs {
            sessions,
            list,
            app,
            conn,
            report,
            timeout_scale,
        } = args;
        ReplayArgs {
            sessions,
            list,
            app,
            conn,
            report,
            timeout_scale,
        }
    }
}

/// The exit code of a session that cannot be loaded or replayed, and of a usage error.
const LOAD_ERROR: u8 = 2;

fn refuse(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("corral-sim replay: {message}");
    ExitCode::from(LOAD_ERROR)
}

/// `--report FILE`, made before the app connects so that a report that cannot be written is a
/// usage error (a refusal, exit 2), then written once as pretty JSON.
struct ReportFile<'a> {
    path: &'a Path,
    file: std::fs::File,
}

impl<'a> ReportFile<'a> {
    fn create(path: Option<&'a Path>) -> Result<Option<ReportFile<'a>>, ExitCode> {
        let Some(path) = path else { return Ok(None) };
        match std::fs::File::create(path) {
            Ok(file) => Ok(Some(ReportFile { path, file })),
            Err(err) => Err(refuse(format!("{}: {err}", path.display()))),
        }
    }

    fn write(mut self, report: &impl serde::Serialize) -> Result<(), ExitCode> {
        let text = serde_json::to_string_pretty(report).expect("reports encode");
        writeln!(self.file, "{text}")
            .map_err(|err| refuse(format!("{}: {err}", self.path.display())))
    }
}

fn schemas() -> Result<(FrameSchema, FrameSchema), Error> {
    Ok((
        FrameSchema::generated("requests.schema.json")?,
        FrameSchema::generated("responses.schema.json")?,
    ))
}

/// Runs `corral-sim replay`; returns the process's exit code.
pub fn main(args: ReplayArgs) -> ExitCode {
    let (requests, responses) = match schemas() {
        Ok(schemas) => schemas,
        Err(err) => return refuse(err),
    };
    if args.list {
        return list(&args.sessions, &requests, &responses);
    }
    if !(args.timeout_scale.is_finite() && args.timeout_scale > 0.0) {
        return refuse(format!(
            "--timeout-scale must be a positive number, not {}",
            args.timeout_scale
        ));
    }
    if let Some(app) = &args.app {
        return against_app(&args, app, &requests, &responses);
    }
    let [path] = args.sessions.as_slice() else {
        return refuse("give one session to replay (several are for --list and --app)");
    };
    let conn = args.conn.as_deref().unwrap_or(MAIN_CONN);
    let script = match script::load(path)
        .and_then(|session| script::script(&session, conn, &requests, &responses))
    {
        Ok(script) => script,
        Err(err) => return refuse(err),
    };
    // Made before the app connects, so a report that cannot be written is a usage error.
    let report = match ReportFile::create(args.report.as_deref()) {
        Ok(report) => report,
        Err(code) => return code,
    };
    let settings = play::Settings {
        scale: args.timeout_scale,
    };
    let outcome = play::play(
        &script,
        &requests,
        settings,
        std::io::stdin(),
        std::io::stdout().lock(),
        std::io::stderr().lock(),
    );
    if let Some(report) = report
        && let Err(code) = report.write(&outcome)
    {
        return code;
    }
    if outcome.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--app`: every session against the app, one report on stdout; exit 0 when every case that
/// could be replayed passed, 1 when one failed, 2 when a session does not load.
fn against_app(
    args: &ReplayArgs,
    app: &str,
    requests: &FrameSchema,
    responses: &FrameSchema,
) -> ExitCode {
    let files = match session_files(&args.sessions) {
        Ok(files) => files,
        Err(err) => return refuse(err),
    };
    let report_file = match ReportFile::create(args.report.as_deref()) {
        Ok(report) => report,
        Err(code) => return code,
    };
    let run = suite::Run {
        app,
        conn: args.conn.as_deref(),
        settings: play::Settings {
            scale: args.timeout_scale,
        },
        requests,
        responses,
    };
    // The report is this command's stdout; a reader that went away loses nothing.
    let report = suite::run(&files, &run, |case| {
        let _ = writeln!(std::io::stdout().lock(), "{}", case.render().join("\n"));
    });
    let _ = writeln!(std::io::stdout().lock(), "{}", report.summary());
    if let Some(file) = report_file
        && let Err(code) = file.write(&report)
    {
        return code;
    }
    if report.broken() {
        ExitCode::from(LOAD_ERROR)
    } else if report.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Every `*.ndjson` under the given paths (a file as given), sorted per directory.
fn session_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries =
                std::fs::read_dir(path).map_err(|err| Error::in_file(path, err.to_string()))?;
            let mut found: Vec<PathBuf> = entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|file| file.extension().is_some_and(|ext| ext == "ndjson"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// `--list`: one line per connection of each session on stdout, then a count; exit 2 when a
/// session does not load.
fn list(paths: &[PathBuf], requests: &FrameSchema, responses: &FrameSchema) -> ExitCode {
    let files = match session_files(paths) {
        Ok(files) => files,
        Err(err) => return refuse(err),
    };
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let (mut replayable, mut broken) = (0, false);
    for file in &files {
        let session = match script::load(file) {
            Ok(session) => session,
            Err(err) => {
                broken = true;
                let case = file.file_stem().unwrap_or_default().to_string_lossy();
                rows.push((case.into_owned(), "-".into(), format!("error: {err}")));
                continue;
            }
        };
        for conn in session.conns() {
            let verdict = match script::script(&session, &conn, requests, responses) {
                Ok(_) => {
                    replayable += usize::from(conn == MAIN_CONN);
                    "replayable".to_owned()
                }
                Err(err @ ScriptError::NotReplayable { .. }) => err.to_string(),
                Err(err) => {
                    broken = true;
                    format!("error: {err}")
                }
            };
            rows.push((session.header.case.clone(), conn, verdict));
        }
    }
    let case_width = rows.iter().map(|row| row.0.len()).max().unwrap_or(0);
    let conn_width = rows.iter().map(|row| row.1.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = rows
        .iter()
        .map(|(case, conn, verdict)| format!("{case:case_width$}  {conn:conn_width$}  {verdict}"))
        .collect();
    lines.push(format!(
        "{replayable} of {} sessions replayable (connection {MAIN_CONN})",
        files.len()
    ));
    // The listing is this command's stdout; a reader that went away loses nothing.
    let _ = writeln!(std::io::stdout().lock(), "{}", lines.join("\n"));
    if broken {
        ExitCode::from(LOAD_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}
