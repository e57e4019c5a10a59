//! What keeps a demo that runs for days the same size, in memory and on disk. Left to itself the
//! fleet only grows: every permission hook the demo starts is a child process that stays a
//! zombie once it has exited until it is reaped, and leaves four files under `hooks/`; the claude
//! and codex transcripts grow by a few records a move; the fake tmux logs every call (a connected
//! `corral serve` makes one a cycle) in its `calls.ndjson`. So, every tick:
//!
//! - a hook that has exited is reaped, by its own pid and no other (the `tmux` and `git` children
//!   of the steps are waited for where they are spawned), and its files are removed once the
//!   stage has read its verdict;
//! - a transcript over [`TRANSCRIPT_CAP`] is rotated as an agent's store rotates a log: moved
//!   away, a fresh file of the same session started at its path, and the old one removed;
//! - a fake tmux call log over [`CALLS_CAP`] is moved to `calls.ndjson.1` (replacing the one
//!   before it), and the fake starts a new one with its next call: the last calls stay readable.
//!
//! What an app does grows with what it does (the agent API's record of its replies, the keys it
//! sends); the host keeps its own dispatch ledger bounded.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rustix::process::{Pid, WaitOptions, waitpid};
use serde_json::Value;

use super::super::hook;
use super::super::transcript;

/// The size past which a transcript is rotated.
pub const TRANSCRIPT_CAP: u64 = 512 * 1024;

/// Records the fresh file of a rotated transcript starts with.
const FRESH_RECORDS: u64 = 4;

/// The size past which the fake tmux's call log is moved aside.
pub const CALLS_CAP: u64 = 1024 * 1024;

/// The files of a hook run (`hook`'s layout: `hooks/<name>.<ext>`).
const HOOK_FILES: [&str; 4] = ["json", "payload", "out", "err"];

/// A permission hook the demo started, kept until it is reaped and its files are gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawned {
    /// The run's name.
    pub name: String,
    /// Its `corral event` process, from the run's record; `None` when the record names none.
    pid: Option<Pid>,
    /// Whether it has exited and been reaped.
    reaped: bool,
}

impl Spawned {
    /// The run `name` that `hook::run` started, its pid read from its record.
    pub fn new(sim_dir: &Path, name: &str) -> Spawned {
        let record = hook::dir(sim_dir).join(format!("{name}.json"));
        let pid = std::fs::read(record)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|record| record["pid"].as_i64())
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(Pid::from_raw);
        Spawned {
            name: name.to_owned(),
            pid,
            reaped: false,
        }
    }

    /// Whether the run's record names the process it started.
    pub fn started(&self) -> bool {
        self.pid.is_some()
    }

    /// Reaps the process if it has exited; whether it is gone.
    fn reap(&mut self) -> bool {
        if !self.reaped {
            self.reaped = match self.pid {
                // Not a child any more (or never one): nothing is left to reap.
                None => true,
                Some(pid) => !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None)),
            };
        }
        self.reaped
    }
}

/// Reaps every hook of `spawned` that has exited, and forgets each reaped one whose verdict
/// `unread` does not say the stage has yet to read: its files are removed.
pub fn reap_hooks(
    sim_dir: &Path,
    spawned: &mut Vec<Spawned>,
    unread: impl Fn(&str) -> bool,
) -> anyhow::Result<()> {
    let mut result = Ok(());
    spawned.retain_mut(|run| {
        if !run.reap() || unread(&run.name) {
            return true;
        }
        for ext in HOOK_FILES {
            let path = hook::dir(sim_dir).join(format!("{}.{ext}", run.name));
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound && result.is_ok() => {
                    result = Err(e).with_context(|| format!("removing {}", path.display()));
                }
                _ => {}
            }
        }
        false
    });
    result
}

