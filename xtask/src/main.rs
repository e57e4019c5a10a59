//! `cargo xtask <task>`: project automation, one small binary matching on its task
//! (`cli.rs`; `cargo xtask --help` and `cargo xtask <task> --help` say more).
//!
//! - `schema [--check]`: write (or check) the generated JSON Schemas under `schema/json/`.
//! - `tidy`: house rules every source file follows.
//! - `conformance [--backend fake|real] [--host CMD] [--case GLOB] ...`: the golden sessions
//!   against a host.
//! - `bench [--backend real|fake] [--runs N]`: the host's performance figures.
//! - `fuzz [--seed N] [--lines N]`: generated lines against one `serve`, every answer checked.

mod bench;
mod cli;
mod conformance;
mod fuzz;
mod schema_files;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Task};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help goes to stdout with success; a mistake to stderr with failure.
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.task {
        Task::Schema { check } => schema_files::run(check),
        Task::Tidy => tidy::run(),
        Task::Bench(args) => bench::run(&args),
        Task::Conformance { args } => conformance::run(&args),
        Task::Fuzz(args) => fuzz::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_owned()
}
