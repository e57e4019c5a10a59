//! How xtask starts a child process (`stdx::process::command`: a process group of its own), and a
//! run to the end that fails loudly.

use std::process::{Command, Output};

use anyhow::{Context, bail};

/// A `Command` for a program, in a process group of its own: every child process of xtask.
pub use stdx::process::command;

/// Runs `cmd` to its end; its output, or an error with its stderr when it failed.
pub fn output(cmd: &mut Command) -> anyhow::Result<Output> {
    let shown = format!("{:?}", cmd.get_program());
    let out = cmd.output().with_context(|| format!("starting {shown}"))?;
    if !out.status.success() {
        bail!(
            "{shown} {:?} failed ({}): {}",
            cmd.get_args().collect::<Vec<_>>(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out)
}

/// Runs `cmd` to its end; its stdout as text, trimmed.
pub fn stdout(cmd: &mut Command) -> anyhow::Result<String> {
    let out = output(cmd)?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}
