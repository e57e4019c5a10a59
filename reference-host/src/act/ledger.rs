//! The host-wide dispatch ledger (`<runtime>/ledger.jsonl`): one logical record per slot, shared
//! by every serve process, every device and `corral act`, so a slot fires at most once.
//!
//! The file is a log of JSON lines, each the whole current record of one slot (a claim, then its
//! resolution); the last line of a slot is its record. Every read-modify-write holds the
//! exclusive lock on `ledger.lock` (kernel-released when its holder dies). A claimer fires only
//! after its claim line is written, so a line torn by a claimer's death was never acted on: the
//! next writer cuts it off. Any other line that does not parse makes the ledger answer an error,
//! never "absent", which could fire a slot twice. When the log holds too many lines or slots it
//! is rewritten whole (temp, fsync, rename): expired slots (claimed over 24 h ago) go first, then,
//! when [`CAP`] slots are held, the oldest resolved ones down to [`LOW_WATER`]; a slot in flight
//! is never dropped.
//!
//! A claim records its owner: this process's pid and a liveness lock it holds for its lifetime
//! (`owners/<pid>-<nonce>.lock`). A claim whose owner's lock is free belongs to a dead process;
//! the slot resolves `error`/`fired-unknown`, since nobody can know whether it fired, and is
//! never fired again. Each process keeps the parsed log and the offset it read up to, so a
//! claim reads only the lines appended since (a full read after a rewrite).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use schema::{Action, Outcome, Reason, Receipt};
use serde::{Deserialize, Serialize};

use crate::files;

/// Most slots the ledger keeps.
pub const CAP: usize = 4096;
/// Slots a rewrite at the cap keeps (the new claim included): an eighth of the cap is freed at
/// once, so a full ledger is rewritten once per `CAP / 8` claims, not on every claim.
pub const LOW_WATER: usize = CAP - CAP / 8;
/// How long a resolved slot is kept, in milliseconds.
pub const TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// Lines the log may hold before it is rewritten: room for a claim and a resolution per slot.
const MAX_LINES: usize = 2 * CAP + 64;

/// One slot's record, as a line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The slot.
    pub slot: String,
    /// Epoch ms of the claim.
    pub claimed_at_ms: u64,
    /// The claiming process.
    pub pid: u32,
    /// Its liveness lock's name under `owners/`.
    pub owner: String,
    /// The device that dispatched, or `cli`.
    pub device: String,
    /// The pane.
    pub pane: String,
    /// The action.
    pub action: Action,
    /// The receipt once resolved; `null` while in flight.
    pub receipt: Option<Receipt>,
    /// True on the line that releases a claim (a `locked` refusal): the slot is free again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub released: bool,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The slot is this caller's now: go on to gate 3 and fire.
    Claimed,
    /// The slot was resolved before: its receipt (with `cached: false` as stored).
    Resolved(Receipt),
    /// Another live process is dispatching the slot.
    InFlight,
}

/// Why the ledger could not answer.
#[derive(Debug)]
pub enum LedgerError {
    /// A file of the ledger could not be read or written.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A complete line of the log does not parse: the ledger cannot say whether a slot fired.
    Corrupt { path: PathBuf, line: String },
    /// Every kept slot is in flight; no room for another.
    Full,
}

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerError::Io { path, error } => write!(f, "ledger {}: {error}", path.display()),
            LedgerError::Corrupt { path, line } => {
                let shown: String = line.chars().take(80).collect();
                write!(
                    f,
                    "ledger {} has a line that does not parse: {shown}",
                    path.display()
                )
            }
            LedgerError::Full => write!(f, "the ledger holds {CAP} slots in flight"),
        }
    }
}

impl std::error::Error for LedgerError {}

/// Turns an I/O error on `path` into a ledger error.
fn io_error(path: &Path) -> impl Fn(std::io::Error) -> LedgerError + use<> {
    let path = path.to_owned();
    move |error| LedgerError::Io {
        path: path.clone(),
        error,
    }
}

