//! Runs one golden session against a host: a fresh work dir, device store, config and simulator
//! fleet; host processes started per `spawn`; every step in order; every received line checked
//! (JSON, schema, wire types, title canaries; graded with strict-grade notes) before it is matched;
//! the simulator torn down and every host killed however the case ends.
//!
//! A case is a [`Case`], whose work is split by stage, in reading order: [`setup`] (the work dir,
//! config, device store and fleet; the teardown), [`steps`] (the steps in order, each
//! dispatched), [`expect`] (reading and judging what the host sends, and its exit), [`repeat`]
//! (many requests and answers, pipelined), [`stderr`] (what a host logged),
//! [`received`] (the checks every received line goes through), [`program`] (the `run` step),
//! [`file`](mod@file) (the `file` step), [`background`] (programs kept running: `background`, `signal`;
//! and the `write` step), [`content`] (what their texts are judged against), [`failure`] (a
//! failure as a reader sees it) and [`diff`].

mod background;
mod content;
mod diff;
mod expect;
mod failure;
mod file;
mod manifests;
mod program;
mod received;
mod repeat;
mod setup;
mod stderr;
mod steps;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use golden::session::{Located, Program, Step, StepLine};

use golden::clock::Window;
use golden::pattern::{Captures, Mismatch};
use golden::session::Session;
use golden::validate::{DocumentSchema, FrameSchema};
use golden::{Backend, HostProfile, Suite};
use schema::DeviceStore;

use super::adapter;
use super::host::HostProcess;
use super::outcome::{CaseResult, Found, Grade};
use super::sim::Sim;

/// A case whose `floor_ms` (a time the protocol makes it wait out) is above this runs only with
/// `--long`: the default run stays within a short wall time.
pub const LONG_MS: u64 = 20_000;

/// What every case of a run shares.
#[derive(Debug)]
pub struct RunContext {
    pub backend: Backend,
    /// The host command template (`{device}` is replaced).
    pub host_template: String,
    /// The host's own command line, which `run` steps with program `corral` start; a case with
    /// such a step is skipped without it.
    pub host_cli: Option<PathBuf>,
    pub sim_bin: PathBuf,
    pub scale: f64,
    /// The kit's root: a checkout, or the embedded kit written out.
    pub kit_root: PathBuf,
    /// Where case work dirs are made.
    pub work: PathBuf,
    pub bless: bool,
    /// `--strict`: a strict-grade note fails its case.
    pub strict: bool,
    /// `--long`: run the cases whose floor is above [`LONG_MS`] too.
    pub long: bool,
    /// What the kit knows of the host: its names, paths and command lines.
    pub profile: HostProfile,
    pub requests: FrameSchema,
    pub responses: FrameSchema,
    pub config: DocumentSchema,
    /// The local documents `run` and `file` steps name, by schema file stem.
    pub documents: BTreeMap<String, DocumentSchema>,
    /// Prefix of the command that reruns one case (`--case <id>` is appended).
    pub rerun: String,
    /// This machine's name, bound as `${host_name}`: what a host on it reports.
    pub host_name: String,
}

impl RunContext {
    fn scaled(&self, ms: u64) -> Duration {
        Duration::from_millis((ms as f64 * self.scale).round() as u64)
    }

    /// A kit file as people read it: relative to the kit's root (`golden/sessions/<case>.ndjson`),
    /// wherever the kit was written out.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.kit_root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Runs one case in `dir` (made fresh by the caller) with a socket name unique to the run.
    pub fn run_case(
        &self,
        session: &Session,
        dir: &Path,
        socket: &str,
        strict: bool,
    ) -> CaseResult {
        let started = Instant::now();
        let mut result = CaseResult {
            case: session.header.case.clone(),
            file: session.path.clone(),
            shown: self.shown(&session.path),
            requirements: session.header.requirements.clone(),
            suite: session.header.suite,
            grade: Grade::Pass,
            notes: Vec::new(),
            log: Vec::new(),
            duration: Duration::ZERO,
            skip_reason: None,
            failure: None,
            blessed: Vec::new(),
        };
        if let Some(floor) = session
            .header
            .floor_ms
            .filter(|ms| *ms > LONG_MS && !self.long)
        {
            result.grade = Grade::Skipped;
            result.skip_reason = Some(format!(
                "a long case: it waits out {} s the protocol fixes (--long runs it)",
                floor / 1000
            ));
            return result;
        }
        if !session.runs_on(self.backend) {
            result.grade = Grade::Skipped;
            result.skip_reason =
                Some(session.header.backends_reason.clone().unwrap_or_else(|| {
                    format!("not run on the {} backend", self.backend.as_str())
                }));
            return result;
        }
        if self.host_cli.is_none() && session.runs_host_cli() {
            result.grade = Grade::Skipped;
            result.skip_reason = Some(
                "the case runs `corral`, the host's own command line (a `run` or `background` \
                 step, or `corral event` through `corral-sim hook`), and --host was given \
                 without --host-cli"
                    .to_owned(),
            );
            return result;
        }
        if let Some(reason) = manifests::unmet(&self.profile, &session.header) {
            result.grade = Grade::Skipped;
            result.skip_reason = Some(reason);
            return result;
        }
        if let Some(reason) = self.beyond_the_profile(session) {
            result.grade = Grade::Skipped;
            result.skip_reason = Some(reason);
            return result;
        }
        let mut case = Case::new(self, session, dir);
        let outcome = case.run(socket);
        result.blessed = std::mem::take(&mut case.blessed);
        result.log = case.log();
        result.notes = std::mem::take(&mut case.notes);
        let outcome = match outcome {
            Ok(()) if self.strict && !result.notes.is_empty() => Err((
                0,
                String::new(),
                StepError::new(format!(
                    "--strict: the host sent what the protocol allows but corral does not:\n{}",
                    result.notes.join("\n")
                )),
            )),
            other => other,
        };
        if let Err((line, step, error)) = outcome {
            result.failure = Some(case.failure(line, &step, error));
            result.grade = if strict {
                Grade::Fail
            } else {
                Grade::NonStrict
            };
        }
        case.teardown();
        result.duration = started.elapsed();
        result
    }
}

