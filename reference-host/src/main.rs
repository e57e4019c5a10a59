//! `corral`: the reference host. Parses the command line, sets up logging to stderr, runs the
//! command, and maps its result to an exit code; nothing else happens here.

use std::io::Write;
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
    reference_host::init_logging(&cli.command);
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
