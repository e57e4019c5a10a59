//! The one loader of golden sessions, used alike by the host runner and the replayer. A loaded
//! [`Session`] is proven: every line decodes and re-encodes byte-identically (canonical form),
//! the case id is the file stem, the header's rules hold, every pattern parses, every `${name}` is
//! used only after something binds it, every concrete frame round-trips through the wire types,
//! every `send_raw` is decoded into its bytes, and every `run` and `file` step asks for something
//! that can be checked. Every error names the file and the line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use schema::{Frames, Request, Response, decode_line, encode_line};
use serde::Serialize;
use serde_json::Value;

use super::MAIN_CONN;
use super::line::{
    Content, Entry, FileCheck, Fired, Program, Repeat, Run, SessionHeader, SignalName, SignalStep,
    Started, StderrCheck, Step, StepLine, WriteFile,
};
use super::names::{LABEL_PREFIX, is_prebound, names_fixture_pane};
use crate::Error;
use crate::backend::Backend;
use crate::pattern::{self, Use};
use crate::profile::{ANY_AGENT, Coverage, FireKind, split_action_key};

/// A loaded session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The file, as given.
    pub path: PathBuf,
    /// The first line.
    pub header: SessionHeader,
    /// The steps with their 1-based line numbers.
    pub steps: Vec<Located>,
    /// The file's lines, for showing a step and for rewriting it (bless).
    pub lines: Vec<String>,
    /// Whether some `${pane.<name>}` or `${transcript.<name>}` is used.
    names_panes: bool,
}

/// A step and where it is written.
#[derive(Debug, Clone)]
pub struct Located {
    /// The 1-based line.
    pub line: usize,
    /// The step.
    pub step: StepLine,
}

impl Located {
    /// The connection the step acts on.
    pub fn conn(&self) -> &str {
        self.step.conn.as_deref().unwrap_or(MAIN_CONN)
    }
}

impl Session {
    /// The case id (also the file stem).
    pub fn case(&self) -> &str {
        &self.header.case
    }

    /// Whether the case runs on a backend.
    pub fn runs_on(&self, backend: Backend) -> bool {
        self.header.backends.contains(&backend)
    }

    /// The connections, in order of first appearance.
    pub fn conns(&self) -> Vec<String> {
        let mut conns: Vec<String> = Vec::new();
        for located in &self.steps {
            if !conns.iter().any(|c| c == located.conn()) {
                conns.push(located.conn().to_owned());
            }
        }
        conns
    }

    /// The fixture file the header names: `<case>.toml` in the `fixtures` folder beside the
    /// session's own folder.
    pub fn fixture_path(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or(Path::new("."))
            .join("../fixtures")
            .join(format!("{}.toml", self.header.fixture))
    }

    /// Whether the session uses a fixture pane's id or transcript (`${pane.<name>}`,
    /// `${transcript.<name>}`), so a player needs the fixture's panes.
    pub fn names_panes(&self) -> bool {
        self.names_panes
    }

    /// Whether the case needs the host's own command line: a `run` or `background` step starts
    /// `corral`, or `corral-sim hook` runs the host's hook command (its profile's `hook`, which
    /// the runner names to the simulator as `$CORRAL_SIM_HOOK`).
    pub fn runs_host_cli(&self) -> bool {
        self.runs(Program::Corral) || self.runs_hook()
    }

    /// Whether an agent of its fleet runs the host's hook command (`corral-sim hook`).
    pub fn runs_hook(&self) -> bool {
        let hook = |args: &[String]| args.first().is_some_and(|first| first == "hook");
        self.steps.iter().any(|located| match &located.step.step {
            Step::Sim(args) => hook(args),
            Step::SimBackground(background) => hook(&background.args),
            Step::Run(run) => run.program == Program::CorralSim && hook(&run.args),
            Step::Background(started) => {
                started.program == Program::CorralSim && hook(&started.args)
            }
            _ => false,
        })
    }

    /// Whether some `run` or `background` step starts this program.
    pub fn runs(&self, program: Program) -> bool {
        self.steps.iter().any(|located| match &located.step.step {
            Step::Run(run) => run.program == program,
            Step::Background(started) => started.program == program,
            _ => false,
        })
    }

    /// The local documents its `run` and `file` steps name, by schema file stem.
    pub fn documents(&self) -> BTreeSet<&str> {
        self.steps
            .iter()
            .filter_map(|located| match &located.step.step {
                Step::Run(run) => run.document.as_deref(),
                Step::File(file) => file.document.as_deref(),
                _ => None,
            })
            .collect()
    }

    /// The text of a 1-based line.
    pub fn line_text(&self, line: usize) -> &str {
        &self.lines[line - 1]
    }
}

/// The canonical text of a line: compact JSON of the kit's own types.
pub fn canonical<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("golden lines always encode")
}

/// Reads and loads one session file.
pub fn load(path: &Path) -> Result<Session, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|err| Error::in_file(path, err.to_string()))?;
    parse(path, &text)
}

