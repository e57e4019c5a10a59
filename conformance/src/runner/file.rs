//! The `file` step: a path inside the case's dirs, checked for what is there (a file, a
//! directory, nothing), its permission bits, whether it is the same file an earlier `file` step
//! on that path saw, whether a process holds a lock on it, and what it holds (a directory: its
//! entries' names), at once or, with the step's `timeout_ms`, until it holds.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use golden::pattern::{self, Captures};
use golden::session::{Entry, FileCheck};

use super::content::Judge;
use super::{Case, StepError, StepResult};

/// What a `file` step saw of a file, for a later step on the same path to compare with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seen {
    /// Its inode: another one after a write that renamed a new file over it.
    ino: u64,
    /// Its length: where what is appended to it begins.
    len: u64,
}

/// The files earlier `file` steps saw, by path.
pub(super) type SeenFiles = BTreeMap<PathBuf, Seen>;

impl Case<'_> {
    /// A path a step names, `${name}` replaced: absolute, inside the case's dirs.
    pub(super) fn case_path(&self, path: &str) -> Result<PathBuf, StepError> {
        let text = pattern::instantiate_text(path, &self.captures).map_err(StepError::new)?;
        let path = PathBuf::from(&text);
        let inside = path.is_absolute()
            && path.starts_with(&self.dir)
            && !path.components().any(|c| c == Component::ParentDir);
        if !inside {
            return Err(StepError::new(format!(
                "{text} is not a path inside the case's dirs ({})",
                self.dir.display()
            )));
        }
        Ok(path)
    }

    /// `file`: the check, once or until `timeout` passes.
    pub(super) fn file(&mut self, check: &FileCheck, timeout: Option<Duration>) -> StepResult {
        let path = self.case_path(&check.path)?;
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        loop {
            let mut trial = self.captures.clone();
            match self.check_path(check, &path, &mut trial) {
                Ok(seen) => {
                    self.captures = trial;
                    if let Some(seen) = seen {
                        self.seen.insert(path, seen);
                    }
                    return Ok(());
                }
                Err(err) if deadline.is_some_and(|d| Instant::now() < d) => {
                    drop(err);
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// One look at the path; what it saw of a file.
    fn check_path(
        &self,
        check: &FileCheck,
        path: &Path,
        captures: &mut Captures,
    ) -> Result<Option<Seen>, StepError> {
        let shown = path.display();
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => Some(metadata),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(StepError::new(format!("{shown}: {err}"))),
        };
        let socket = |m: &std::fs::Metadata| m.file_type().is_socket();
        let found = match &metadata {
            None => "nothing",
            Some(m) if m.is_dir() => "a directory",
            Some(m) if m.is_file() => "a file",
            Some(m) if socket(m) => "a socket",
            Some(_) => "something other than a file, a directory or a socket",
        };
        let metadata = match (check.is, metadata) {
            (Entry::Absent, None) => return Ok(None),
            (Entry::File, Some(m)) if m.is_file() => m,
            (Entry::Dir, Some(m)) if m.is_dir() => m,
            (Entry::Socket, Some(m)) if socket(&m) => m,
            (is, _) => {
                let wanted = match is {
                    Entry::File => "a file",
                    Entry::Dir => "a directory",
                    Entry::Socket => "a socket",
                    Entry::Absent => "nothing",
                };
                return Err(StepError::new(format!(
                    "expected {wanted} at {shown}, found {found}"
                )));
            }
        };
        if let Some(mode) = &check.mode {
            let got = metadata.permissions().mode() & 0o7777;
            if format!("{got:04o}") != *mode {
                return Err(StepError::new(format!(
                    "{shown} has mode {got:04o}, expected {mode}"
                )));
            }
        }
        if let Some(locked) = check.locked {
            let held = held(path).map_err(|err| StepError::new(format!("{shown}: {err}")))?;
            if held != locked {
                return Err(StepError::new(if locked {
                    format!("no process holds a lock on {shown}")
                } else {
                    format!("a process still holds a lock on {shown}")
                }));
            }
        }
        let mut seen = Seen {
            ino: metadata.ino(),
            len: metadata.len(),
        };
        let earlier = self.seen.get(path).copied();
        if let Some(replaced) = check.replaced {
            let Some(earlier) = earlier else {
                return Err(StepError::new(format!(
                    "no earlier `file` step saw a file at {shown}"
                )));
            };
            if (seen.ino != earlier.ino) != replaced {
                return Err(StepError::new(if replaced {
                    format!(
                        "{shown} is still the file an earlier step saw (inode {}): it was \
                         written in place, or not at all, instead of being replaced",
                        seen.ino
                    )
                } else {
                    format!(
                        "{shown} was replaced (inode {} is now {})",
                        earlier.ino, seen.ino
                    )
                }));
            }
        }
        let Some(content) = &check.content else {
            return Ok(check.is.eq(&Entry::File).then_some(seen));
        };
        let text = if check.is == Entry::Dir {
            listing(path)?
        } else {
            let bytes;
            (seen, bytes) = read_whole(path, seen.ino)?;
            let from = match (check.appended, earlier) {
                (false, _) => 0,
                (true, Some(earlier)) if earlier.ino == seen.ino && earlier.len <= seen.len => {
                    usize::try_from(earlier.len).unwrap_or(usize::MAX)
                }
                (true, Some(earlier)) => {
                    return Err(StepError::new(format!(
                        "{shown} was not appended to: it was {} ({} bytes, inode {}), it is now \
                         {} bytes, inode {}",
                        if earlier.ino == seen.ino {
                            "shortened"
                        } else {
                            "replaced"
                        },
                        earlier.len,
                        earlier.ino,
                        seen.len,
                        seen.ino
                    )));
                }
                (true, None) => {
                    return Err(StepError::new(format!(
                        "no earlier `file` step saw a file at {shown}"
                    )));
                }
            };
            let tail = bytes.get(from..).unwrap_or_default();
            String::from_utf8(tail.to_vec())
                .map_err(|_| StepError::new(format!("{shown} is not UTF-8")))?
        };
        let document = match &check.document {
            Some(name) => Some(self.ctx.documents.get(name).ok_or_else(|| {
                StepError::new(format!("no schema of the document `{name}` was loaded"))
            })?),
            None => None,
        };
        let what = if check.appended {
            format!("what was appended to {shown}")
        } else {
            shown.to_string()
        };
        let judge = Judge {
            what: &what,
            document,
            now: self.window(),
        };
        judge.judge(Some(content), &text, captures)?;
        Ok(check.is.eq(&Entry::File).then_some(seen))
    }
}

/// Whether a process holds a lock on the file at `path`: a lock taken without waiting fails with
/// `WouldBlock` while another holds one; taken, it is given back at once.
fn held(path: &Path) -> std::io::Result<bool> {
    let file = std::fs::File::open(path)?;
    match file.try_lock() {
        Ok(()) => {
            file.unlock()?;
            Ok(false)
        }
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(err)) => Err(err),
    }
}

/// A file's bytes, and what was seen of it: the length of the bytes read, never the length a
/// `stat` saw before the read. A writer may append between the two (a daemon's log line, a
/// notification command's record), and what this step judged must be exactly what a later
/// `appended` step starts after: counted from an earlier `stat`, a line appended meanwhile
/// would be judged here and again there, as if written twice. `ino` is the file the step
/// looked at; one renamed over it since is said, and the step looks again.
fn read_whole(path: &Path, ino: u64) -> Result<(Seen, Vec<u8>), StepError> {
    let shown = path.display();
    let mut file =
        std::fs::File::open(path).map_err(|err| StepError::new(format!("{shown}: {err}")))?;
    let opened = file
        .metadata()
        .map_err(|err| StepError::new(format!("{shown}: {err}")))?;
    if opened.ino() != ino {
        return Err(StepError::new(format!(
            "{shown} was replaced while it was being read (inode {ino}, then {})",
            opened.ino()
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|err| StepError::new(format!("{shown}: {err}")))?;
    let seen = Seen {
        ino,
        len: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
    };
    Ok((seen, bytes))
}

/// A directory's entries: their names, sorted, each on its own line.
fn listing(dir: &Path) -> Result<String, StepError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|err| StepError::new(format!("{}: {err}", dir.display())))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names.iter().map(|name| format!("{name}\n")).collect())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A line appended after the step's `stat` and before its read is in what the step judged,
    /// and so in the length a later `appended` step starts after: judged once, not twice.
    #[test]
    fn a_lock_another_holds_is_seen_held_and_looking_takes_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slot-0.lock");
        std::fs::write(&path, "").unwrap();
        assert!(!held(&path).unwrap());
        let holder = std::fs::File::open(&path).unwrap();
        holder.lock().unwrap();
        assert!(held(&path).unwrap());
        assert!(held(&path).unwrap(), "looking did not take the lock away");
        drop(holder);
        assert!(!held(&path).unwrap(), "released with its holder");
        assert!(held(&dir.path().join("none")).is_err());
    }

    #[test]
    fn what_a_step_saw_is_what_it_read_not_what_an_earlier_stat_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify.log");
        std::fs::write(&path, "{\"pane\":\"%2\"}\n").unwrap();
        let stat = std::fs::metadata(&path).unwrap();
        let mut writer = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writer.write_all(b"{\"pane\":\"%1\"}\n").unwrap();
        let (seen, bytes) = read_whole(&path, stat.ino()).unwrap();
        assert_eq!(bytes, b"{\"pane\":\"%2\"}\n{\"pane\":\"%1\"}\n");
        assert_eq!(
            seen,
            Seen {
                ino: stat.ino(),
                len: 28
            }
        );
        assert_ne!(
            seen.len,
            stat.len(),
            "the stat's length would count %1 twice"
        );
        // A file whose stat says nothing of its length (as /proc's) is read whole all the same.
        let proc = Path::new("/proc/self/status");
        let stat = std::fs::metadata(proc).unwrap();
        assert_eq!(stat.len(), 0);
        let (seen, bytes) = read_whole(proc, stat.ino()).unwrap();
        assert_eq!(seen.len, u64::try_from(bytes.len()).unwrap());
        assert!(seen.len > 0);
    }

    #[test]
    fn a_file_replaced_between_the_stat_and_the_read_is_looked_at_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "old\n").unwrap();
        let stat = std::fs::metadata(&path).unwrap();
        let new = dir.path().join("f.new");
        std::fs::write(&new, "new\n").unwrap();
        std::fs::rename(&new, &path).unwrap();
        let err = read_whole(&path, stat.ino()).unwrap_err();
        assert!(
            err.message.contains("was replaced while it was being read"),
            "{}",
            err.message
        );
    }
}
