//! The transcripts P3 and P6 page through: a big one (1 GiB by default) and a 1 MiB one, real
//! JSONL records of about 4 KiB written by `corral-sim transcript big` into the scratch dir (no
//! sparse file: every byte is a record a reader must step over), stamped as two panes'
//! `@agent_transcript`, and deleted when dropped.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};

use super::fleet::Fleet;
use super::process::output;
use super::report::bytes;

/// The small transcript P3 compares with.
pub const SMALL_BYTES: u64 = 1 << 20;
/// Free space asked for, as a multiple of the big transcript: the file itself, and as much again
/// twice over for whatever else writes to the disk meanwhile.
pub const FREE_FACTOR: u64 = 3;

/// The fixture panes whose transcripts these are.
pub const BIG_PANE: &str = "a0-work-0";
pub const SMALL_PANE: &str = "a0-work-1";

/// Two transcripts on disk, removed on drop.
#[derive(Debug)]
pub struct Transcripts {
    pub big: PathBuf,
    pub big_bytes: u64,
    pub small: PathBuf,
    pub small_bytes: u64,
    /// How long writing the big one took, in seconds.
    pub write_s: f64,
}

/// Refuses, in one line, a run whose big transcript would not fit comfortably in `dir`.
pub fn check_disk(dir: &Path, big_bytes: u64) -> anyhow::Result<()> {
    let stat = rustix::fs::statvfs(dir).with_context(|| format!("statvfs {}", dir.display()))?;
    let free = stat.f_bavail.saturating_mul(stat.f_frsize);
    let needed = big_bytes.saturating_mul(FREE_FACTOR);
    if free < needed {
        bail!(
            "only {} free in {}; a {} transcript needs {} free (smaller: --transcript 256M)",
            bytes(free),
            dir.display(),
            bytes(big_bytes),
            bytes(needed)
        );
    }
    Ok(())
}

/// Writes both transcripts into `dir` and stamps them on [`BIG_PANE`] and [`SMALL_PANE`].
pub fn write(fleet: &Fleet, dir: &Path, big_bytes: u64) -> anyhow::Result<Transcripts> {
    let started = Instant::now();
    let big = grow(fleet, &dir.join("big.jsonl"), big_bytes)?;
    let write_s = started.elapsed().as_secs_f64();
    let small = grow(fleet, &dir.join("small.jsonl"), SMALL_BYTES)?;
    let transcripts = Transcripts {
        big_bytes: size(&big)?,
        big,
        small_bytes: size(&small)?,
        small,
        write_s,
    };
    for (pane, path) in [
        (BIG_PANE, &transcripts.big),
        (SMALL_PANE, &transcripts.small),
    ] {
        let path = path
            .to_str()
            .context("a transcript path that is not UTF-8")?;
        output(
            fleet
                .sim()
                .args(["step", "--pane", pane, "--transcript", path]),
        )
        .with_context(|| format!("stamping {pane}'s transcript"))?;
    }
    Ok(transcripts)
}

/// `corral-sim transcript big` of a Claude Code transcript at `path` to `bytes`.
fn grow(fleet: &Fleet, path: &Path, bytes: u64) -> anyhow::Result<PathBuf> {
    output(
        fleet
            .sim()
            .args(["transcript", "big", "--format", "claude", "--bytes"])
            .arg(bytes.to_string())
            .arg("--path")
            .arg(path),
    )
    .with_context(|| format!("writing the {} transcript", super::report::bytes(bytes)))?;
    Ok(path.to_owned())
}

fn size(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len())
}

impl Drop for Transcripts {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.big);
        let _ = std::fs::remove_file(&self.small);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_larger_than_the_disk_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        check_disk(dir.path(), 1 << 20).unwrap();
        let err = check_disk(dir.path(), u64::MAX / 4)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("only "), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}
