//! The commands behind `corral-sim`'s command line: one function per subcommand behind the one
//! `match` in [`run`], each handing the module that does the work its plain options and printing
//! what it returns.

mod fake;
mod transcript;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use super::cli::{ApiAction, Command, PaneAction, ReplayArgs, TtyAction};
use super::up::{self, Up};
use super::{api, demo, hook, input, observe, park, record, simfile, step};
use super::{print_bytes, print_line};
use crate::time;

/// Runs one subcommand; returns the process's exit code. `replay` runs `corral-sim replay`: the
/// conformance kit's harness (`conformance::replay`), which this crate does not link, so
/// `corral-sim`'s main hands it in.
///
/// Every subcommand but two runs with `$CORRAL_SIM_DIR`, made here when missing, where the
/// fleet's state is: `replay` keeps no state and `demo` makes a dir of its own.
pub fn run(
    command: Command,
    replay: impl FnOnce(ReplayArgs) -> ExitCode,
) -> anyhow::Result<ExitCode> {
    match command {
        // These three end with exit codes of their own.
        Command::Replay(args) => return Ok(replay(args)),
        Command::Demo(args) => return Ok(demo::main((*args).into())),
        Command::Record(args) => return Ok(record::main(&args.into(), &sim_dir()?)),
        Command::Up {
            fixture,
            backend,
            socket,
            now_ms,
            runtime_dir,
        } => {
            let sim_dir = sim_dir()?;
            let options = Up {
                fixture,
                backend,
                socket,
                now_ms: time::now(now_ms)?,
                runtime_dir,
            };
            bring_up(&sim_dir, &options)?;
        }
        Command::Down => down(&sim_dir()?)?,
        Command::Step { pane, args } => step::step(&sim_dir()?, &pane, &(*args).into())?,
        Command::Pane { action } => pane(&sim_dir()?, action)?,
        Command::Transcript { action } => transcript::run(&sim_dir()?, action)?,
        Command::Api { action } => api_command(&sim_dir()?, action)?,
        Command::Fault { action } => fake::fault(&sim_dir()?, action)?,
        Command::Client { action } => fake::client(&sim_dir()?, action)?,
        Command::Hook(args) => run_hook(&sim_dir()?, &(*args).into())?,
        Command::Verdicts { runtime_dir } => verdicts(&sim_dir()?, runtime_dir)?,
        Command::HookOutput {
            name,
            wait_ms,
            stderr,
        } => hook_output(&sim_dir()?, &name, wait_ms, stderr)?,
        Command::Tty {
            action: TtyAction::Watch { pane },
        } => tty_watch(&sim_dir()?, &pane)?,
        Command::Options { pane } => options(&sim_dir()?, &pane)?,
        Command::Tmux { args } => print_bytes(observe::tmux(&sim_dir()?, &args)?.as_bytes())?,
        Command::Socket { path, line } => {
            // It keeps no state, yet runs only with a state dir, as every command but `replay`
            // and `demo` does.
            sim_dir()?;
            print_line(&observe::socket_line(&path, &line)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `$CORRAL_SIM_DIR`, made if missing.
fn sim_dir() -> anyhow::Result<PathBuf> {
    let dir = crate::env::sim_dir().map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

/// `up`: prints sim.json.
fn bring_up(sim_dir: &Path, options: &Up) -> anyhow::Result<()> {
    let sim = up::up(sim_dir, options)?;
    print_line(&serde_json::to_string(&sim)?);
    Ok(())
}

/// `down`.
fn down(sim_dir: &Path) -> anyhow::Result<()> {
    up::down(sim_dir)?;
    Ok(())
}

/// `pane add|kill|input`.
fn pane(sim_dir: &Path, action: PaneAction) -> anyhow::Result<()> {
    match action {
        PaneAction::Add { add, args } => {
            print_line(&step::add(sim_dir, &add.into(), &(*args).into())?);
        }
        PaneAction::Kill { pane } => step::kill(sim_dir, &pane)?,
        PaneAction::Input { pane, clear } => {
            for item in input::received(sim_dir, &pane, clear)? {
                print_line(&serde_json::to_string(&item)?);
            }
        }
    }
    Ok(())
}

/// `api serve|question|delay|clear`.
fn api_command(sim_dir: &Path, action: ApiAction) -> anyhow::Result<()> {
    match action {
        ApiAction::Serve {
            port,
            question_delay_ms,
            post_delay_ms,
        } => api::serve(sim_dir, port, question_delay_ms, post_delay_ms),
        ApiAction::Question {
            id,
            questions,
            session_id,
        } => {
            let questions =
                serde_json::from_str(&questions).context("--questions must be a JSON array")?;
            api::pend(
                sim_dir,
                api::Pending {
                    request_id: id,
                    session_id,
                    questions,
                },
            )
        }
        ApiAction::Delay { ms, post: false } => api::edit(sim_dir, |s| s.delay_ms = ms),
        ApiAction::Delay { ms, post: true } => api::edit(sim_dir, |s| s.post_delay_ms = ms),
        ApiAction::Clear => api::edit(sim_dir, |s| s.questions.clear()),
    }
}

/// `hook`: prints what the run printed, or with `--background` its name.
fn run_hook(sim_dir: &Path, options: &hook::HookOptions) -> anyhow::Result<()> {
    match hook::run(sim_dir, options)? {
        hook::Run::Background(name) => print_line(&name),
        hook::Run::Finished(name) => {
            print_bytes(&hook::output(sim_dir, &name, Duration::ZERO, false)?)?;
        }
    }
    Ok(())
}

/// `verdicts`: one JSON line each.
fn verdicts(sim_dir: &Path, runtime_dir: Option<PathBuf>) -> anyhow::Result<()> {
    let runtime = match runtime_dir {
        Some(dir) => dir,
        None => PathBuf::from(simfile::load(sim_dir)?.runtime_dir),
    };
    for verdict in park::verdicts(&runtime)? {
        print_line(&verdict.to_string());
    }
    Ok(())
}

/// `hook-output`.
fn hook_output(sim_dir: &Path, name: &str, wait_ms: u64, stderr: bool) -> anyhow::Result<()> {
    let wait = Duration::from_millis(wait_ms);
    print_bytes(&hook::output(sim_dir, name, wait, stderr)?)?;
    Ok(())
}

/// `tty watch`: prints the file the pane's tty is copied to.
fn tty_watch(sim_dir: &Path, pane: &str) -> anyhow::Result<()> {
    print_line(&observe::watch_tty(sim_dir, pane)?.display().to_string());
    Ok(())
}

/// `options`: one JSON object.
fn options(sim_dir: &Path, pane: &str) -> anyhow::Result<()> {
    print_line(&serde_json::to_string(&observe::options(sim_dir, pane)?)?);
    Ok(())
}
