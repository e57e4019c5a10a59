//! Integration tests of `corral-remote`, run as a built binary: its configuration errors, the
//! headless client against the demo fleet served by the real host (approve, steer, a killed
//! connection, a revoked device), hosts that misbehave, and `corral-sim replay` judging the
//! replay harness over every golden session a client can play.

mod support;

mod config;
mod demo;
mod faults;
mod replay;
mod tui;
