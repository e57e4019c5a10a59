//! Integration tests of corral-fake-tmux and corral-sim, run as built binaries, each in its own
//! temp `CORRAL_SIM_DIR` with unique socket names; real tmux servers are always torn down.

mod api;
mod common;
mod fake_tmux;
mod hooks;
mod observe;
mod parity;
mod replay;
mod sim;
mod transcripts;
