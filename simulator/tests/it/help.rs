//! Every `--help` of the kit's two binaries says what the command is for, with an example, and
//! exits 0.

use clap::CommandFactory;
use simulator::sim::cli::Cli;
use test_support::{check_help, undocumented};

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
        check_help(command(program).args(args));
    }
}

/// Each of the kit's binaries says its version, and the fake tmux says the tmux it stands in for
/// as tmux does (`tmux -V`, which a host may ask before anything else), with no state dir set.
#[test]
fn every_binary_says_its_version() {
    let runner = std::path::Path::new(SIM).with_file_name("corral-conformance");
    let mut binaries = vec![
        (SIM, "--version", "corral-sim "),
        (FAKE, "-V", "tmux 3.3a\n"),
        (FAKE, "--version", "corral-fake-tmux "),
    ];
    // `corral-conformance` is built only with the kit embedded (the default).
    if cfg!(feature = "embed") {
        binaries.push((runner.to_str().unwrap(), "--version", "corral-conformance "));
    }
    for (program, args, says) in binaries {
        let (out, err, code) = split(
            command(program)
                .arg(args)
                .env_remove("CORRAL_SIM_DIR")
                .output()
                .unwrap(),
        );
        assert_eq!((code, err.as_str()), (0, ""), "{program} {args}");
        assert!(out.starts_with(says), "{program} {args}: {out}");
    }
}
