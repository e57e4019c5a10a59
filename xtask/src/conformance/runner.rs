//! Runs one golden session against a host: a fresh work dir, device store, config and simulator
//! fleet; host processes started per `spawn`; every step in order; every received line checked
//! (JSON, schema, canonical form, title canaries) before it is matched; the simulator torn down and
//! every host killed however the case ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use golden::Backend;
use golden::pattern::{self, Captures};
use golden::session::limits::{EXIT_MS, EXPECT_MS, SIM_MS};
use golden::session::{
    Located, Session, Step, StepLine, barrier_answer, barrier_request, canonical, prebound,
};
use golden::validate::{DocumentSchema, FrameSchema};
use schema::{DeviceStore, Response, decode_line, encode_line};
use serde_json::Value;
use similar::TextDiff;

use super::assign;
use super::host::{self, HostProcess, Read};
use super::sim::Sim;

/// How long `corral-sim up` may take, in milliseconds before the run's multiplier.
const UP_MS: u64 = 60_000;

/// What every case of a run shares.
#[derive(Debug)]
pub struct RunContext {
    pub backend: Backend,
    /// The host command template (`{device}` is replaced).
    pub host_template: String,
    pub sim_bin: PathBuf,
    pub scale: f64,
    pub golden: PathBuf,
    /// Where case work dirs are made.
    pub work: PathBuf,
    pub bless: bool,
    pub requests: FrameSchema,
    pub responses: FrameSchema,
    pub config: DocumentSchema,
    /// Prefix of the command that reruns one case (`--case <id>` is appended).
    pub rerun: String,
}

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grade {
    Pass,
    /// Failed, but every requirement it tests is a `should` or a `may`.
    NonStrict,
    Fail,
    /// Not applicable to this backend.
    Skipped,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Pass => "pass",
            Grade::NonStrict => "non-strict",
            Grade::Fail => "fail",
            Grade::Skipped => "skipped",
        }
    }
}

/// Everything a reader needs to understand a failure without rerunning it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// `golden/sessions/<case>.ndjson:<line>`.
    pub location: String,
    /// The golden line.
    pub step: String,
    pub message: String,
    /// A unified diff of the expected frame against the received one.
    pub diff: Option<String>,
    /// The connection's lines, `→` sent and `←` received, last ones last.
    pub transcript: Vec<String>,
    /// The tail of the host's stderr.
    pub stderr: String,
    /// The command that reruns this one case.
    pub rerun: String,
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub case: String,
    pub file: PathBuf,
    pub requirements: Vec<String>,
    pub grade: Grade,
    pub duration: Duration,
    pub skip_reason: Option<String>,
    pub failure: Option<Failure>,
    /// Lines bless rewrote: (1-based line, new text).
    pub blessed: Vec<(usize, String)>,
}

/// A step failure before it is placed in its file.
#[derive(Debug)]
struct StepError {
    message: String,
    diff: Option<String>,
    conn: Option<String>,
}

impl StepError {
    fn new(message: impl Into<String>) -> StepError {
        StepError {
            message: message.into(),
            diff: None,
            conn: None,
        }
    }

    fn on(mut self, conn: &str) -> StepError {
        self.conn = Some(conn.to_owned());
        self
    }
}

type StepResult = Result<(), StepError>;

/// A received line and what is wrong with it beyond matching its pattern.
#[derive(Debug)]
struct Received {
    text: String,
    frame: Option<Value>,
    problems: Vec<String>,
}

impl Received {
    fn fail_on_problems(&self) -> StepResult {
        if self.problems.is_empty() {
            return Ok(());
        }
        Err(StepError::new(format!(
            "{}\nreceived: {}",
            self.problems.join("\n"),
            self.text
        )))
    }
}

/// A unified diff of two texts.
pub fn diff(expected: &str, received: &str) -> String {
    TextDiff::from_lines(expected, received)
        .unified_diff()
        .context_radius(4)
        .header("expected (golden)", "received")
        .to_string()
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("values encode");
    text.push('\n');
    text
}

/// The diff of a pattern against a received frame, wildcards that matched filled in.
fn frame_diff(pattern: &Value, actual: &Value, captures: &Captures) -> String {
    let expected = pattern::render_expected(pattern, Some(actual), captures);
    diff(&pretty(&expected), &pretty(actual))
}

