//! `corral`: the reference host. Parses the command line, sets up logging to stderr, runs the
//! command, and maps its result to an exit code; nothing else happens here.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match reference_host::Cli::parse_args() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout with success; a bad command line is a start-up
            // failure (exit 1), never the refusal code 2 that `serve` reserves.
            let code = if err.use_stderr() { 1 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    init_logging(reference_host::default_log_filter(&cli.command));
    match reference_host::run(cli.command) {
        Ok(code) => ExitCode::from(code),
        // `corral receipts | head -1`: the reader took what it wanted.
        Err(err) if reference_host::stdout_closed(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Not `eprintln!`: it panics when stderr cannot be written (a full disk), which
            // would turn this exit 1 into a crash.
            let _ = writeln!(std::io::stderr(), "corral: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr only, filtered by `RUST_LOG` (default: `default`). A log line stderr cannot
/// take (a full disk, `/dev/full`) is dropped: a log must never stop what it records, and the
/// subscriber's own report of the failure would go to that same stderr through `eprintln!`,
/// which panics.
fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .log_internal_errors(false)
        .init();
}
