//! The conformance kit, installable on its own (`cargo install --locked --path conformance`): both
//! halves of its judgement, and the three programs it installs.
//!
//! - The runner, `corral-conformance` (and `cargo xtask conformance` in a checkout): the client's
//!   half of every golden session played against a host. Its modules are below.
//! - [`replay`]: `corral-sim replay`, the host's half of a golden session played against a client
//!   app, judging its frames.
//! - [`embedded`]: the kit's data (sessions, fixtures, ledger, generated schemas) embedded with
//!   the `embed` feature (a default), by golden's one rule of which files make up the kit; editing
//!   a session recompiles this crate and what links it, never golden or the simulator.
//!
//! Its binaries are thin mains: `corral-conformance` calls [`run`]; `corral-sim` and
//! `corral-fake-tmux` call the `simulator` library (the agent simulator, its demo and the fake
//! tmux), `corral-sim replay` routed to [`replay`]. The sessions, their loader, their patterns
//! and the schema checks of frames are the `golden` crate's, shared by both halves.
//!
//! The runner runs every golden session against a host, each with a fresh host process and
//! simulator state, in parallel; validates every frame against the generated schemas; prints one
//! line per case and a closing line with the cases' and the requirements' counts; writes JSON,
//! JUnit, Markdown and HTML reports; compares with a baseline; blesses expectations. Two programs
//! launch it (`Launcher`): the installed `corral-conformance`, with the kit embedded, and
//! `cargo xtask conformance` in a checkout, which builds the binaries first.
//!
//! Its modules, in reading order: `cli` (the command line), `execute` (one run, step by step),
//! `kit` (the ledger, sessions and schemas it reads), `binaries` (finding or building what it
//! starts), `runner` (one case), `assign` (order-free matching), `host` (the host process
//! driver), `sim` (the simulator driver), `outcome` (how a case ended), `ledger`
//! (requirements, coverage), `report`, `report_html`, `baseline`, `bless`, [`selftest`] (the
//! broken-host proof) with [`mutants`] (its single-rule breaks), `traffic` (what its wrappers log)
//! and `caught` (when a break counts as caught), `process` (the kit's one way to start a child).
#![allow(
    clippy::print_stdout,
    reason = "the conformance report is this command's stdout"
)]

mod adapter;
mod assign;
mod baseline;
mod binaries;
mod bless;
mod caught;
mod cli;
pub mod embedded;
mod execute;
mod host;
pub(crate) mod kit;
mod ledger;
pub mod mutants;
mod outcome;
mod process;
pub mod replay;
mod report;
mod report_html;
mod runner;
pub mod selftest;
mod sim;
mod traffic;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};

pub use binaries::{BUILD_ARGS, build as build_binaries, target_dir};
use cli::Invocation;
pub use cli::default_jobs;
use outcome::Grade;

/// The program that runs the kit, which decides where its data and its binaries come from.
#[derive(Debug, Clone)]
pub enum Launcher {
    /// `corral-conformance`, installed: the kit embedded in it; `corral-sim` and
    /// `corral-fake-tmux` beside it, else on `PATH`; the host named with `--host`.
    Installed,
    /// `cargo xtask conformance` in the checkout at `root`: the kit read from it, the host and
    /// the simulator built with cargo into its target dir first (unless `--no-build`).
    Checkout {
        /// The workspace root.
        root: PathBuf,
    },
}

impl Launcher {
    /// How a person types the command (usage, rerun lines).
    pub fn command(&self) -> &'static str {
        match self {
            Launcher::Installed => "corral-conformance",
            Launcher::Checkout { .. } => "cargo xtask conformance",
        }
    }

    /// The arguments, after the running executable, that reach [`run`] (the self-test's
    /// wrapper is this executable again).
    fn own_arguments(&self) -> &'static [&'static str] {
        match self {
            Launcher::Installed => &[],
            Launcher::Checkout { .. } => &["conformance"],
        }
    }
}

