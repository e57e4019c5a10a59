//! Integration tests of corral-sim and corral-fake-tmux, run as built binaries (the kit's package
//! builds them: `common`), each in its own temp `CORRAL_SIM_DIR` with unique socket names; real
//! tmux servers are always torn down.

mod api;
mod common;
mod demo;
mod fake_tmux;
mod help;
mod hooks;
mod observe;
mod parity;
mod sim;
mod transcripts;
