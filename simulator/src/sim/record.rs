//! `corral-sim record NAME`: the notification command the kit provides. A host's config names it
//! (`command = "corral-sim record blocked"`; the conformance runner puts `corral-sim` on the
//! hosts' `PATH`), and each run appends what it was given, so a session can judge it:
//!
//! - `$CORRAL_SIM_DIR/record/NAME.stdin`: its stdin, byte for byte (a payload is one JSON line);
//! - `$CORRAL_SIM_DIR/record/NAME.env`: one JSON object per run, its environment's `CORRAL_*`
//!   variables but the kit's own ([`KIT_VARIABLES`]), by name;
//! - `$CORRAL_SIM_DIR/record/NAME.group`: one JSON object per run, `{"own_group":B}`: whether its
//!   process group is led by itself or by its parent (the `sh -c` that ran it), not by whoever
//!   started that shell (a command in a process group of its own).
//!
//! All are appended under an exclusive lock (`NAME.lock`), so the N-th line of each belongs to
//! the same run even when runs overlap. Then it sleeps `--sleep-ms` (a slow command), appends
//! `{"exit":N}` to `record/NAME.end` (so a session knows a slow command ended, and that one
//! killed meanwhile never did), writes `--stderr` to stderr and exits with `--exit` (a failing
//! one).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

/// The `CORRAL_*` variables the kit itself sets for every program of a case: not what a
/// notification command is given, so not recorded.
pub const KIT_VARIABLES: [&str; 6] = [
    "CORRAL_SIM_DIR",
    "CORRAL_SIM_NOW_MS",
    "CORRAL_CONFIG",
    "CORRAL_TMUX_BIN",
    "CORRAL_TMUX_SOCKET",
    "CORRAL_BIN",
];

/// One run of `record`: its name, and how it ends.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The record's name: the files `record/NAME.stdin` and `record/NAME.env`.
    pub name: String,
    /// Sleep this long after recording, ms (a command still running).
    pub sleep_ms: u64,
    /// Write this text to stderr.
    pub stderr: String,
    /// Exit with this code.
    pub exit: u8,
}

/// The directory of the records.
pub fn dir(sim_dir: &Path) -> PathBuf {
    sim_dir.join("record")
}

/// Records one run and ends as asked.
pub fn main(options: &RecordOptions, sim_dir: &Path) -> ExitCode {
    let mut stdin = Vec::new();
    let recorded = std::io::stdin()
        .read_to_end(&mut stdin)
        .context("reading stdin")
        .and_then(|_| {
            let env: BTreeMap<String, String> = std::env::vars_os()
                .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
                .filter(|(name, _)| {
                    name.starts_with("CORRAL_") && !KIT_VARIABLES.contains(&name.as_str())
                })
                .map(|(name, value)| (name, value.to_string_lossy().into_owned()))
                .collect();
            let group = rustix::process::getpgrp();
            let own_group = group == rustix::process::getpid()
                || rustix::process::getppid().is_some_and(|parent| parent == group);
            append(sim_dir, &options.name, &stdin, &env, own_group)
        });
    if let Err(err) = recorded {
        eprintln!("corral-sim record: {err:#}");
        return ExitCode::FAILURE;
    }
    std::thread::sleep(Duration::from_millis(options.sleep_ms));
    if let Err(err) = ended(sim_dir, &options.name, options.exit) {
        eprintln!("corral-sim record: {err:#}");
        return ExitCode::FAILURE;
    }
    if !options.stderr.is_empty() {
        eprint!("{}", options.stderr);
    }
    ExitCode::from(options.exit)
}

/// Appends `{"exit":N}` to `NAME.end`: the run is over.
fn ended(sim_dir: &Path, name: &str, exit: u8) -> anyhow::Result<()> {
    let path = dir(sim_dir).join(format!("{name}.end"));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(format!("{{\"exit\":{exit}}}\n").as_bytes()))
        .with_context(|| format!("appending to {}", path.display()))
}

/// Appends one run to `NAME.stdin` and `NAME.env`, under `NAME.lock`.
fn append(
    sim_dir: &Path,
    name: &str,
    stdin: &[u8],
    env: &BTreeMap<String, String>,
    own_group: bool,
) -> anyhow::Result<()> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        anyhow::bail!("{name:?} cannot name a record: a plain file name is needed");
    }
    let dir = dir(sim_dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let open = |suffix: &str| {
        let path = dir.join(format!("{name}.{suffix}"));
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))
    };
    let lock = open("lock")?;
    lock.lock().context("locking the record")?;
    open("stdin")?
        .write_all(stdin)
        .context("appending to the stdin record")?;
    let mut line = serde_json::to_vec(env)?;
    line.push(b'\n');
    open("env")?
        .write_all(&line)
        .context("appending to the env record")?;
    open("group")?
        .write_all(format!("{{\"own_group\":{own_group}}}\n").as_bytes())
        .context("appending to the group record")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_append_stdin_verbatim_and_one_env_line_each() {
        let tmp = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([("CORRAL_AGENT".to_owned(), "claude".to_owned())]);
        append(tmp.path(), "blocked", b"{\"schema\":2}\n", &env, true).unwrap();
        append(
            tmp.path(),
            "blocked",
            b"no newline",
            &BTreeMap::new(),
            false,
        )
        .unwrap();
        let read = |suffix: &str| {
            std::fs::read_to_string(dir(tmp.path()).join(format!("blocked.{suffix}"))).unwrap()
        };
        assert_eq!(read("stdin"), "{\"schema\":2}\nno newline");
        assert_eq!(read("env"), "{\"CORRAL_AGENT\":\"claude\"}\n{}\n");
        assert_eq!(
            read("group"),
            "{\"own_group\":true}\n{\"own_group\":false}\n"
        );
        assert!(append(tmp.path(), "../x", b"", &env, true).is_err());
    }
}
