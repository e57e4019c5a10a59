//! The host's files, as docs/protocol.md "Host files" and "Start-up" say: the config file (only
//! its `[serve]` table means anything to this host; an unknown table or key is an error), the
//! device store (TOML `[[device]]` records, refused when another user could change it, malformed
//! on a repeated id or name), the runtime dir (0700, refused when not private) and the connection
//! slots in it (locks the kernel releases when their holder dies).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// The tool's name: the directories its files live in.
pub const TOOL: &str = "minimal";

/// `[serve]` of the config file.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub max_connections: u64,
    pub reconcile_interval_ms: u64,
}

fn config_home() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".config"),
    }
}

/// The tables the protocol's config file has, and the keys of the one this host reads.
const TABLES: [&str; 4] = ["serve", "notify", "act", "event"];

/// Reads the config file: absent gives the defaults; one `$MINIMAL_CONFIG` names must exist.
pub fn config() -> Result<Config, String> {
    let named = std::env::var_os("MINIMAL_CONFIG").filter(|v| !v.is_empty());
    let path = match &named {
        Some(path) => PathBuf::from(path),
        None => config_home().join(TOOL).join("config.toml"),
    };
    let mut config = Config {
        max_connections: 4,
        reconcile_interval_ms: 2000,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && named.is_none() => {
            return Ok(config);
        }
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    let table: Table = toml::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    for (name, value) in &table {
        if !TABLES.contains(&name.as_str()) || !value.is_table() {
            return Err(format!("{}: unknown table `{name}`", path.display()));
        }
    }
    if let Some(Value::Table(serve)) = table.get("serve") {
        for (key, value) in serve {
            let number = value.as_integer().filter(|n| *n >= 1);
            let Some(number) = number else {
                return Err(format!(
                    "{}: `serve.{key}` is not a whole number of at least 1",
                    path.display()
                ));
            };
            match key.as_str() {
                "max_connections" => config.max_connections = number as u64,
                "reconcile_interval_ms" => config.reconcile_interval_ms = number as u64,
                other => return Err(format!("{}: unknown key `serve.{other}`", path.display())),
            }
        }
    }
    Ok(config)
}

/// One device record.
#[derive(Debug, Clone)]
pub struct Device {
    pub id: String,
    pub scopes: Vec<String>,
}

/// The device store's path.
pub fn store_path() -> PathBuf {
    config_home().join(TOOL).join("devices.toml")
}

/// A store another user could change is refused; one others may read is used with a warning.
fn check_private(path: &Path, is_dir: bool) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let me = rustix::process::getuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!(
            "{} belongs to another user: the device store is refused",
            path.display()
        ));
    }
    let mode = meta.permissions().mode();
    let sticky = mode & 0o1000 != 0;
    if mode & 0o022 != 0 && !(is_dir && sticky) {
        return Err(format!(
            "{} may be written by others: the device store is refused (chmod go-w {})",
            path.display(),
            path.display()
        ));
    }
    if !is_dir && mode & 0o044 != 0 {
        eprintln!(
            "minimal-host: warning: others may read {} (chmod 600 {})",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// Reads the device store: `Ok(None)` when there is none (every device is refused).
pub fn devices() -> Result<Option<Vec<Device>>, String> {
    let path = store_path();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    check_private(&path, false)?;
    if let Some(dir) = path.parent() {
        check_private(dir, true)?;
    }
    let table: Table = toml::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    let records = match table.get("device") {
        None => Vec::new(),
        Some(Value::Array(records)) => records.clone(),
        Some(_) => return Err(format!("{}: `device` is not an array", path.display())),
    };
    let mut devices: Vec<Device> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (index, record) in records.iter().enumerate() {
        let malformed = || {
            format!(
                "{}: device record {} is malformed",
                path.display(),
                index + 1
            )
        };
        let record = record.as_table().ok_or_else(malformed)?;
        let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(id), Some(name)) = (text("id"), text("name")) else {
            return Err(malformed());
        };
        let scopes = record
            .get("scopes")
            .and_then(Value::as_array)
            .ok_or_else(malformed)?
            .iter()
            .map(|scope| scope.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(malformed)?;
        if record
            .get("paired_at_ms")
            .and_then(Value::as_integer)
            .is_none()
        {
            return Err(malformed());
        }
        if devices.iter().any(|device| device.id == id) || names.contains(&name) {
            return Err(format!(
                "{}: device record {} repeats an id or a name of an earlier record",
                path.display(),
                index + 1
            ));
        }
        names.push(name);
        devices.push(Device { id, scopes });
    }
    Ok(Some(devices))
}

/// The device's record, re-read: `Ok(None)` when it has none.
pub fn device(id: &str) -> Result<Option<Device>, String> {
    Ok(devices()?
        .unwrap_or_default()
        .into_iter()
        .find(|device| device.id == id))
}

/// The runtime dir: made 0700, refused when another user owns it or may write it or its parent.
pub fn runtime_dir() -> Result<PathBuf, String> {
    let uid = rustix::process::getuid().as_raw();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(base) => PathBuf::from(base).join(TOOL),
        None => {
            let base = std::env::var_os("TMPDIR")
                .filter(|v| !v.is_empty())
                .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
            base.join(format!("{TOOL}-{uid}"))
        }
    };
    if let Some(parent) = dir.parent() {
        let meta =
            std::fs::metadata(parent).map_err(|err| format!("{}: {err}", parent.display()))?;
        let mode = meta.permissions().mode();
        if (meta.uid() != uid && meta.uid() != 0) || (mode & 0o002 != 0 && mode & 0o1000 == 0) {
            return Err(format!(
                "{} may be replaced by another user: the runtime dir is refused",
                parent.display()
            ));
        }
    }
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) => {
            let mode = meta.permissions().mode();
            if !meta.is_dir() || meta.uid() != uid || mode & 0o022 != 0 {
                return Err(format!(
                    "{} is not this user's private directory: the runtime dir is refused",
                    dir.display()
                ));
            }
            if mode & 0o777 != 0o700 {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                    .map_err(|err| format!("{}: {err}", dir.display()))?;
            }
        }
        Err(_) => {
            std::fs::create_dir_all(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|err| format!("{}: {err}", dir.display()))?;
        }
    }
    Ok(dir)
}

