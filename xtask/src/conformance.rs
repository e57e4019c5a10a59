//! `cargo xtask conformance`: the conformance runner (`simulator::conformance`, the same code as
//! the installed `corral-conformance`) on this checkout: its kit read from disk (so edited
//! sessions run, and `--bless` rewrites them), the host and the simulator built with cargo first.

use simulator::conformance::{self, Launcher};

use crate::workspace_root;

/// Runs `cargo xtask conformance <args>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    conformance::run(
        args,
        &Launcher::Checkout {
            root: workspace_root(),
        },
    )
}
