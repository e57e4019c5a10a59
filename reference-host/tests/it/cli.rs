//! What the command line says to a person: every `--help` shows what a command is for and an
//! example and exits 0, the device commands confirm what they did, and mistakes are said (a
//! tmux socket with no server, a `$CORRAL_CONFIG` naming no file).

use assert_cmd::Command;
use predicates::prelude::*;

use crate::support::Home;

/// `corral` with the home's environment, as an assert_cmd command.
fn corral(home: &Home) -> Command {
    Command::from_std(home.corral())
}

#[test]
fn every_help_says_what_the_command_is_for_with_an_example_and_exits_0() {
    let home = Home::new("unused");
    for args in [
        &["--help"][..],
        &["serve", "--help"],
        &["ls", "--help"],
        &["device", "--help"],
        &["device", "add", "--help"],
        &["device", "list", "--help"],
        &["device", "grant", "--help"],
        &["device", "revoke", "--help"],
        &["daemon", "--help"],
        &["doctor", "--help"],
        &["help", "mute"],
    ] {
        corral(&home)
            .args(args)
            .assert()
            .success()
            .stdout(predicate::str::contains("Example"))
            .stderr("");
    }
}
