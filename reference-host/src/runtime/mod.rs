//! The runtime dir (`$XDG_RUNTIME_DIR/corral`, else `$TMPDIR/corral-<uid>`): private to this user
//! (0700), shared by every `corral` process of the host, and where they coordinate. What lives in
//! it has a named accessor on [`RuntimeDir`], so its layout reads in one place:
//!
//! - `serve/slot-<n>.lock`: the connection cap (`slots.rs`).
//! - `ledger.jsonl`, `ledger.lock`, `owners/`: the dispatch ledger; `locks/pane-<n>.lock`: the
//!   pane locks; `requests/<id>.json` and `verdicts/<id>`: the hook lane; `cursor.key`: the
//!   transcript cursor secret.
//! - `notify/`: the notification subsystem's files: `command-failure.json` (the last failed
//!   notification command), `commands/slot-<n>.lock` (the cap on running notification
//!   commands), `markers.lock` (the guard around a marker's claim), and per tmux
//!   server `daemon-<key>.lock` (one daemon per server) and `daemon-<key>.sock` (its socket).
//! - `push/<key>/`: per tmux server, one datagram socket per running `serve` and daemon, where
//!   an agent's hook says which pane it stamped (`crate::push`).
//! - `fleet/<key>-<format>.read` and `.lock`: per tmux server, the cycle read its `serve`
//!   processes share (`crate::fleet::shared`).
//!
//! Everything is locked and written through `files.rs`.

pub mod slots;

use std::path::{Path, PathBuf};

use anyhow::Context;

use schema::hook::ParkedRequest;

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

    /// The runtime dir at `path`, neither created nor checked: names its files for a report
    /// that must not create anything (`corral doctor`).
    pub fn peek(path: &Path) -> RuntimeDir {
        RuntimeDir {
            path: path.to_owned(),
        }
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

    /// `requests/<id>.lock`: held by the hook that parked request `id` for as long as it waits.
    pub fn request_lock(&self, id: &str) -> Option<PathBuf> {
        file_name(id).map(|id| self.path.join("requests").join(format!("{id}.lock")))
    }

    /// The parked request `id` of pane `pane`, when it is there to be answered: its file reads,
    /// is that id's and that pane's, and the hook that parked it still waits (its lock is held;
    /// a request parked with no lock file, as a fixture does, counts as waiting). A hook that
    /// died left a free lock: its request is gone.
    pub fn parked_request(&self, id: &str, pane: &str) -> Option<ParkedRequest> {
        let path = self.request_file(id)?;
        let text = std::fs::read_to_string(&path).ok()?;
        let request = match serde_json::from_str::<ParkedRequest>(&text) {
            Ok(request) if request.id == id && request.pane == pane => request,
            Ok(_) => {
                tracing::warn!(path = %path.display(), "a parked request for another pane or id");
                return None;
            }
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "a parked request does not parse");
                return None;
            }
        };
        let lock = self.request_lock(id)?;
        if lock.exists() && matches!(files::try_lock(&lock), Ok(Some(_))) {
            tracing::info!(id, "the hook that parked this request is gone");
            return None;
        }
        Some(request)
    }

    /// `verdicts/<id>`: the answer a dispatch gives a parked request.
    pub fn verdict_file(&self, id: &str) -> Option<PathBuf> {
        file_name(id).map(|id| self.path.join("verdicts").join(id))
    }

    /// `notify/command-failure.json`: the last notification command that failed.
    pub fn command_failure(&self) -> PathBuf {
        self.path.join("notify/command-failure.json")
    }

    /// `notify/commands/`: one lock file per running notification command, up to the cap.
    pub fn command_slots(&self) -> PathBuf {
        self.path.join("notify/commands")
    }

    /// `notify/markers.lock`: held around reading and writing a pane's notification marker, so
    /// two detection paths cannot both claim one episode.
    pub fn marker_lock(&self) -> PathBuf {
        self.path.join("notify/markers.lock")
    }

    /// `notify/daemon-<key>.lock`: held by the notification daemon of the tmux server `key`
    /// names (see `notify::server`).
    pub fn daemon_lock(&self, key: &str) -> PathBuf {
        self.path.join(format!("notify/daemon-{key}.lock"))
    }

    /// `notify/daemon-<key>.sock`: that daemon's socket.
    pub fn daemon_socket(&self, key: &str) -> PathBuf {
        self.path.join(format!("notify/daemon-{key}.sock"))
    }

    /// `push/<key>/`: the push sockets of the running host processes of the tmux server `key`
    /// names, `<role>-<pid>-<nonce>.sock` (see `crate::push`).
    pub fn push_dir(&self, key: &str) -> PathBuf {
        self.path.join("push").join(key)
    }

    /// `fleet/`: the cycle reads every `serve` of a tmux server shares, `<key>-<format>.read`
    /// under `<key>-<format>.lock` (see `crate::fleet::shared`).
    pub fn fleet_dir(&self) -> PathBuf {
        self.path.join("fleet")
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
    fn a_broken_parked_request_is_gone_never_a_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(tmp.path()).unwrap();
        let path = runtime.request_file("req-1").unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let good = br#"{"id":"req-1","pane":"%1","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"episode_ms":5,"stamped_at_ms":6}"#;
        for bytes in crate::testing::mutations(good, 4, 1500) {
            std::fs::write(&path, &bytes).unwrap();
            if let Some(request) = runtime.parked_request("req-1", "%1") {
                assert_eq!(
                    (request.id.as_str(), request.pane.as_str()),
                    ("req-1", "%1")
                );
            }
        }
    }

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