/// Literal strings of the fixture's pane titles, up to their first template brace.
fn fixture_canaries(fixture: &Path) -> Vec<String> {
    let Ok(fixture) = golden::fixture::load(fixture) else {
        return Vec::new();
    };
    let mut canaries = Vec::new();
    for session in &fixture.sessions {
        for window in &session.windows {
            for pane in &window.panes {
                if let Some(title) = &pane.title {
                    let literal = title.split('{').next().unwrap_or("");
                    if literal.len() >= 6 && !canaries.iter().any(|c| c == literal) {
                        canaries.push(literal.to_owned());
                    }
                }
            }
        }
    }
    canaries
}

fn write_private(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().expect("files live in a dir");
    std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let temp = dir.join(format!(
        ".{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&temp, text).map_err(|err| format!("{}: {err}", temp.display()))?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o600))
        .map_err(|err| format!("{}: {err}", temp.display()))?;
    std::fs::rename(&temp, path).map_err(|err| format!("{}: {err}", path.display()))
}

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
    captures: Captures,
    blessed: Vec<(usize, String)>,
}

impl RunContext {
    fn scaled(&self, ms: u64) -> Duration {
        Duration::from_millis((ms as f64 * self.scale).round() as u64)
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
            requirements: session.header.requirements.clone(),
            grade: Grade::Pass,
            duration: Duration::ZERO,
            skip_reason: None,
            failure: None,
            blessed: Vec::new(),
        };
        if !session.runs_on(self.backend) {
            result.grade = Grade::Skipped;
            result.skip_reason =
                Some(session.header.backends_reason.clone().unwrap_or_else(|| {
                    format!("not run on the {} backend", self.backend.as_str())
                }));
            return result;
        }
        let mut case = Case::new(self, session, dir);
        let outcome = case.run(socket);
        result.blessed = std::mem::take(&mut case.blessed);
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

type CaseError = (usize, String, StepError);

impl<'a> Case<'a> {
    fn new(ctx: &'a RunContext, session: &'a Session, dir: &Path) -> Case<'a> {
        let path = |sub: &str| dir.join(sub).display().to_string();
        let env = vec![
            ("CORRAL_SIM_DIR".to_owned(), path("sim")),
            ("XDG_CONFIG_HOME".to_owned(), path("config")),
            (
                "CORRAL_CONFIG".to_owned(),
                path("config/corral/config.toml"),
            ),
            ("XDG_RUNTIME_DIR".to_owned(), path("run")),
            ("HOME".to_owned(), path("home")),
            ("NO_COLOR".to_owned(), "1".to_owned()),
        ];
        let mut remove: Vec<String> = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| name.starts_with("CORRAL_"))
            .collect();
        remove.extend(["TMUX".to_owned(), "TMUX_PANE".to_owned()]);
        let fixture = ctx
            .golden
            .join("fixtures")
            .join(format!("{}.toml", session.header.fixture));
        let canaries = match &session.header.canaries {
            Some(extra) => {
                let mut all = extra.clone();
                all.extend(fixture_canaries(&fixture));
                all
            }
            None => Vec::new(),
        };
        Case {
            ctx,
            session,
            dir: dir.to_owned(),
            env,
            remove,
            devices: DeviceStore {
                devices: session.header.devices.clone(),
            },
            store_path: dir.join("config/corral/devices.toml"),
            canaries,
            sim: None,
            conns: BTreeMap::new(),
            captures: Captures::new(),
            blessed: Vec::new(),
        }
    }

    fn prepare(&mut self, socket: &str) -> StepResult {
        use std::os::unix::fs::PermissionsExt;
        for sub in ["sim", "config/corral", "run", "home", "logs"] {
            std::fs::create_dir_all(self.dir.join(sub))
                .map_err(|err| StepError::new(format!("making the case dir: {err}")))?;
        }
        std::fs::set_permissions(self.dir.join("run"), std::fs::Permissions::from_mode(0o700))
            .map_err(|err| StepError::new(format!("chmod run dir: {err}")))?;
        let header = &self.session.header;
        let config = Value::Object(header.config.clone());
        self.ctx
            .config
            .validate(&config)
            .map_err(|err| StepError::new(format!("the header's config {err}")))?;
        let toml = toml::to_string(&header.config)
            .map_err(|err| StepError::new(format!("the header's config is not TOML: {err}")))?;
        write_private(&self.dir.join("config/corral/config.toml"), &toml)
            .map_err(StepError::new)?;
        if !self.devices.devices.is_empty() {
            self.write_store()?;
        }
        let fixture = self
            .ctx
            .golden
            .join("fixtures")
            .join(format!("{}.toml", header.fixture));
        let mut sim_env = self.env.clone();
        sim_env.push((
            "CORRAL_SIM_NOW_MS".into(),
            golden::clock::NOW_MS.to_string(),
        ));
        let sim = Sim::up(
            &self.ctx.sim_bin,
            &fixture,
            self.ctx.backend,
            socket,
            sim_env,
            &self.dir.join("logs"),
            self.ctx.scaled(UP_MS),
        )
        .map_err(StepError::new)?;
        self.captures = prebound(
            &sim.up.socket_path,
            &self.dir.join("sim").display().to_string(),
            &sim.up.panes,
        );
        self.env
            .push(("CORRAL_TMUX_BIN".into(), sim.up.tmux_bin.clone()));
        self.env
            .push(("CORRAL_TMUX_SOCKET".into(), sim.up.socket.clone()));
        self.sim = Some(sim);
        Ok(())
    }

    fn write_store(&self) -> StepResult {
        let text = toml::to_string(&self.devices)
            .map_err(|err| StepError::new(format!("encoding the device store: {err}")))?;
        write_private(&self.store_path, &text).map_err(StepError::new)
    }

    fn run(&mut self, socket: &str) -> Result<(), CaseError> {
        let last = self.session.lines.len();
        self.prepare(socket)
            .map_err(|err| (1, self.session.lines[0].clone(), err))?;
        for located in &self.session.steps {
            let text = self.session.lines[located.line - 1].clone();
            self.step(located)
                .map_err(|err| (located.line, text, err.on_default(located.conn())))?;
        }
        self.finish().map_err(|err| {
            (
                last,
                "(end of session: stdin closed, exit 0 expected)".into(),
                err,
            )
        })
    }

    fn timeout(&self, step: &StepLine, default_ms: u64) -> Duration {
        self.ctx.scaled(step.timeout_ms.unwrap_or(default_ms))
    }

    fn conn(&mut self, name: &str) -> Result<&mut HostProcess, StepError> {
        self.conns
            .get_mut(name)
            .ok_or_else(|| StepError::new(format!("no connection `{name}`: spawn it first")))
    }

    fn step(&mut self, located: &Located) -> StepResult {
        let line = &located.step;
        let conn = located.conn().to_owned();
        match &line.step {
            Step::Comment(_) => Ok(()),
            Step::Spawn(spawn) => self.spawn(&conn, &spawn.device),
            Step::Send(frame) => {
                let frame = pattern::instantiate(frame, &self.captures).map_err(StepError::new)?;
                self.ctx
                    .requests
                    .validate(&frame)
                    .map_err(|err| StepError::new(format!("the golden frame we send {err}")))?;
                let mut bytes = serde_json::to_vec(&frame).expect("values encode");
                bytes.push(b'\n');
                self.conn(&conn)?.send(&bytes).map_err(StepError::new)
            }
            Step::SendRaw(raw) => self.conn(&conn)?.send(raw.bytes()).map_err(StepError::new),
            Step::Expect(pattern) => {
                let deadline = Instant::now() + self.timeout(line, EXPECT_MS);
                self.expect(&conn, pattern, deadline, located)
            }
            Step::Barrier(id) => {
                let mut bytes = serde_json::to_vec(&barrier_request(id)).expect("values encode");
                bytes.push(b'\n');
                self.conn(&conn)?.send(&bytes).map_err(StepError::new)?;
                let want = barrier_answer(id);
                let deadline = Instant::now() + self.timeout(line, EXPECT_MS);
                self.expect(&conn, &want, deadline, located)
            }
            Step::ExpectUnordered(patterns) => {
                let deadline = Instant::now() + self.timeout(line, EXPECT_MS);
                self.expect_unordered(&conn, patterns, deadline, located)
            }
            Step::ExpectSilence(ms) => {
                let deadline = Instant::now() + self.ctx.scaled(*ms);
                match self.receive(&conn, deadline)? {
                    None => Ok(()),
                    Some(received) => Err(StepError::new(format!(
                        "expected silence for {ms} ms, received {}",
                        received.text
                    ))),
                }
            }
            Step::Sim(args) => {
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| pattern::instantiate_text(arg, &self.captures))
                    .collect::<Result<_, _>>()
                    .map_err(StepError::new)?;
                let timeout = self.timeout(line, SIM_MS);
                let sim = self.sim.as_mut().expect("the simulator is up");
                let ran = sim.step(&args, timeout).map_err(StepError::new)?;
                if ran.ok {
                    Ok(())
                } else {
                    Err(StepError::new(format!(
                        "`corral-sim {}` failed: {}",
                        args.join(" "),
                        ran.stderr.trim()
                    )))
                }
            }
            Step::SimBackground(background) => {
                let args: Vec<String> = background
                    .args
                    .iter()
                    .map(|arg| pattern::instantiate_text(arg, &self.captures))
                    .collect::<Result<_, _>>()
                    .map_err(StepError::new)?;
                let ready = background
                    .ready_file
                    .as_ref()
                    .map(|file| self.dir.join("sim").join(file));
                let timeout = self.timeout(line, SIM_MS);
                let sim = self.sim.as_mut().expect("the simulator is up");
                sim.background(&args, ready.as_deref(), timeout)
                    .map_err(StepError::new)
            }
            Step::Revoke(id) => {
                let before = self.devices.devices.len();
                self.devices.devices.retain(|device| device.id != *id);
                if self.devices.devices.len() == before {
                    return Err(StepError::new(format!(
                        "no device `{id}` in the store to revoke"
                    )));
                }
                self.write_store()
            }
            Step::Close(_) => {
                self.conn(&conn)?.close();
                Ok(())
            }
            Step::Terminate(_) => {
                self.conn(&conn)?.terminate();
                Ok(())
            }
            Step::Exit(code) => {
                let deadline = Instant::now() + self.timeout(line, EXIT_MS);
                self.exit(&conn, *code, deadline)
            }
        }
    }

    fn spawn(&mut self, conn: &str, device: &str) -> StepResult {
        if let Some(existing) = self.conns.get_mut(conn)
            && existing.wait(Instant::now()).is_none()
        {
            return Err(StepError::new(format!(
                "connection `{conn}` is still running"
            )));
        }
        let command = self
            .ctx
            .host_template
            .replace("{device}", &host::shell_quote(device));
        let stderr = self.dir.join("logs").join(format!("host-{conn}.err"));
        let process = HostProcess::spawn(&command, &self.env, &self.remove, &self.dir, stderr)
            .map_err(StepError::new)?;
        self.conns.insert(conn.to_owned(), process);
        Ok(())
    }

    /// Receives the next line and checks it; `None` when the deadline passes first. A line that
    /// breaks a kit-level rule (JSON, schema, canonical form, canaries) is still returned, with
    /// its problems, so the caller can show it beside the frame it expected.
    fn receive(&mut self, conn: &str, deadline: Instant) -> Result<Option<Received>, StepError> {
        let ctx = self.ctx;
        let canaries = self.canaries.clone();
        let process = self.conn(conn)?;
        let bytes = match process.next(deadline) {
            Read::Timeout => return Ok(None),
            Read::Line(bytes) => bytes,
            Read::Fragment(bytes) => {
                return Err(StepError::new(format!(
                    "the host ended stdout in the middle of a line: {}",
                    host::show(&bytes)
                )));
            }
            Read::Eof => {
                let status = process.wait(Instant::now() + Duration::from_millis(500));
                let how = match status.and_then(|s| s.code()) {
                    Some(code) => format!("exited with code {code}"),
                    None => "closed its stdout".to_owned(),
                };
                return Err(StepError::new(format!(
                    "the host {how} instead of sending a frame"
                )));
            }
        };
        let mut problems = Vec::new();
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                problems.push("the line is not UTF-8".to_owned());
                String::from_utf8_lossy(err.as_bytes()).into_owned()
            }
        };
        for canary in &canaries {
            if text.contains(canary.as_str()) {
                problems.push(format!("a pane title canary `{canary}` rode the wire"));
            }
        }
        let frame = match serde_json::from_str::<Value>(&text) {
            Ok(frame) => Some(frame),
            Err(err) => {
                problems.push(format!("the line is not JSON ({err})"));
                None
            }
        };
        if let Some(frame) = &frame {
            if let Err(err) = ctx.responses.validate(frame) {
                problems.push(format!("the frame {err}"));
            } else {
                match decode_line::<Response>(&text) {
                    Ok(decoded) if encode_line(&decoded).trim_end() == text => {}
                    Ok(decoded) => problems.push(format!(
                        "the frame is not in canonical form (key order or spacing differ from \
                         wire-details.md); canonical: {}",
                        encode_line(&decoded).trim_end()
                    )),
                    Err(err) => problems.push(format!(
                        "the frame does not decode through the wire types: {err}"
                    )),
                }
            }
        }
        Ok(Some(Received {
            text,
            frame,
            problems,
        }))
    }

    fn expect(
        &mut self,
        conn: &str,
        pattern: &Value,
        deadline: Instant,
        located: &Located,
    ) -> StepResult {
        let Some(received) = self.receive(conn, deadline)? else {
            return Err(StepError::new(format!(
                "no frame arrived within {} ms",
                self.timeout(&located.step, EXPECT_MS).as_millis()
            )));
        };
        let Some(frame) = &received.frame else {
            let expected = pattern::render_expected(pattern, None, &self.captures);
            return Err(StepError {
                message: received.problems.join("\n"),
                diff: Some(diff(&pretty(&expected), &format!("{}\n", received.text))),
                conn: None,
            });
        };
        let mut trial = self.captures.clone();
        match pattern::matches(pattern, frame, &mut trial) {
            Ok(()) => {
                self.captures = trial;
                received.fail_on_problems()
            }
            Err(_) if self.ctx.bless && matches!(located.step.step, Step::Expect(_)) => {
                let blessed = pattern::bless(pattern, frame);
                let _ = pattern::matches(&blessed, frame, &mut self.captures);
                self.record_bless(located, Step::Expect(blessed));
                received.fail_on_problems()
            }
            Err(mismatch) => {
                let mut message = format!("the frame does not match: {mismatch}");
                for problem in &received.problems {
                    message.push_str(&format!("\nalso: {problem}"));
                }
                Err(StepError {
                    message,
                    diff: Some(frame_diff(pattern, frame, &self.captures)),
                    conn: None,
                })
            }
        }
    }

    fn record_bless(&mut self, located: &Located, step: Step) {
        let line = StepLine {
            step,
            conn: located.step.conn.clone(),
            timeout_ms: located.step.timeout_ms,
        };
        self.blessed.push((located.line, canonical(&line)));
    }

    fn expect_unordered(
        &mut self,
        conn: &str,
        patterns: &[Value],
        deadline: Instant,
        located: &Located,
    ) -> StepResult {
        let mut received = Vec::new();
        while received.len() < patterns.len() {
            match self.receive(conn, deadline)? {
                Some(line) if line.frame.is_none() => return line.fail_on_problems(),
                Some(line) => received.push(line),
                None => {
                    return Err(StepError::new(format!(
                        "{} of {} frames arrived within {} ms: {}",
                        received.len(),
                        patterns.len(),
                        self.timeout(&located.step, EXPECT_MS).as_millis(),
                        received
                            .iter()
                            .map(|r| r.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    )));
                }
            }
        }
        let frames: Vec<Value> = received.iter().filter_map(|r| r.frame.clone()).collect();
        let mut trial = self.captures.clone();
        match assign::assign(patterns, &frames, &mut trial) {
            Ok(_) => {
                self.captures = trial;
            }
            Err(none) if self.ctx.bless => {
                let blessed: Vec<Value> = patterns
                    .iter()
                    .zip(&none.pairing)
                    .map(|(pattern, frame)| match frames.get(*frame) {
                        Some(frame) => pattern::bless(pattern, frame),
                        None => pattern.clone(),
                    })
                    .collect();
                let _ = assign::assign(&blessed, &frames, &mut self.captures);
                self.record_bless(located, Step::ExpectUnordered(blessed));
            }
            Err(none) => {
                let shown = frames
                    .get(none.pairing[none.pattern])
                    .cloned()
                    .unwrap_or(Value::Null);
                let mut message = format!(
                    "no assignment of the {} received frames to the patterns exists; pattern {} \
                     (shown beside its most similar frame) fails {}",
                    frames.len(),
                    none.pattern + 1,
                    none.mismatch
                );
                for problem in received.iter().flat_map(|r| &r.problems) {
                    message.push_str(&format!("\nalso: {problem}"));
                }
                return Err(StepError {
                    message,
                    diff: Some(frame_diff(&patterns[none.pattern], &shown, &self.captures)),
                    conn: None,
                });
            }
        }
        for line in received {
            line.fail_on_problems()?;
        }
        Ok(())
    }

    /// Drains the connection to end of file (every frame left is unexpected) and checks the
    /// exit code.
    fn exit(&mut self, conn: &str, code: i32, deadline: Instant) -> StepResult {
        let process = self.conn(conn)?;
        match process.next(deadline) {
            Read::Eof => {}
            Read::Timeout => {
                return Err(StepError::new(format!(
                    "expected the host to exit with {code}; it is still running"
                )));
            }
            Read::Line(bytes) | Read::Fragment(bytes) => {
                return Err(StepError::new(format!(
                    "expected the host to exit with {code}, but it sent another line: {}",
                    host::show(&bytes)
                )));
            }
        }
        match process.wait(deadline) {
            None => Err(StepError::new(format!(
                "expected the host to exit with {code}; it closed stdout but is still running"
            ))),
            Some(status) => match status.code() {
                Some(got) if got == code => Ok(()),
                Some(got) => Err(StepError::new(format!(
                    "expected exit code {code}, the host exited with {got}"
                ))),
                None => Err(StepError::new(format!(
                    "expected exit code {code}, the host was killed by a signal ({status})"
                ))),
            },
        }
    }

    /// Closes every connection no `exit` step ended and expects each to exit 0 without another
    /// frame.
    fn finish(&mut self) -> StepResult {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let process = self.conns.get_mut(&name).expect("listed");
            if process.finished() {
                continue;
            }
            process.close();
            let deadline = Instant::now() + self.ctx.scaled(EXIT_MS);
            self.exit(&name, 0, deadline).map_err(|err| err.on(&name))?;
        }
        Ok(())
    }

    fn failure(&self, line: usize, step: &str, error: StepError) -> Failure {
        let shown = self
            .session
            .path
            .strip_prefix(self.ctx.golden.parent().unwrap_or(Path::new("")))
            .unwrap_or(&self.session.path)
            .display()
            .to_string();
        let (transcript, stderr) = match error.conn.as_deref().and_then(|c| self.conns.get(c)) {
            Some(process) => {
                let lines = &process.transcript;
                let start = lines.len().saturating_sub(12);
                (
                    lines[start..]
                        .iter()
                        .map(|l| format!("{} {}", if l.sent { "→" } else { "←" }, l.text))
                        .collect(),
                    process.stderr_tail(10),
                )
            }
            None => (Vec::new(), String::new()),
        };
        let step = if step.chars().count() > 600 {
            format!(
                "{}… ({} bytes)",
                step.chars().take(600).collect::<String>(),
                step.len()
            )
        } else {
            step.to_owned()
        };
        Failure {
            location: format!("{shown}:{line}"),
            step,
            message: error.message,
            diff: error.diff,
            transcript,
            stderr,
            rerun: format!("{} --case {}", self.ctx.rerun, self.session.header.case),
        }
    }

    fn teardown(&mut self) {
        for process in self.conns.values_mut() {
            process.kill();
        }
        if let Some(mut sim) = self.sim.take() {
            let _ = sim.down();
            // A real tmux server killed with `kill-server` can leave its socket file behind.
            if self.ctx.backend == Backend::Real && !sim.up.socket_path.is_empty() {
                let _ = std::fs::remove_file(&sim.up.socket_path);
            }
        }
    }
}

impl StepError {
    fn on_default(mut self, conn: &str) -> StepError {
        if self.conn.is_none() {
            self.conn = Some(conn.to_owned());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_frame_diff_shows_only_real_differences() {
        let pattern = json!({"id": "1", "at_ms": "$int", "to": "idle"});
        let actual = json!({"at_ms": 17, "to": "idle"});
        let shown = frame_diff(&pattern, &actual, &Captures::new());
        assert!(shown.contains("-  \"id\": \"1\","), "{shown}");
        assert!(!shown.contains("-  \"at_ms\""), "{shown}");
    }
}
