//! The rule every command line of the project is held to: each command says what it is for and
//! shows an example in its `--help`. [`undocumented`] walks a clap tree for it;
//! [`check_help`] asks a built binary.

use std::process::Command;

/// The commands under `command` (itself included, hidden ones too) that do not say what they
/// are for or show no example, by their full names (`name` is `command`'s).
pub fn undocumented(command: &clap::Command, name: &str) -> Vec<String> {
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

/// Runs `help` (a binary asked for help: `--help`, `-h`, `help <command>`) and fails the test
/// unless it exits 0 with an example on stdout and nothing on stderr.
pub fn check_help(help: &mut Command) {
    let ran = std::iter::once(help.get_program())
        .chain(help.get_args())
        .map(|word| word.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let out = help.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{ran}: {}, stderr: {stderr}",
        out.status
    );
    assert!(stdout.contains("Example"), "{ran}: no example in {stdout}");
}

#[cfg(test)]
mod tests {
    use super::undocumented;

    #[test]
    fn the_walk_reaches_nested_and_hidden_commands() {
        let documented = |name: &'static str| {
            clap::Command::new(name)
                .about("what it is for")
                .after_help("Example: it")
        };
        let tree = documented("top").subcommand(
            documented("hidden")
                .hide(true)
                .subcommand(clap::Command::new("bare").about("x"))
                .subcommand(documented("fine")),
        );
        assert_eq!(undocumented(&tree, "top"), ["top hidden bare: no example"]);
    }
}
