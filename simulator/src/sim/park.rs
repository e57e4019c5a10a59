//! Parked hook requests: the file an agent's permission hook leaves in the host's runtime dir
//! (`<runtime>/requests/<id>.json`, pane-options.md), written by `up` for a fixture pane and by
//! `step --park-request`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

/// Writes a parked hook request exactly as pane-options.md describes it.
#[allow(clippy::too_many_arguments)]
pub fn park(
    runtime: &Path,
    id: &str,
    pane: &str,
    session_id: Option<&str>,
    tool: &str,
    input: &Map<String, Value>,
    episode_ms: u64,
    stamped_at_ms: u64,
) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if id.is_empty() || id.contains(['/', '\0']) || id.starts_with('.') {
        bail!("request id {id:?} cannot name a file");
    }
    let dir = runtime.join("requests");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(runtime, std::fs::Permissions::from_mode(0o700))?;
    let record = json!({
        "id": id,
        "pane": pane,
        "session_id": session_id,
        "tool_name": tool,
        "tool_input": input,
        "episode_ms": episode_ms,
        "stamped_at_ms": stamped_at_ms,
    });
    let path = dir.join(format!("{id}.json"));
    crate::fake::state::write_atomic(&path, format!("{record}\n").as_bytes())?;
    Ok(path)
}
