//! The check every command line of the project is held to: each command says what it is for
//! and shows an example in its `--help`. The simulator's and xtask's tests walk their clap trees
//! with it.

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
