//! The names a session may use before anything in it binds them, and the captures a player binds
//! for them before the first step: `socket_path` (the tmux socket's path, the rows' `server`),
//! `sim_dir` (`$CORRAL_SIM_DIR`) and `pane.<name>` (each fixture pane's id).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::pattern::Captures;

/// The tmux socket's path.
const SOCKET_PATH: &str = "socket_path";

/// The simulator's state directory.
const SIM_DIR: &str = "sim_dir";

/// Prefix of the names of fixture panes' ids (`pane.worker` = `%1`).
pub const PANE_PREFIX: &str = "pane.";

/// Whether a name is bound before the first step. Any `pane.` name is: which panes exist is the
/// fixture's business, known when the session is played.
pub fn is_prebound(name: &str) -> bool {
    name == SOCKET_PATH || name == SIM_DIR || name.starts_with(PANE_PREFIX)
}

/// The captures bound before the first step, from the socket path, the simulator directory and
/// each fixture pane's id by its name.
pub fn prebound(socket_path: &str, sim_dir: &str, panes: &BTreeMap<String, String>) -> Captures {
    let mut captures = Captures::new();
    captures.insert(SOCKET_PATH.into(), Value::from(socket_path));
    captures.insert(SIM_DIR.into(), Value::from(sim_dir));
    for (name, id) in panes {
        captures.insert(format!("{PANE_PREFIX}{name}"), Value::from(id.as_str()));
    }
    captures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_prebound_is_what_prebound_binds() {
        let panes = BTreeMap::from([("worker".to_owned(), "%1".to_owned())]);
        let captures = prebound("/tmp/tmux-1/s", "/sim", &panes);
        assert_eq!(captures["pane.worker"], Value::from("%1"));
        assert!(captures.keys().all(|name| is_prebound(name)));
        assert!(is_prebound("pane.anything"));
        assert!(!is_prebound("host"));
    }
}
