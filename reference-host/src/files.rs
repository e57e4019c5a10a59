//! Files that several host processes share, written and locked one way: an exclusive lock the
//! kernel releases when its holder dies (no pid files, no expiry heuristics), a whole-file write a
//! reader never sees half done, and private dirs and files whose mode does not depend on the
//! umask. The device store and the serve slots use them today; the ledger, pane locks, verdicts
//! and markers are next.
//!
//! Rule: every directory the host makes is created with an explicit mode, set again after
//! creation so no umask can widen or narrow it; a file or directory the host must trust is
//! checked for another user's hand ([`writable_by_others`]) before it is used.

use std::cell::OnceCell;
use std::fs::{File, OpenOptions, Permissions, TryLockError};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The longest path a unix socket's address holds (`sun_path`, 108 bytes with its NUL).
pub const SOCKET_PATH_MAX: usize = 107;

/// The addresses of unix sockets in one directory (the daemon's, the push listeners'). A socket's
/// address holds at most [`SOCKET_PATH_MAX`] bytes, which a deep runtime dir (a long
/// `XDG_RUNTIME_DIR` or `TMPDIR`) passes; such a socket is addressed through a handle of its
/// directory instead, `/proc/self/fd/<n>/<name>`, which the kernel resolves to the same file.
/// The handle is opened once, when a name first needs it, and lives as long as this value.
#[derive(Debug)]
pub struct SocketDir {
    dir: PathBuf,
    handle: OnceCell<OwnedFd>,
}

impl SocketDir {
    /// The sockets of `dir`.
    pub fn new(dir: &Path) -> SocketDir {
        SocketDir {
            dir: dir.to_owned(),
            handle: OnceCell::new(),
        }
    }

    /// The sockets of the directory `path` is in, and its name there.
    pub fn of(path: &Path) -> io::Result<(SocketDir, String)> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io::Error::other(format!(
                "{} names no socket in a directory",
                path.display()
            )));
        };
        Ok((SocketDir::new(dir), name.to_string_lossy().into_owned()))
    }

    /// The address to bind, connect or send to for the socket `name`: good while this value
    /// lives (it may name the directory through its handle).
    pub fn address(&self, name: &str) -> io::Result<Address<'_>> {
        let path = self.dir.join(name);
        if path.as_os_str().len() <= SOCKET_PATH_MAX {
            return Ok(Address { path, _dir: self });
        }
        let handle = match self.handle.get() {
            Some(handle) => handle,
            None => {
                use rustix::fs::{Mode, OFlags};
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                let opened = rustix::fs::open(&self.dir, flags, Mode::empty())?;
                self.handle.get_or_init(|| opened)
            }
        };
        Ok(Address {
            path: PathBuf::from(format!("/proc/self/fd/{}/{name}", handle.as_raw_fd())),
            _dir: self,
        })
    }
}

/// A socket's address in a [`SocketDir`], which it borrows: the handle it may name through
/// stays open as long as the address is in use.
#[derive(Debug)]
pub struct Address<'a> {
    path: PathBuf,
    _dir: &'a SocketDir,
}

impl AsRef<Path> for Address<'_> {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// An exclusive lock on a lock file, held until this guard is dropped or the process dies.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Waits for the exclusive lock on the lock file at `path`, creating it (0600) if absent.
pub fn lock(path: &Path) -> io::Result<Lock> {
    let file = open_lock_file(path)?;
    file.lock()?;
    Ok(Lock { _file: file })
}

/// Takes the exclusive lock on the lock file at `path` if nobody holds it; `None` if someone does.
pub fn try_lock(path: &Path) -> io::Result<Option<Lock>> {
    let file = open_lock_file(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(Lock { _file: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(err)) => Err(err),
    }
}

/// Waits up to `patience` for the exclusive lock on the lock file at `path` (creating it and its
/// dir, private); `None` when someone else held it all that time.
pub fn lock_within(path: &Path, patience: std::time::Duration) -> io::Result<Option<Lock>> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let deadline = std::time::Instant::now() + patience;
    loop {
        if let Some(lock) = try_lock(path)? {
            return Ok(Some(lock));
        }
        if std::time::Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Creates `path` exclusively with `bytes`, mode 0600 (its dir created private): fails with
/// `AlreadyExists` when the file is there, so two writers can never both succeed.
///
/// A file whose bytes could not all be written (a full disk) is removed again: the exclusive
/// create made it this writer's, a reader cannot act on a part of a JSON document, and left
/// behind it would turn every later writer away. Once written whole a reader may have acted on
/// it, so a failed sync leaves it in place.
pub fn create_exclusive(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let mut file = create_new(path, 0o600)?;
    if let Err(err) = file.write_all(bytes) {
        let _ = std::fs::remove_file(path);
        return Err(err);
    }
    file.sync_all()
}

/// Opens `path` for appending, creating it if absent; either way it ends up exactly `mode`,
/// whatever the umask.
pub fn open_append(path: &Path, mode: u32) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(mode)
        .open(path)?;
    ensure_mode(&file, mode)?;
    Ok(file)
}

/// Creates the file `path` for writing, exactly `mode` whatever the umask; fails with
/// `AlreadyExists` when it is there.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    ensure_mode(&file, mode)?;
    Ok(file)
}

