//! The device store (`devices.toml`): reading, whole-file updates under a lock, and the stat memo
//! a live connection polls on every request and publish.
//!
//! Rules (docs/protocol.md "Device store"): an absent file is an empty store; a malformed one,
//! including one that repeats a device's id or name, is a hard error; the file is mode 0600 and
//! written whole (`files::write_atomic`), so a reader never sees half a store; a rewrite keeps the
//! keys it does not know. A store that another user could change (the file, or the directory it
//! is in) is refused like a malformed one: whoever can write it can enrol a device. Its directory
//! is made 0700 whatever the umask.

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
    /// Another user could change the store: `why` names the file or directory and the fix.
    Exposed { path: PathBuf, why: String },
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
            StoreError::Exposed { path, why } => write!(
                f,
                "device store {} refused: {why}; whoever can change it can enrol a device",
                path.display()
            ),
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
        Ok(self
            .load_text()?
            .map_or_else(DeviceStore::default, |(store, _)| store))
    }

    /// The store and the text it was read from; `None` when there is no file. The file read is
    /// the file checked: refused when another user could change it or its directory, and
    /// warned about when others can read it.
    fn load_text(&self) -> Result<Option<(DeviceStore, String)>, StoreError> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(self.io(error)),
        };
        let meta = file.metadata().map_err(|e| self.io(e))?;
        if let Some(why) = files::writable_by_others(&self.path, &meta) {
            return Err(self.exposed(why));
        }
        self.check_dir()?;
        if let Some(why) = files::readable_by_others(&self.path, &meta) {
            tracing::warn!("the device store: {why}");
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(|e| self.io(e))?;
        Ok(Some((parse(&self.path, &text)?, text)))
    }

    /// The directory the store is in: whoever can write it can replace the store.
    fn check_dir(&self) -> Result<(), StoreError> {
        let dir = self.dir();
        let meta = std::fs::metadata(dir).map_err(|e| self.io(e))?;
        match files::lets_others_replace_entries(dir, &meta) {
            Some(why) => Err(self.exposed(why)),
            None => Ok(()),
        }
    }

    fn dir(&self) -> &Path {
        self.path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    }

    fn exposed(&self, why: String) -> StoreError {
        StoreError::Exposed {
            path: self.path.clone(),
            why,
        }
    }

    /// Reads, changes and writes the store under an exclusive lock, so two concurrent commands
    /// cannot lose each other's change.
    pub fn update<T, E: From<StoreError>>(
        &self,
        change: impl FnOnce(&mut DeviceStore) -> Result<T, E>,
    ) -> Result<T, E> {
        files::create_dirs(self.dir(), 0o700).map_err(|e| self.io(e))?;
        self.check_dir()?;
        let _lock = files::lock(&self.path.with_extension("toml.lock")).map_err(|e| self.io(e))?;
        let (mut store, before) = self.load_text()?.unwrap_or_default();
        let out = change(&mut store)?;
        self.save(&store, &before)?;
        Ok(out)
    }

    /// Writes the store whole, keeping what `before` (the text it was read from) holds beyond
    /// the known keys: top-level keys, and each remaining record's own (matched by id, which is
    /// unique).
    fn save(&self, store: &DeviceStore, before: &str) -> Result<(), StoreError> {
        let unwritable = |message: String| StoreError::Malformed {
            path: self.path.clone(),
            message,
        };
        // `before` parsed as a store, so it is TOML.
        let mut document: toml::Table = before.parse().unwrap_or_default();
        let mut old: Vec<toml::Table> = match document.remove("device") {
            Some(toml::Value::Array(records)) => records
                .into_iter()
                .filter_map(|record| match record {
                    toml::Value::Table(table) => Some(table),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let records = store
            .devices
            .iter()
            .map(|record| {
                let known = toml::Table::try_from(record).map_err(|e| unwritable(e.to_string()))?;
                let at = old.iter().position(|table| {
                    table.get("id").and_then(toml::Value::as_str) == Some(&record.id)
                });
                let mut table = at.map(|at| old.swap_remove(at)).unwrap_or_default();
                table.extend(known);
                Ok(toml::Value::Table(table))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        document.insert("device".into(), toml::Value::Array(records));
        let known = toml::Table::try_from(store).map_err(|e| unwritable(e.to_string()))?;
        // Written from the types when nothing unknown is kept, so the keys keep their order.
        let text = if document == known {
            toml::to_string(store)
        } else {
            toml::to_string(&document)
        }
        .map_err(|e| unwritable(e.to_string()))?;
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
    let malformed = |message| StoreError::Malformed {
        path: path.to_owned(),
        message,
    };
    let store: DeviceStore =
        toml::from_str(text).map_err(|e| malformed(crate::config::one_line(text, &e)))?;
    unique(&store, text).map_err(malformed)?;
    Ok(store)
}

/// Refuses two records with one id (the second would outlive a revocation of the first) or one
/// name (a command naming it could not tell them apart), pointing at both: their positions, names
/// and, when every record has its own `[[device]]` line, their lines.
fn unique(store: &DeviceStore, text: &str) -> Result<(), String> {
    let headers: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with("[[device]]"))
        .map(|(at, _)| at + 1)
        .collect();
    let lines_known = headers.len() == store.devices.len();
    let record = |at: usize| {
        let name = &store.devices[at].name;
        match lines_known {
            true => format!("{} ({name:?}, line {})", at + 1, headers[at]),
            false => format!("{} ({name:?})", at + 1),
        }
    };
    for (i, a) in store.devices.iter().enumerate() {
        for (j, b) in store.devices.iter().enumerate().skip(i + 1) {
            let shared = if a.id == b.id {
                format!("the id {:?}", a.id)
            } else if a.name == b.name {
                format!("the name {:?}", a.name)
            } else {
                continue;
            };
            return Err(format!(
                "[[device]] records {} and {} share {shared}; ids and names are unique in the store: remove or rename one of them by hand",
                record(i),
                record(j)
            ));
        }
    }
    Ok(())
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

    /// Two records of one device would answer `by_id` with the first and leave the second
    /// connectable after the first is revoked: a store that repeats an id or a name is malformed,
    /// and the error points at both records.
    #[test]
    fn a_repeated_id_or_name_makes_the_store_malformed() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("devices.toml");
        let record = |id: &str, name: &str| {
            format!(
                "[[device]]\nid = \"{id}\"\nname = \"{name}\"\nscopes = [\"read\"]\npaired_at_ms = 1\n\n"
            )
        };
        for (text, needle) in [
            (
                record("fp1", "phone") + &record("fp2", "tablet") + &record("fp1", "old"),
                "records 1 (\"phone\", line 1) and 3 (\"old\", line 13) share the id \"fp1\"",
            ),
            (
                record("fp1", "phone") + &record("fp2", "phone"),
                "records 1 (\"phone\", line 1) and 2 (\"phone\", line 7) share the name \"phone\"",
            ),
        ] {
            std::fs::write(&path, &text).unwrap();
            let err = DeviceFile::new(path.clone()).load().unwrap_err();
            assert!(matches!(err, StoreError::Malformed { .. }), "{err}");
            let message = err.to_string();
            assert!(message.contains(needle), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
        }
    }

    /// A key this build does not know, a newer corral's or a person's note, survives a rewrite;
    /// a removed record takes its keys with it.
    #[test]
    fn an_update_keeps_keys_it_does_not_know() {
        let tmp = tempfile::tempdir().unwrap();
        let file = DeviceFile::new(tmp.path().join("devices.toml"));
        std::fs::write(
            file.path(),
            "owner = \"ana\"\n\n[[device]]\nid = \"fp1\"\nname = \"phone\"\nscopes = [\"read\"]\npaired_at_ms = 1\nnote = \"the blue one\"\nexpires_at = 1979-05-27T07:32:00Z\n\n[device.limits]\npanes = 3\n\n[[device]]\nid = \"fp2\"\nname = \"tablet\"\nscopes = []\npaired_at_ms = 2\nnote = \"gone soon\"\n",
        )
        .unwrap();
        file.update(|s| {
            s.devices[0].scopes.push(Scope::ActSteer);
            s.devices.retain(|d| d.name != "tablet");
            s.devices.push(DeviceRecord {
                id: "fp3".into(),
                name: "watch".into(),
                scopes: vec![Scope::Read],
                paired_at_ms: 3,
            });
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let text = std::fs::read_to_string(file.path()).unwrap();
        let raw: toml::Table = text.parse().unwrap();
        assert_eq!(raw["owner"].as_str(), Some("ana"), "{text}");
        let records = raw["device"].as_array().unwrap();
        assert_eq!(records.len(), 2, "{text}");
        let phone = records[0].as_table().unwrap();
        assert_eq!(phone["note"].as_str(), Some("the blue one"), "{text}");
        assert_eq!(
            phone["expires_at"].as_datetime().map(ToString::to_string),
            Some("1979-05-27T07:32:00Z".into()),
            "{text}"
        );
        assert_eq!(phone["limits"]["panes"].as_integer(), Some(3), "{text}");
        assert_eq!(
            phone["scopes"].as_array().unwrap().len(),
            2,
            "known keys take the new values"
        );
        assert!(!text.contains("gone soon"), "{text}");
        let watch = records[1].as_table().unwrap();
        assert_eq!(
            watch.len(),
            4,
            "a new record has the known keys only: {text}"
        );
        let store = file.load().unwrap();
        assert_eq!(store.devices.len(), 2);
        assert_eq!(store.devices[1].id, "fp3");
    }

    /// Whoever can change the store can enrol a device: a store file or directory that group or
    /// others may write is refused with the fix; one they may only read is used.
    #[test]
    fn a_store_others_could_change_is_refused_and_its_dir_is_made_private() {
        use std::os::unix::fs::PermissionsExt;

        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("config/corral");
        let file = DeviceFile::new(dir.join("devices.toml"));
        enrol(&file, "phone", "fp1");
        for made in [tmp.path().join("config"), dir.clone()] {
            let mode = std::fs::metadata(&made).unwrap().mode() & 0o7777;
            assert_eq!(mode, 0o700, "{}", made.display());
        }
        let chmod = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };

        chmod(file.path(), 0o644);
        assert_eq!(
            file.load().unwrap().devices.len(),
            1,
            "readable is a warning"
        );
        chmod(file.path(), 0o666);
        let err = file.load().unwrap_err();
        assert!(matches!(err, StoreError::Exposed { .. }), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("chmod go-w {}", file.path().display())),
            "{err}"
        );
        chmod(file.path(), 0o600);

        chmod(&dir, 0o777);
        let err = file.load().unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("chmod go-w {}", dir.display())),
            "{err}"
        );
        let err = file.update(|_| Ok::<_, StoreError>(())).unwrap_err();
        assert!(matches!(err, StoreError::Exposed { .. }), "{err}");
        chmod(&dir, 0o755);
        assert_eq!(file.load().unwrap().devices.len(), 1);
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
                crate::threads::spawn(move || {
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