/// Loads one session's text, read from `path`.
pub fn parse(path: &Path, text: &str) -> Result<Session, Error> {
    let at = |line: usize, message: String| Error::new(message).at(path, line);
    if !text.ends_with('\n') {
        return Err(Error::in_file(path, "the last line has no `\\n`"));
    }
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let Some(first) = lines.first() else {
        return Err(Error::in_file(path, "empty session"));
    };
    let header: SessionHeader =
        serde_json::from_str(first).map_err(|err| at(1, format!("not a session header: {err}")))?;
    if canonical(&header) != *first {
        return Err(at(
            1,
            format!("not in canonical form; write it as\n{}", canonical(&header)),
        ));
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    check_header(&header, stem).map_err(|err| err.at(path, 1))?;
    let mut names = Names {
        manifests: header.manifests.clone(),
        ..Names::default()
    };
    let mut steps = Vec::new();
    for (index, text) in lines.iter().enumerate().skip(1) {
        let line = index + 1;
        let value: Value =
            serde_json::from_str(text).map_err(|err| at(line, format!("not JSON: {err}")))?;
        let step: StepLine =
            serde_json::from_value(value).map_err(|err| at(line, format!("not a step: {err}")))?;
        if canonical(&step) != *text {
            return Err(at(
                line,
                format!(
                    "not in canonical form (an unknown key, or keys out of order); write it as\n{}",
                    canonical(&step)
                ),
            ));
        }
        let conn = step.conn.as_deref().unwrap_or(MAIN_CONN);
        check_marks(&step, &mut names).map_err(|err| err.at(path, line))?;
        check_step(&step.step, conn, &mut names).map_err(|err| err.at(path, line))?;
        steps.push(Located { line, step });
    }
    Ok(Session {
        path: path.to_owned(),
        header,
        steps,
        lines,
        names_panes: names.panes,
    })
}

/// A `now_from` names a mark an earlier step made, and only on a step that expects frames; a
/// `mark` is made once.
fn check_marks(step: &StepLine, names: &mut Names) -> Result<(), Error> {
    if let Some(mark) = &step.now_from {
        if !matches!(step.step, Step::Expect(_) | Step::ExpectUnordered(_)) {
            return Err(Error::new(
                "`now_from` is for `expect` and `expect_unordered` steps",
            ));
        }
        if !names.marks.contains(mark) {
            return Err(Error::new(format!(
                "`now_from` names `{mark}`, which no earlier step marks"
            )));
        }
    }
    if let Some(mark) = &step.mark
        && !names.marks.insert(mark.clone())
    {
        return Err(Error::new(format!("the mark `{mark}` is made twice")));
    }
    Ok(())
}

fn check_header(header: &SessionHeader, stem: &str) -> Result<(), Error> {
    if header.case != stem {
        return Err(Error::new(format!(
            "case `{}` must match the file name `{stem}.ndjson`",
            header.case
        )));
    }
    if header.requirements.is_empty() {
        return Err(Error::new("a case names at least one requirement"));
    }
    if header.backends.is_empty() {
        return Err(Error::new("a case runs on at least one backend"));
    }
    if header.backends.len() < Backend::ALL.len() && header.backends_reason.is_none() {
        return Err(Error::new(
            "a case that skips a backend says why in `backends_reason`",
        ));
    }
    if let Some(key) = header
        .manifests
        .keys()
        .find(|key| split_action_key(key).is_none())
    {
        return Err(Error::new(format!(
            "`manifests` names `{key}`: a key is `<agent>.<action>`, an action of the protocol"
        )));
    }
    Ok(())
}

/// The names bound so far, in session order, whether a fixture pane's id was used, the paths
/// `file` steps have checked, the `background` programs running, and the connections whose
/// stdout the runner does not read.
#[derive(Debug, Default)]
struct Names {
    bound: BTreeSet<String>,
    /// The moments steps have marked.
    marks: BTreeSet<String>,
    panes: bool,
    paths: BTreeSet<String>,
    running: BTreeSet<String>,
    unread: BTreeMap<String, Unread>,
    /// The header's `manifests`: what the case needs of the host's declared actions.
    manifests: BTreeMap<String, Coverage>,
}

/// Why the runner reads nothing from a connection's stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unread {
    /// A `pause_reading` step; `resume_reading` reads again.
    Paused,
    /// A `close_stdout` step; only a `spawn` starts a connection that can be read.
    Closed,
}

impl Names {
    /// Every name in `refs` must be bound before the step that uses it.
    fn used(&mut self, refs: Vec<String>) -> Result<(), Error> {
        for name in refs {
            if !self.bound.contains(&name) && !is_prebound(&name) {
                return Err(Error::new(format!(
                    "`${{{name}}}` is used before any pattern binds it"
                )));
            }
            if let Some(key) = name.strip_prefix(LABEL_PREFIX) {
                let one_agent = split_action_key(key).is_some_and(|(agent, _)| agent != ANY_AGENT);
                match self.manifests.get(key) {
                    Some(coverage) if *coverage != Coverage::None && one_agent => {}
                    _ => {
                        return Err(Error::new(format!(
                            "`${{{name}}}` is the label the host declares for `{key}`: the \
                             header's `manifests` must need it declared"
                        )));
                    }
                }
            }
            self.panes |= names_fixture_pane(&name);
        }
        Ok(())
    }

    /// A frame we send, or a simulator argument: values and `${name}` only.
    fn send(&mut self, frame: &Value) -> Result<(), Error> {
        let (_, refs) = pattern::check(frame, Use::Send)?;
        self.used(refs)
    }

    /// A text with `${name}`s in it (an argument, a path, an expected text): no wildcard.
    fn text(&mut self, text: &str, what: &str) -> Result<(), Error> {
        match pattern::check(&Value::from(text), Use::Send) {
            Ok((_, refs)) => self.used(refs),
            Err(err) => Err(Error::new(format!("{what}: {}", err.message))),
        }
    }

    /// A frame we expect: its references must be bound, and its captures are bound after it.
    fn expect(&mut self, frame: &Value) -> Result<(), Error> {
        let (binds, refs) = pattern::check(frame, Use::Expect)?;
        self.used(refs)?;
        self.bound.extend(binds);
        Ok(())
    }
}

