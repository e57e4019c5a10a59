//! What the workspace's integration tests share, defined once: children that inherit none of the
//! developer's tmux or corral settings and write only where their test says, the lines of their
//! output, the binaries of
//! another package, the help walk, and the skip a test records when this machine cannot run its
//! subject. Each crate's own fixtures (a fleet, a home, a simulator dir) stay in its `tests/it/`.

// The variables that say where a process writes, and their values: nowhere, or a test's temp dirs.
mod locations;
// The one way the tests build a child process, and names no other test uses.
mod process;
// A child's output read as lines.
mod lines;
// The other package's binaries, built once per test run.
mod binaries;
// Every command says what it is for and shows an example.
mod help;
// A throwaway OpenSSH server on loopback.
pub mod sshd;
// A test that cannot run its subject here says so, and CI counts it.
mod skip;

pub use binaries::{Binaries, THIS_TEST};
pub use help::{check_help, undocumented};
pub use lines::{LINE_CAP, lines};
pub use locations::{LOCATIONS, NOWHERE, RUN_MARK, in_temp_dirs, nowhere, seen_locations};
pub use process::{command, unique};
pub use skip::{SKIPS, skipped};
