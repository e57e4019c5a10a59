//! The host's lock files from outside: a lock the test holds as another host process would, and
//! the locks a process holds or waits for.

use std::path::Path;

/// An exclusive lock on one of the host's lock files, held by the test as another host process
/// would hold it, until dropped. Its dir is made 0700 and the file 0600, as the host makes them.
#[derive(Debug)]
pub struct Held {
    _file: std::fs::File,
}

/// Takes the lock on `path` (waiting for it).
pub fn hold(path: &Path) -> Held {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

    let dir = path.parent().unwrap();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .unwrap();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    file.lock().unwrap();
    Held { _file: file }
}

/// The flock locks process `pid` holds, and those it waits for (`/proc/locks`).
pub fn locks_of(pid: u32) -> (usize, usize) {
    let pid = pid.to_string();
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    let mine = locks
        .lines()
        .filter(|line| line.split_whitespace().nth_back(3) == Some(pid.as_str()));
    mine.fold((0, 0), |(held, waiting), line| {
        if line.contains("->") {
            (held, waiting + 1)
        } else {
            (held + 1, waiting)
        }
    })
}
