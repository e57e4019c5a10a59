//! `cargo xtask <task>`: project automation, one small binary matching on its first argument.
//!
//! - `schema [--check]`: write (or check) the generated JSON Schemas under `schema/json/`.
//! - `tidy`: house rules every source file follows.
//! - `conformance [--backend fake|real] [--host CMD] [--case GLOB] ...`: the golden sessions
//!   against a host (`cargo xtask conformance --help`).
//! - `bench [--backend real|fake] [--runs N]`: the host's performance figures.
//! - `fuzz [--seed N] [--lines N]`: generated lines against one `serve`, every answer checked.

mod bench;
mod conformance;
mod fuzz;
mod schema_files;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("schema") => schema_files::run(&args[1..]),
        Some("tidy") => tidy::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("conformance") => conformance::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        _ => Err(anyhow::anyhow!(
            "usage: cargo xtask <schema [--check] | tidy | bench | conformance | fuzz>"
        )),
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
