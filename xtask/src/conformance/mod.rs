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

use anyhow::bail;

use cli::Invocation;

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
