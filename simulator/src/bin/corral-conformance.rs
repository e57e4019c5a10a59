//! `corral-conformance`: the conformance kit's runner, installed with the simulator
//! (`cargo install --locked --path simulator`): the golden sessions, fixtures, requirement ledger
//! and schemas embedded, `corral-sim` and `corral-fake-tmux` found beside it. Everything is in
//! [`simulator::conformance`].

use std::process::ExitCode;

use simulator::conformance::{self, Launcher};

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