/// What claiming a connection slot came to.
#[derive(Debug)]
pub enum Slot {
    /// Held for the life of the process.
    Held(#[allow(dead_code)] File),
    /// Every slot is taken.
    Full,
}

/// Claims one of `max` slots: `<runtime>/slots/slot-<n>.lock`, locked without waiting. A slot
/// whose lock cannot be used is passed over with a warning; when none is free and one could not
/// be used, that is the error.
pub fn claim_slot(runtime: &Path, max: u64) -> Result<Slot, String> {
    let dir = runtime.join("slots");
    std::fs::create_dir_all(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    let mut unusable = None;
    for n in 0..max {
        let path = dir.join(format!("slot-{n}.lock"));
        let file = match OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(file) => file,
            Err(err) => {
                eprintln!(
                    "minimal-host: warning: the slot {} cannot be used: {err}",
                    path.display()
                );
                unusable = Some(format!("{}: {err}", path.display()));
                continue;
            }
        };
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Slot::Held(file)),
            Err(_) => continue,
        }
    }
    match unusable {
        Some(why) => Err(why),
        None => Ok(Slot::Full),
    }
}

/// The resolved receipts of the ledger (`<runtime>/ledger.jsonl`): each slot's last line, those
/// with a `receipt`, filtered and sorted by `at_ms`, each `cached: true`.
pub fn receipts(
    runtime: &Path,
    slot: Option<&str>,
    since_ms: Option<u64>,
) -> Vec<serde_json::Value> {
    let Ok(text) = std::fs::read_to_string(runtime.join("ledger.jsonl")) else {
        return Vec::new();
    };
    let mut last: Vec<(String, serde_json::Value)> = Vec::new();
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(key) = record.get("slot").and_then(serde_json::Value::as_str) else {
            continue;
        };
        last.retain(|(held, _)| held != key);
        last.push((key.to_owned(), record));
    }
    let mut out: Vec<serde_json::Value> = last
        .into_iter()
        .filter_map(|(_, record)| record.get("receipt").cloned())
        .filter(|receipt| receipt.is_object())
        .filter(|receipt| slot.is_none_or(|slot| receipt["slot"] == slot))
        .filter(|receipt| {
            since_ms.is_none_or(|since| receipt["at_ms"].as_u64().is_some_and(|at| at >= since))
        })
        .map(|mut receipt| {
            receipt["cached"] = serde_json::Value::Bool(true);
            receipt
        })
        .collect();
    out.sort_by_key(|receipt| receipt["at_ms"].as_u64().unwrap_or(0));
    out
}