/// What a claim is about.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub slot: &'a str,
    pub device: &'a str,
    pub pane: &'a str,
    pub action: &'a Action,
}

/// This process's liveness lock.
#[derive(Debug)]
struct Owner {
    name: String,
    _lock: files::Lock,
    path: PathBuf,
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The parsed log as this process last read it.
#[derive(Debug, Default)]
struct Index {
    /// Identity of the file read: (dev, ino).
    file: Option<(u64, u64)>,
    /// Bytes read so far.
    offset: u64,
    /// Lines in the log.
    lines: usize,
    /// The current record of each slot.
    slots: HashMap<String, Entry>,
}

/// The ledger, as one process uses it.
#[derive(Debug)]
pub struct Ledger {
    dir: PathBuf,
    owner: Option<Owner>,
    index: Index,
}

impl Ledger {
    /// The ledger in the runtime dir `dir` (which exists, 0700).
    pub fn new(dir: &Path) -> Ledger {
        Ledger {
            dir: dir.to_owned(),
            owner: None,
            index: Index::default(),
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("ledger.jsonl")
    }

    fn lock(&self) -> Result<files::Lock, LedgerError> {
        let path = self.dir.join("ledger.lock");
        files::lock(&path).map_err(io_error(&path))
    }

    /// This process's owner name, creating its liveness lock on first use.
    fn owner(&mut self) -> Result<String, LedgerError> {
        if let Some(owner) = &self.owner {
            return Ok(owner.name.clone());
        }
        let dir = self.dir.join("owners");
        files::create_private_dir(&dir).map_err(io_error(&dir))?;
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).map_err(|e| LedgerError::Io {
            path: dir.clone(),
            error: std::io::Error::other(e.to_string()),
        })?;
        let name = format!("{}-{:016x}", std::process::id(), u64::from_le_bytes(nonce));
        let path = dir.join(format!("{name}.lock"));
        let lock = files::try_lock(&path)
            .map_err(io_error(&path))?
            .ok_or_else(|| LedgerError::Io {
                path: path.clone(),
                error: std::io::Error::other("a fresh owner lock is already held"),
            })?;
        self.owner = Some(Owner {
            name: name.clone(),
            _lock: lock,
            path,
        });
        Ok(name)
    }

    /// True when the owner `name` still holds its liveness lock.
    fn alive(&self, name: &str) -> Result<bool, LedgerError> {
        if self.owner.as_ref().is_some_and(|o| o.name == name) {
            return Ok(true);
        }
        let path = self.dir.join("owners").join(format!("{name}.lock"));
        if !path.exists() {
            return Ok(false);
        }
        match files::try_lock(&path).map_err(io_error(&path))? {
            None => Ok(true),
            Some(_free) => {
                let _ = std::fs::remove_file(&path);
                Ok(false)
            }
        }
    }

    /// Claims `request.slot` at `now`, unless it is claimed already.
    pub fn claim(&mut self, request: &Request<'_>, now: u64) -> Result<Claim, LedgerError> {
        let owner = self.owner()?;
        let _lock = self.lock()?;
        self.refresh()?;
        if let Some(found) = self.settle(request.slot)? {
            return Ok(found);
        }
        if self.index.slots.len() >= CAP || self.index.lines >= MAX_LINES {
            self.compact(now)?;
        }
        if self.index.slots.len() >= CAP {
            return Err(LedgerError::Full);
        }
        let entry = Entry {
            slot: request.slot.to_owned(),
            claimed_at_ms: now,
            pid: std::process::id(),
            owner,
            device: request.device.to_owned(),
            pane: request.pane.to_owned(),
            action: request.action.clone(),
            receipt: None,
            released: false,
        };
        self.append(&entry)?;
        Ok(Claim::Claimed)
    }