/// Creates `dir` and every missing parent with exactly `mode`, whatever the umask. Existing
/// directories are left as they are.
pub fn create_dirs(dir: &Path, mode: u32) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dirs(parent, mode)?;
    }
    match std::fs::DirBuilder::new().mode(mode).create(dir) {
        // The umask may have taken bits away from `mode` (it can never add any).
        Ok(()) => std::fs::set_permissions(dir, Permissions::from_mode(mode)),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(err) => Err(err),
    }
}

/// This process's user: the owner of every file it creates.
fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Why another user could change `path`, whose metadata is `meta`: it belongs to someone other
/// than this user or root, or group or others may write it. `None` when only this user (or root)
/// can. The reason names the path and the command that fixes it.
pub fn writable_by_others(path: &Path, meta: &std::fs::Metadata) -> Option<String> {
    exposure(path, meta.uid(), meta.mode(), me(), false)
}

/// Like [`writable_by_others`] for the directory that holds something the host must trust: a
/// directory others may write is fine when it is sticky (`/tmp`), since then only an entry's
/// owner can rename or remove it.
pub fn lets_others_replace_entries(dir: &Path, meta: &std::fs::Metadata) -> Option<String> {
    exposure(dir, meta.uid(), meta.mode(), me(), true)
}

fn exposure(path: &Path, owner: u32, mode: u32, me: u32, sticky_ok: bool) -> Option<String> {
    let shown = path.display();
    if owner != me && owner != 0 {
        return Some(format!(
            "{shown} belongs to uid {owner}, not to this user (uid {me}) or root, so its owner can change it: remove it, or `chown {me} {shown}`"
        ));
    }
    let writers = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (false, false) => return None,
        (true, false) => "its group",
        (false, true) => "others",
        (true, true) => "its group and others",
    };
    if sticky_ok && mode & 0o1000 != 0 {
        return None;
    }
    Some(format!(
        "{shown} is writable by {writers} (mode {:04o}), so another user could change it: run `chmod go-w {shown}`",
        mode & 0o7777
    ))
}

/// Why others may read `path` (group or other read bits), for a warning; `None` when they may
/// not.
pub fn readable_by_others(path: &Path, meta: &std::fs::Metadata) -> Option<String> {
    let mode = meta.mode();
    (mode & 0o044 != 0).then(|| {
        format!(
            "{} is readable by other users (mode {:04o}): run `chmod 600 {}`",
            path.display(),
            mode & 0o7777,
            path.display()
        )
    })
}

/// A log path as configured: a leading `~/` is the home dir.
pub fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if path == "~" => home.map_or_else(|| PathBuf::from(path), Path::to_owned),
        _ => PathBuf::from(path),
    }
}

/// Appends one line to the log at `path` (its parent dirs created, the file created 0600, never
/// rewritten). A log that cannot be written is skipped: a log must never stop what it records.
pub fn append_log(path: &Path, line: &str) {
    let write = || -> io::Result<()> {
        if let Some(dir) = path.parent() {
            create_dirs(dir, 0o700)?;
        }
        let mut file = open_append(path, 0o600)?;
        let mut bytes = line.trim_end_matches('\n').as_bytes().to_vec();
        bytes.push(b'\n');
        file.write_all(&bytes)
    };
    if let Err(err) = write() {
        tracing::debug!(path = %path.display(), %err, "log not written");
    }
}

fn open_lock_file(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)?;
    ensure_mode(&file, 0o600)?;
    Ok(file)
}

/// Replaces the file at `path` with `bytes`, mode `mode`: a temp file in the same dir, fsync,
/// rename over `path`, fsync the dir. A reader sees the old file or the new one, never a mix;
/// a reader that opened the old file keeps reading all of it.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_whole(path, bytes, mode, true)
}

