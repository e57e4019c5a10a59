//! The conformance kit, installable on its own: `corral-conformance`, the runner that plays the
//! golden sessions (embedded in it) against a host; `corral-fake-tmux`, a stand-in for the subset
//! of tmux the host uses (same output formats, exit codes and error texts; state in files under
//! `$CORRAL_SIM_DIR`); and `corral-sim`, which brings fleet fixtures up on the fake or on a
//! scratch real tmux server, applies steps, writes agent transcripts and serves an agent HTTP API.
//!
//! Read in this order:
//!
//! - [`env`](mod@env): `CORRAL_SIM_DIR`, the user id, the host's runtime dir, the clock; [`time`]: "now"
//!   and moments relative to it.
//! - [`fake`]: the fake tmux (command line, state, targets, formats, escaping, faults, logs).
//! - [`sim`]: `corral-sim` (backends, bring-up, steps, what panes received, transcripts, hook
//!   replay, the agent API, and `demo`, an animated fleet for a client app).
//! - [`replay`]: `corral-sim replay`, the host's half of a golden session, judging a client app
//!   (over stdio, or a directory of sessions against an app it starts).
//! - [`conformance`]: `corral-conformance` (and `cargo xtask conformance`), the client's half
//!   against a host; it starts `corral-sim` as a program, never calls it.
//! - [`process`]: the one place that spawns child processes (tmux, git, `corral event`).

pub mod conformance;
pub mod env;
pub mod fake;
pub mod process;
pub mod replay;
pub mod sim;
pub mod time;
