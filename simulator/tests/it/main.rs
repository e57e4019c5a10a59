//! Integration tests of corral-fake-tmux, corral-sim and corral-conformance, run as built binaries, each in its own
//! temp `CORRAL_SIM_DIR` with unique socket names; real tmux servers are always torn down.

mod api;
mod common;
mod demo;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod disguise;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod dying_host;
mod fake_tmux;
mod help;
mod hooks;
// `corral-conformance` is built only with the kit embedded (the default).
#[cfg(feature = "embed")]
mod installed;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod minimal_host;
mod observe;
mod parity;
mod replay;
// It runs `corral-conformance`, built only with the kit embedded.
#[cfg(feature = "embed")]
mod report_html;
mod sim;
mod transcripts;
