//! corral's reference host: the `corral` binary's command line and commands, the `serve` session
//! that speaks the fleet wire protocol over stdio, and the tmux and file plumbing below them.
//! `main.rs` only parses arguments and calls [`run`].
//!
//! The modules are listed in reading order, each with what it is for. They are private until a
//! bench, a fuzzer or a test needs to reach one.

// `eprintln!` panics on a stderr that cannot be written; the commands use `tell!` instead.
#![warn(clippy::print_stderr)]

// The command line, parsed into plain data.
mod cli;
// One function per command: arguments in, exit code out; the local commands' output.
mod commands;
// `corral serve --stdio`: start-up, the transport, one connection's session loop and the
// handlers of its requests.
mod serve;

// One tmux read becomes fleet rows.
mod fleet;
// Repository facts (name, branch, worktree) from a repository's own files.
mod git;
// Which rows a selector admits (pure).
mod selector;
// The edges between two reads of the fleet (pure).
mod edges;
// A pane's transcript: windows of event headers, events, cursors (no frames, no tmux).
pub mod transcript;

// `corral event`: an agent's hook stamps its pane, parks a permission request for a verdict.
mod hook;
// What a blocked pane is asking: card gathering after the pane read.
mod card;
// Dispatch: the host-wide ledger of slots.
pub mod act;
// Notifications: triggers, markers, sinks, the daemon and its socket, detached actions.
mod notify;
// The push path: a hook tells the running serve processes and the daemon which pane moved.
mod push;

// Where the host's files are.
mod paths;
// The config file.
mod config;
// The device store and the stat memo a live connection polls.
mod devices;
// OpenSSH public keys: fingerprints and `authorized_keys` lines for `device add --key`.
mod sshkey;
// The runtime dir and what lives in it (serve slots, the ledger, notification files).
mod runtime;
// Locks, whole-file writes and private modes, for every file processes share.
mod files;

// Where logs go: `tracing` to stderr.
mod logging;
// The only module that talks to tmux: its command lines, its reads.
mod tmux;
// The host's HTTP client: an agent's own API on loopback, with a time-out.
mod http;
// The only module that starts a child process.
mod process;
// The only module that starts a thread: every one blocks the signals the loops wait for.
mod threads;
// One read at a time off an event loop: a `serve`'s stream and the daemon.
mod offloop;
// The wall clock in epoch milliseconds.
mod clock;
// A warning that would repeat every cycle, logged once a minute.
mod repeated;

// Builders the unit tests share.
#[cfg(test)]
mod testing;

pub use cli::Cli;
pub use commands::{default_log_filter, run, stdout_closed};
pub use logging::init as init_logging;
