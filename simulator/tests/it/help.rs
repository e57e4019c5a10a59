//! Every command of `corral-sim` says what it is for, with an example. (The binaries, which the
//! kit's package builds, are asked for their `--help` and versions in its tests.)

use clap::CommandFactory;
use simulator::sim::cli::Cli;
use test_support::undocumented;

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
