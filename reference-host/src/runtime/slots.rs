//! The connection cap across every serve process of the host: `max_connections` lock files
//! `slot-<n>.lock`; a process holds one for its lifetime. The kernel drops a dead process's lock,
//! so its slot is reclaimed without any cleanup.

use std::path::Path;

use crate::files::{self, Lock};

/// A claimed connection slot; released when dropped or when the process dies.
#[derive(Debug)]
pub struct Slot {
    _lock: Lock,
    /// Which slot, for the log.
    pub index: u32,
}

/// Claims a free slot of `max` among the lock files in `dir`, or `None` when all are taken.
pub fn claim(dir: &Path, max: u32) -> std::io::Result<Option<Slot>> {
    files::create_private_dir(dir)?;
    for index in 0..max {
        if let Some(lock) = files::try_lock(&dir.join(format!("slot-{index}.lock")))? {
            return Ok(Some(Slot { _lock: lock, index }));
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
