//! The broken-host proof (`--self-test`), in three parts, each against a wrapper around the host
//! (the built `corral` in a checkout, else the `--host` given):
//!
//! - a host that drops `id` from every frame: every case fails with a diff of expected against
//!   received and the command that reruns it;
//! - a host that grows every frame as the protocol allows (a key it does not name on every
//!   object, every object's keys in reverse order): every case passes, each with strict-grade
//!   notes, and fails under `--strict`;
//! - every single-rule break of [`mutants::CATALOGUE`]: one of the sessions its rule lists fails.
//!
//! The wrappers are the running program again: `corral-conformance drop-id|grow <host
//! command...>` or `mutant <name> <host command...>`, `cargo xtask conformance drop-id ...` in a
//! checkout.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use super::Launcher;
use super::binaries::{build, built_corral, host_of};
use super::caught::{self, CaseRun};
use super::cli::Options;
use super::execute::execute;
use super::mutants::{self, Filter, Lines, Mutant};
use super::outcome::{CaseResult, Grade};
use super::traffic::{self, LogFile, Watched};

/// The breaking wrapper's subcommand name.
pub const WRAPPER: &str = "drop-id";

/// The growing wrapper's subcommand name.
pub const GROW: &str = "grow";

/// The key the growing wrapper adds to every object: no protocol name.
pub const GROWN_KEY: &str = "x_kit_growth";

/// The single-rule wrapper's subcommand name: `mutant <name> <host command...>`.
pub const MUTANT: &str = "mutant";

/// `mutant`'s option: the dir its log goes to ([`traffic`]).
const LOG: &str = "--log";

/// `mutant`'s flag: the log records the traffic too, not only the changes.
const TRAFFIC: &str = "--traffic";

/// Runs a host command behind the catalogue's mutant (or the transparent filter) named in
/// `args`: `[--log DIR [--traffic]] <name> <host command...>`.
pub fn mutant(args: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    let usage = || {
        anyhow::anyhow!(
            "usage: {} {MUTANT} [{LOG} DIR [{TRAFFIC}]] <name> <host command...>",
            launcher.command()
        )
    };
    let (log, args) = match args {
        [flag, dir, rest @ ..] if flag == LOG => (Some(PathBuf::from(dir)), rest),
        _ => (None, args),
    };
    let (traffic, args) = match args {
        [flag, rest @ ..] if flag == TRAFFIC && log.is_some() => (true, rest),
        _ => (false, args),
    };
    let Some((name, command)) = args.split_first() else {
        return Err(usage());
    };
    let Some(filter) = mutants::filter_named(name) else {
        bail!("no mutant named `{name}`");
    };
    if command.is_empty() {
        return Err(usage());
    }
    let filter: Box<dyn Filter> = match log {
        Some(dir) => Box::new(Watched::new(filter, traffic, LogFile::open(&dir)?)),
        None => filter,
    };
    std::process::exit(forward_through(command, filter)?)
}

/// The cases the proof runs when `--case` is not given.
const DEFAULT_CASES: &[&str] = &["handshake.*"];

/// One host line with its `id` removed (a line that is not a JSON object passes unchanged).
pub fn without_id(line: &str) -> String {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(mut members)) => {
            members.shift_remove("id");
            Value::Object(members).to_string()
        }
        _ => line.to_owned(),
    }
}

/// Members whose value is the agent's own data, which a host passes on as the agent wrote it:
/// a pending call's `input`.
const OPAQUE: &[&str] = &["input"];

