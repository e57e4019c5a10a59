//! The device store (`devices.toml`): reading, whole-file updates under a lock, and the stat memo
//! a live connection polls on every request and publish.
//!
//! Rules (wire-details "Host files"): an absent file is an empty store; a malformed one is a hard
//! error; the file is mode 0600 and written whole (`files::write_atomic`), so a reader never sees
//! half a store.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use schema::DeviceStore;

use crate::files;

/// Why the store could not be used.
#[derive(Debug)]
pub enum StoreError {
    /// The file exists but could not be read or written.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The file is not a valid device store.
    Malformed { path: PathBuf, message: String },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Io { path, error } => write!(f, "device store {}: {error}", path.display()),
            StoreError::Malformed { path, message } => {
                write!(
                    f,
                    "device store {} is malformed: {}",
                    path.display(),
                    message.trim()
                )
            }
        }
    }
}

impl std::error::Error for StoreError {}

/// The device store file.
#[derive(Debug, Clone)]
pub struct DeviceFile {
    path: PathBuf,
}

impl DeviceFile {
    /// The store at `path`.
    pub fn new(path: PathBuf) -> DeviceFile {
        DeviceFile { path }
    }

    /// Where the store lives.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the store; an absent file is an empty store.
    pub fn load(&self) -> Result<DeviceStore, StoreError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => parse(&self.path, &text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Ok(DeviceStore::default())
            }
            Err(error) => Err(self.io(error)),
        }
    }

    /// Reads, changes and writes the store under an exclusive lock, so two concurrent commands
    /// cannot lose each other's change.
    pub fn update<T, E: From<StoreError>>(
        &self,
        change: impl FnOnce(&mut DeviceStore) -> Result<T, E>,
    ) -> Result<T, E> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let _lock = files::lock(&self.path.with_extension("toml.lock")).map_err(|e| self.io(e))?;
        let mut store = self.load()?;
        let out = change(&mut store)?;
        self.save(&store)?;
        Ok(out)
    }

    /// Writes the store whole.
    fn save(&self, store: &DeviceStore) -> Result<(), StoreError> {
        let text = toml::to_string(store).map_err(|e| StoreError::Malformed {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        files::write_atomic(&self.path, text.as_bytes(), 0o600).map_err(|e| self.io(e))
    }

    fn io(&self, error: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            error,
        }
    }
}

fn parse(path: &Path, text: &str) -> Result<DeviceStore, StoreError> {
    toml::from_str(text).map_err(|e| StoreError::Malformed {
        path: path.to_owned(),
        message: crate::config::one_line(text, &e),
    })
}

/// The identity of the store file on disk; `None` when there is no file.
type Stamp = Option<(u64, u64, u64, i64, i64, i64, i64)>;

