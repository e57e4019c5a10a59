//! What `corral-sim up` answers: the fleet it brought up (backend, socket, tmux binary, each
//! fixture pane's id, ...), printed as one JSON object and kept as `$CORRAL_SIM_DIR/sim.json` for
//! every later `corral-sim` subcommand. One type for the simulator that writes it and for everyone
//! who reads it back: the conformance runner, the bench and the host's tests.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::fixture::TranscriptFormat;

/// The fleet `corral-sim up` brought up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimFile {
    /// Which tmux the fleet lives on.
    pub backend: Backend,
    /// The `-L` socket name; a host gets it as `CORRAL_TMUX_SOCKET`.
    pub socket: String,
    /// The socket path (`#{socket_path}`, the `server` of fleet rows).
    pub socket_path: String,
    /// Absolute path of tmux or corral-fake-tmux; a host gets it as `CORRAL_TMUX_BIN`.
    pub tmux_bin: String,
    /// Fixture pane name → `%N`.
    pub panes: BTreeMap<String, String>,
    /// "Now" at bring-up, epoch ms.
    pub now_ms: u64,
    /// The host runtime dir hook requests were parked in.
    pub runtime_dir: String,
    /// Repository (and worktree) name → path.
    pub repos: BTreeMap<String, String>,
    /// What the simulator remembers per pane, by fixture pane name.
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

/// A pane named neither by a fixture name nor as `%N`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPane(pub String);

impl fmt::Display for UnknownPane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no pane named {:?} in sim.json (give a fixture name or %N)",
            self.0
        )
    }
}

impl std::error::Error for UnknownPane {}

impl SimFile {
    /// Resolves a pane given by fixture name or `%N` to `(name, %N)`; a `%N` no fixture pane has
    /// is its own name (a pane added later).
    pub fn pane(&self, given: &str) -> Result<(String, String), UnknownPane> {
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
        Err(UnknownPane(given.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> SimFile {
        serde_json::from_str(
            r#"{"backend":"fake","socket":"s","socket_path":"/sim/tmux-0/s","tmux_bin":"/bin/fake",
                "panes":{"worker":"%1"},"now_ms":5,"runtime_dir":"/run","repos":{},
                "details":{"worker":{"cwd":"/w","transcript":["/w/t.jsonl","claude"]}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_pane_is_found_by_name_or_id() {
        let sim = sim();
        assert_eq!(sim.pane("worker"), Ok(("worker".into(), "%1".into())));
        assert_eq!(sim.pane("%1"), Ok(("worker".into(), "%1".into())));
        assert_eq!(sim.pane("%7"), Ok(("%7".into(), "%7".into())));
        assert_eq!(
            sim.pane("nobody").unwrap_err().to_string(),
            "no pane named \"nobody\" in sim.json (give a fixture name or %N)"
        );
    }

    #[test]
    fn it_reads_back_what_it_writes() {
        let sim = sim();
        assert_eq!(sim.backend, Backend::Fake);
        let text = serde_json::to_string(&sim).unwrap();
        assert_eq!(serde_json::from_str::<SimFile>(&text).unwrap(), sim);
        assert!(text.starts_with(r#"{"backend":"fake","socket":"s","socket_path":"#));
    }
}