fn check_step(step: &Step, conn: &str, names: &mut Names) -> Result<(), Error> {
    check_reading(step, conn, names)?;
    match step {
        Step::Send(frame) => {
            names.send(frame)?;
            if pattern::is_concrete(frame) {
                round_trips::<Request>(frame)?;
            }
        }
        Step::Expect(frame) => check_expect(frame, names)?,
        Step::ExpectUnordered(frames) => {
            if frames.len() < 2 {
                return Err(Error::new(
                    "`expect_unordered` takes two patterns or more; use `expect`",
                ));
            }
            for frame in frames {
                check_expect(frame, names)?;
            }
        }
        Step::Sim(args) => check_args(args, "sim", names)?,
        Step::SimBackground(background) => check_args(&background.args, "sim_background", names)?,
        Step::Barrier(id) if id.is_empty() => return Err(Error::new("a barrier needs an id")),
        Step::Run(run) => check_run(run, names)?,
        Step::Spawn(spawn) => check_env(&spawn.env, names)?,
        Step::File(file) => check_file(file, names)?,
        Step::Background(started) => check_background(started, names)?,
        Step::Signal(signal) => check_signal(signal, names)?,
        Step::Write(write) => check_write(write, names)?,
        Step::Repeat(repeat) => check_repeat(repeat, names)?,
        Step::Stderr(stderr) => check_stderr(stderr, names)?,
        // Decoded into its bytes when the line was read.
        Step::SendRaw(_)
        | Step::Comment(_)
        | Step::ExpectSilence(_)
        | Step::Barrier(_)
        | Step::Revoke(_)
        | Step::Close(_)
        | Step::Terminate(_)
        | Step::Kill(_)
        | Step::Exit(_)
        | Step::CloseStdout(_)
        | Step::PauseReading(_)
        | Step::ResumeReading(_) => {}
    }
    Ok(())
}

/// A step that reads the connection's stdout needs the runner to be reading it: not paused, not
/// closed. `pause_reading`, `resume_reading`, `close_stdout` and `spawn` change that.
fn check_reading(step: &Step, conn: &str, names: &mut Names) -> Result<(), Error> {
    let unread = names.unread.get(conn).copied();
    let reads = match step {
        Step::Expect(_)
        | Step::ExpectUnordered(_)
        | Step::ExpectSilence(_)
        | Step::Barrier(_)
        | Step::PauseReading(_) => true,
        Step::Repeat(repeat) => repeat.expect.is_some(),
        _ => false,
    };
    match (step, unread) {
        (Step::Spawn(_), _) => {
            names.unread.remove(conn);
        }
        (_, Some(Unread::Closed)) if reads || matches!(step, Step::ResumeReading(_)) => {
            return Err(Error::new(format!(
                "the runner closed its end of `{conn}`'s stdout: nothing can be read from it"
            )));
        }
        (_, Some(Unread::Paused)) if reads => {
            return Err(Error::new(format!(
                "the runner is not reading `{conn}`'s stdout here: `resume_reading` first"
            )));
        }
        (Step::ResumeReading(_), None) => {
            return Err(Error::new(format!(
                "`resume_reading` follows a `pause_reading` on `{conn}`, and there is none"
            )));
        }
        (Step::PauseReading(_), None) => {
            names.unread.insert(conn.to_owned(), Unread::Paused);
        }
        (Step::ResumeReading(_), Some(Unread::Paused)) => {
            names.unread.remove(conn);
        }
        (Step::CloseStdout(_), _) => {
            names.unread.insert(conn.to_owned(), Unread::Closed);
        }
        _ => {}
    }
    Ok(())
}

/// A counter that names nothing else, a first value and a count that stay within `u64`, a frame
/// to send that may use the counter, and an expectation whose captures (and the counter) hold
/// within the iteration only.
fn check_repeat(repeat: &Repeat, names: &mut Names) -> Result<(), Error> {
    if repeat.times == 0 {
        return Err(Error::new("`times` is 1 or more"));
    }
    if repeat.from.checked_add(repeat.times - 1).is_none() {
        return Err(Error::new("the counter's last value is past 2^64 - 1"));
    }
    let counter = &repeat.counter;
    let named = !counter.is_empty()
        && counter
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !named {
        return Err(Error::new(format!(
            "`counter` is a name (letters, digits, `_`, `-`), not {counter:?}"
        )));
    }
    if names.bound.contains(counter) || is_prebound(counter) {
        return Err(Error::new(format!(
            "`counter` `{counter}` is already bound; give the counter a name of its own"
        )));
    }
    let before = names.bound.clone();
    names.bound.insert(counter.clone());
    let checked = names
        .send(&repeat.send)
        .and_then(|()| match &repeat.expect {
            Some(expect) => check_expect(expect, names),
            None => Ok(()),
        });
    names.bound = before;
    checked
}

/// Something to judge, and lines counted by data a `with` names.
fn check_stderr(stderr: &StderrCheck, names: &mut Names) -> Result<(), Error> {
    if stderr.content.is_none() && stderr.lines.is_empty() {
        return Err(Error::new(
            "a `stderr` step judges a `content`, `lines`, or both",
        ));
    }
    if let Some(content) = &stderr.content {
        check_content(content, names).map_err(|err| err.context("`content`"))?;
    }
    for count in &stderr.lines {
        if count.with.is_empty() {
            return Err(Error::new("`lines`: `with` takes one text or more"));
        }
        for text in &count.with {
            if text.is_empty() {
                return Err(Error::new("`lines`: a `with` text is never empty"));
            }
            names.text(text, "`lines`")?;
        }
    }
    Ok(())
}

fn check_expect(frame: &Value, names: &mut Names) -> Result<(), Error> {
    names.expect(frame)?;
    if pattern::is_concrete(frame) {
        round_trips::<Response>(frame)?;
    }
    Ok(())
}

fn check_args(args: &[String], step: &str, names: &mut Names) -> Result<(), Error> {
    if args.is_empty() {
        return Err(Error::new(format!("`{step}` needs a subcommand")));
    }
    for arg in args {
        names.send(&Value::String(arg.clone()))?;
    }
    Ok(())
}

fn check_env(env: &BTreeMap<String, Option<String>>, names: &mut Names) -> Result<(), Error> {
    for (variable, value) in env {
        if variable.is_empty() || variable.contains('=') {
            return Err(Error::new(format!(
                "`{variable}` cannot be an environment variable"
            )));
        }
        if let Some(value) = value {
            names.text(value, "an environment value")?;
        }
    }
    Ok(())
}