/// One host line grown as the protocol allows: every object of the protocol's (the frame and
/// every object inside it but the agent's own data, `OPAQUE`) gets [`GROWN_KEY`] and has its
/// keys in reverse order (a line that is not JSON passes unchanged).
pub fn grown(line: &str) -> String {
    fn grow(value: Value) -> Value {
        match value {
            Value::Object(members) => {
                let mut out = serde_json::Map::new();
                out.insert(GROWN_KEY.to_owned(), Value::Bool(true));
                for (key, value) in members.into_iter().rev() {
                    let value = if OPAQUE.contains(&key.as_str()) {
                        value
                    } else {
                        grow(value)
                    };
                    out.insert(key, value);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.into_iter().map(grow).collect()),
            other => other,
        }
    }
    match serde_json::from_str::<Value>(line) {
        Ok(value) => grow(value).to_string(),
        Err(_) => line.to_owned(),
    }
}

/// Runs a host command with stdin and stderr passed through and `id` dropped from every stdout
/// line; exits with the host's exit code.
pub fn drop_id(command: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    wrap(command, launcher, WRAPPER, without_id)
}

/// Runs a host command with every stdout line [`grown`]; exits with the host's exit code.
pub fn grow(command: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    wrap(command, launcher, GROW, grown)
}

/// Runs a host command with stdin and stderr passed through and every stdout line rewritten;
/// exits with the host's exit code.
fn wrap(
    command: &[String],
    launcher: &Launcher,
    name: &str,
    rewrite: fn(&str) -> String,
) -> anyhow::Result<()> {
    if command.is_empty() {
        bail!("usage: {} {name} <host command...>", launcher.command());
    }
    std::process::exit(forward(command, rewrite)?)
}

/// How long a wrapper waits, once the host has ended, for the lines it still has to pass on.
const LAST_LINES: Duration = Duration::from_secs(2);

/// Runs a host command as a filter between the runner and the host, as a host built from a
/// wrapper and a filter must behave: stdin and stderr passed through, every stdout line
/// rewritten; the host's exit code (128 + a signal's number) returned once it has ended and its
/// last lines are passed on, or after `LAST_LINES` when nobody reads them. A reader that went
/// away (a write fails) closes the host's stdout, so the host sees it too. SIGTERM reaches the
/// host through its process group; the wrapper outlives it to pass on its end.
pub fn forward(command: &[String], rewrite: fn(&str) -> String) -> anyhow::Result<i32> {
    forward_through(command, Box::new(Lines(rewrite)))
}

/// [`forward`] through any [`Filter`]: it sees the runner's lines on their way to the host
/// (passed on byte for byte), is asked for lines it held back on every quiet tick and when the
/// host's output ends, and decides the exit code passed on.
pub fn forward_through(command: &[String], filter: Box<dyn Filter>) -> anyhow::Result<i32> {
    let Some((program, args)) = command.split_first() else {
        bail!("no host command to run");
    };
    // A registered handler replaces SIGTERM's default action for as long as the runtime lives.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("starting the signal runtime")?;
    let _term = runtime
        .block_on(async {
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        })
        .context("catching SIGTERM")?;
    let filter = std::sync::Arc::new(std::sync::Mutex::new(filter));
    // The host stays in the wrapper's group: the runner's SIGTERM and SIGKILL to the group it
    // started (this wrapper's) reach it too.
    let mut child = stdx::process::command_in_this_group(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let from_host = child.stdout.take().expect("stdout is piped");
    let to_host = child.stdin.take().expect("stdin is piped");
    let requests = filter.clone();
    std::thread::spawn(move || pass_requests(to_host, &requests));
    let (passed, all_passed) = std::sync::mpsc::channel::<()>();
    let lines = filter.clone();
    std::thread::spawn(move || {
        pass_on(from_host, &lines);
        // The host's stdout closes here, whether it ended or the reader went away.
        let _ = passed.send(());
    });
    let status = child.wait().context("waiting for the host")?;
    let _ = all_passed.recv_timeout(LAST_LINES);
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    Ok(lock(&filter).exit(code))
}

/// Passes the host's lines on, rewritten, until the host's stdout ends or the wrapper's reader
/// goes away (a write fails, or its end of the pipe is closed while nothing is written: poll
/// reports that without a write).
fn pass_on(mut from_host: std::process::ChildStdout, filter: &Shared) {
    use std::io::Read;
    use std::os::fd::AsFd;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    let stdout = std::io::stdout();
    let to_runner = stdout.as_fd();
    let mut out = stdout.lock();
    let mut pending = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let mut fds = [
            PollFd::new(&from_host, PollFlags::IN),
            PollFd::new(&to_runner, PollFlags::empty()),
        ];
        match poll(&mut fds, Some(&tick)) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
            Ok(_) => {}
        }
        if fds[1].revents().intersects(PollFlags::ERR | PollFlags::HUP) {
            return;
        }
        let send = |out: &mut std::io::StdoutLock, lines: Vec<String>| {
            lines
                .iter()
                .try_for_each(|line| writeln!(out, "{line}"))
                .and_then(|()| out.flush())
        };
        if fds[0].revents().is_empty() {
            let held = lock(filter).idle();
            if send(&mut out, held).is_err() {
                return;
            }
            continue;
        }
        let read = match from_host.read(&mut chunk) {
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(0) | Err(_) => {
                // Lines held back go on first, then a last line the host left unfinished as it
                // is: the runner judges it.
                let mut held = Vec::new();
                for _ in 0..=mutants::HOLD_TICKS {
                    held.extend(lock(filter).idle());
                }
                let _ = send(&mut out, held);
                if !pending.is_empty() {
                    let _ = out.write_all(&pending).and_then(|()| out.flush());
                }
                return;
            }
            Ok(read) => read,
        };
        pending.extend_from_slice(&chunk[..read]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..end]);
            let lines = lock(filter).line(&text);
            // A line passed on unchanged goes as the host wrote it, bytes and all.
            let written = if lines.len() == 1 && lines[0] == text {
                out.write_all(&line).and_then(|()| out.flush())
            } else {
                send(&mut out, lines)
            };
            if written.is_err() {
                return;
            }
        }
    }
}

