//! Every `--help` of the kit's binaries says what the command is for, with an example, and exits
//! 0; each says its version.

use test_support::check_help;

use crate::common::{FAKE, SIM, command};

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
        let output = command(program)
            .arg(args)
            .env_remove("CORRAL_SIM_DIR")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&output.stdout);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            (output.status.code(), err.as_ref()),
            (Some(0), ""),
            "{program} {args}"
        );
        assert!(out.starts_with(says), "{program} {args}: {out}");
    }
}