/// A path of the case: `${name}`s bound, absolute once they are replaced.
fn check_path(path: &str, names: &mut Names) -> Result<(), Error> {
    names.text(path, "`path`")?;
    if !(path.starts_with('/') || path.starts_with("${")) {
        return Err(Error::new(format!(
            "`path` {path} is relative; start it with a place such as `${{run_dir}}`"
        )));
    }
    Ok(())
}

fn check_mode(mode: Option<&String>) -> Result<(), Error> {
    if let Some(mode) = mode
        && !(mode.len() == 4 && mode.chars().all(|c| ('0'..='7').contains(&c)))
    {
        return Err(Error::new(format!(
            "`mode` is four octal digits (\"0600\"), not {mode:?}"
        )));
    }
    Ok(())
}

fn check_background(started: &Started, names: &mut Names) -> Result<(), Error> {
    if started.name.is_empty() {
        return Err(Error::new("a `background` program needs a name"));
    }
    if names.running.contains(&started.name) {
        return Err(Error::new(format!(
            "a `background` program named `{}` is already running; end it with a `signal` step \
             with `exit` first",
            started.name
        )));
    }
    for arg in &started.args {
        names.text(arg, "an argument")?;
    }
    check_env(&started.env, names)?;
    if let Some(ready) = &started.ready_file {
        check_path(ready, names).map_err(|err| err.context("`ready_file`"))?;
    }
    names.running.insert(started.name.clone());
    Ok(())
}

fn check_signal(signal: &SignalStep, names: &mut Names) -> Result<(), Error> {
    if !names.running.contains(&signal.name) {
        return Err(Error::new(format!(
            "no `background` program named `{}` is running here",
            signal.name
        )));
    }
    if signal.signal == SignalName::Kill {
        if signal.exit.is_some() || signal.stderr.is_some() {
            return Err(Error::new(
                "a program killed with `KILL` has no exit code to judge: drop `exit` and `stderr`",
            ));
        }
        names.running.remove(&signal.name);
        return Ok(());
    }
    match (&signal.exit, &signal.stderr) {
        (None, Some(_)) => {
            return Err(Error::new(
                "`stderr` is judged once the program ended: give `exit` too",
            ));
        }
        (Some(_), stderr) => {
            names.running.remove(&signal.name);
            if let Some(content) = stderr {
                check_content(content, names).map_err(|err| err.context("`stderr`"))?;
            }
        }
        (None, None) => {}
    }
    Ok(())
}

fn check_write(write: &WriteFile, names: &mut Names) -> Result<(), Error> {
    check_path(&write.path, names)?;
    check_mode(write.mode.as_ref())?;
    names.text(&write.text, "`text`")
}

fn check_run(run: &Run, names: &mut Names) -> Result<(), Error> {
    for arg in &run.args {
        names.text(arg, "an argument")?;
    }
    check_env(&run.env, names)?;
    if let Some(stdin) = &run.stdin {
        names.text(stdin, "`stdin`")?;
    }
    if let Some(document) = &run.document {
        check_document(document, run.stdout.as_ref(), "`stdout`")?;
    }
    for (stream, content) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if let Some(content) = content {
            check_content(content, names).map_err(|err| err.context(format!("`{stream}`")))?;
        }
    }
    Ok(())
}

fn check_file(file: &FileCheck, names: &mut Names) -> Result<(), Error> {
    check_path(&file.path, names)?;
    check_mode(file.mode.as_ref())?;
    let earlier = names.paths.contains(&file.path);
    let mut refused = Vec::new();
    match file.is {
        Entry::Absent => {
            for (key, given) in [
                ("mode", file.mode.is_some()),
                ("replaced", file.replaced.is_some()),
                ("appended", file.appended),
                ("locked", file.locked.is_some()),
                ("document", file.document.is_some()),
                ("content", file.content.is_some()),
            ] {
                if given {
                    refused.push(key);
                }
            }
        }
        Entry::Dir | Entry::Socket => {
            for (key, given) in [
                ("replaced", file.replaced.is_some()),
                ("appended", file.appended),
                ("locked", file.locked.is_some()),
                ("document", file.document.is_some()),
                (
                    "a parsed `content`",
                    file.content.as_ref().is_some_and(Content::parses),
                ),
                (
                    "`content`",
                    file.is == Entry::Socket && file.content.is_some(),
                ),
            ] {
                if given {
                    refused.push(key);
                }
            }
        }
        Entry::File => {}
    }
    if let Some(key) = refused.first() {
        let is = match file.is {
            Entry::Absent => "absent",
            Entry::Socket => "socket",
            _ => "dir",
        };
        return Err(Error::new(format!(
            "{key} says nothing about a path that is {is}"
        )));
    }
    if (file.replaced.is_some() || file.appended) && !earlier {
        return Err(Error::new(format!(
            "`replaced` and `appended` compare with an earlier `file` step on {}, and there is none",
            file.path
        )));
    }
    if file.appended && file.content.is_none() {
        return Err(Error::new(
            "`appended` needs a `content` to check what was appended",
        ));
    }
    if let Some(document) = &file.document {
        check_document(document, file.content.as_ref(), "`content`")?;
    }
    if let Some(content) = &file.content {
        check_content(content, names).map_err(|err| err.context("`content`"))?;
    }
    names.paths.insert(file.path.clone());
    Ok(())
}

/// A document is named like its schema file (`device-store`) and validates parsed values only.
fn check_document(document: &str, content: Option<&Content>, key: &str) -> Result<(), Error> {
    let named = !document.is_empty()
        && document.split('-').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if !named {
        return Err(Error::new(format!(
            "`document` is the stem of a schema file (`device-store`), not {document:?}"
        )));
    }
    if !content.is_some_and(Content::parses) {
        return Err(Error::new(format!(
            "`document` validates parsed values: it needs a {key} of `json_lines`, `json_each`, `json` or `toml`"
        )));
    }
    Ok(())
}

