//! The connection cap across every serve process of the host: `max_connections` lock files in
//! `<runtime>/serve/`; a process holds one for its lifetime. The OS drops a dead process's lock,
//! so its slot is reclaimed without any cleanup.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A claimed connection slot; released when dropped or when the process dies.
#[derive(Debug)]
pub struct Slot {
    _lock: File,
    /// Which slot, for the log.
    pub index: u32,
}

/// Claims a free slot of `max`, or `None` when all are taken.
pub fn claim(runtime_dir: &Path, max: u32) -> std::io::Result<Option<Slot>> {
    let dir = runtime_dir.join("serve");
    std::fs::create_dir_all(&dir)?;
    for index in 0..max {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join(format!("slot-{index}.lock")))?;
        match file.try_lock() {
            Ok(()) => return Ok(Some(Slot { _lock: file, index })),
            Err(TryLockError::WouldBlock) => continue,
            Err(TryLockError::Error(err)) => return Err(err),
        }
    }
    Ok(None)
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
}
