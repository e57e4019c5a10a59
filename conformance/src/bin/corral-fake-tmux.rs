//! `corral-fake-tmux`: tmux's command line for tests, state under `$CORRAL_SIM_DIR`. Thin: reads
//! argv and the environment, runs [`simulator::fake::run`], writes its bytes, exits with its code.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if matches!(args.as_slice(), [flag] if flag == "--help" || flag == "-h") {
        let _ = writeln!(std::io::stdout(), "{}", simulator::fake::HELP);
        return ExitCode::SUCCESS;
    }
    // `tmux -V` needs no server, and a host may ask it first: the version the fake stands in for.
    if matches!(args.as_slice(), [flag] if flag == "-V") {
        let _ = writeln!(std::io::stdout(), "{}", simulator::fake::VERSION);
        return ExitCode::SUCCESS;
    }
    // Its own version, as every binary of the project says it (tmux itself has no `--version`).
    if matches!(args.as_slice(), [flag] if flag == "--version") {
        let _ = writeln!(
            std::io::stdout(),
            "corral-fake-tmux {} (stands in for {})",
            env!("CARGO_PKG_VERSION"),
            simulator::fake::VERSION
        );
        return ExitCode::SUCCESS;
    }
    let sim_dir = match simulator::env::sim_dir() {
        Ok(dir) => dir,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "corral-fake-tmux: {message}");
            return ExitCode::FAILURE;
        }
    };
    let output = simulator::fake::run(&args, &sim_dir, simulator::fake::utf8_from_env());
    let _ = std::io::stdout().write_all(&output.stdout);
    let _ = std::io::stderr().write_all(&output.stderr);
    ExitCode::from(u8::try_from(output.code).unwrap_or(1))
}
