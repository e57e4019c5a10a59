//! What a pane received, observable on both backends (`corral-sim pane input`).
//!
//! On a real server every pane runs a recorder instead of an idle program: a shell puts its tty
//! in raw mode (`stty raw -echo`: no echo, no line editing, `\r` stays `\r`, `C-c` is a byte),
//! marks the pane ready (`input/<N>.ready`) and becomes `cat`, appending every byte tmux writes to
//! the pane to `input/<N>`. The fake runs nothing; what its panes received is its log of
//! `send-keys` (`log.ndjson`), turned into the bytes tmux would have written ([`keys`]). Either
//! way the bytes are read back into keys and text by [`keys::decode`], so both backends print the
//! same lines for the same dispatches.
//!
//! `--clear` stores where the pane's source ends (`input/<N>.from`, a byte offset into
//! `input/<N>` or `log.ndjson`); what comes after is what the next read prints. `up` empties
//! `input/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use golden::{Backend, SimFile};

use super::keys::{self, Received};
use super::tmux::{Tmux, cmd};
use crate::fake::state::ServerDir;

/// The shell script of a real pane's recorder; `$1` is the `input/` directory.
const RECORDER: &str =
    r#"stty raw -echo && : > "$1/${TMUX_PANE#%}.ready" && exec cat >> "$1/${TMUX_PANE#%}""#;

/// Bytes `pane input` sends a real pane to know that everything before them has arrived: an OSC
/// string no host dispatch sends, removed from what is printed.
const SYNC: &[u8] = b"\x1b]corral-sim-sync\x07";

/// `$CORRAL_SIM_DIR/input/`.
pub fn dir(sim_dir: &Path) -> PathBuf {
    sim_dir.join("input")
}

/// The program every pane runs: the recorder (real), or the same command recorded (fake).
pub fn program(sim_dir: &Path) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        RECORDER.into(),
        "corral-sim-pane".into(),
        dir(sim_dir).display().to_string(),
    ]
}

/// Empties `input/` for a fleet coming up.
pub fn reset(sim_dir: &Path) -> anyhow::Result<()> {
    let dir = dir(sim_dir);
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing {}", dir.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))
}

fn number(pane: &str) -> anyhow::Result<u32> {
    pane.strip_prefix('%')
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("{pane:?} is not a pane id"))
}

fn ready_file(sim_dir: &Path, pane: u32) -> PathBuf {
    dir(sim_dir).join(format!("{pane}.ready"))
}

/// Forgets that a pane's recorder was ready (before its program is respawned).
pub fn unready(sim_dir: &Path, pane: &str) -> anyhow::Result<()> {
    match std::fs::remove_file(ready_file(sim_dir, number(pane)?)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// On a real server, waits until every pane's recorder has its tty in raw mode, so nothing sent
/// later is echoed or cooked. Nothing to wait for on the fake.
pub fn wait_ready(sim_dir: &Path, backend: Backend, panes: &[String]) -> anyhow::Result<()> {
    if backend == Backend::Fake {
        return Ok(());
    }
    let files = panes
        .iter()
        .map(|pane| Ok((pane, ready_file(sim_dir, number(pane)?))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let deadline =
        Instant::now() + Duration::from_secs(10) + Duration::from_millis(10) * panes.len() as u32;
    for (pane, file) in files {
        while !file.exists() {
            if Instant::now() >= deadline {
                bail!(
                    "the input recorder of pane {pane} did not start ({} is missing)",
                    file.display()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(())
}

fn from_file(sim_dir: &Path, pane: u32) -> PathBuf {
    dir(sim_dir).join(format!("{pane}.from"))
}

/// What pane `pane` (`%N`) received since the fleet came up or the last clear, and where its
/// source ends now.
fn bytes(sim: &SimFile, sim_dir: &Path, pane: &str) -> anyhow::Result<(Vec<u8>, u64)> {
    let n = number(pane)?;
    let from: u64 = std::fs::read_to_string(from_file(sim_dir, n))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let tail = |all: &[u8]| -> Vec<u8> {
        let start = usize::try_from(from).unwrap_or(usize::MAX);
        all.get(start..).unwrap_or_default().to_vec()
    };
    match sim.backend {
        Backend::Fake => {
            let log = ServerDir::new(PathBuf::from(&sim.socket_path)).log_file();
            let all = match std::fs::read(&log) {
                Ok(all) => all,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(e).with_context(|| format!("reading {}", log.display())),
            };
            let mut out = Vec::new();
            for line in tail(&all).split(|b| *b == b'\n') {
                let Ok(entry) = serde_json::from_slice::<serde_json::Value>(line) else {
                    continue;
                };
                if entry["command"] != "send-keys" || entry["pane"] != pane {
                    continue;
                }
                let args: Vec<String> = entry["keys"]
                    .as_array()
                    .map(|keys| {
                        keys.iter()
                            .filter_map(|k| k.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                out.extend(keys::send_keys_bytes(&args, entry["literal"] == true));
            }
            Ok((out, all.len() as u64))
        }
        Backend::Real => {
            let file = dir(sim_dir).join(n.to_string());
            let all = synced(sim, sim_dir, pane, &file)?;
            let end = all.len() as u64;
            Ok((strip_sync(&tail(&all)), end))
        }
    }
}

/// The recorder's file once everything tmux wrote to the pane before now has reached it: a
/// sync string is sent after it, and the file read until the sync string is there. A pane
/// that is gone is read as it is.
fn synced(sim: &SimFile, sim_dir: &Path, pane: &str, file: &Path) -> anyhow::Result<Vec<u8>> {
    let read = || match std::fs::read(file) {
        Ok(all) => Ok(all),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    };
    let before = count_sync(&read()?);
    let sync = String::from_utf8_lossy(SYNC).into_owned();
    let sent = Tmux::of(sim).run(
        &[cmd(&["send-keys", "-t", pane, "-l", "--", &sync])],
        sim_dir,
    )?;
    if sent.code != 0 {
        return read();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let all = read()?;
        if count_sync(&all) > before {
            return Ok(all);
        }
        if Instant::now() >= deadline {
            bail!("pane {pane}'s recorder did not see the sync string within 5 s");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn count_sync(bytes: &[u8]) -> usize {
    bytes.windows(SYNC.len()).filter(|w| *w == SYNC).count()
}

fn strip_sync(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(SYNC) {
            i += SYNC.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// What pane `given` received, read back; with `clear`, what it receives from now on starts
/// afresh.
pub fn received(sim_dir: &Path, given: &str, clear: bool) -> anyhow::Result<Vec<Received>> {
    let sim = super::simfile::load(sim_dir)?;
    let (_, pane) = sim.pane(given)?;
    let (bytes, end) = bytes(&sim, sim_dir, &pane)?;
    if clear {
        let file = from_file(sim_dir, number(&pane)?);
        crate::fake::state::write_atomic(&file, end.to_string().as_bytes())
            .with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(keys::decode(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_strings_are_counted_and_removed() {
        let mut bytes = b"ab".to_vec();
        bytes.extend_from_slice(SYNC);
        bytes.extend_from_slice(b"\r");
        bytes.extend_from_slice(SYNC);
        assert_eq!(count_sync(&bytes), 2);
        assert_eq!(strip_sync(&bytes), b"ab\r");
    }
}