/// The filter, shared by the thread passing the host's lines and the one passing the runner's.
type Shared = std::sync::Arc<std::sync::Mutex<Box<dyn Filter>>>;

/// The filter, whatever a panicking holder left behind.
fn lock(filter: &Shared) -> std::sync::MutexGuard<'_, Box<dyn Filter>> {
    filter
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Passes the runner's bytes on to the host unchanged, showing the filter each whole line;
/// the host's stdin closes when the runner's does.
fn pass_requests(mut to_host: std::process::ChildStdin, filter: &Shared) {
    use std::io::Read;
    let mut from_runner = std::io::stdin().lock();
    let mut pending = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let read = match from_runner.read(&mut chunk) {
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        pending.extend_from_slice(&chunk[..read]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            lock(filter).request(&String::from_utf8_lossy(&line[..end]));
        }
        if to_host
            .write_all(&chunk[..read])
            .and_then(|()| to_host.flush())
            .is_err()
        {
            return;
        }
    }
}

/// The proof: fails unless every case run against the broken host fails readably.
pub fn run(options: &Options, launcher: &Launcher) -> anyhow::Result<()> {
    let host = match (&options.host, launcher) {
        (Some(host), _) => host.clone(),
        (None, Launcher::Checkout { root }) => {
            if options.build {
                build(root)?;
            }
            host_of(&built_corral(root))
        }
        (None, Launcher::Installed) => {
            bail!("--self-test wraps the host given with --host '<command with {{device}}>'")
        }
    };
    let wrapped = |name: &str| -> anyhow::Result<String> {
        let exe = std::env::current_exe().context("locating the running program")?;
        let mut wrapper = vec![stdx::shell_quote(&exe.display().to_string())];
        wrapper.extend(launcher.own_arguments().iter().map(|arg| (*arg).to_owned()));
        wrapper.push(name.to_owned());
        Ok(format!("{} {host}", wrapper.join(" ")))
    };
    let mut broken = options.clone();
    broken.host = Some(wrapped(WRAPPER)?);
    // The simulator is built (or found) by the run itself; the host was built above.
    broken.build = options.build && options.host.is_some();
    broken.bless = false;
    broken.baseline = None;
    if broken.cases.is_empty() {
        broken.cases = DEFAULT_CASES.iter().map(|s| (*s).to_owned()).collect();
    }
    let outcome = execute(&broken, launcher, false)?;
    println!("{}", outcome.console.trim_end());
    println!();
    let ran: Vec<_> = outcome
        .results
        .iter()
        .filter(|r| r.grade != Grade::Skipped)
        .collect();
    let mut problems = Vec::new();
    if ran.is_empty() {
        problems.push("no case ran".to_owned());
    }
    for result in &ran {
        let Some(failure) = &result.failure else {
            problems.push(format!(
                "`{}` passed against a host that drops every id",
                result.case
            ));
            continue;
        };
        let diff_drops_id = failure.diff.as_deref().is_some_and(|diff| {
            diff.lines()
                .any(|l| l.starts_with('-') && l.contains("\"id\""))
        });
        if !diff_drops_id {
            problems.push(format!(
                "`{}` failed without a diff showing the missing id: {}",
                result.case, failure.message
            ));
        }
        if !failure.rerun.contains("--host") || !failure.rerun.contains(&result.case) {
            problems.push(format!(
                "`{}` has no usable rerun command: {}",
                result.case, failure.rerun
            ));
        }
    }
    if outcome.ok {
        problems.push("the run reported success".to_owned());
    }
    if !problems.is_empty() {
        bail!(
            "self-test: the kit missed the broken host:\n{}",
            problems.join("\n")
        );
    }
    println!(
        "self-test: the kit caught the broken host: {} of {} case(s) failed with a diff and a rerun command",
        ran.len(),
        ran.len()
    );
    let mut growing = broken.clone();
    growing.host = Some(wrapped(GROW)?);
    growing.build = false;
    let graded = grow_proof(&growing, launcher)?;
    println!(
        "self-test: a host that grows every frame passed {graded} case(s), each with strict-grade \
         notes, and failed every one of them under --strict"
    );
    // The mutants' sessions run whole: the host's own command line too (`run corral` steps,
    // the hooks `corral-sim hook` runs), the built `corral` in a checkout unless one is given.
    let mut single = broken.clone();
    if let (None, None, Launcher::Checkout { root }) = (&options.host, &options.host_cli, launcher)
    {
        single.host_cli = Some(built_corral(root));
    }
    let caught = mutants_proof(&single, launcher, &wrapped)?;
    println!(
        "self-test: {caught} of {} single-rule breaks caught, each by a session its rule lists, \
         failing at what the mutant changed in a line it changed, the same session passing \
         through the transparent filter",
        mutants::CATALOGUE.len()
    );
    Ok(())
}

