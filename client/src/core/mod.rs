//! The client without I/O, in reading order: [`session`] (one connection's protocol state
//! machine), [`fleet`] and [`attention`] (the model and when it rings), [`slot`] and [`answer`]
//! (what a dispatch quotes), [`backoff`] (when to reconnect), [`client`] (all of it together:
//! commands and host events in, requests and changes out).

pub mod session;

pub mod attention;
pub mod fleet;

pub mod answer;
pub mod slot;

pub mod backoff;

pub mod client;

#[cfg(test)]
pub(crate) mod testing;
