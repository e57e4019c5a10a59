//! What happens to a transcript file behind a reader's back: rewritten in place (same inode,
//! same length, other bytes), truncated, replaced by a new inode, or rotated (moved away, a new
//! file started at the same path).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;

use super::Generator;

/// Keys whose string values are prose, changed by a rewrite.
const PROSE: &[&str] = &[
    "text", "thinking", "content", "message", "summary", "stdout",
];

fn rot13_prose(value: &mut Value, key: Option<&str>) -> bool {
    match value {
        Value::String(s) if key.is_some_and(|k| PROSE.contains(&k)) => {
            let rotated: String = s
                .chars()
                .map(|c| match c {
                    'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
                    'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
                    _ => c,
                })
                .collect();
            let changed = rotated != *s;
            *s = rotated;
            changed
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |acc, v| rot13_prose(v, key) | acc),
        Value::Object(map) => map
            .iter_mut()
            .fold(false, |acc, (k, v)| rot13_prose(v, Some(k)) | acc),
        _ => false,
    }
}

/// Rewrites the file in place (same inode, same length, different bytes): every prose string is
/// rot13'd.
pub fn rewrite(path: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        match serde_json::from_str::<Value>(body) {
            Ok(mut value) => {
                changed |= rot13_prose(&mut value, None);
                out.push_str(&serde_json::to_string(&value)?);
            }
            Err(_) => out.push_str(body),
        }
        out.push_str(end);
    }
    if out.len() != text.len() {
        bail!(
            "{}: cannot rewrite at the same length (not written by corral-sim?)",
            path.display()
        );
    }
    if !changed {
        bail!("{}: nothing to rewrite (no prose in it)", path.display());
    }
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(out.as_bytes())?;
    file.flush()?;
    Ok(())
}

/// Truncates the file in place to `bytes`, or to its first `lines` lines.
pub fn truncate(path: &Path, bytes: Option<u64>, lines: Option<usize>) -> anyhow::Result<u64> {
    let len = match (bytes, lines) {
        (Some(b), None) => b,
        (None, Some(n)) => {
            let text =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            text.split_inclusive(|b| *b == b'\n')
                .take(n)
                .map(|l| l.len() as u64)
                .sum()
        }
        _ => bail!("truncate takes exactly one of --bytes and --lines"),
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    if len > file.metadata()?.len() {
        bail!(
            "{}: truncating to {len} bytes would grow it",
            path.display()
        );
    }
    file.set_len(len)?;
    Ok(len)
}

/// Replaces the file with a new inode holding `content` (its old bytes when `None`).
pub fn replace(path: &Path, content: Option<Vec<u8>>) -> anyhow::Result<()> {
    let bytes = match content {
        Some(bytes) => bytes,
        None => std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
    };
    let tmp = path.with_extension("jsonl.replacing");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// A path for the old file of a rotation: `<path>.1`, or the next free number (`.2`, ...).
fn rotated_path(path: &Path) -> PathBuf {
    let mut n = 1;
    loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        let candidate = PathBuf::from(name);
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

/// Rotates the file: moves it to `<path>.N` (the first free N) and starts a new file at `path`
/// with `events` records of the same session, one second after the old file's last; returns
/// where the old file went.
pub fn rotate(path: &Path, events: u64) -> anyhow::Result<PathBuf> {
    let old = Generator::resume(path)?;
    super::generates(old.format)?;
    let last_ms = old.start_ms + old.index.saturating_sub(1) * 1000;
    let moved = rotated_path(path);
    std::fs::rename(path, &moved)
        .with_context(|| format!("moving {} to {}", path.display(), moved.display()))?;
    let mut fresh = Generator::new(
        old.format,
        &old.session_id,
        &old.cwd,
        &old.branch,
        last_ms + 1000,
    );
    fresh.append(path, events, 0, false)?;
    if events == 0 {
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    }
    Ok(moved)
}

/// `events` fresh records of the file's session, for a replacement: the same session, directory
/// and branch, seven seconds later.
pub fn regenerated(path: &Path, events: u64) -> anyhow::Result<Vec<u8>> {
    let old = Generator::resume(path)?;
    super::generates(old.format)?;
    let scratch = path.with_extension("jsonl.regenerating");
    let _ = std::fs::remove_file(&scratch);
    let mut fresh = Generator::new(
        old.format,
        &old.session_id,
        &old.cwd,
        &old.branch,
        old.start_ms + 7_000,
    );
    fresh.append(&scratch, events, 0, false)?;
    let bytes = std::fs::read(&scratch)?;
    std::fs::remove_file(&scratch)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::fixture::TranscriptFormat;

    #[test]
    fn rewrite_keeps_length_and_changes_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut g = Generator::new(TranscriptFormat::Claude, "sess", "/r", "main", 0);
        g.append(&path, 10, 5, false).unwrap();
        let before = std::fs::read(&path).unwrap();
        rewrite(&path).unwrap();
        let after = std::fs::read(&path).unwrap();
        assert_eq!(before.len(), after.len());
        assert_ne!(before, after);
    }

    #[test]
    fn rotation_moves_the_file_away_and_starts_the_session_afresh() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let mut g = Generator::new(TranscriptFormat::Codex, "sess", "/r", "main", 1_000_000);
        g.append(&path, 6, 0, false).unwrap();
        let before = std::fs::read(&path).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let moved = rotate(&path, 3).unwrap();
        assert_eq!(moved, dir.path().join("rollout.jsonl.1"));
        assert_eq!(std::fs::read(&moved).unwrap(), before);
        assert_eq!(std::fs::metadata(&moved).unwrap().ino(), inode);
        let fresh: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(fresh.len(), 3);
        assert_eq!(fresh[0]["type"], "session_meta");
        assert_eq!(fresh[0]["payload"]["id"], "sess");
        assert_eq!(fresh[0]["timestamp"], "1970-01-01T00:16:46.000Z");
        assert_eq!(
            rotate(&path, 0).unwrap(),
            dir.path().join("rollout.jsonl.2")
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }
}