fn check_content(content: &Content, names: &mut Names) -> Result<(), Error> {
    match content {
        Content::Text(text) | Content::Contains(text) => names.text(text, "the text"),
        Content::ContainsAll(texts) if texts.is_empty() => {
            Err(Error::new("`contains_all` takes one text or more"))
        }
        Content::ContainsAll(texts) => texts.iter().try_for_each(|t| names.text(t, "a text")),
        Content::JsonLines(patterns) if patterns.is_empty() => Err(Error::new(
            "`json_lines` takes one pattern per line; for no output write `{\"text\":\"\"}`",
        )),
        Content::JsonLines(patterns) => patterns.iter().try_for_each(|p| names.expect(p)),
        Content::JsonEach(pattern) | Content::Toml(pattern) | Content::Json(pattern) => {
            names.expect(pattern)
        }
        Content::Fired(fired) => fired.iter().try_for_each(|fired| check_fired(fired, names)),
    }
}

/// A fired action is one the header needs typed into the pane, with a text exactly when it is a
/// `text` action.
fn check_fired(fired: &Fired, names: &mut Names) -> Result<(), Error> {
    if fired.agent == ANY_AGENT {
        return Err(Error::new(
            "`fired` names the agent whose pane the keys reached",
        ));
    }
    let key = format!("{}.{}", fired.agent, fired.action);
    let kind = names
        .manifests
        .get(&key)
        .and_then(|coverage| coverage.kind());
    match (kind, &fired.text) {
        (Some(FireKind::Keys), None) => Ok(()),
        (Some(FireKind::Text), Some(text)) => names.text(text, "a fired action's `text`"),
        (Some(FireKind::Text), None) => Err(Error::new(format!(
            "`fired` `{key}` is a text action: it names the dispatch's `text`"
        ))),
        (Some(FireKind::Keys), Some(_)) => Err(Error::new(format!(
            "`fired` `{key}` is a keys action: it has no `text`"
        ))),
        _ => Err(Error::new(format!(
            "`fired` names `{key}`, which the header's `manifests` does not need as `keys` or \
             `text`"
        ))),
    }
}

/// A concrete frame must decode through the wire types and re-encode to the same bytes.
fn round_trips<F: Frames>(frame: &Value) -> Result<(), Error> {
    let text = frame.to_string();
    let decoded = decode_line::<F>(&text)
        .map_err(|err| Error::new(format!("the frame does not decode ({err}): {text}")))?;
    let again = encode_line(&decoded);
    if again.trim_end() != text {
        return Err(Error::new(format!(
            "the frame does not re-encode byte-identically:\n  golden  {text}\n  encoded {}",
            again.trim_end()
        )));
    }
    Ok(())
}

