//! Helpers: the kit's binaries, the reference host built beside them, and a program's locations
//! pointed at a temp dir. What every crate's tests share (child processes, the locations they
//! write to, another package's binaries) is in the `test-support` crate.

use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::{Binaries, LOCATIONS};

pub const FAKE: &str = env!("CARGO_BIN_EXE_corral-fake-tmux");
pub const SIM: &str = env!("CARGO_BIN_EXE_corral-sim");

/// The reference host's binary, which the tests that run a host need.
const HOST: Binaries = Binaries {
    beside: SIM,
    package: "reference-host",
    names: &["corral"],
};

/// The reference host, built beside the kit's binaries (by the first test that needs it).
pub fn corral() -> PathBuf {
    HOST.path("corral")
}

/// The one place the tests build a process: `test-support`'s, in a UTF-8 locale (what the fake
/// tmux and a real one print depends on it). It inherits none of the developer's tmux or corral
/// settings, and every location points nowhere until the test gives it a temp dir
/// ([`locate_in`]).
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = test_support::command(program);
    command.env("LC_ALL", "C.UTF-8");
    command
}

/// Points every location a program writes to (HOME, the XDG dirs, TMPDIR, TMUX_TMPDIR) at a dir
/// of its own under `env`, made here.
pub fn locate_in(command: &mut Command, env: &Path) {
    for name in LOCATIONS {
        let dir = env.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        command.env(name, dir);
    }
}
