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
    /// The runtime dir at `path`, created 0700 (with any missing parent) if absent and made 0700
    /// if others may read it; refused when another user owns it or could write it or, through a
    /// parent they may write that is not sticky, replace it.
    pub fn open(path: &Path) -> anyhow::Result<RuntimeDir> {
        let context = || format!("the runtime dir {}", path.display());
        if let Some(parent) = path.parent()
            && let Ok(meta) = std::fs::metadata(parent)
            && let Some(why) = files::lets_others_replace_entries(parent, &meta)
        {
            anyhow::bail!(
                "{}: {why}; or set XDG_RUNTIME_DIR (or TMPDIR) to a directory of this user's",
                context()
            );
        }
        files::create_private_dir(path).with_context(context)?;
        Ok(RuntimeDir {
            path: path.to_owned(),
        })
    }

    /// Claims one of `max` connection slots (`serve/slot-<n>.lock`), or `None` when all are taken.
    pub fn claim_slot(&self, max: u32) -> std::io::Result<Option<Slot>> {
        slots::claim(&self.path.join("serve"), max)
    }

    /// The dir itself: the ledger (`ledger.jsonl`, `ledger.lock`, `owners/`) and the transcript
    /// cursor secret (`cursor.key`) live at its top.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `requests/<id>.json`: a permission request parked by an agent's hook. `None` for an id
    /// that cannot be a file name (so a stamp can never name a path outside the dir).
    pub fn request_file(&self, id: &str) -> Option<PathBuf> {
        file_name(id).map(|id| self.path.join("requests").join(format!("{id}.json")))
    }

    /// `verdicts/<id>`: the answer a dispatch gives a parked request.
    pub fn verdict_file(&self, id: &str) -> Option<PathBuf> {
        file_name(id).map(|id| self.path.join("verdicts").join(id))
    }

    /// `locks/pane-<n>.lock`: the single-flight lock of a pane's dispatches.
    pub fn pane_lock(&self, pane: &str) -> PathBuf {
        let name: String = pane
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        self.path.join("locks").join(format!("pane-{name}.lock"))
    }
}

/// `id` when it can be used as one file name: not empty, no `/`, not `.` or `..`, no NUL.
fn file_name(id: &str) -> Option<&str> {
    let ok = !id.is_empty() && id != "." && id != ".." && !id.contains(['/', '\0']);
    ok.then_some(id)
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

    #[test]
    fn a_runtime_dir_others_could_write_or_replace_is_refused() {
        use std::os::unix::fs::PermissionsExt;

        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("run");
        let path = parent.join("corral");
        RuntimeDir::open(&path).unwrap();
        let chmod = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };

        chmod(&path, 0o777);
        let err = format!("{:#}", RuntimeDir::open(&path).unwrap_err());
        assert!(
            err.contains(&format!("chmod go-w {}", path.display())),
            "{err}"
        );
        chmod(&path, 0o700);

        chmod(&parent, 0o777);
        let err = format!("{:#}", RuntimeDir::open(&path).unwrap_err());
        assert!(
            err.contains(&format!("chmod go-w {}", parent.display()))
                && err.contains("XDG_RUNTIME_DIR"),
            "{err}"
        );
        chmod(&parent, 0o1777);
        RuntimeDir::open(&path).expect("a sticky parent, as /tmp is, is fine");
    }

    #[test]
    fn hook_files_are_named_by_a_plain_id_only() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(tmp.path()).unwrap();
        assert_eq!(
            runtime.request_file("req-1"),
            Some(tmp.path().join("requests/req-1.json"))
        );
        assert_eq!(
            runtime.verdict_file("req-1"),
            Some(tmp.path().join("verdicts/req-1"))
        );
        for bad in ["", "..", "a/b", "../x"] {
            assert_eq!(runtime.request_file(bad), None, "{bad}");
            assert_eq!(runtime.verdict_file(bad), None, "{bad}");
        }
        assert_eq!(
            runtime.pane_lock("%12"),
            tmp.path().join("locks/pane-_12.lock")
        );
    }
}
