//! The broken-host proof (`--self-test`): runs cases against a wrapper that drops `id` from
//! every frame the host writes (the built `corral` in a checkout, else the `--host` given), and
//! checks that every case fails with a diff of expected against received and the command that
//! reruns it. The wrapper itself is the running program again: `corral-conformance drop-id
//! <host command...>`, `cargo xtask conformance drop-id ...` in a checkout.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use anyhow::{Context, bail};
use serde_json::Value;

use super::binaries::{build, built_corral, host_of};
use super::cli::Options;
use super::execute::execute;
use super::outcome::Grade;
use super::{Launcher, host, process};

/// The wrapper's subcommand name.
pub const WRAPPER: &str = "drop-id";

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

/// Runs a host command with stdin and stderr passed through and `id` dropped from every stdout
/// line; exits with the host's exit code.
pub fn drop_id(command: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    let Some((program, args)) = command.split_first() else {
        bail!("usage: {} {WRAPPER} <host command...>", launcher.command());
    };
    let mut child = process::command(program)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let reader = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut out = std::io::stdout().lock();
    for line in reader.lines() {
        let Ok(line) = line else { break };
        if writeln!(out, "{}", without_id(&line))
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
    let status = child.wait().context("waiting for the host")?;
    std::process::exit(status.code().unwrap_or(1));
}

/// The proof: fails unless every case run against the broken host fails readably.
pub fn run(options: &Options, launcher: &Launcher) -> anyhow::Result<()> {
    let host = match (&options.host, launcher) {
        (Some(host), _) => host.clone(),
        (None, Launcher::Checkout { root }) => {
            if options.build {
                build(root, true)?;
            }
            host_of(&built_corral(root))
        }
        (None, Launcher::Installed) => {
            bail!("--self-test wraps the host given with --host '<command with {{device}}>'")
        }
    };
    let exe = std::env::current_exe().context("locating the running program")?;
    let mut wrapper = vec![host::shell_quote(&exe.display().to_string())];
    wrapper.extend(launcher.own_arguments().iter().map(|arg| (*arg).to_owned()));
    wrapper.push(WRAPPER.to_owned());
    let template = format!("{} {host}", wrapper.join(" "));
    let mut broken = options.clone();
    broken.host = Some(template);
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
    Ok(())
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
}