/// Every `*.ndjson` in a directory, sorted.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|err| Error::in_file(dir, err.to_string()))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ndjson"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Session, Error> {
        parse(Path::new("golden/sessions/x.ndjson"), text)
    }

    /// What refusing the text says.
    fn refused(text: &str) -> String {
        parse_text(text).unwrap_err().to_string()
    }

    const HEADER: &str =
        r#"{"case":"x","suite":"wire","about":"a","requirements":["a.b"],"fixture":"small"}"#;

    #[test]
    fn a_well_formed_session_loads_with_line_numbers() {
        let text = format!(
            "{HEADER}\n{}\n{}\n{}\n",
            r#"{"spawn":{"device":"d"}}"#,
            r#"{"send":{"schema":1,"id":"1","t":"hello","app":"kit","app_version":"1","device":"d"}}"#,
            r#"{"expect":{"schema":1,"id":"1","t":"hello","host":"$string:host","tool_version":"$string","reconcile_interval_ms":200,"scopes":["read"]}}"#,
        );
        let session = parse_text(&text).unwrap();
        assert_eq!(session.steps.len(), 3);
        assert_eq!(session.steps[2].line, 4);
        assert_eq!(session.steps[0].conn(), "main");
        assert_eq!(session.line_text(2), r#"{"spawn":{"device":"d"}}"#);
        assert_eq!(
            session.fixture_path(),
            Path::new("golden/sessions/../fixtures/small.toml")
        );
        assert!(!session.names_panes());
    }

    /// A `now_from` names a mark an earlier step made, on an expecting step only; a mark is
    /// made once.
    #[test]
    fn now_from_names_an_earlier_mark_on_an_expect() {
        let sim = r#"{"sim":["step","--pane","a","--state","idle"],"mark":"moved"}"#;
        let edge = r#"{"expect":{"schema":1,"id":"2","t":"ack"},"now_from":"moved"}"#;
        assert!(parse_text(&format!("{HEADER}\n{sim}\n{edge}\n")).is_ok());
        let err = refused(&format!("{HEADER}\n{edge}\n{sim}\n"));
        assert!(
            err.contains("`now_from` names `moved`, which no earlier step marks"),
            "{err}"
        );
        let err = refused(&format!("{HEADER}\n{sim}\n{sim}\n"));
        assert!(err.contains("the mark `moved` is made twice"), "{err}");
        let on_sim = r#"{"sim":["step","--pane","a","--state","idle"],"now_from":"moved"}"#;
        let err = refused(&format!("{HEADER}\n{sim}\n{on_sim}\n"));
        assert!(err.contains("is for `expect`"), "{err}");
    }

    #[test]
    fn a_line_out_of_canonical_form_is_refused_with_its_canonical_text() {
        let text = format!("{HEADER}\n{}\n", r#"{"conn":"b","close":{}}"#);
        let err = refused(&text);
        assert!(
            err.starts_with("golden/sessions/x.ndjson:2: not in canonical form"),
            "{err}"
        );
        assert!(err.ends_with(r#"{"close":{},"conn":"b"}"#), "{err}");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let text = format!("{HEADER}\n{}\n", r#"{"close":{},"timeout":5}"#);
        assert!(refused(&text).contains(":2: not in canonical form"));
    }

    #[test]
    fn the_case_must_match_the_file_name() {
        let text = HEADER.replace(r#""x""#, r#""y""#) + "\n";
        assert!(refused(&text).contains("must match the file name"));
    }

    #[test]
    fn a_reference_before_its_capture_is_refused() {
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"send":{"schema":1,"id":"1","t":"card","pane":"${p}"}}"#
        );
        assert!(refused(&text).contains("`${p}` is used before"));
    }

    #[test]
    fn a_capture_bound_on_one_connection_may_be_used_on_another() {
        let text = format!(
            "{HEADER}\n{}\n{}\n",
            r#"{"expect":{"schema":1,"id":"0","t":"error","code":"not-found","message":"$string:said"},"conn":"b"}"#,
            r#"{"send":{"schema":1,"id":"1","t":"card","pane":"${said}:${pane.worker}"}}"#,
        );
        let session = parse_text(&text).unwrap();
        assert!(session.names_panes());
        assert_eq!(session.conns(), ["b", "main"]);
    }

    #[test]
    fn a_concrete_frame_must_round_trip_through_the_wire_types() {
        // Body keys out of the wire order: valid JSON, but not what the types write.
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"send":{"schema":1,"id":"1","t":"hello","device":"d","app":"kit","app_version":"1"}}"#
        );
        let err = refused(&text);
        assert!(err.contains("does not re-encode byte-identically"), "{err}");
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"expect":{"schema":1,"id":"1","t":"ack","x":1}}"#
        );
        assert!(refused(&text).contains("re-encode"));
    }

    #[test]
    fn a_case_skipping_a_backend_must_say_why() {
        let header = HEADER.replace(
            r#""fixture":"small""#,
            r#""fixture":"small","backends":["real"]"#,
        );
        assert!(refused(&format!("{header}\n")).contains("backends_reason"));
    }

    #[test]
    fn a_bad_directive_names_its_line() {
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"expect":{"schema":1,"id":"$ID","t":"ack"}}"#
        );
        let err = refused(&text);
        assert!(err.contains(":2: at /id:"), "{err}");
    }

    #[test]
    fn raw_bytes_are_decoded_at_load_and_a_bad_segment_is_a_load_error() {
        let text = format!("{HEADER}\n{}\n", r#"{"send_raw":[{"hex":"ff 0a"}]}"#);
        let session = parse_text(&text).unwrap();
        let Step::SendRaw(raw) = &session.steps[0].step.step else {
            panic!("a send_raw step");
        };
        assert_eq!(raw.bytes(), [0xff, 0x0a]);
        let text = format!("{HEADER}\n{}\n", r#"{"send_raw":[{"hex":"abc"}]}"#);
        let err = refused(&text);
        assert!(
            err.contains(":2: not a step: hex `abc` has an odd"),
            "{err}"
        );
    }

    #[test]
    fn run_and_file_steps_bind_and_use_names_in_order() {
        let text = format!(
            "{HEADER}\n{}\n{}\n{}\n",
            r#"{"run":{"program":"corral","args":["device","list","--json"],"exit":0,"document":"device-list","stdout":{"json_lines":[{"schema":1,"devices":[{"id":"$string:id","$more":true}]}]}}}"#,
            r#"{"file":{"path":"${config_dir}/corral/devices.toml","is":"file","mode":"0600","content":{"contains":"${id}"}}}"#,
            r#"{"file":{"path":"${config_dir}/corral/devices.toml","is":"file","replaced":false}}"#,
        );
        parse_text(&text).unwrap();
        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"run":{"program":"corral","args":["x","${nobody}"],"exit":0}}"#
        );
        assert!(refused(&text).contains("`${nobody}` is used before"));
    }

    #[test]
    fn a_run_or_file_step_that_cannot_be_checked_is_refused() {
        for (step, wanted) in [
            (
                r#"{"run":{"program":"corral","exit":0,"document":"ls","stdout":{"contains":"x"}}}"#,
                "`document` validates parsed values",
            ),
            (
                r#"{"run":{"program":"corral","exit":0,"document":"LS","stdout":{"json_each":{}}}}"#,
                "stem of a schema file",
            ),
            (
                r#"{"run":{"program":"corral","exit":0,"stdout":{"json_lines":[]}}}"#,
                "one pattern per line",
            ),
            (
                r#"{"run":{"program":"corral","exit":0,"stderr":{"text":"$int"}}}"#,
                "`stderr`: the text:",
            ),
            (
                r#"{"file":{"path":"run/corral","is":"dir"}}"#,
                "is relative",
            ),
            (
                r#"{"file":{"path":"${run_dir}","is":"dir","mode":"700"}}"#,
                "four octal digits",
            ),
            (
                r#"{"file":{"path":"${run_dir}/x","is":"absent","mode":"0700"}}"#,
                "mode says nothing about a path that is absent",
            ),
            (
                r#"{"file":{"path":"${run_dir}","is":"dir","locked":false}}"#,
                "locked says nothing about a path that is dir",
            ),
            (
                r#"{"file":{"path":"${run_dir}","is":"dir","content":{"toml":{}}}}"#,
                "a parsed `content` says nothing about a path that is dir",
            ),
            (
                r#"{"file":{"path":"${run_dir}/x","is":"file","replaced":true}}"#,
                "there is none",
            ),
        ] {
            let err = refused(&format!("{HEADER}\n{step}\n"));
            assert!(err.contains(wanted), "{step}: {err}");
        }
    }

    #[test]
    fn a_hook_through_the_simulator_needs_the_hosts_command_line() {
        let needs = |step: &str| {
            parse_text(&format!("{HEADER}\n{step}\n"))
                .unwrap()
                .runs_host_cli()
        };
        assert!(needs(
            r#"{"sim":["hook","--pane","agent","claude","Stop","--payload","@hooks/claude/stop.json"]}"#
        ));
        assert!(needs(
            r#"{"sim_background":{"args":["hook","--pane","agent","claude","Stop"]}}"#
        ));
        assert!(needs(
            r#"{"run":{"program":"corral","args":["ls"],"exit":0,"stdout":{"contains":"x"}}}"#
        ));
        assert!(!needs(r#"{"sim":["step","--pane","agent","working"]}"#));
        assert!(!needs(
            r#"{"run":{"program":"corral-sim","args":["tty","agent"],"exit":0,"stdout":{"contains":"x"}}}"#
        ));
    }

    #[test]
    fn background_programs_are_named_signalled_while_running_and_ended_once() {
        let daemon = r#"{"background":{"name":"d","program":"corral","args":["daemon"],"ready_file":"${run_dir}/corral/notify/daemon-${server_key}.sock"}}"#;
        let hup = r#"{"signal":{"name":"d","signal":"HUP"}}"#;
        let term = r#"{"signal":{"name":"d","signal":"TERM","exit":0,"stderr":{"contains":"x"}}}"#;
        let kill = r#"{"signal":{"name":"d","signal":"KILL"}}"#;
        let session =
            parse_text(&format!("{HEADER}\n{daemon}\n{hup}\n{term}\n{daemon}\n")).unwrap();
        assert!(session.runs(Program::Corral));
        // A kill ends the program: its name is free for another.
        parse_text(&format!("{HEADER}\n{daemon}\n{kill}\n{daemon}\n{kill}\n")).unwrap();
        for (text, wanted) in [
            (format!("{daemon}\n{daemon}\n"), "already running"),
            (format!("{hup}\n"), "no `background` program named `d`"),
            (
                format!("{daemon}\n{term}\n{hup}\n"),
                "no `background` program named `d`",
            ),
            (
                format!(
                    "{daemon}\n{}\n",
                    r#"{"signal":{"name":"d","signal":"INT","stderr":{"text":""}}}"#
                ),
                "give `exit` too",
            ),
            (
                format!("{daemon}\n{kill}\n{hup}\n"),
                "no `background` program named `d`",
            ),
            (
                format!(
                    "{daemon}\n{}\n",
                    r#"{"signal":{"name":"d","signal":"KILL","exit":0}}"#
                ),
                "has no exit code to judge",
            ),
            (
                r#"{"background":{"name":"","program":"corral"}}"#.to_owned() + "\n",
                "needs a name",
            ),
            (
                r#"{"background":{"name":"d","program":"corral","ready_file":"run/x"}}"#.to_owned()
                    + "\n",
                "`ready_file`: `path` run/x is relative",
            ),
            (
                r#"{"write":{"path":"${run_dir}/x","text":"${nobody}"}}"#.to_owned() + "\n",
                "`${nobody}` is used before",
            ),
            (
                r#"{"write":{"path":"${run_dir}/x","text":"","mode":"600"}}"#.to_owned() + "\n",
                "four octal digits",
            ),
            (
                r#"{"file":{"path":"${run_dir}/s","is":"socket","content":{"text":""}}}"#
                    .to_owned()
                    + "\n",
                "`content` says nothing about a path that is socket",
            ),
        ] {
            let err = refused(&format!("{HEADER}\n{text}"));
            assert!(err.contains(wanted), "{text}: {err}");
        }
    }

    #[test]
    fn a_repeat_binds_its_counter_and_its_captures_inside_each_iteration_only() {
        let repeat = r#"{"repeat":{"times":3,"counter":"n","send":{"schema":1,"id":"r${n}","t":"receipts","slot":"s${n}"},"expect":{"schema":1,"id":"r${n}","t":"receipts","receipts":"$array:got"}}}"#;
        parse_text(&format!("{HEADER}\n{repeat}\n{repeat}\n")).unwrap();
        for (text, wanted) in [
            (
                format!(
                    "{repeat}\n{}\n",
                    r#"{"send":{"schema":1,"id":"${n}","t":"receipts"}}"#
                ),
                "`${n}` is used before",
            ),
            (
                format!(
                    "{repeat}\n{}\n",
                    r#"{"send":{"schema":1,"id":"x","t":"receipts","slot":"${got}"}}"#
                ),
                "`${got}` is used before",
            ),
            (
                repeat.replace(r#""times":3"#, r#""times":0"#) + "\n",
                "`times` is 1 or more",
            ),
            (
                repeat.replace(r#""counter":"n""#, r#""counter":"uid""#) + "\n",
                "already bound",
            ),
            (
                repeat.replace(r#""counter":"n""#, r#""counter":"a b""#) + "\n",
                "`counter` is a name",
            ),
            (
                repeat.replace(r#""times":3"#, r#""times":3,"from":18446744073709551615"#) + "\n",
                "past 2^64 - 1",
            ),
        ] {
            let err = refused(&format!("{HEADER}\n{text}"));
            assert!(err.contains(wanted), "{text}: {err}");
        }
    }

    /// A case says what it needs of the host's declared actions; what it fires and the labels
    /// it shows must be among them.
    #[test]
    fn fired_actions_and_labels_are_ones_the_header_needs_declared() {
        let header = |manifests: &str| {
            format!(
                r#"{{"case":"x","suite":"wire","about":"a","requirements":["a.b"],"fixture":"small","manifests":{manifests}}}"#
            )
        };
        let input = |fired: &str| {
            format!(
                r#"{{"run":{{"program":"corral-sim","args":["pane","input","--pane","p"],"exit":0,"stdout":{{"fired":{fired}}}}}}}"#
            )
        };
        let good = header(
            r#"{"*.approve":"covered","claude.approve":"keys","claude.deny":"covered","codex.steer":"text","gemini.question_reply":"none"}"#,
        );
        let card = r#"{"expect":{"schema":1,"id":"1","t":"card","card":"permission","options":[{"kind":"allow-once","name":"${label.claude.approve}"},{"kind":"reject-once","name":"${label.claude.deny}"}],"$more":true}}"#;
        let session = parse_text(&format!(
            "{good}\n{}\n{}\n{card}\n",
            input(r#"[{"agent":"claude","action":"approve"}]"#),
            input(r#"[{"agent":"codex","action":"steer","text":"Go on."}]"#),
        ))
        .unwrap();
        assert_eq!(session.header.manifests.len(), 5);
        for (text, says) in [
            (
                format!("{}\n", header(r#"{"claude.compact":"keys"}"#)),
                "`manifests` names `claude.compact`",
            ),
            (
                format!(
                    "{good}\n{}\n",
                    input(r#"[{"agent":"claude","action":"deny"}]"#)
                ),
                "does not need as `keys` or `text`",
            ),
            (
                format!(
                    "{good}\n{}\n",
                    input(r#"[{"agent":"codex","action":"steer"}]"#)
                ),
                "it names the dispatch's `text`",
            ),
            (
                format!(
                    "{good}\n{}\n",
                    input(r#"[{"agent":"claude","action":"approve","text":"x"}]"#)
                ),
                "it has no `text`",
            ),
            (
                format!(
                    "{good}\n{}\n",
                    card.replace("claude.deny", "gemini.question_reply")
                ),
                "must need it declared",
            ),
            (
                format!("{good}\n{}\n", card.replace("claude.deny", "cursor.deny")),
                "must need it declared",
            ),
            (
                format!("{good}\n{}\n", card.replace("claude.deny", "*.approve")),
                "does not name a capture",
            ),
            (
                format!(
                    "{good}\n{}\n",
                    input(r#"[{"agent":"*","action":"approve"}]"#)
                ),
                "names the agent whose pane",
            ),
        ] {
            let err = refused(&text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn a_stderr_step_judges_something_with_data_bound_before() {
        parse_text(&format!(
            "{HEADER}\n{}\n",
            r#"{"stderr":{"content":{"contains":"x"},"lines":[{"with":["${socket_path}","y"],"count":1}]}}"#
        ))
        .unwrap();
        for (step, wanted) in [
            (r#"{"stderr":{}}"#, "judges a `content`, `lines`, or both"),
            (
                r#"{"stderr":{"lines":[{"with":[],"count":1}]}}"#,
                "takes one text or more",
            ),
            (
                r#"{"stderr":{"lines":[{"with":[""],"count":0}]}}"#,
                "never empty",
            ),
            (
                r#"{"stderr":{"lines":[{"with":["${nobody}"],"count":1}]}}"#,
                "`${nobody}` is used before",
            ),
            (
                r#"{"stderr":{"content":{"json_lines":[]}}}"#,
                "`content`: `json_lines` takes one pattern per line",
            ),
        ] {
            let err = refused(&format!("{HEADER}\n{step}\n"));
            assert!(err.contains(wanted), "{step}: {err}");
        }
    }

    #[test]
    fn nothing_is_read_from_a_stdout_the_runner_paused_or_closed() {
        let spawn = r#"{"spawn":{"device":"d"}}"#;
        let pause = r#"{"pause_reading":{}}"#;
        let resume = r#"{"resume_reading":{}}"#;
        let close = r#"{"close_stdout":{}}"#;
        let send = r#"{"send":{"schema":1,"id":"1","t":"receipts"}}"#;
        let expect = r#"{"expect":{"schema":1,"id":"1","t":"receipts","receipts":[]}}"#;
        for good in [
            format!("{spawn}\n{pause}\n{send}\n{resume}\n{expect}\n"),
            format!("{spawn}\n{pause}\n{send}\n{}\n", r#"{"exit":0}"#),
            format!(
                "{spawn}\n{close}\n{}\n{spawn}\n{send}\n{expect}\n",
                r#"{"exit":0}"#
            ),
            format!(
                "{spawn}\n{pause}\n{}\n",
                r#"{"barrier":"b","conn":"other"}"#
            ),
        ] {
            parse_text(&format!("{HEADER}\n{good}")).unwrap_or_else(|err| panic!("{err}"));
        }
        for (text, wanted) in [
            (format!("{pause}\n{expect}\n"), "`resume_reading` first"),
            (format!("{pause}\n{pause}\n"), "`resume_reading` first"),
            (
                format!("{pause}\n{}\n", r#"{"barrier":"b"}"#),
                "not reading `main`",
            ),
            (format!("{resume}\n"), "and there is none"),
            (format!("{close}\n{expect}\n"), "nothing can be read"),
            (format!("{close}\n{resume}\n"), "nothing can be read"),
            (
                format!(
                    "{pause}\n{}\n",
                    r#"{"repeat":{"times":2,"counter":"n","send":{"schema":1,"id":"r${n}","t":"receipts"},"expect":{"schema":1,"id":"r${n}","t":"receipts","receipts":[]}}}"#
                ),
                "`resume_reading` first",
            ),
        ] {
            let err = refused(&format!("{HEADER}\n{text}"));
            assert!(err.contains(wanted), "{text}: {err}");
        }
        let unread = format!(
            "{HEADER}\n{pause}\n{}\n",
            r#"{"repeat":{"times":2,"counter":"n","send":{"schema":1,"id":"r${n}","t":"receipts"}}}"#
        );
        parse_text(&unread).unwrap();
    }

    #[test]
    fn every_committed_session_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
        let files = files(&dir).unwrap();
        assert!(!files.is_empty());
        for file in files {
            load(&file).unwrap_or_else(|err| panic!("{err}"));
        }
    }
}
