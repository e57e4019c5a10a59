//! The agent simulator and the fake tmux, the library behind `corral-sim` and `corral-fake-tmux`
//! (the conformance package installs both binaries, thin mains over this crate, with its runner):
//! `corral-fake-tmux`, a stand-in for the subset of tmux the host uses (same output formats, exit
//! codes and error texts; state in files under `$CORRAL_SIM_DIR`); and `corral-sim`, which brings
//! fleet fixtures up on the fake or on a scratch real tmux server, applies steps, writes agent
//! transcripts, serves an agent HTTP API and animates a demo fleet. It knows nothing of the kit
//! that judges hosts with it: `corral-sim replay` is the kit's, handed in by the main.
//!
//! Read in this order:
//!
//! - [`env`](mod@env): `CORRAL_SIM_DIR`, the user id, the host's runtime dir, the clock;
//!   [`time`]: "now".
//! - [`fake`]: the fake tmux (command line, state, targets, formats, escaping, faults, logs).
//! - [`sim`]: `corral-sim` (backends, bring-up from a fixture golden expands, steps, what panes
//!   received, transcripts, hook replay, the agent API, and `demo`, an animated fleet for a client
//!   app).
//! - [`process`]: the one place that spawns child processes (tmux, git, `corral event`).

pub mod env;
pub mod fake;
pub mod process;
pub mod sim;
pub mod time;
