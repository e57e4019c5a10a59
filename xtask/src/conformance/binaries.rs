//! The binaries a run needs: where cargo puts them, building them (debug: the same artifacts
//! `cargo test` and clippy already built, so CI compiles nothing twice; the host's speed does not
//! matter here), and the host command to run when none is given.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::host;
use super::process;
use crate::workspace_root;

/// The target dir cargo builds into: `$CARGO_TARGET_DIR`, else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        _ => workspace_root().join("target"),
    }
}

/// Builds the simulator's binaries, and the host's when the run uses it.
pub fn build(with_host: bool) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = process::command(cargo);
    cmd.current_dir(workspace_root())
        .args(["build", "--quiet", "--bins", "-p", "simulator"]);
    if with_host {
        cmd.args(["-p", "reference-host"]);
    }
    let status = cmd.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    Ok(())
}

/// The built `corral serve --stdio --device {device}`.
pub fn default_host(target: &Path) -> String {
    format!(
        "{} serve --stdio --device {{device}}",
        host::shell_quote(&target.join("debug/corral").display().to_string())
    )
}

/// What a run starts: the host command template, the host's own command line and `corral-sim`.
#[derive(Debug)]
pub struct Binaries {
    /// The host command template (`{device}` is replaced).
    pub host_template: String,
    /// The host's own command line (`corral`), when known: the built one for the reference
    /// host, else the one given.
    pub host_cli: Option<PathBuf>,
    /// The built `corral-sim`.
    pub sim_bin: PathBuf,
}

impl Binaries {
    /// Builds what is needed (unless told not to) and finds it.
    pub fn prepare(
        host: Option<&str>,
        host_cli: Option<&Path>,
        build_first: bool,
    ) -> anyhow::Result<Binaries> {
        let target = target_dir();
        if build_first {
            build(host.is_none())?;
        }
        let host_template = host.map_or_else(|| default_host(&target), str::to_owned);
        let host_cli = match (host, host_cli) {
            (_, Some(cli)) => Some(cli.to_owned()),
            (None, None) => Some(target.join("debug/corral")),
            (Some(_), None) => None,
        };
        let sim_bin = target.join("debug/corral-sim");
        if !sim_bin.exists() {
            bail!(
                "{} is missing; build it or drop --no-build",
                sim_bin.display()
            );
        }
        Ok(Binaries {
            host_template,
            host_cli,
            sim_bin,
        })
    }
}