    /// What an existing record of `slot` answers: its receipt, in flight, or `None` when the
    /// slot is free. A claim whose owner died resolves `error`/`fired-unknown` here.
    fn settle(&mut self, slot: &str) -> Result<Option<Claim>, LedgerError> {
        let Some(entry) = self.index.slots.get(slot).cloned() else {
            return Ok(None);
        };
        if let Some(receipt) = entry.receipt {
            return Ok(Some(Claim::Resolved(receipt)));
        }
        if self.alive(&entry.owner)? {
            return Ok(Some(Claim::InFlight));
        }
        tracing::warn!(
            slot,
            pid = entry.pid,
            "a claimer died mid-dispatch; the slot resolves fired-unknown"
        );
        let receipt = Receipt {
            slot: entry.slot.clone(),
            pane: entry.pane.clone(),
            action: entry.action.clone(),
            outcome: Outcome::Error,
            reason: Some(Reason::FiredUnknown),
            exit_code: 1,
            cached: false,
            device: entry.device.clone(),
            at_ms: entry.claimed_at_ms,
        };
        self.append(&Entry {
            receipt: Some(receipt.clone()),
            ..entry
        })?;
        Ok(Some(Claim::Resolved(receipt)))
    }

    /// Looks at `slot` without claiming it: its receipt, in flight, or free (`None`).
    pub fn peek(&mut self, slot: &str) -> Result<Option<Claim>, LedgerError> {
        let _lock = self.lock()?;
        self.refresh()?;
        self.settle(slot)
    }

    /// Records the receipt of a slot this process claimed.
    pub fn resolve(&mut self, receipt: &Receipt) -> Result<(), LedgerError> {
        self.finish(&receipt.slot, Some(receipt.clone()), false)
    }

    /// Frees a slot this process claimed (a `locked` refusal): it may be dispatched again.
    pub fn release(&mut self, slot: &str) -> Result<(), LedgerError> {
        self.finish(slot, None, true)
    }

    fn finish(
        &mut self,
        slot: &str,
        receipt: Option<Receipt>,
        released: bool,
    ) -> Result<(), LedgerError> {
        let _lock = self.lock()?;
        self.refresh()?;
        let Some(entry) = self.index.slots.get(slot).cloned() else {
            return Err(LedgerError::Io {
                path: self.log_path(),
                error: std::io::Error::other(format!("slot {slot} is not claimed")),
            });
        };
        self.append(&Entry {
            receipt,
            released,
            ..entry
        })
    }

    /// Gives up this process's claim when its end (the receipt, or the release of a `locked`
    /// refusal) could not be written, a full disk say. Its liveness lock goes, so every later
    /// asker, this process included, finds the claim's owner dead and resolves the slot
    /// `error`/`fired-unknown` (once the ledger can be written again): the ledger holds no record
    /// of what happened, and waiting on a live process that will never write one would keep the
    /// slot in flight for as long as that process lives. The next claim takes a fresh owner.
    pub fn abandon(&mut self) {
        self.owner = None;
    }

    /// Resolved receipts, filtered by slot and by claim time (inclusive), sorted by `at_ms`.
    pub fn receipts(
        &mut self,
        slot: Option<&str>,
        since_ms: Option<u64>,
    ) -> Result<Vec<Receipt>, LedgerError> {
        let _lock = self.lock()?;
        self.refresh()?;
        let mut found: Vec<Receipt> = self
            .index
            .slots
            .values()
            .filter(|e| slot.is_none_or(|s| e.slot == s))
            .filter(|e| since_ms.is_none_or(|since| e.claimed_at_ms >= since))
            .filter_map(|e| e.receipt.clone())
            .collect();
        found.sort_by(|a, b| a.at_ms.cmp(&b.at_ms).then_with(|| a.slot.cmp(&b.slot)));
        Ok(found)
    }

