//! `corral-sim`: fleet fixtures brought up on the fake or a real scratch tmux, steps, what panes
//! received, transcripts, hook payloads replayed through the host's `corral event`, the verdicts
//! dispatches left, fault injection, attached clients, the agent HTTP API, and what a notifier
//! left: pane ttys, pane options, and what its command was given (`record`). Every subcommand
//! finds the fleet through `$CORRAL_SIM_DIR/sim.json`, written by `up`; `demo` brings up and
//! animates a fleet of its own for a client app to connect to.
//!
//! The command line is parsed in [`cli`], the one module that knows clap; [`commands`] runs each
//! subcommand through the module that does its work, which takes plain options.

pub mod api;
pub mod cli;
pub mod commands;
pub mod demo;
pub mod git;
pub mod hook;
pub mod input;
pub mod keys;
pub mod observe;
pub mod park;
pub mod record;
pub mod simfile;
pub mod step;
pub mod tmux;
pub mod transcript;
pub mod up;

pub use commands::run;

/// Prints one line on stdout: the CLI's output.
#[allow(clippy::print_stdout, reason = "corral-sim's results go to stdout")]
pub fn print_line(line: &str) {
    println!("{line}");
}

/// Writes bytes on stdout as they are: output relayed from another program.
pub fn print_bytes(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}