/// The single-rule half: the sessions every mutant's rule lists, run once through the
/// transparent filter (the control), then each mutant against its own; fails unless every
/// mutant is caught where it proves its cause ([`caught::judge`]). Prints one line per mutant:
/// the lines it changed, the case that caught it, its failing step and what that step named.
/// Returns how many were caught.
fn mutants_proof(
    options: &Options,
    launcher: &Launcher,
    wrapped: &dyn Fn(&str) -> anyhow::Result<String>,
) -> anyhow::Result<usize> {
    let work = tempfile::tempdir().context("making the self-test's kit dir")?;
    let ledger = super::kit::Kit::load(&super::kit::place(options, launcher, work.path())?)?.ledger;
    let by_id = ledger.by_id();
    let mut sessions: Vec<(&Mutant, Vec<String>)> = Vec::new();
    for mutant in mutants::CATALOGUE {
        let Some(requirement) = by_id.get(mutant.rule) else {
            bail!(
                "mutant `{}` breaks `{}`, which the ledger lacks",
                mutant.name,
                mutant.rule
            );
        };
        sessions.push((mutant, requirement.cases.clone()));
    }
    let mut every_case: Vec<String> = Vec::new();
    for case in sessions.iter().flat_map(|(_, cases)| cases) {
        if !every_case.contains(case) {
            every_case.push(case.clone());
        }
    }
    let record = std::env::var_os(traffic::RECORD_VAR).map(PathBuf::from);
    let control = run_logged(
        options,
        launcher,
        wrapped,
        mutants::TRANSPARENT,
        &every_case,
        record.is_some(),
    )?;
    let mut problems = Vec::new();
    let mut passed_control = BTreeMap::new();
    for run in &control.cases {
        let passed = run.result.grade == Grade::Pass;
        passed_control.insert(run.result.case.clone(), passed);
        if !passed && run.result.grade != Grade::Skipped {
            problems.push(format!(
                "`{}` fails through the transparent filter: {}",
                run.result.case,
                run.result
                    .failure
                    .as_ref()
                    .map_or(String::new(), |f| format!("{} {}", f.location, f.message))
            ));
        }
        if passed && run.processes.is_empty() {
            problems.push(format!(
                "`{}` passed, yet no wrapper logged it: the transparent filter never ran (a \
                 session a mutant's rule lists must start a host)",
                run.result.case
            ));
        }
        if caught::changed(&run.processes) > 0 {
            problems.push(format!(
                "the transparent filter changed lines of `{}`",
                run.result.case
            ));
        }
    }
    if let Some(dir) = &record {
        write_traffic(dir, &control)?;
    }
    if !problems.is_empty() {
        bail!(
            "self-test: the sessions the mutants run do not pass through a filter that changes              nothing, so no mutant's catch could prove its cause:\n{}",
            problems.join("\n")
        );
    }
    let mut caught = 0;
    for (mutant, cases) in &sessions {
        let logged = run_logged(options, launcher, wrapped, mutant.name, cases, false)?;
        let runs: Vec<CaseRun<'_>> = logged
            .cases
            .iter()
            .map(|run| CaseRun {
                result: &run.result,
                changes: &run.processes,
                control_passed: passed_control
                    .get(&run.result.case)
                    .copied()
                    .unwrap_or(false),
            })
            .collect();
        let verdict = caught::judge(mutant, &runs);
        if verdict.caught() {
            caught += 1;
            let first = &verdict.catches[0];
            println!(
                "  caught {:<34} {:>3} line(s) changed; {} failed at {} {}{}",
                mutant.name,
                verdict.changed,
                first.case,
                first.location,
                first.at,
                match verdict.catches.len() {
                    1 => String::new(),
                    n => format!(" (and {} more case(s))", n - 1),
                }
            );
        } else {
            println!("  MISSED {:<34} {}", mutant.name, mutant.rule);
            problems.extend(verdict.problems);
        }
    }
    if !problems.is_empty() {
        bail!(
            "self-test: a single-rule break was not caught where it breaks its rule:\n{}",
            problems.join("\n")
        );
    }
    Ok(caught)
}

