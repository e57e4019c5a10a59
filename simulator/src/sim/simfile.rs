//! `$CORRAL_SIM_DIR/sim.json`: what `up` brought up (backend, socket, tmux binary, pane ids), read
//! by every later subcommand. Private to the simulator; its first keys are the interface the
//! host's and the conformance runner's tests read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use golden::fixture::TranscriptFormat;

/// Which tmux the fleet lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// `corral-fake-tmux`, state under `$CORRAL_SIM_DIR`.
    Fake,
    /// A scratch real tmux server (`tmux -L <socket> -f /dev/null`).
    Real,
}

/// The contents of sim.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimFile {
    /// Backend.
    pub backend: Backend,
    /// The `-L` socket name.
    pub socket: String,
    /// The socket path (`#{socket_path}`).
    pub socket_path: String,
    /// Absolute path of tmux or corral-fake-tmux.
    pub tmux_bin: String,
    /// Fixture pane name → `%N`.
    pub panes: BTreeMap<String, String>,
    /// "Now" at bring-up, epoch ms.
    pub now_ms: u64,
    /// The host runtime dir hook requests were parked in.
    pub runtime_dir: String,
    /// Repository (and worktree) name → path.
    pub repos: BTreeMap<String, String>,
    /// What the simulator remembers per pane.
    pub details: BTreeMap<String, PaneDetail>,
}

/// What the simulator remembers about one pane.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaneDetail {
    /// Working directory.
    pub cwd: String,
    /// Agent name, if an agent pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Transcript path and format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<(String, TranscriptFormat)>,
}

/// The path of sim.json.
pub fn path(sim_dir: &Path) -> PathBuf {
    sim_dir.join("sim.json")
}

impl SimFile {
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
    pub fn store(&self, sim_dir: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_vec_pretty(self)?;
        crate::fake::state::write_atomic(&path(sim_dir), &text)
            .with_context(|| format!("writing {}", path(sim_dir).display()))
    }

    /// Resolves a pane given by fixture name or `%N` to `(name, %N)`.
    pub fn pane(&self, given: &str) -> anyhow::Result<(String, String)> {
        if let Some(id) = self.panes.get(given) {
            return Ok((given.to_owned(), id.clone()));
        }
        if given.starts_with('%') {
            let name = self
                .panes
                .iter()
                .find(|(_, id)| *id == given)
                .map(|(name, _)| name.clone())
                .unwrap_or_else(|| given.to_owned());
            return Ok((name, given.to_owned()));
        }
        bail!("no pane named {given:?} in sim.json (give a fixture name or %N)")
    }
}
