//! The reference client's core: the client without I/O, in reading order: [`session`] (one connection's protocol state
//! machine), [`fleet`] and [`attention`] (the model and when it rings), [`slot`] and [`answer`]
//! (what a dispatch quotes), [`backoff`] (when to reconnect), [`client`] (all of it together:
//! commands and host events in, requests and changes out).
//!
//! It depends on `schema` alone: no I/O, no threads, no terminal and no clock (time is an
//! argument). The front-ends of `corral-remote` (the `client` crate), and any app that wants the
//! same rules, run it.

pub mod session;

pub mod attention;
pub mod fleet;

pub mod answer;
pub mod slot;

pub mod backoff;

pub mod client;

pub mod testing;
