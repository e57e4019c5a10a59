//! Parked hook requests: the file an agent's permission hook leaves in the host's runtime dir
//! (`<runtime>/requests/<id>.json`, pane-options.md), written by `up` for a fixture pane and by
//! `step --park-request`; and the verdicts a dispatch's hook lane writes for them
//! (`<runtime>/verdicts/<id>`), listed by `corral-sim verdicts`.

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

/// Every verdict file in `runtime`, by request id: `{"request":ID,"verdict":...}`, the verdict
/// as the JSON it holds (its text, when it is not JSON).
pub fn verdicts(runtime: &Path) -> anyhow::Result<Vec<Value>> {
    let dir = runtime.join("verdicts");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let mut found: Vec<(String, Value)> = Vec::new();
    for entry in entries {
        let entry = entry?;
        let text = match std::fs::read_to_string(entry.path()) {
            Ok(text) => text,
            // Consumed (a waiting hook removes it) between the listing and the read.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", entry.path().display())),
        };
        let verdict = serde_json::from_str(&text).unwrap_or(Value::String(text));
        found.push((entry.file_name().to_string_lossy().into_owned(), verdict));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found
        .into_iter()
        .map(|(request, verdict)| json!({ "request": request, "verdict": verdict }))
        .collect())
}
