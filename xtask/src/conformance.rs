//! `cargo xtask conformance`: the conformance runner (the `conformance` crate, the same code as
//! the installed `corral-conformance`) on this checkout: its kit read from disk (so edited
//! sessions run, and `--bless` rewrites them), the host and the simulator built with cargo first.

use conformance::Launcher;
pub use conformance::{Silent, default_jobs};

use crate::workspace_root;

/// Runs `cargo xtask conformance <args>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    conformance::run(args, &checkout())
}

/// This checkout, as the runner's launcher.
fn checkout() -> Launcher {
    Launcher::Checkout {
        root: workspace_root(),
    }
}

/// The run `cargo xtask conformance <args>` makes, printing nothing: the bench times it.
pub fn run_silently(args: &[String]) -> anyhow::Result<Silent> {
    conformance::run_silently(args, &checkout())
}

/// Every case of the checkout's kit with its `floor_ms`.
pub fn floors() -> anyhow::Result<Vec<(String, Option<u64>)>> {
    conformance::floors(&workspace_root())
}

/// Builds the checkout's debug binaries as the conformance run does.
pub fn build_binaries() -> anyhow::Result<()> {
    conformance::build_binaries(&workspace_root())
}

/// The checkout's cargo target dir.
pub fn target_dir() -> std::path::PathBuf {
    conformance::target_dir(&workspace_root())
}
