//! `corral-sim`: fleet fixtures brought up on the fake or a real scratch tmux, steps, what panes
//! received, transcripts, hook payloads replayed through the host's `corral event`, the verdicts
//! dispatches left, fault injection, attached clients, the agent HTTP API, and what a notifier
//! left: pane ttys, pane options, and what its command was given (`record`). Every subcommand
//! finds the fleet through `$CORRAL_SIM_DIR/sim.json`, written by `up`.

pub mod api;
pub mod cli;
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

use std::path::Path;

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

/// Runs `corral-sim` with the process's arguments; returns the exit code.
pub fn main() -> std::process::ExitCode {
    use clap::Parser;
    let args = cli::Cli::parse();
    if let cli::Command::Replay(replay) = args.command {
        return crate::replay::main(replay);
    }
    let sim_dir = match crate::env::sim_dir() {
        Ok(dir) => dir,
        Err(message) => {
            eprintln!("corral-sim: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&sim_dir) {
        eprintln!("corral-sim: creating {}: {e}", sim_dir.display());
        return std::process::ExitCode::FAILURE;
    }
    let sim_dir = std::fs::canonicalize(&sim_dir).unwrap_or(sim_dir);
    if let cli::Command::Record(record) = &args.command {
        return record::main(record, &sim_dir);
    }
    match cli::run(args.command, Path::new(&sim_dir)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("corral-sim: {}", chain.join(": "));
            std::process::ExitCode::FAILURE
        }
    }
}
