//! The connection cap across every serve process of the host: `max_connections` lock files
//! `slot-<n>.lock`; a process holds one for its lifetime. The kernel drops a dead process's lock,
//! so its slot is reclaimed without any cleanup. A slot file that cannot be used is passed over
//! with a warning; the claim fails, naming it, only when no other slot is free.

use std::path::Path;

use crate::files::{self, Lock};

/// A claimed connection slot; released when dropped or when the process dies.
#[derive(Debug)]
pub struct Slot {
    _lock: Lock,
    /// Which slot, for the log.
    pub index: u32,
}

/// Claims a free slot of `max` among the lock files in `dir`, or `None` when all are taken. An
/// error names the file (or dir) it is about.
pub fn claim(dir: &Path, max: u32) -> std::io::Result<Option<Slot>> {
    files::create_private_dir(dir).map_err(|err| named(dir, &err))?;
    let mut unusable = None;
    for index in 0..max {
        let path = dir.join(format!("slot-{index}.lock"));
        match files::try_lock(&path) {
            Ok(Some(lock)) => return Ok(Some(Slot { _lock: lock, index })),
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "passing over a slot file that cannot be used");
                unusable.get_or_insert_with(|| named(&path, &err));
            }
        }
    }
    unusable.map_or(Ok(None), Err)
}

fn named(path: &Path, err: &std::io::Error) -> std::io::Error {
    std::io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_run_out_at_the_cap_and_come_back_when_released() {
        let tmp = tempfile::tempdir().unwrap();
        let a = claim(tmp.path(), 2).unwrap().unwrap();
        let b = claim(tmp.path(), 2).unwrap().unwrap();
        assert_ne!(a.index, b.index);
        assert!(claim(tmp.path(), 2).unwrap().is_none());
        drop(a);
        let c = claim(tmp.path(), 2).unwrap().unwrap();
        assert_eq!(c.index, 0);
        assert!(
            claim(tmp.path(), 3).unwrap().is_some(),
            "a raised cap opens a new slot"
        );
    }

    /// A slot file that cannot be used (here a directory took its name) is passed over for the
    /// free ones; only when no slot is free does the claim fail, naming the file.
    #[test]
    fn an_unusable_slot_file_is_skipped_and_named_when_nothing_else_is_free() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("slot-0.lock")).unwrap();
        let slot = claim(tmp.path(), 2).unwrap().unwrap();
        assert_eq!(slot.index, 1);
        let err = claim(tmp.path(), 2).unwrap_err();
        let path = tmp.path().join("slot-0.lock");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        drop(slot);
        assert_eq!(claim(tmp.path(), 1).unwrap_err().kind(), err.kind());
    }
}