/// Replaces the cache file at `path` with `bytes`, mode `mode`: a file worth nothing after a
/// crash, rewritten often. Nothing is synced, and the old file is removed before the new one is
/// renamed to its name, so a reader sees the old file whole, the new one whole, or, for a few
/// microseconds, none: the caller holds a lock that a reader who finds none takes before it
/// looks again.
///
/// Removing it first keeps the data off the disk. On ext4 (its default `auto_da_alloc`: Linux
/// commit afd4672dc761, "ext4: Add auto_da_alloc mount option") a rename over an existing file
/// starts writing the new file's blocks at once, so a cache of 28 KB rewritten every 2 s wrote
/// 28 KB to the disk every 2 s. Renamed to a free name, its pages stay in memory and are freed
/// with it when the next write replaces it, long before the kernel's writeback would flush them.
pub fn replace(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_whole(path, bytes, mode, false)
}

/// A temp file beside `path`, renamed to it; `durable`: synced, renamed over the old file, and
/// the rename synced too; else the old file is removed first ([`replace`]).
fn write_whole(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> io::Result<()> {
    let temp = temp_beside(path);
    let write = || -> io::Result<()> {
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(mode)
            .open(&temp)?;
        ensure_mode(&file, mode)?;
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        } else {
            match std::fs::remove_file(path) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
        }
        std::fs::rename(&temp, path)?;
        if durable && let Some(dir) = path.parent() {
            // Make the rename itself durable; not every platform allows syncing a directory.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// `<name>.tmp.<pid>.<n>` beside `path`: unique across processes and across threads.
fn temp_beside(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(
        ".tmp.{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    path.with_file_name(name)
}

/// Creates `dir` (and any missing parent) mode 0700 whatever the umask, and makes an existing
/// one that others may only read 0700. Refuses one that another user owns (`/tmp` is shared) or
/// that group or others may write: what is in it may not be ours, and making it private now
/// would not undo that.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    create_dirs(dir, 0o700)?;
    let meta = std::fs::metadata(dir)?;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
    let me = me();
    if meta.uid() != me {
        return refuse(format!(
            "{} belongs to uid {}, not to this user (uid {me}): remove it, or point corral elsewhere",
            dir.display(),
            meta.uid()
        ));
    }
    if let Some(why) = writable_by_others(dir, &meta) {
        return refuse(format!(
            "{why} (and check what is in it first: another user may have put files there)"
        ));
    }
    if meta.permissions().mode() & 0o777 != 0o700 {
        std::fs::set_permissions(dir, Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Gives an open file exactly `mode`: the mode passed at creation is masked by the umask.
fn ensure_mode(file: &File, mode: u32) -> io::Result<()> {
    if file.metadata()?.permissions().mode() & 0o777 != mode {
        file.set_permissions(Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_timed_lock_gives_up_after_its_patience() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("locks/p.lock");
        let held = lock_within(&path, std::time::Duration::ZERO)
            .unwrap()
            .unwrap();
        let started = std::time::Instant::now();
        let again = lock_within(&path, std::time::Duration::from_millis(100)).unwrap();
        assert!(again.is_none());
        assert!(started.elapsed() >= std::time::Duration::from_millis(100));
        drop(held);
        assert!(
            lock_within(&path, std::time::Duration::ZERO)
                .unwrap()
                .is_some()
        );
        assert_eq!(mode(&tmp.path().join("locks")), 0o700);
    }

    #[test]
    fn an_exclusive_create_succeeds_once() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("verdicts/v");
        create_exclusive(&path, b"one").unwrap();
        let err = create_exclusive(&path, b"two").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn a_log_is_appended_0600_with_its_dirs_and_an_unwritable_one_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/act.log");
        append_log(&path, "{\"n\":1}");
        append_log(&path, "{\"n\":2}\n");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n"
        );
        assert_eq!(mode(&path), 0o600);
        append_log(Path::new("/proc/no/such/log"), "x");
        assert_eq!(
            expand_home("~/logs/a.log", Some(Path::new("/h"))),
            PathBuf::from("/h/logs/a.log")
        );
        assert_eq!(
            expand_home("/abs", Some(Path::new("/h"))),
            PathBuf::from("/abs")
        );
    }

    #[test]
    fn a_lock_is_exclusive_until_its_guard_drops() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.lock");
        let held = lock(&path).unwrap();
        assert!(try_lock(&path).unwrap().is_none());
        drop(held);
        assert!(try_lock(&path).unwrap().is_some());
        assert_eq!(mode(&path), 0o600);
    }

    /// A whole-file writer.
    type Writer = fn(&Path, &[u8], u32) -> io::Result<()>;

    /// The two whole-file writers: synced, and not (a cache's).
    const WRITERS: [Writer; 2] = [write_atomic, replace];

    #[test]
    fn a_write_gives_exactly_the_mode_asked_for_and_leaves_no_temp_file() {
        for write in WRITERS {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("f");
            // 0666 would come out 0644 under the usual umask, were the mode left to creation.
            write(&path, b"one", 0o666).unwrap();
            assert_eq!(mode(&path), 0o666);
            write(&path, b"two", 0o600).unwrap();
            assert_eq!(mode(&path), 0o600);
            assert_eq!(std::fs::read(&path).unwrap(), b"two");
            let names: Vec<_> = std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["f"]);
        }
    }

    /// A new file is renamed over the old one, so a reader that opened the old file reads all of
    /// it, never a truncated or half-written file. An in-place rewrite keeps the inode and shows
    /// that reader the new bytes (or none).
    #[test]
    fn a_write_replaces_the_file_instead_of_rewriting_it_in_place() {
        use std::io::Read;

        for write in WRITERS {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("f");
            write(&path, b"old", 0o600).unwrap();
            let inode = std::fs::metadata(&path).unwrap().ino();
            let mut reader = File::open(&path).unwrap();

            write(&path, b"new", 0o600).unwrap();

            assert_ne!(
                std::fs::metadata(&path).unwrap().ino(),
                inode,
                "a new file took the name"
            );
            let mut seen = String::new();
            reader.read_to_string(&mut seen).unwrap();
            assert_eq!(seen, "old", "the old file stays whole for its reader");
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp_file() {
        for write in WRITERS {
            failed_write_leaves_nothing(write);
        }
    }

    fn failed_write_leaves_nothing(write: Writer) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("dir");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), "x").unwrap();
        // Renaming a file over a non-empty dir fails after the temp file was written.
        assert!(write(&path, b"bytes", 0o600).is_err());
        assert!(path.join("inside").exists());
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["dir"]);
    }

    /// A made directory and each missing parent have exactly the mode asked for (the umask's
    /// part is tested in tests/it/permissions.rs: changing it here would change it for every
    /// test running beside this one).
    #[test]
    fn directories_are_made_with_their_mode_and_existing_ones_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        create_dirs(&tmp.path().join("a/b/c"), 0o700).unwrap();
        for dir in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&tmp.path().join(dir)), 0o700, "{dir}");
        }
        std::fs::set_permissions(tmp.path().join("a"), Permissions::from_mode(0o755)).unwrap();
        create_dirs(&tmp.path().join("a/b/c"), 0o700).unwrap();
        assert_eq!(
            mode(&tmp.path().join("a")),
            0o755,
            "an existing dir is left alone"
        );
    }

    #[test]
    fn whoever_but_this_user_or_root_can_write_is_named_with_its_fix() {
        let path = Path::new("/x/devices.toml");
        assert_eq!(exposure(path, 1000, 0o100600, 1000, false), None);
        assert_eq!(exposure(path, 0, 0o100644, 1000, false), None, "root's");
        let other = exposure(path, 1001, 0o100600, 1000, false).unwrap();
        assert!(
            other.contains("belongs to uid 1001") && other.contains("chown 1000 /x/devices.toml"),
            "{other}"
        );
        let group = exposure(path, 1000, 0o100664, 1000, false).unwrap();
        assert!(
            group.contains("writable by its group (mode 0664)")
                && group.contains("chmod go-w /x/devices.toml"),
            "{group}"
        );
        let all = exposure(Path::new("/x"), 1000, 0o040777, 1000, true).unwrap();
        assert!(all.contains("its group and others (mode 0777)"), "{all}");
        assert_eq!(
            exposure(Path::new("/tmp"), 0, 0o041777, 1000, true),
            None,
            "a sticky shared dir lets nobody replace another's entry"
        );
        assert!(exposure(Path::new("/tmp"), 0, 0o041777, 1000, false).is_some());
    }

    #[test]
    fn private_dirs_are_0700() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700, "an open dir is made private");
        std::fs::set_permissions(&dir, Permissions::from_mode(0o500)).unwrap();
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700, "a dir missing owner bits is given them");
        for open in [0o777, 0o770, 0o702] {
            std::fs::set_permissions(&dir, Permissions::from_mode(open)).unwrap();
            let err = create_private_dir(&dir).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
            assert!(
                err.to_string()
                    .contains(&format!("chmod go-w {}", dir.display())),
                "{err}"
            );
            assert_eq!(
                mode(&dir),
                open,
                "a dir others could write is refused, not made private"
            );
        }
    }
}