impl RunContext {
    /// Why the host profile cannot run a session, if it cannot: the `corral-cli` suite for
    /// another host, a hook its agents run when the host has none, a line of corral's CLI the
    /// profile has no command for.
    fn beyond_the_profile(&self, session: &Session) -> Option<String> {
        let profile = &self.profile;
        if profile.is_corral() {
            return None;
        }
        if session.header.suite == Suite::CorralCli {
            return Some(format!(
                "the corral-cli suite checks corral's own command line; the host is {}",
                profile.tool
            ));
        }
        if profile.hook.is_none() && session.runs_hook() {
            return Some("the case's agents run a hook, and the host profile has no `hook`".into());
        }
        session.steps.iter().find_map(|located| {
            let args = match &located.step.step {
                Step::Run(run) if run.program == Program::Corral => &run.args,
                Step::Background(started) if started.program == Program::Corral => &started.args,
                _ => return None,
            };
            adapter::command(profile, "cli", args)
                .err()
                .map(|lacking| lacking.to_string())
        })
    }
}

/// One case being run.
struct Case<'a> {
    ctx: &'a RunContext,
    session: &'a Session,
    dir: PathBuf,
    env: Vec<(String, String)>,
    remove: Vec<String>,
    devices: DeviceStore,
    store_path: PathBuf,
    canaries: Vec<String>,
    sim: Option<Sim>,
    conns: BTreeMap<String, HostProcess>,
    /// Strict-grade notes, each with its golden line.
    notes: Vec<String>,
    /// The moments steps marked (`mark`), by name.
    marks: BTreeMap<String, SystemTime>,
    captures: Captures,
    blessed: Vec<(usize, String)>,
    /// When the case began, on the wall clock: where a `$now` window starts.
    started: SystemTime,
    /// How many programs `run` and `background` steps started (names their logs).
    programs: usize,
    /// What `file` steps saw of files, for `replaced` and `appended`.
    seen: file::SeenFiles,
    /// The programs `background` steps started and no `signal` step ended, by name.
    running: BTreeMap<String, background::Running>,
}

impl Case<'_> {
    /// The span a `$now` received at this moment must fall in: from the case's start to now.
    fn window(&self) -> Window {
        Window::since(self.started)
    }

    /// The window a `$now` of an expected frame falls in: from the moment its `now_from` mark
    /// names (the step that made the change the frame reports), else from the case's start.
    fn frame_window(&self, located: &Located) -> Window {
        match located
            .step
            .now_from
            .as_ref()
            .and_then(|mark| self.marks.get(mark))
        {
            Some(at) => Window::since(*at),
            None => self.window(),
        }
    }

    /// A step's time limit: its own or its kind's default, times the run's multiplier.
    fn timeout(&self, step: &StepLine, default_ms: u64) -> Duration {
        self.ctx.scaled(step.timeout_ms.unwrap_or(default_ms))
    }

    /// The host process of a connection.
    fn conn(&mut self, name: &str) -> Result<&mut HostProcess, StepError> {
        self.conns
            .get_mut(name)
            .ok_or_else(|| StepError::new(format!("no connection `{name}`: spawn it first")))
    }
}

/// A step failure before it is placed in its file.
#[derive(Debug)]
struct StepError {
    message: String,
    diff: Option<String>,
    conn: Option<String>,
    /// What the step found wrong in the host's frames or exit, as data (boxed: a step's error
    /// travels in every `Result` of the runner).
    found: Option<Box<Found>>,
}

impl StepError {
    /// A failure saying `message`: a text, or an error of the kit or of a process, as it reads.
    fn new(message: impl fmt::Display) -> StepError {
        StepError {
            message: message.to_string(),
            diff: None,
            conn: None,
            found: None,
        }
    }

    /// A frame that differs from its pattern: `message`, the diff, and where (`mismatch`'s path).
    fn mismatch(message: String, diff: String, mismatch: &Mismatch, received: &str) -> StepError {
        StepError {
            message,
            diff: Some(diff),
            conn: None,
            found: Some(Box::new(Found::Member {
                pointer: mismatch.path.clone(),
                received: received.to_owned(),
            })),
        }
    }

    /// The error, saying what it found as data too.
    fn found(mut self, found: Found) -> StepError {
        self.found = Some(Box::new(found));
        self
    }

    /// The error, shown with this connection's transcript and stderr.
    fn on(mut self, conn: &str) -> StepError {
        self.conn = Some(conn.to_owned());
        self
    }

    /// The error, shown with this connection's transcript unless it names another.
    fn on_default(mut self, conn: &str) -> StepError {
        if self.conn.is_none() {
            self.conn = Some(conn.to_owned());
        }
        self
    }
}

type StepResult = Result<(), StepError>;

/// A failed case: the golden line, its text, and what went wrong.
type CaseError = (usize, String, StepError);
