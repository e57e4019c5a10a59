//! `$CORRAL_SIM_DIR/sim.json`: what `up` brought up ([`golden::SimFile`], the same document `up`
//! prints), read by every later subcommand and rewritten when a step changes what it remembers.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::SimFile;

/// The path of sim.json.
pub fn path(sim_dir: &Path) -> PathBuf {
    sim_dir.join("sim.json")
}

/// Reads sim.json.
pub fn load(sim_dir: &Path) -> anyhow::Result<SimFile> {
    let file = path(sim_dir);
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("{} is missing: run `corral-sim up` first", file.display())
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", file.display()))
}

/// Writes sim.json.
pub fn store(sim: &SimFile, sim_dir: &Path) -> anyhow::Result<()> {
    let text = serde_json::to_vec_pretty(sim)?;
    crate::fake::state::write_atomic(&path(sim_dir), &text)
        .with_context(|| format!("writing {}", path(sim_dir).display()))
}
