//! The notification subsystem (docs/protocol.md "Notifications"): deciding what to announce from
//! reads of the fleet, claiming it through the pane's marker, and delivering it to every sink.
//!
//! Read in this order:
//!
//! - this file: [`NotifyTmux`], what the notifier asks of tmux (the real one or a test's script).
//! - `fire.rs`: one pane's fires: evaluate, claim, deliver; the daemonless path's entry.
//! - `trigger.rs`: which triggers a pane calls for, from one read (pure); the markers.
//! - `markers.rs`: the guarded claim of a marker before a fire.
//! - `payload.rs`: the payload, log line, environment and status text of a fire or completion.
//! - `terminal.rs`: the bell and OSC bytes, and writing a tty.
//! - `command.rs`: command resolution, running it, the cap, the failure record.
//! - `sinks.rs`: the sinks, enumerated in their spec order, and one fire through every one.
//! - `ring.rs`, `progress.rs`: the transition ring and the per-window progress rollup (pure).
//! - `notifier.rs`: one daemon cycle over a read: ring, progress, triggers.
//! - `server.rs`: which tmux server a daemon serves (its lock and socket names).
//! - `socket.rs`: the daemon's unix socket: the ring for `corral debug transitions`, a hook's
//!   transition, a liveness ping.
//! - `daemon.rs`: `corral daemon`: one per server, the event loop, signals, reload.
//! - `completion.rs`: a detached `exec` action, run by its supervisor and reported when it ends.
//!
//! [`fire::fire_from_event`] is the one entry of the daemonless path (`corral event` with
//! `notify.from_event`): the same triggers, claim and sinks as the daemon's.

pub mod command;
pub mod completion;
pub mod daemon;
pub mod fire;
pub mod markers;
pub mod notifier;
pub mod payload;
pub mod progress;
pub mod ring;
pub mod server;
pub mod sinks;
pub mod socket;
pub mod terminal;
pub mod trigger;

pub use fire::{Notify, fire_from_event, supervised_launch};

use crate::tmux::write::{Claimed, MarkerClaim, OptionWrite, PanePlace};
use crate::tmux::{Tmux, TmuxError};

/// What the notifier asks of tmux beyond the fleet read: [`Tmux`] itself, or a script in tests.
pub trait NotifyTmux {
    /// Claims a marker and, when the claim is won, shows the fire's status-line message, in one
    /// invocation ([`MarkerClaim`]).
    fn claim_marker(&self, claim: &MarkerClaim<'_>) -> Result<Claimed, TmuxError>;
    /// A pane's tty and directory, read on their own: a fire whose claim did not print them.
    fn pane_place(&self, pane: &str) -> Result<Option<PanePlace>, TmuxError>;
    /// Sets and unsets pane options.
    fn set_pane_options(&self, pane: &str, writes: &[OptionWrite<'_>]) -> Result<(), TmuxError>;
    /// The attached clients.
    fn list_clients(&self) -> Result<Vec<String>, TmuxError>;
    /// A message on those clients' status lines.
    fn display_message(&self, clients: &[String], message: &str) -> Result<(), TmuxError>;
}

impl NotifyTmux for Tmux {
    fn claim_marker(&self, claim: &MarkerClaim<'_>) -> Result<Claimed, TmuxError> {
        Tmux::claim_marker(self, claim)
    }

    fn pane_place(&self, pane: &str) -> Result<Option<PanePlace>, TmuxError> {
        Tmux::pane_place(self, pane)
    }

    fn set_pane_options(&self, pane: &str, writes: &[OptionWrite<'_>]) -> Result<(), TmuxError> {
        Tmux::set_pane_options(self, pane, writes)
    }

    fn list_clients(&self) -> Result<Vec<String>, TmuxError> {
        Tmux::list_clients(self)
    }

    fn display_message(&self, clients: &[String], message: &str) -> Result<(), TmuxError> {
        Tmux::display_message(self, clients, message)
    }
}

#[cfg(test)]
mod tests;