    /// Brings the index up to the file: the lines appended since the last read, or all of a file
    /// that was rewritten. Cuts off a torn last line (its writer died before it fired).
    fn refresh(&mut self) -> Result<(), LedgerError> {
        let path = self.log_path();
        let io = io_error(&path);
        let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                self.index = Index::default();
                return Ok(());
            }
            Err(error) => return Err(io(error)),
        };
        let meta = file.metadata().map_err(&io)?;
        let identity = Some((meta.dev(), meta.ino()));
        if self.index.file != identity || meta.len() < self.index.offset {
            self.index = Index {
                file: identity,
                ..Index::default()
            };
        }
        if meta.len() == self.index.offset {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.index.offset)).map_err(&io)?;
        let mut fresh = Vec::new();
        file.read_to_end(&mut fresh).map_err(&io)?;
        let complete = fresh
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |at| at + 1);
        if complete < fresh.len() {
            tracing::warn!(path = %path.display(), bytes = fresh.len() - complete, "cutting off a torn ledger line");
            file.set_len(self.index.offset + complete as u64)
                .map_err(&io)?;
        }
        for line in fresh[..complete].split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let corrupt = || LedgerError::Corrupt {
                path: path.clone(),
                line: String::from_utf8_lossy(line).into_owned(),
            };
            let entry: Entry = serde_json::from_slice(line).map_err(|_| corrupt())?;
            // A record whose receipt names another slot was not written by a ledger.
            if entry.receipt.as_ref().is_some_and(|r| r.slot != entry.slot) {
                return Err(corrupt());
            }
            self.index.lines += 1;
            if entry.released {
                self.index.slots.remove(&entry.slot);
            } else {
                self.index.slots.insert(entry.slot.clone(), entry);
            }
        }
        self.index.offset += complete as u64;
        Ok(())
    }

    /// Appends one record (under the lock).
    fn append(&mut self, entry: &Entry) -> Result<(), LedgerError> {
        let path = self.log_path();
        let io = io_error(&path);
        let mut line = serde_json::to_vec(entry).expect("a ledger entry always encodes");
        line.push(b'\n');
        let mut file = files::open_append(&path, 0o600).map_err(&io)?;
        let meta = file.metadata().map_err(&io)?;
        if self.index.file.is_none() {
            self.index.file = Some((meta.dev(), meta.ino()));
        }
        // One write: a line is in the log whole, or (if this process dies inside the call) torn
        // and cut off by the next writer.
        file.write_all(&line).map_err(&io)?;
        self.index.offset += line.len() as u64;
        self.index.lines += 1;
        if entry.released {
            self.index.slots.remove(&entry.slot);
        } else {
            self.index.slots.insert(entry.slot.clone(), entry.clone());
        }
        Ok(())
    }

    /// Rewrites the log with one line per kept slot: expired resolved slots dropped, then, when
    /// the cap is reached, the oldest resolved ones until [`LOW_WATER`] slots remain with the
    /// coming claim. In-flight slots are kept.
    fn compact(&mut self, now: u64) -> Result<(), LedgerError> {
        let mut entries: Vec<Entry> = self.index.slots.values().cloned().collect();
        entries.sort_by(|a, b| {
            a.claimed_at_ms
                .cmp(&b.claimed_at_ms)
                .then_with(|| a.slot.cmp(&b.slot))
        });
        let expired =
            |e: &Entry| e.receipt.is_some() && now.saturating_sub(e.claimed_at_ms) > TTL_MS;
        entries.retain(|e| !expired(e));
        let mut excess = if entries.len() >= CAP {
            entries.len() - (LOW_WATER - 1)
        } else {
            0
        };
        entries.retain(|e| {
            if excess > 0 && e.receipt.is_some() {
                excess -= 1;
                false
            } else {
                true
            }
        });
        let mut text = Vec::new();
        for entry in &entries {
            serde_json::to_writer(&mut text, entry).expect("a ledger entry always encodes");
            text.push(b'\n');
        }
        let path = self.log_path();
        files::write_atomic(&path, &text, 0o600).map_err(io_error(&path))?;
        let meta = std::fs::metadata(&path).map_err(io_error(&path))?;
        self.index = Index {
            file: Some((meta.dev(), meta.ino())),
            offset: meta.len(),
            lines: entries.len(),
            slots: entries.into_iter().map(|e| (e.slot.clone(), e)).collect(),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests;
