//! Test support, defined once for every test module: a fleet on the fake or a scratch tmux server,
//! a per-test home (config, device store, runtime dir), a `corral serve` and a `corral daemon`
//! process driven over their real pipes, and the checks the modules share. Nothing lands in
//! `/tmp/tmux-<uid>` or the user's runtime dir: sockets and files stay in each test's temp dirs.
//! What the simulator's tests need too (child processes, the locations they write to) is in the
//! `test-support` crate.

// What many tests check, and how long they wait.
mod checks;
// The test fleet, brought up by `corral-sim`, and what its panes received.
mod fleet;
// A per-test home and the `corral` commands started from it.
mod home;
// A running `corral serve`.
mod host;
// A running `corral daemon`.
mod daemon;
// `corral event` run as an agent's hook.
mod hooks;
// Scripts in front of a home's tmux: a gate, a call log.
mod wrappers;
// The host's lock files from outside.
mod locks;
// What `/proc` says about the processes a test started.
mod procs;

/// Which tmux a test fleet runs on: the kit's one backend type.
pub use golden::Backend;

pub use checks::{
    PATIENCE, eventually, exit_code_within_patience, is_error, json_lines, row, runs,
};
pub use fleet::{Background, Fleet, fleet_with_phone};
pub use home::Home;
pub use hooks::{hook, run_hook};
pub use host::Host;
pub use locks::{hold, locks_of};
pub use procs::{fds, marked_processes, threads};
pub use wrappers::{CallLog, Gate, script};
