//! Every `--help` of the kit's two binaries says what the command is for, with an example, and
//! exits 0.

use clap::CommandFactory;
use simulator::sim::cli::Cli;

use crate::common::{FAKE, SIM, command, split};

/// The commands under `command` (itself included, hidden ones too) that do not say what they
/// are for or show no example, by their full names.
fn undocumented(command: &clap::Command, name: &str) -> Vec<String> {
    let about = command.get_about().map(ToString::to_string);
    let after = command.get_after_help().map(ToString::to_string);
    let mut missing = Vec::new();
    if about.is_none_or(|about| about.trim().is_empty()) {
        missing.push(format!("{name}: no about text"));
    }
    if !after.is_some_and(|after| after.contains("Example")) {
        missing.push(format!("{name}: no example"));
    }
    for sub in command.get_subcommands() {
        missing.extend(undocumented(sub, &format!("{name} {}", sub.get_name())));
    }
    missing
}

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
