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

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use super::binaries::{build, built_corral, host_of};
use super::cli::Options;
use super::execute::execute;
use super::mutants::{self, Filter, Lines};
use super::outcome::Grade;
use super::{Launcher, host, process};

/// The breaking wrapper's subcommand name.
pub const WRAPPER: &str = "drop-id";

/// The growing wrapper's subcommand name.
pub const GROW: &str = "grow";

/// The key the growing wrapper adds to every object: no protocol name.
pub const GROWN_KEY: &str = "x_kit_growth";

/// The single-rule wrapper's subcommand name: `mutant <name> <host command...>`.
pub const MUTANT: &str = "mutant";

/// Runs a host command behind the catalogue's mutant named first in `args`.
pub fn mutant(args: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    let Some((name, command)) = args.split_first() else {
        bail!(
            "usage: {} {MUTANT} <name> <host command...>",
            launcher.command()
        );
    };
    let Some(mutant) = mutants::find(name) else {
        bail!("no mutant named `{name}`");
    };
    if command.is_empty() {
        bail!(
            "usage: {} {MUTANT} {name} <host command...>",
            launcher.command()
        );
    }
    std::process::exit(forward_through(command, mutant.filter())?)
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

/// [`forward`] through any [`Filter`]: one that sees requests gets the runner's lines on their
/// way to the host (passed on byte for byte); one that holds lines back is asked for them on
/// every quiet tick and when the host's output ends.
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
    let sees_requests = filter.sees_requests();
    let filter = std::sync::Arc::new(std::sync::Mutex::new(filter));
    let mut child = process::command(program)
        .args(args)
        .stdin(if sees_requests {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let from_host = child.stdout.take().expect("stdout is piped");
    if let Some(to_host) = child.stdin.take() {
        let filter = filter.clone();
        std::thread::spawn(move || pass_requests(to_host, &filter));
    }
    let (passed, all_passed) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        pass_on(from_host, &filter);
        // The host's stdout closes here, whether it ended or the reader went away.
        let _ = passed.send(());
    });
    let status = child.wait().context("waiting for the host")?;
    let _ = all_passed.recv_timeout(LAST_LINES);
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    })
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
        let mut wrapper = vec![host::shell_quote(&exe.display().to_string())];
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
    let caught = mutants_proof(&broken, launcher, &wrapped)?;
    println!(
        "self-test: {caught} of {} single-rule breaks caught, each by a session its rule lists",
        mutants::CATALOGUE.len()
    );
    Ok(())
}

/// The single-rule half: every mutant of the catalogue run against the sessions its rule lists;
/// fails unless one of them fails for each. Returns how many were caught.
fn mutants_proof(
    options: &Options,
    launcher: &Launcher,
    wrapped: &dyn Fn(&str) -> anyhow::Result<String>,
) -> anyhow::Result<usize> {
    let work = tempfile::tempdir().context("making the self-test's kit dir")?;
    let ledger = super::kit::Kit::load(&super::kit::place(options, launcher, work.path())?)?.ledger;
    let by_id = ledger.by_id();
    let mut missed = Vec::new();
    let mut caught = 0;
    for mutant in mutants::CATALOGUE {
        let Some(requirement) = by_id.get(mutant.rule) else {
            bail!(
                "mutant `{}` breaks `{}`, which the ledger lacks",
                mutant.name,
                mutant.rule
            );
        };
        let mut run = options.clone();
        run.host = Some(wrapped(&format!("{MUTANT} {}", mutant.name))?);
        run.build = false;
        run.suites = Vec::new();
        run.cases = requirement.cases.clone();
        let outcome = execute(&run, launcher, false)?;
        let failed: Vec<_> = outcome
            .results
            .iter()
            .filter(|r| r.grade == Grade::Fail)
            .map(|r| r.case.as_str())
            .collect();
        if failed.is_empty() {
            missed.push(format!(
                "`{}` ({}) passed every session of {}: {}",
                mutant.name,
                mutant.breaks,
                mutant.rule,
                requirement.cases.join(", ")
            ));
        } else {
            caught += 1;
            println!(
                "  caught {:<34} {:<40} by {}",
                mutant.name,
                mutant.rule,
                failed.join(", ")
            );
        }
    }
    if !missed.is_empty() {
        bail!(
            "self-test: the kit missed a host that breaks one rule:\n{}",
            missed.join("\n")
        );
    }
    Ok(caught)
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
