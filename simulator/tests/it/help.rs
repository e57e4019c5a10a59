//! Every `--help` of the kit's two binaries says what the command is for, with an example, and
//! exits 0.

use clap::CommandFactory;
use simulator::help::undocumented;
use simulator::sim::cli::Cli;

use crate::common::{FAKE, SIM, command, split};

#[test]
fn every_corral_sim_command_says_what_it_is_for_with_an_example() {
    let command = Cli::command();
    command.clone().debug_assert();
    let missing = undocumented(&command, "corral-sim");
    assert!(missing.is_empty(), "{missing:#?}");
    // The walk reaches nested commands and catches one without an example.
    let bare = clap::Command::new("bare").about("x");
    let command = Cli::command().mut_subcommand("pane", |pane| pane.subcommand(bare));
    assert_eq!(
        undocumented(&command, "corral-sim"),
        ["corral-sim pane bare: no example"]
    );
}

#[test]
fn help_exits_0_with_an_example_on_stdout() {
    for (program, args) in [
        (SIM, &["--help"][..]),
        (SIM, &["up", "--help"]),
        (SIM, &["transcript", "write", "--help"]),
        (SIM, &["help", "replay"]),
        (FAKE, &["--help"]),
        (FAKE, &["-h"]),
    ] {
        let (out, err, code) = split(command(program).args(args).output().unwrap());
        assert_eq!((code, err.as_str()), (0, ""), "{program} {args:?}");
        assert!(out.contains("Example"), "{program} {args:?}: {out}");
    }
}
