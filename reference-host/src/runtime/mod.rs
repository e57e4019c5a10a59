//! The runtime dir (`$XDG_RUNTIME_DIR/corral`, else `$TMPDIR/corral-<uid>`): private to this user
//! (0700), shared by every `corral` process of the host, and where they coordinate. What lives in
//! it has a named accessor on [`RuntimeDir`], so its layout reads in one place:
//!
//! - `serve/slot-<n>.lock`: the connection cap (`slots.rs`).
//!
//! Next, per wire-details "Host files": the dispatch ledger (`ledger.jsonl`), the pane locks,
//! parked hook requests (`requests/`) and their verdicts, the transcript cursor secret, the
//! notify failure marker and the notification daemon's socket. Each gets an accessor here and is
//! locked and written through `files.rs`.

pub mod slots;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::files;
use slots::Slot;

/// The runtime dir, created private.
#[derive(Debug, Clone)]
pub struct RuntimeDir {
    path: PathBuf,
}

impl RuntimeDir {
    /// The runtime dir at `path`, created 0700 if absent and made 0700 if open; refused when
    /// another user owns it.
    pub fn open(path: &Path) -> anyhow::Result<RuntimeDir> {
        files::create_private_dir(path)
            .with_context(|| format!("the runtime dir {}", path.display()))?;
        Ok(RuntimeDir {
            path: path.to_owned(),
        })
    }

    /// Claims one of `max` connection slots (`serve/slot-<n>.lock`), or `None` when all are taken.
    pub fn claim_slot(&self, max: u32) -> std::io::Result<Option<Slot>> {
        slots::claim(&self.path.join("serve"), max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_live_in_serve() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(&tmp.path().join("corral")).unwrap();
        let slot = runtime.claim_slot(1).unwrap().unwrap();
        assert!(tmp.path().join("corral/serve/slot-0.lock").is_file());
        drop(slot);
    }
}
