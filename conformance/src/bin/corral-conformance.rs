//! `corral-conformance`: the conformance kit's runner, installed with `corral-sim` and
//! `corral-fake-tmux` (`cargo install --locked --path conformance`): the golden sessions,
//! fixtures, requirement ledger and schemas embedded, `corral-sim` and `corral-fake-tmux` found
//! beside it. Everything is in the [`conformance`] library.

use std::process::ExitCode;

use conformance::Launcher;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match conformance::run(&args, &Launcher::Installed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("corral-conformance: {err:#}");
            ExitCode::FAILURE
        }
    }
}