fn stamp(path: &Path) -> Result<Stamp, std::io::Error> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(Some((
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// The store as a live connection sees it: re-read only when the file's stat changes, so the
/// steady state costs one `stat` per request or publish.
#[derive(Debug)]
pub struct StoreWatch {
    file: DeviceFile,
    memo: Option<(Stamp, DeviceStore)>,
    loads: u64,
}

impl StoreWatch {
    /// Watches `file`; nothing is read until the first [`StoreWatch::current`].
    pub fn new(file: DeviceFile) -> StoreWatch {
        StoreWatch {
            file,
            memo: None,
            loads: 0,
        }
    }

    /// The store now.
    pub fn current(&mut self) -> Result<&DeviceStore, StoreError> {
        let now = stamp(&self.file.path).map_err(|e| self.file.io(e))?;
        let stale = !matches!(&self.memo, Some((seen, _)) if *seen == now);
        if stale {
            let store = match now {
                None => DeviceStore::default(),
                Some(_) => {
                    self.loads += 1;
                    self.file.load()?
                }
            };
            self.memo = Some((now, store));
        }
        Ok(&self.memo.as_ref().expect("memo was just filled").1)
    }

    /// The store as the last [`StoreWatch::current`] saw it, without touching the file.
    pub fn last(&self) -> Option<&DeviceStore> {
        self.memo.as_ref().map(|(_, store)| store)
    }

    /// How many times the file was read and parsed.
    #[cfg(test)]
    pub fn loads(&self) -> u64 {
        self.loads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_store_is_one_line_of_error_never_a_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("devices.toml");
        let good = b"[[device]]\nid = \"SHA256:abc\"\nname = \"phone\"\nscopes = [\"read\", \"act:answer\"]\npaired_at_ms = 1\n\n[[device]]\nid = \"fp2\"\nname = \"tablet\"\nscopes = []\npaired_at_ms = 2\n";
        let mut errors = 0;
        for bytes in testing::mutations(good, 11, 2000) {
            std::fs::write(&path, &bytes).unwrap();
            match DeviceFile::new(path.clone()).load() {
                Ok(store) => assert!(store.devices.len() <= 2),
                Err(err) => {
                    errors += 1;
                    assert!(!err.to_string().contains('\n'), "{err}");
                }
            }
        }
        assert!(errors > 1000, "most mutations break the store: {errors}");
    }
    use crate::testing;
    use schema::{DeviceRecord, Scope};

    /// Enrols a read-only device.
    fn enrol(file: &DeviceFile, name: &str, id: &str) -> DeviceRecord {
        testing::enrol(file, name, id, &[Scope::Read])
    }

    #[test]
    fn an_absent_file_is_an_empty_store() {
        let tmp = tempfile::tempdir().unwrap();
        let file = DeviceFile::new(tmp.path().join("devices.toml"));
        assert_eq!(file.load().unwrap(), DeviceStore::default());
    }

    #[test]
    fn a_malformed_file_is_a_hard_error() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("devices.toml");
        std::fs::write(&path, "[[device]]\nid = 5\n").unwrap();
        let err = DeviceFile::new(path).load().unwrap_err();
        assert!(matches!(err, StoreError::Malformed { .. }), "{err}");
        assert!(err.to_string().contains("is malformed"), "{err}");
    }

    #[test]
    fn updates_write_the_whole_file_with_mode_0600() {
        let tmp = tempfile::tempdir().unwrap();
        let file = DeviceFile::new(tmp.path().join("sub/devices.toml"));
        let phone = enrol(&file, "phone", "fp1");
        let mode = std::fs::metadata(file.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(file.load().unwrap().devices, vec![phone]);
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp."))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    /// Written whole: the new store is a new file renamed over the old one, so a reader that
    /// opened the old store reads all of it, never a truncated or half-written file. An in-place
    /// rewrite keeps the inode and shows that reader the new bytes (or none).
    #[test]
    fn an_update_replaces_the_file_instead_of_rewriting_it_in_place() {
        use std::io::Read;

        let tmp = tempfile::tempdir().unwrap();
        let file = DeviceFile::new(tmp.path().join("devices.toml"));
        enrol(&file, "phone", "fp1");
        let before = std::fs::read_to_string(file.path()).unwrap();
        let inode = std::fs::metadata(file.path()).unwrap().ino();
        let mut reader = std::fs::File::open(file.path()).unwrap();

        enrol(&file, "tablet", "fp2");

        assert_ne!(
            std::fs::metadata(file.path()).unwrap().ino(),
            inode,
            "a new file took the store's name"
        );
        let mut seen = String::new();
        reader.read_to_string(&mut seen).unwrap();
        assert_eq!(seen, before, "the old store stays whole for its reader");
        assert_eq!(file.load().unwrap().devices.len(), 2);
    }

    #[test]
    fn concurrent_updates_lose_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("devices.toml");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let file = DeviceFile::new(path.clone());
                std::thread::spawn(move || {
                    enrol(&file, &format!("d{i}"), &format!("fp{i}"));
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(DeviceFile::new(path).load().unwrap().devices.len(), 8);
    }

    #[test]
    fn an_unchanged_store_is_not_read_again() {
        let tmp = tempfile::tempdir().unwrap();
        let file = DeviceFile::new(tmp.path().join("devices.toml"));
        enrol(&file, "phone", "fp1");
        let mut watch = StoreWatch::new(file.clone());
        for _ in 0..5 {
            assert!(watch.current().unwrap().by_id("fp1").is_some());
        }
        assert_eq!(watch.loads(), 1, "the steady state is one stat, no read");
        file.update(|s| {
            s.devices[0].scopes.push(Scope::ActSteer);
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert_eq!(watch.current().unwrap().devices[0].scopes.len(), 2);
        assert_eq!(watch.loads(), 2);
    }

    #[test]
    fn the_watch_sees_a_revocation_and_an_absent_file() {
        let tmp = tempfile::tempdir().unwrap();
        let file = DeviceFile::new(tmp.path().join("devices.toml"));
        let mut watch = StoreWatch::new(file.clone());
        assert!(watch.current().unwrap().devices.is_empty());
        enrol(&file, "phone", "fp1");
        assert!(watch.current().unwrap().by_id("fp1").is_some());
        file.update(|s| {
            s.devices.clear();
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert!(watch.current().unwrap().by_id("fp1").is_none());
        std::fs::remove_file(file.path()).unwrap();
        assert!(watch.current().unwrap().devices.is_empty());
    }
}
