//! The host profile's CLI adapter: what a session asks of a host's own command line, written in
//! corral's words (`corral debug transitions --json`), as the host under test says it. A session
//! names an operation by corral's command line for it; for corral that line runs as written, for
//! another host the profile's command for the operation runs instead (through `sh`). A line that
//! stands for no operation is corral's own CLI: only corral runs it. corral's text form of an
//! operation (`corral doctor`) stands for the operation too: for another host the kit judges only
//! what the protocol fixes of a run (success or failure, the documents it prints), never corral's
//! prose or its exit codes.

use golden::profile::{Operation, fill};
use golden::{Error, HostProfile};

/// corral's command line for an operation, and its arguments by the names the profile's
/// templates use; `None` for a line that is corral's own CLI.
pub fn operation(args: &[String]) -> Option<(Operation, Vec<(&'static str, String)>)> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let one = |name: &'static str, value: &str| vec![(name, value.to_owned())];
    Some(match words.as_slice() {
        ["debug", "transitions", "--json"] | ["debug", "transitions"] => {
            (Operation::Transitions, Vec::new())
        }
        ["mute", "--pane", pane] => (Operation::Mute, one("pane", pane)),
        ["mute", "--pane", pane, "--clear"] => (Operation::Unmute, one("pane", pane)),
        ["debug", "notify-test", "--trigger", trigger] => {
            (Operation::NotifyTest, one("trigger", trigger))
        }
        ["doctor", "--json"] | ["doctor"] => (Operation::Doctor, Vec::new()),
        ["device", "add", name, "--key", key, "--scope", scope] => (
            Operation::Enrol,
            vec![
                ("name", (*name).to_owned()),
                ("key", (*key).to_owned()),
                ("scope", (*scope).to_owned()),
            ],
        ),
        ["device", "grant", device, scope] => (
            Operation::Grant,
            vec![
                ("device", (*device).to_owned()),
                ("scope", (*scope).to_owned()),
            ],
        ),
        ["device", "revoke", device] => (Operation::Revoke, one("device", device)),
        _ => return None,
    })
}

/// Whether `args` is corral's line for running the notification daemon.
pub fn is_daemon(args: &[String]) -> bool {
    args == ["daemon"]
}

/// How a host runs corral's command line `args`: `None` to run it as written (corral's own
/// profile), else the shell command the profile gives for it; an error naming what the profile
/// lacks.
pub fn command(profile: &HostProfile, cli: &str, args: &[String]) -> Result<Option<String>, Error> {
    if profile.is_corral() {
        return Ok(None);
    }
    let line = args.join(" ");
    if is_daemon(args) {
        let daemon = profile.daemon.as_ref().ok_or_else(|| {
            Error::new(format!(
                "`corral {line}` runs the notification daemon, and the host profile has no [daemon]"
            ))
        })?;
        return Ok(Some(fill(&daemon.start, &[("cli", cli)])));
    }
    let (operation, values) = operation(args).ok_or_else(|| {
        Error::new(format!(
            "`corral {line}` is corral's own command line, which only corral runs"
        ))
    })?;
    let template = profile.cli.get(&operation).ok_or_else(|| {
        Error::new(format!(
            "`corral {line}` asks for the operation `{}`, and the host profile's [cli] has no \
             command for it",
            serde_json::to_value(operation)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ))
    })?;
    let mut filled: Vec<(&str, &str)> = vec![("cli", cli)];
    filled.extend(values.iter().map(|(name, value)| (*name, value.as_str())));
    Ok(Some(fill(template, &filled)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    /// corral's profile, applied to corral's words, gives corral's own lines back: the adapter
    /// and the profile agree.
    #[test]
    fn corrals_profile_templates_are_corrals_own_lines() {
        let profile = HostProfile::corral();
        for line in [
            "debug transitions --json",
            "mute --pane %3",
            "mute --pane %3 --clear",
            "debug notify-test --trigger done",
            "doctor --json",
            "device add phone --key /k.pub --scope read",
            "device grant phone act:answer",
            "device revoke phone",
        ] {
            let args = words(line);
            let (operation, values) = operation(&args).unwrap_or_else(|| panic!("{line}"));
            let mut filled: Vec<(&str, &str)> = vec![("cli", "corral")];
            filled.extend(values.iter().map(|(n, v)| (*n, v.as_str())));
            assert_eq!(
                fill(&profile.cli[&operation], &filled),
                format!("corral {line}"),
                "{line}"
            );
            assert_eq!(command(&profile, "corral", &args), Ok(None));
        }
        assert_eq!(
            fill(
                &profile.daemon.as_ref().unwrap().start,
                &[("cli", "corral")]
            ),
            "corral daemon"
        );
    }

    #[test]
    fn another_host_runs_its_own_commands_and_lacks_what_it_does_not_say() {
        let mut profile = HostProfile::parse(golden::profile::STARTER, "starter").unwrap();
        assert_eq!(
            command(&profile, "/opt/herd", &words("mute --pane %3")),
            Ok(Some("/opt/herd mute %3".to_owned()))
        );
        assert_eq!(
            command(&profile, "/opt/herd", &words("daemon")),
            Ok(Some("/opt/herd daemon".to_owned()))
        );
        let err = command(&profile, "h", &words("ls --json"))
            .unwrap_err()
            .message;
        assert!(err.contains("corral's own command line"), "{err}");
        profile.cli.remove(&Operation::Transitions);
        let err = command(&profile, "h", &words("debug transitions --json"))
            .unwrap_err()
            .message;
        assert!(
            err.contains("no command for it") && err.contains("transitions"),
            "{err}"
        );
        profile.daemon = None;
        let err = command(&profile, "h", &words("daemon"))
            .unwrap_err()
            .message;
        assert!(err.contains("has no [daemon]"), "{err}");
    }
}