/// One run of some cases behind the wrapper `mutant --log DIR <filter>`, with what the wrapper
/// logged for each case.
struct Logged {
    cases: Vec<LoggedCase>,
}

struct LoggedCase {
    result: CaseResult,
    /// Where the case ran.
    dir: PathBuf,
    /// What the wrapper logged, host process by host process.
    processes: Vec<Vec<traffic::Entry>>,
}

/// Runs `cases` against the host behind the filter named `filter`, its wrapper logging what it
/// changed (and with `traffic`, what it saw) in a dir of its own.
fn run_logged(
    options: &Options,
    launcher: &Launcher,
    wrapped: &dyn Fn(&str) -> anyhow::Result<String>,
    filter: &str,
    cases: &[String],
    traffic: bool,
) -> anyhow::Result<Logged> {
    let logs = tempfile::tempdir().context("making the wrappers' log dir")?;
    let dir = stdx::shell_quote(&logs.path().display().to_string());
    let flag = if traffic { " --traffic" } else { "" };
    let mut run = options.clone();
    run.host = Some(wrapped(&format!("{MUTANT} --log {dir}{flag} {filter}"))?);
    run.build = false;
    run.suites = Vec::new();
    run.cases = cases.to_vec();
    let outcome = execute(&run, launcher, false)?;
    let mut by_dir = traffic::read_logs(logs.path())?;
    Ok(Logged {
        cases: outcome
            .results
            .into_iter()
            .zip(outcome.dirs)
            .map(|(result, dir)| LoggedCase {
                processes: by_dir.remove(&dir).unwrap_or_default(),
                result,
                dir,
            })
            .collect(),
    })
}