/// Runs the runner with `args` (the arguments after the command).
pub fn run(args: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    if args.first().map(String::as_str) == Some(selftest::WRAPPER) {
        return selftest::drop_id(&args[1..], launcher);
    }
    if args.first().map(String::as_str) == Some(selftest::GROW) {
        return selftest::grow(&args[1..], launcher);
    }
    if args.first().map(String::as_str) == Some(selftest::MUTANT) {
        return selftest::mutant(&args[1..], launcher);
    }
    if args.first().map(String::as_str) == Some("profile") {
        return profile_command(&args[1..], launcher);
    }
    match cli::parse(args, launcher)? {
        Invocation::Help(text) => {
            print!("{text}");
            Ok(())
        }
        Invocation::SelfTest(options) => selftest::run(&options, launcher),
        Invocation::Run(options) => {
            if !execute::execute(&options, launcher, true)?.ok {
                bail!("conformance failed");
            }
            Ok(())
        }
    }
}

/// `profile init [FILE]`: writes a commented starting host profile to FILE (never over an
/// existing file), or to stdout.
fn profile_command(args: &[String], launcher: &Launcher) -> anyhow::Result<()> {
    let usage = || {
        anyhow::anyhow!(
            "usage: {} profile init [FILE]  (writes a commented starting host profile)",
            launcher.command()
        )
    };
    match args {
        [init] if init == "init" => {
            print!("{}", golden::profile::STARTER);
            Ok(())
        }
        [init, file] if init == "init" => {
            let path = Path::new(file);
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|err| match err.kind() {
                    std::io::ErrorKind::AlreadyExists => anyhow::anyhow!(
                        "{} exists; the starting profile is written only to a new file",
                        path.display()
                    ),
                    _ => anyhow::anyhow!("writing {}: {err}", path.display()),
                })?;
            std::io::Write::write_all(&mut out, golden::profile::STARTER.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            println!(
                "wrote {}: edit it for your host, then run {} --profile {} --host-cli <your \
                 command line>",
                path.display(),
                launcher.command(),
                path.display()
            );
            Ok(())
        }
        _ => Err(usage()),
    }
}

/// What a run of [`run_silently`] came to.
#[derive(Debug)]
pub struct Silent {
    /// Whether the run passed.
    pub ok: bool,
    /// `conformance: N passed, N failed, N skipped`.
    pub summary: String,
    /// The failed cases.
    pub failed: Vec<String>,
    /// Every case with how long it took, in session order.
    pub durations: Vec<(String, Duration)>,
}

/// Runs the suite as `run` runs it with `args`, printing nothing: `cargo xtask bench` times it.
pub fn run_silently(args: &[String], launcher: &Launcher) -> anyhow::Result<Silent> {
    let Invocation::Run(options) = cli::parse(args, launcher)? else {
        bail!(
            "`{} {}` is not a run of the suite",
            launcher.command(),
            args.join(" ")
        );
    };
    let outcome = execute::execute(&options, launcher, false)?;
    let failed = outcome
        .results
        .iter()
        .filter(|r| r.grade == Grade::Fail)
        .map(|r| r.case.clone())
        .collect();
    let durations = outcome
        .results
        .iter()
        .map(|r| (r.case.clone(), r.duration))
        .collect();
    Ok(Silent {
        ok: outcome.ok,
        summary: report::Summary::of(&outcome.results).line(),
        failed,
        durations,
    })
}

/// Every case id of the kit in the checkout at `root`, with its floor (`floor_ms`, a time the
/// spec makes it wait out).
pub fn floors(root: &Path) -> anyhow::Result<Vec<(String, Option<u64>)>> {
    let kit = kit::Kit::load(root)?;
    Ok(kit
        .sessions
        .iter()
        .map(|s| (s.case().to_owned(), s.header.floor_ms))
        .collect())
}

/// The checkout this crate sits in, for tests that read its kit.
#[cfg(test)]
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the simulator sits in the workspace")
        .to_owned()
}
