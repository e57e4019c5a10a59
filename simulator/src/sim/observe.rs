//! Observers of what a host did to the fleet beside its own output, the same on both backends:
//!
//! - `corral-sim tty watch --pane P`: from now on every byte written to pane `P`'s tty (the bell
//!   and the OSC sequences a notifier writes) lands in `$CORRAL_SIM_DIR/tty/<name>`, a plain
//!   file a session reads. A real server pipes the pane's output there (`pipe-pane -O`); the fake,
//!   whose pane ttys are plain files already, empties the pane's tty file and links it there.
//! - `corral-sim options --pane P`: the pane's options of the pane-option contract
//!   ([`PaneOption::ALL`]) that are set and non-empty, as one JSON object sorted by name (the
//!   markers a notifier writes, a mute's deadline).
//! - `corral-sim tmux ARG...`: one tmux command on the fleet's server (`kill-session`,
//!   `set-option -g allow-passthrough on`); prints its stdout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::Backend;
use schema::PaneOption;

use super::simfile;
use super::tmux::{Tmux, cmd};
use crate::fake::state::ServerDir;

/// Separates the options' values in one `display-message` (a byte no option value holds).
const SEPARATOR: char = '\u{1f}';

/// Where `tty watch` puts what reaches a pane's tty: `$CORRAL_SIM_DIR/tty/<pane name>`.
pub fn tty_file(sim_dir: &Path, name: &str) -> PathBuf {
    sim_dir.join("tty").join(name)
}

/// `tty watch`: from now on, what is written to the pane's tty lands in its tty file.
pub fn watch_tty(sim_dir: &Path, pane: &str) -> anyhow::Result<PathBuf> {
    let sim = simfile::load(sim_dir)?;
    let (name, id) = sim.pane(pane)?;
    if name.contains('/') || name.starts_with('.') {
        bail!("pane {name:?} cannot name a file under tty/");
    }
    let file = tty_file(sim_dir, &name);
    let dir = file.parent().expect("tty/<name> has a parent");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    match std::fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing {}", file.display()));
        }
        _ => {}
    }
    match sim.backend {
        Backend::Fake => {
            let number: u32 = id
                .strip_prefix('%')
                .and_then(|n| n.parse().ok())
                .with_context(|| format!("{id:?} is not a pane id"))?;
            let tty = ServerDir::new(PathBuf::from(&sim.socket_path)).tty(number);
            let opened = std::fs::OpenOptions::new().write(true).open(&tty);
            opened
                .and_then(|f| f.set_len(0))
                .with_context(|| format!("emptying the fake tty {}", tty.display()))?;
            std::os::unix::fs::symlink(&tty, &file)
                .with_context(|| format!("linking {}", file.display()))?;
        }
        Backend::Real => {
            std::fs::write(&file, b"").with_context(|| format!("creating {}", file.display()))?;
            let pipe = format!(
                "exec cat >> {}",
                stdx::shell_quote(&file.display().to_string())
            );
            Tmux::of(&sim).ok(&[cmd(&["pipe-pane", "-O", "-t", &id, &pipe])], sim_dir)?;
        }
    }
    Ok(file)
}

/// `options`: the pane's contract options that are set and non-empty, by name.
pub fn options(sim_dir: &Path, pane: &str) -> anyhow::Result<BTreeMap<String, String>> {
    let sim = simfile::load(sim_dir)?;
    let (_, id) = sim.pane(pane)?;
    let format: Vec<String> = PaneOption::ALL.iter().map(|o| o.format()).collect();
    let format = format.join(&SEPARATOR.to_string());
    let tmux = Tmux::of(&sim);
    // `display-message -t` falls back to another pane when the target is gone; ask first.
    tmux.ok(
        &[cmd(&["list-panes", "-t", &id, "-F", "#{pane_id}"])],
        sim_dir,
    )?;
    let out = tmux.ok(
        &[cmd(&["display-message", "-p", "-t", &id, &format])],
        sim_dir,
    )?;
    let line = out.strip_suffix('\n').unwrap_or(&out);
    let values: Vec<&str> = line.split(SEPARATOR).collect();
    if values.len() != PaneOption::ALL.len() {
        bail!(
            "tmux printed {} values for {} options",
            values.len(),
            PaneOption::ALL.len()
        );
    }
    Ok(PaneOption::ALL
        .iter()
        .zip(values)
        .filter(|(_, value)| !value.is_empty())
        .map(|(option, value)| (option.as_str().to_owned(), value.to_owned()))
        .collect())
}

/// `tmux`: one command on the fleet's server; its stdout.
pub fn tmux(sim_dir: &Path, args: &[String]) -> anyhow::Result<String> {
    let sim = simfile::load(sim_dir)?;
    Tmux::of(&sim).ok(&[args.to_vec()], sim_dir)
}

/// Sends `line` on the unix socket at `path` and returns the one line it answers, without its
/// newline; gives up after 5 seconds either way.
pub fn socket_line(path: &Path, line: &str) -> anyhow::Result<String> {
    use std::io::{BufRead, BufReader, Write};
    let patience = Some(std::time::Duration::from_secs(5));
    let mut stream = std::os::unix::net::UnixStream::connect(path)
        .with_context(|| format!("connecting to {}", path.display()))?;
    stream.set_read_timeout(patience)?;
    stream.set_write_timeout(patience)?;
    stream.write_all(format!("{line}\n").as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream)
        .read_line(&mut answer)
        .with_context(|| format!("reading the answer of {}", path.display()))?;
    if answer.is_empty() {
        anyhow::bail!("{} closed without answering", path.display());
    }
    Ok(answer.trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod socket_tests {
    use std::io::{BufRead, BufReader, Write};

    #[test]
    fn one_line_out_and_the_answer_s_line_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(&stream).read_line(&mut line).unwrap();
            (&stream)
                .write_all(format!("got {line}").as_bytes())
                .unwrap();
            let (stream, _) = listener.accept().unwrap();
            BufReader::new(&stream)
                .read_line(&mut String::new())
                .unwrap();
            drop(stream);
        });
        assert_eq!(super::socket_line(&path, "ping").unwrap(), "got ping");
        let silent = super::socket_line(&path, "ping").unwrap_err().to_string();
        assert!(silent.contains("closed without answering"), "{silent}");
        server.join().unwrap();
        let gone = format!(
            "{:#}",
            super::socket_line(&dir.path().join("none"), "ping").unwrap_err()
        );
        assert!(gone.contains("connecting to"), "{gone}");
    }
}
