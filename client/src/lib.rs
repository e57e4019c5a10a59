//! corral-remote, the reference client of the fleet wire protocol: one terminal that watches and
//! answers agents on many hosts. Read in this order:
//!
//! - [`cli`] and [`config`]: the command line, the hosts (`remote.toml`, `--host`, `--local`)
//!   and what a ring does.
//! - The client without I/O (the protocol session, the model, slots, answers) is its own crate,
//!   `client_core`, which depends on `schema` alone.
//! - [`process`], [`transport`], [`connection`]: a host's `serve` as a child process, lines over
//!   its pipes, and one thread per host that reconnects.
//! - [`notify`]: the ring command; [`signals`]: SIGTERM, SIGINT, SIGHUP as events.
//! - [`app`]: all of it running, one channel of events for the front-ends.
//! - The front-ends over the same app: [`tui`], [`headless`] (`--ndjson`) and [`replay`]
//!   (`--replay`, for `corral-sim replay --app`).

pub mod cli;
pub mod config;

pub mod connection;
pub mod process;
pub mod transport;

pub mod notify;
pub mod signals;

pub mod app;

pub mod headless;
pub mod replay;
pub mod tui;
