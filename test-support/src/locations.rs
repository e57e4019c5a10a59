//! The variables that say where a process writes ([`LOCATIONS`]) and the two sets of values a
//! test's child gets for them: [`nowhere`] until its test gives it temp dirs, then
//! [`in_temp_dirs`]. Nothing a test starts lands in `/tmp/tmux-<uid>`, the user's runtime dir or
//! their home; `.ci/hygiene` checks the run as a whole.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a child process may write when its test gave it no directory of its own: nowhere.
/// Nothing can be created under `/dev/null`, not even by root, so a test that forgets its temp
/// dirs fails loudly instead of writing into `/tmp/tmux-<uid>`, the user's runtime dir
/// (`/tmp/corral-<uid>` without `XDG_RUNTIME_DIR`) or their home.
pub const NOWHERE: &str = "/dev/null/no-temp-dir-given";

/// The variables that say where a process writes: tmux's socket dir, the host's config, device
/// store and runtime dir (and its fallback under `TMPDIR`), and whatever else follows HOME.
pub const LOCATIONS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "TMUX_TMPDIR",
    "TMPDIR",
];

/// The mark `.ci/hygiene` gives a whole test run, so that whatever a test leaves running is
/// found when the run ends. Every child keeps it: [`command`](crate::command) leaves it in the
/// environment, and a test that clears a child's environment passes it on itself.
pub const RUN_MARK: &str = "HYGIENE_RUN_MARK";

/// The value of a location variable that lets nothing be written: [`NOWHERE`]`/<name>`, but
/// `/dev/null` itself for `TMUX_TMPDIR`: tmux passes over a `TMUX_TMPDIR` that does not exist
/// and puts its socket in `/tmp/tmux-<uid>` instead, while under an existing file it fails
/// ("couldn't create directory /dev/null/tmux-0").
pub fn nowhere(name: &str) -> PathBuf {
    if name == "TMUX_TMPDIR" {
        PathBuf::from("/dev/null")
    } else {
        Path::new(NOWHERE).join(name)
    }
}

/// Every location of [`LOCATIONS`] inside `dir`: a home at `dir/home` (its XDG dirs in their
/// usual places), `XDG_RUNTIME_DIR` at `dir/runtime`, tmux's sockets and temp files in `dir`.
pub fn in_temp_dirs(dir: &Path) -> Vec<(String, String)> {
    let home = dir.join("home");
    [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_RUNTIME_DIR", dir.join("runtime")),
        ("TMUX_TMPDIR", dir.to_owned()),
        ("TMPDIR", dir.to_owned()),
    ]
    .into_iter()
    .map(|(name, path)| (name.to_owned(), path.to_string_lossy().into_owned()))
    .collect()
}

/// What a child sees of the locations: runs `env` (a command built to run `env`), which must
/// succeed and print every variable of [`LOCATIONS`]; each and its value, sorted by name.
pub fn seen_locations(mut env: Command) -> Vec<(String, String)> {
    let out = env.output().unwrap();
    assert!(
        out.status.success(),
        "{env:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut seen: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(name, _)| LOCATIONS.contains(name))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    seen.sort();
    assert_eq!(seen.len(), LOCATIONS.len(), "{seen:?}");
    seen
}