/// Writes each case's traffic from the control run to `<dir>/<case>.ndjson`.
fn write_traffic(dir: &Path, control: &Logged) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("making {}", dir.display()))?;
    for case in &control.cases {
        let path = dir.join(format!("{}.ndjson", case.result.case));
        std::fs::write(&path, traffic::recorded(&case.dir, &case.processes))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "self-test: recorded the traffic of {} case(s) in {}",
        control.cases.len(),
        dir.display()
    );
    Ok(())
}

/// The growing half: every case passes with notes naming the grown key, and fails under
/// `--strict`. Returns how many cases ran.
fn grow_proof(options: &Options, launcher: &Launcher) -> anyhow::Result<usize> {
    let mut problems = Vec::new();
    let mut ran = 0;
    for strict in [false, true] {
        let mut run = options.clone();
        run.strict = strict;
        let outcome = execute(&run, launcher, false)?;
        let results: Vec<_> = outcome
            .results
            .iter()
            .filter(|r| r.grade != Grade::Skipped)
            .collect();
        ran = results.len();
        if results.is_empty() {
            problems.push("no case ran against the growing host".to_owned());
        }
        for result in results {
            let named = result.notes.iter().any(|note| note.contains(GROWN_KEY));
            match (strict, result.grade) {
                (false, Grade::Pass) if named => {}
                (false, Grade::Pass) => problems.push(format!(
                    "`{}` passed against a growing host without a note naming `{GROWN_KEY}`",
                    result.case
                )),
                (false, _) => problems.push(format!(
                    "`{}` failed against a host that only grew its frames: {}",
                    result.case,
                    result
                        .failure
                        .as_ref()
                        .map_or(String::new(), |f| f.message.clone())
                )),
                (true, Grade::Fail) => {}
                (true, _) => problems.push(format!(
                    "`{}` did not fail under --strict against a growing host",
                    result.case
                )),
            }
        }
        if outcome.ok == strict {
            problems.push(format!(
                "the run against the growing host reported {} with --strict {}",
                if outcome.ok { "success" } else { "failure" },
                if strict { "on" } else { "off" }
            ));
        }
    }
    if !problems.is_empty() {
        bail!(
            "self-test: the kit misjudged a host that grows its frames as the protocol allows:\n{}",
            problems.join("\n")
        );
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_drops_only_the_id() {
        assert_eq!(
            without_id(r#"{"schema":1,"id":"1","t":"ack"}"#),
            r#"{"schema":1,"t":"ack"}"#
        );
        assert_eq!(without_id("not json"), "not json");
    }

    #[test]
    fn the_growing_wrapper_adds_a_key_to_every_object_and_reverses_keys() {
        assert_eq!(
            grown(r#"{"schema":1,"id":"1","t":"snapshot","agents":[{"pane":"%1","n":null}]}"#),
            r#"{"x_kit_growth":true,"agents":[{"x_kit_growth":true,"n":null,"pane":"%1"}],"t":"snapshot","id":"1","schema":1}"#
        );
        assert_eq!(
            grown(r#"{"pending_call":{"tool":"Bash","input":{"b":1,"a":{"c":2}}}}"#),
            r#"{"x_kit_growth":true,"pending_call":{"x_kit_growth":true,"input":{"b":1,"a":{"c":2}},"tool":"Bash"}}"#,
            "the agent's own input passes as it is"
        );
        assert_eq!(grown("not json"), "not json");
    }
}
