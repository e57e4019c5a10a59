//! `cargo xtask conformance`: runs every golden session (`golden/sessions/*.ndjson`) against a
//! host, each with a fresh host process and simulator state, in parallel; validates every frame
//! against `schema/json`; prints one line per case and `N passed, N failed, N skipped`; writes
//! JSON, JUnit and Markdown reports; compares with a baseline; blesses expectations.
//!
//! Modules, in reading order: [`cli`] (the command line), [`execute`] (one run, step by step),
//! [`kit`] (the ledger, sessions and schemas it reads), [`binaries`], [`runner`] (one case),
//! [`assign`] (order-free matching), [`host`] (the host process driver), [`sim`] (the simulator
//! driver), [`outcome`] (how a case ended), [`ledger`] (requirements, coverage), [`report`],
//! [`baseline`], [`bless`], [`selftest`] (the broken-host proof), [`process`]. The sessions, their
//! loader, their patterns and the schema checks of frames are the `golden` crate's, shared with
//! `corral-sim replay`.
#![allow(
    clippy::print_stdout,
    reason = "the conformance report is this command's stdout"
)]

mod assign;
mod baseline;
mod binaries;
mod bless;
mod cli;
mod execute;
mod host;
mod kit;
mod ledger;
mod outcome;
mod process;
mod report;
mod runner;
mod selftest;
mod sim;

use std::time::Duration;

use anyhow::bail;

pub use binaries::{build as build_binaries, target_dir};
use cli::Invocation;
use outcome::Grade;

/// Runs `cargo xtask conformance <args>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    if args.first().map(String::as_str) == Some(selftest::WRAPPER) {
        return selftest::drop_id(&args[1..]);
    }
    match cli::parse(args)? {
        Invocation::Help(text) => {
            print!("{text}");
            Ok(())
        }
        Invocation::SelfTest(options) => selftest::run(&options),
        Invocation::Run(options) => {
            if !execute::execute(&options, true)?.ok {
                bail!("conformance failed");
            }
            Ok(())
        }
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

/// Runs the suite as `cargo xtask conformance <args>` runs it, printing nothing: `cargo xtask
/// bench` times it.
pub fn run_silently(args: &[String]) -> anyhow::Result<Silent> {
    let Invocation::Run(options) = cli::parse(args)? else {
        bail!("`conformance {}` is not a run of the suite", args.join(" "));
    };
    let outcome = execute::execute(&options, false)?;
    Ok(Silent {
        ok: outcome.ok,
        summary: report::Summary::of(&outcome.results).line(),
        failed: outcome
            .results
            .iter()
            .filter(|r| r.grade == Grade::Fail)
            .map(|r| r.case.clone())
            .collect(),
        durations: outcome
            .results
            .iter()
            .map(|r| (r.case.clone(), r.duration))
            .collect(),
    })
}

/// Every case id of the kit, with its floor (`floor_ms`, a time the spec makes it wait out).
pub fn floors() -> anyhow::Result<Vec<(String, Option<u64>)>> {
    let kit = kit::Kit::load(&crate::workspace_root())?;
    Ok(kit
        .sessions
        .iter()
        .map(|s| (s.case().to_owned(), s.header.floor_ms))
        .collect())
}
