//! Integration tests of `corral-remote`, run as a built binary: its configuration errors, the
//! headless client against the demo fleet served by the real host (approve, steer, a killed
//! connection, a revoked device), hosts that misbehave, `corral-sim replay` judging the replay
//! harness over every golden session a client can play, the TUI in a scratch tmux server, and
//! end to end: the TUI over two demo fleets, one through a real sshd on loopback; that every
//! receipt under a churn of random keys (and random headless commands) answers the card the
//! screen showed; and that every command and config example of `docs/remote.md` works.

mod support;

mod churn;
mod config;
mod demo;
mod docs;
mod e2e;
mod faults;
mod replay;
mod tui;