/// The size of the file at `path`; 0 when there is none.
fn size(path: &Path) -> anyhow::Result<u64> {
    match std::fs::metadata(path) {
        Ok(metadata) => Ok(metadata.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Rotates the transcript at `path` when it is over [`TRANSCRIPT_CAP`], and removes the old
/// file; whether it did.
pub fn bound_transcript(path: &Path) -> anyhow::Result<bool> {
    if size(path)? <= TRANSCRIPT_CAP {
        return Ok(false);
    }
    let moved = transcript::rotate(path, FRESH_RECORDS)?;
    std::fs::remove_file(&moved).with_context(|| format!("removing {}", moved.display()))?;
    Ok(true)
}

/// `<path>.1`.
fn aside(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".1");
    PathBuf::from(name)
}

/// Moves the log at `path` to `<path>.1` when it is over `cap`; whether it did. Its writers
/// append a whole line with each open (`O_APPEND`), so a line is in one file or the other.
pub fn bound_log(path: &Path, cap: u64) -> anyhow::Result<bool> {
    if size(path)? <= cap {
        return Ok(false);
    }
    let old = aside(path);
    std::fs::rename(path, &old)
        .with_context(|| format!("moving {} to {}", path.display(), old.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use golden::fixture::TranscriptFormat;

    use super::*;
    use crate::sim::transcript::Generator;

    #[test]
    fn a_log_over_its_cap_is_moved_aside_replacing_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("calls.ndjson");
        assert!(!bound_log(&log, 10).unwrap(), "no log yet");
        std::fs::write(&log, "0123456789").unwrap();
        assert!(!bound_log(&log, 10).unwrap());
        std::fs::write(&log, "first one!!").unwrap();
        assert!(bound_log(&log, 10).unwrap());
        assert!(!log.exists());
        std::fs::write(&log, "second one!").unwrap();
        assert!(bound_log(&log, 10).unwrap());
        let kept = std::fs::read_to_string(dir.path().join("calls.ndjson.1")).unwrap();
        assert_eq!(kept, "second one!");
    }

    #[test]
    fn a_transcript_over_its_cap_starts_afresh_at_its_path_and_the_old_file_goes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut generator = Generator::new(TranscriptFormat::Claude, "sess", "/r", "main", 0);
        generator.append(&path, 10, 0, false).unwrap();
        assert!(!bound_transcript(&path).unwrap());
        while size(&path).unwrap() <= TRANSCRIPT_CAP {
            Generator::resume(&path)
                .unwrap()
                .append(&path, 200, 0, false)
                .unwrap();
        }
        assert!(bound_transcript(&path).unwrap());
        assert!(size(&path).unwrap() < TRANSCRIPT_CAP / 16);
        let resumed = Generator::resume(&path).unwrap();
        assert_eq!(resumed.session_id, "sess");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn an_exited_hook_is_reaped_and_its_files_go_once_its_verdict_is_read() {
        let sim_dir = tempfile::tempdir().unwrap();
        let hooks = hook::dir(sim_dir.path());
        std::fs::create_dir_all(&hooks).unwrap();
        let mut child = crate::process::command("true").spawn().unwrap();
        let pid = child.id();
        for ext in HOOK_FILES {
            std::fs::write(hooks.join(format!("h.{ext}")), "").unwrap();
        }
        std::fs::write(hooks.join("h.json"), format!("{{\"pid\":{pid}}}")).unwrap();
        let mut spawned = vec![Spawned::new(sim_dir.path(), "h")];
        assert_eq!(spawned[0].pid, Pid::from_raw(i32::try_from(pid).unwrap()));
        // Until it has exited, nothing happens; then it is reaped, its files kept while unread.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !spawned[0].reaped {
            reap_hooks(sim_dir.path(), &mut spawned, |_| true).unwrap();
            assert!(std::time::Instant::now() < deadline, "true did not exit");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(std::fs::read_dir(&hooks).unwrap().count(), 4);
        // Reaped here, so the child's own wait finds none.
        assert!(child.try_wait().is_err());
        reap_hooks(sim_dir.path(), &mut spawned, |_| false).unwrap();
        assert!(spawned.is_empty());
        assert_eq!(std::fs::read_dir(&hooks).unwrap().count(), 0);
    }
}
