//! Where things live: `CORRAL_SIM_DIR`, the user id, the host's runtime dir
//! (`$XDG_RUNTIME_DIR/corral`, else `$TMPDIR/corral-<uid>`) and the host name.

use std::fmt;
use std::path::{Path, PathBuf};

/// The environment variable naming the simulator's state root.
pub use stdx::world::SIM_DIR_VAR;

/// The environment variable naming the host's hook command (the host profile's `hook`, its
/// `{cli}` filled: `/path/corral event`), which `corral-sim hook` runs with the agent's name
/// and the hook's after it. Unset: `$CORRAL_BIN event`, corral's.
pub const HOOK_VAR: &str = "CORRAL_SIM_HOOK";

/// The state root from `CORRAL_SIM_DIR`, or the error both binaries print as their one line.
pub fn sim_dir() -> Result<PathBuf, NoSimDir> {
    match std::env::var_os(SIM_DIR_VAR) {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => Err(NoSimDir),
    }
}

/// `CORRAL_SIM_DIR` is unset or empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSimDir;

impl fmt::Display for NoSimDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{SIM_DIR_VAR} is not set: point it at the simulator's state directory"
        )
    }
}

impl std::error::Error for NoSimDir {}

/// The effective user id, read from the owner of `/proc/self` (Linux) or of a file this process
/// creates (elsewhere), so no `unsafe` call to `geteuid` is needed.
pub fn uid(scratch: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = std::fs::metadata("/proc/self") {
        return meta.uid();
    }
    let probe = scratch.join(format!(".uid-probe-{}", std::process::id()));
    let uid = std::fs::write(&probe, b"")
        .and_then(|()| std::fs::metadata(&probe))
        .map(|meta| meta.uid())
        .unwrap_or(0);
    let _ = std::fs::remove_file(&probe);
    uid
}

/// The host's runtime dir as wire-details.md "Host files" defines it.
pub fn runtime_dir(uid: u32) -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("corral");
    }
    let tmp = std::env::var_os("TMPDIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    tmp.join(format!("corral-{uid}"))
}

/// The host name, as tmux shows it in a fresh pane's title.
pub fn hostname() -> String {
    for file in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        if let Ok(text) = std::fs::read_to_string(file) {
            let name = text.trim();
            if !name.is_empty() {
                return name.to_owned();
            }
        }
    }
    crate::process::command("hostname")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}
