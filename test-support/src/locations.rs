//! The variables that say where a process writes ([`LOCATIONS`]) and the two sets of values a
//! test's child gets for them: [`nowhere`] until its test gives it temp dirs, then
//! [`in_temp_dirs`] (both of `stdx::world`, the workspace's one description of a temp world).
//! Nothing a test starts lands in `/tmp/tmux-<uid>`, the user's runtime dir or their home;
//! `.ci/hygiene` checks the run as a whole.

use std::path::{Path, PathBuf};
use std::process::Command;

pub use stdx::world::{LOCATIONS, in_temp_dirs};

/// Where a child process may write when its test gave it no directory of its own: nowhere.
/// Nothing can be created under `/dev/null`, not even by root, so a test that forgets its temp
/// dirs fails loudly instead of writing into `/tmp/tmux-<uid>`, the user's runtime dir
/// (`/tmp/corral-<uid>` without `XDG_RUNTIME_DIR`) or their home.
pub const NOWHERE: &str = "/dev/null/no-temp-dir-given";

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
