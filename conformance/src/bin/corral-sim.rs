//! `corral-sim`: the agent simulator. Parses the command line, runs the command, and maps its
//! result to an exit code; everything else is in [`simulator::sim`], but `replay`, which is the
//! kit's harness ([`conformance::replay`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = simulator::sim::cli::Cli::parse_args();
    match simulator::sim::run(cli.command, |args| conformance::replay::main(args.into())) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("corral-sim: {err:#}");
            ExitCode::FAILURE
        }
    }
}
