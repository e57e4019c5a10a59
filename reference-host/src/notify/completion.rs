//! A detached action (an `exec` action of a manifest, fired by `corral act`): its supervisor
//! runs the command and reports its completion through the notification sinks.
//!
//! `corral act` answers `spawned` at once; the command runs in a supervisor,
//! `corral internal exec-action …`, started in a process group of its own with its output
//! discarded, so it outlives `corral act` and its terminal. (A double fork would need `unsafe`,
//! which the workspace forbids; re-running the binary needs none.) The supervisor runs
//! `sh -c <command>` in the pane's working directory, kills it with everything it started past
//! its time-out, and reports the completion: `exited` with its exit code, `timeout`, or `error`
//! when it could not start or died of a signal. A mute does not silence a completion.

use std::path::PathBuf;
use std::time::Duration;

use schema::config::NotifyConfig;
use schema::notify::Completion;
use schema::{NotifyVar, Outcome};

use super::NotifyTmux;
use super::command::{Launch, Runner};
use super::sinks::{self, Sinks};
use crate::clock::now_ms;
use crate::process::{self, Invocation, ProcessError};
use crate::runtime::RuntimeDir;

/// One detached action, as its supervisor gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// Where it runs: the pane's working directory.
    pub cwd: Option<PathBuf>,
    /// The pane's tty, for the bell and OSC sinks.
    pub tty: String,
    /// What the completion reports (its outcome is filled in when the command ends).
    pub completion: Completion,
}

/// The completion of `pane`'s `action`, before its outcome is known.
#[cfg(test)]
pub fn pending(pane: &crate::fleet::Pane, action: &schema::Action) -> Completion {
    let row = &pane.row;
    Completion {
        agent: row.agent.clone(),
        pane: row.pane.clone(),
        action: action.clone(),
        outcome: Outcome::Spawned,
        session: row.session.clone(),
        locator: row.locator.clone(),
        repo: row.repo.clone().unwrap_or_default(),
        branch: row.branch.clone().unwrap_or_default(),
    }
}

/// Runs `detached` and waits for it; its outcome and exit code.
pub fn run(detached: &Detached) -> (Outcome, Option<i32>) {
    let c = &detached.completion;
    let invocation = Invocation::new("sh").arg("-c").arg(&detached.command);
    let spawn = process::Spawn {
        env: vec![
            (NotifyVar::Pane.as_str().into(), c.pane.clone().into()),
            (NotifyVar::Agent.as_str().into(), c.agent.clone().into()),
            (
                NotifyVar::Action.as_str().into(),
                c.action.to_string().into(),
            ),
            (NotifyVar::Locator.as_str().into(), c.locator.clone().into()),
        ],
        dir: detached.cwd.clone().filter(|dir| dir.is_dir()),
        ..process::Spawn::default()
    };
    let ended = process::start(&invocation, spawn).and_then(|child| child.wait(detached.timeout));
    match ended {
        Ok(finished) => match finished.status.code() {
            Some(code) => (Outcome::Exited, Some(code)),
            None => (Outcome::Error, None),
        },
        Err(ProcessError::Timeout { .. }) => (Outcome::Timeout, None),
        Err(err) => {
            tracing::warn!(%err, "a detached action did not start");
            (Outcome::Error, None)
        }
    }
}

/// Runs `detached`, then reports its completion through the sinks of `config`.
pub fn supervise<T: NotifyTmux>(
    detached: &Detached,
    config: &NotifyConfig,
    tmux: &T,
    runtime: &RuntimeDir,
    home: Option<&std::path::Path>,
) -> Completion {
    let (outcome, exit_code) = run(detached);
    let mut completion = detached.completion.clone();
    completion.outcome = outcome;
    let runner = Runner::new(runtime.clone(), config);
    let log = sinks::log_path(config, home);
    let sinks = Sinks {
        config,
        tmux,
        runner: &runner,
        launch: &Launch::Wait,
        log: log.as_deref(),
    };
    sinks.completion(&detached.tty, &completion, exit_code, now_ms());
    completion
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::Pane;
    use crate::testing::{ScriptedTmux, row};
    use schema::{Action, State};

    fn detached(command: &str, timeout: Duration, dir: &std::path::Path) -> Detached {
        let mut pane = Pane::of_row(row("%1", State::Idle));
        pane.row.repo = Some("api".into());
        Detached {
            command: command.into(),
            timeout,
            cwd: Some(dir.to_owned()),
            tty: dir.join("tty").to_string_lossy().into_owned(),
            completion: pending(&pane, &Action::parse("run-tests").unwrap()),
        }
    }

    #[test]
    fn an_action_runs_in_the_pane_s_directory_and_reports_its_exit_code() {
        let tmp = tempfile::tempdir().unwrap();
        let d = detached(
            "pwd > where; echo $CORRAL_ACTION >> where; exit 3",
            Duration::from_secs(10),
            tmp.path(),
        );
        assert_eq!(run(&d), (Outcome::Exited, Some(3)));
        let text = std::fs::read_to_string(tmp.path().join("where")).unwrap();
        assert_eq!(
            text,
            format!(
                "{}\nrun-tests\n",
                tmp.path().canonicalize().unwrap().display()
            )
        );
        let killed = detached("kill -9 $$", Duration::from_secs(10), tmp.path());
        assert_eq!(run(&killed), (Outcome::Error, None));
    }

    #[test]
    fn an_action_past_its_time_out_is_a_timeout() {
        let tmp = tempfile::tempdir().unwrap();
        let d = detached("sleep 30", Duration::from_millis(100), tmp.path());
        assert_eq!(run(&d), (Outcome::Timeout, None));
    }

    #[test]
    fn a_completion_reports_through_every_sink() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(&tmp.path().join("run")).unwrap();
        std::fs::write(tmp.path().join("tty"), b"").unwrap();
        let config: NotifyConfig = toml::from_str(&format!(
            "command = \"cat > {0}/payload\"\nlog = \"{0}/log\"\n",
            tmp.path().display()
        ))
        .unwrap();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        tmux.attach(&["c1"]);
        // No mute is consulted: supervise() never reads the pane's `@agent_mute_until`.
        let d = detached("true", Duration::from_secs(10), tmp.path());
        let done = supervise(&d, &config, &tmux, &runtime, None);
        assert_eq!(done.outcome, Outcome::Exited);
        let payload: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join("payload")).unwrap())
                .unwrap();
        assert_eq!(payload["outcome"], "exited");
        assert_eq!(payload["exit_code"], 0);
        assert_eq!(payload["repo"], "api");
        let log = std::fs::read_to_string(tmp.path().join("log")).unwrap();
        assert!(
            log.contains("\"action\":\"run-tests\",\"outcome\":\"exited\""),
            "{log}"
        );
        assert_eq!(std::fs::read(tmp.path().join("tty")).unwrap(), b"\x07");
        assert_eq!(tmux.messages().len(), 1);
    }
}
