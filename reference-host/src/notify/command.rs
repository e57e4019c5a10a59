//! The notification command (docs/protocol.md "Command resolution"): which command a trigger
//! resolves to, running it with `sh -c` (payload on stdin, `CORRAL_*` environment, output
//! discarded), and the record of the last failure.
//!
//! At most [`BOUND`] notification commands run at once on the host, whichever process started
//! them: each holds a lock file in `<runtime>/notify/commands/` while it runs (the serve slots'
//! mechanism, released by the kernel when its holder dies). A fire that finds every slot taken
//! does not run its command and records that as its failure. A command still running after
//! `[notify] command_timeout_s` (default 60 s) is killed with everything it started, and
//! recorded.
//!
//! The record (`<runtime>/notify/command-failure.json`, a `CommandFailure`) holds the last
//! failure only: a command that cannot start, exits non-zero, dies of a signal, times out or is
//! skipped at the cap writes it; a command that exits 0 removes it.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Duration;

use schema::Trigger;
use schema::config::NotifyConfig;
use schema::notify::CommandFailure;

use crate::clock::now_ms;
use crate::files;
use crate::process::{self, Background, Finished, Invocation, ProcessError};
use crate::runtime::RuntimeDir;
use crate::runtime::slots::Slot;
use schema::NotifyEnv;

/// Most notification commands running at once on the host.
pub const BOUND: u32 = 8;

/// The command `trigger` runs: its own sub-table's `command`, else `notify.command`.
pub fn resolve<'c>(config: &'c NotifyConfig, trigger: &Trigger) -> Option<&'c str> {
    let own = match trigger {
        Trigger::Blocked => config.blocked.as_ref().and_then(|t| t.command.as_deref()),
        Trigger::Done => config.done.as_ref().and_then(|t| t.command.as_deref()),
        Trigger::ContextHigh => config
            .context_high
            .as_ref()
            .and_then(|t| t.command.as_deref()),
        Trigger::Stall => config.stall.as_ref().and_then(|t| t.command.as_deref()),
        Trigger::Other(_) => None,
    };
    own.or(config.command.as_deref())
        .filter(|c| !c.trim().is_empty())
}

/// One run of a command.
#[derive(Debug, Clone)]
pub struct Job {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// What it reads on stdin (the payload).
    pub stdin: Vec<u8>,
    /// Its `CORRAL_*` environment.
    pub env: NotifyEnv,
}

/// How a command is launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// In the background of this long-lived process: a thread waits for it and records the
    /// result (the daemon).
    Background,
    /// Here, waiting for it (`corral debug notify-test`, a supervisor).
    Wait,
    /// Through a supervisor, `<exe> internal notify-command`, that outlives this short-lived
    /// process (an agent's event hook must not wait for a command).
    Supervised {
        /// The `corral` binary.
        exe: PathBuf,
    },
}

/// How a command that was waited for ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Its stderr, when it was captured.
    pub stderr: Vec<u8>,
    /// Why it failed; `None` when it exited 0.
    pub failure: Option<String>,
}

/// Runs notification commands for one runtime dir.
#[derive(Debug, Clone)]
pub struct Runner {
    runtime: RuntimeDir,
    timeout: Duration,
}

impl Runner {
    /// A runner whose slots and failure record live in `runtime`, whose commands may run for
    /// `config`'s `command_timeout_s`.
    pub fn new(runtime: RuntimeDir, config: &NotifyConfig) -> Runner {
        Runner::with_timeout(runtime, Duration::from_secs(config.command_timeout_s))
    }

    /// A runner whose commands may run for `timeout`.
    pub fn with_timeout(runtime: RuntimeDir, timeout: Duration) -> Runner {
        Runner { runtime, timeout }
    }

    /// Launches `job` as `launch` says; failures are recorded, never returned.
    pub fn launch(&self, job: Job, launch: &Launch) {
        match launch {
            Launch::Wait => {
                self.run(job, false);
            }
            Launch::Background => {
                let Some((slot, child)) = self.start(&job, false) else {
                    return;
                };
                let runner = self.clone();
                crate::threads::spawn(move || {
                    let result = child.wait(runner.timeout);
                    runner.settle(&job.command, &result);
                    drop(slot);
                });
            }
            Launch::Supervised { exe } => {
                let invocation = self.supervisor(exe, &job.command);
                let spawn = process::Spawn {
                    stdin: Some(job.stdin.clone()),
                    ..super::payload::spawn_env(&job.env)
                };
                match process::start(&invocation, spawn) {
                    Ok(child) => child.detach(),
                    Err(err) => self.record(&job.command, &format!("{err}")),
                }
            }
        }
    }

    /// The supervisor's command line for `command`: it gets this runner's time-out, in whole
    /// seconds (at least 1), since it reads no config of its own.
    fn supervisor(&self, exe: &std::path::Path, command: &str) -> Invocation {
        Invocation::new(exe)
            .args(["internal", "notify-command", "--timeout-s"])
            .arg(self.timeout.as_secs().max(1).to_string())
            .arg("--command")
            .arg(command)
    }

    /// Runs `job` here and waits for it (at most the time-out), recording the result.
    pub fn run(&self, job: Job, capture_stderr: bool) -> Ran {
        let Some((slot, child)) = self.start(&job, capture_stderr) else {
            return Ran {
                exit_code: None,
                stderr: Vec::new(),
                failure: Some(format!(
                    "not run: {BOUND} notification commands were still running"
                )),
            };
        };
        let result = child.wait(self.timeout);
        let failure = self.settle(&job.command, &result);
        drop(slot);
        let (exit_code, stderr) = match result {
            Ok(Finished { status, stderr }) => (status.code(), stderr),
            Err(_) => (None, Vec::new()),
        };
        Ran {
            exit_code,
            stderr,
            failure,
        }
    }

    /// Claims a slot and starts the command; records why when it cannot.
    fn start(&self, job: &Job, capture_stderr: bool) -> Option<(Slot, Background)> {
        let slot = match crate::runtime::slots::claim(&self.runtime.command_slots(), BOUND) {
            Ok(Some(slot)) => slot,
            Ok(None) => {
                let reason = format!("not run: {BOUND} notification commands were still running");
                self.record(&job.command, &reason);
                return None;
            }
            Err(err) => {
                self.record(&job.command, &format!("not run: no command slot: {err}"));
                return None;
            }
        };
        let invocation = Invocation::new("sh").arg("-c").arg(&job.command);
        let spawn = process::Spawn {
            stdin: Some(job.stdin.clone()),
            capture_stderr,
            ..super::payload::spawn_env(&job.env)
        };
        match process::start(&invocation, spawn) {
            Ok(child) => Some((slot, child)),
            Err(err) => {
                self.record(&job.command, &err.to_string());
                None
            }
        }
    }

    /// Records or clears the failure for how a run ended; the failure's reason.
    fn settle(&self, command: &str, result: &Result<Finished, ProcessError>) -> Option<String> {
        let reason = match result {
            Ok(Finished { status, .. }) if status.success() => {
                clear_failure(&self.runtime);
                return None;
            }
            Ok(Finished { status, .. }) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => format!("ended with {status}"),
            },
            Err(ProcessError::Timeout { after, .. }) => {
                format!("did not finish within {after:?} and was killed")
            }
            Err(err) => err.to_string(),
        };
        self.record(command, &reason);
        Some(reason)
    }

    fn record(&self, command: &str, reason: &str) {
        tracing::warn!(%command, %reason, "notification command failed");
        let failure = CommandFailure {
            at_ms: now_ms(),
            command: command.to_owned(),
            reason: reason.to_owned(),
        };
        if let Err(err) = record_failure(&self.runtime, &failure) {
            tracing::warn!(%err, "the command failure could not be recorded");
        }
    }
}

/// Writes `failure` as the last one.
pub fn record_failure(runtime: &RuntimeDir, failure: &CommandFailure) -> std::io::Result<()> {
    let path = runtime.command_failure();
    if let Some(dir) = path.parent() {
        files::create_private_dir(dir)?;
    }
    let mut bytes = serde_json::to_vec(failure).expect("a failure always encodes");
    bytes.push(b'\n');
    files::write_atomic(&path, &bytes, 0o600)
}

/// Removes the record: the last command ran clean.
pub fn clear_failure(runtime: &RuntimeDir) {
    match std::fs::remove_file(runtime.command_failure()) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => tracing::warn!(%err, "the command failure could not be cleared"),
    }
}

/// The last recorded failure, `None` when there is none; an error when the record is unreadable.
pub fn last_failure(runtime: &RuntimeDir) -> anyhow::Result<Option<CommandFailure>> {
    let path = runtime.command_failure();
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|err| anyhow::anyhow!("{}: {err}", path.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(anyhow::anyhow!("{}: {err}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::NotifyVar;

    fn config(text: &str) -> NotifyConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_trigger_s_own_command_wins_and_notify_command_is_the_fallback() {
        let c = config(
            "command = \"all\"\n[blocked]\ncommand = \"mine\"\n[done]\n[stall]\nthreshold_s = 1\ncommand = \"slow\"\n",
        );
        assert_eq!(resolve(&c, &Trigger::Blocked), Some("mine"));
        assert_eq!(
            resolve(&c, &Trigger::Done),
            Some("all"),
            "a table without command"
        );
        assert_eq!(resolve(&c, &Trigger::ContextHigh), Some("all"), "no table");
        assert_eq!(resolve(&c, &Trigger::Stall), Some("slow"));
        let none = config("[blocked]\ncommand = \"mine\"\n");
        assert_eq!(resolve(&none, &Trigger::Done), None);
        assert_eq!(resolve(&config("command = \"  \"\n"), &Trigger::Done), None);
    }

    struct World {
        dir: tempfile::TempDir,
        runner: Runner,
        runtime: RuntimeDir,
    }

    fn world() -> World {
        let dir = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(&dir.path().join("run")).unwrap();
        World {
            runner: Runner::new(runtime.clone(), &NotifyConfig::default()),
            runtime,
            dir,
        }
    }

    fn job(command: &str) -> Job {
        Job {
            command: command.into(),
            stdin: b"{\"schema\":2}".to_vec(),
            env: NotifyEnv {
                set: vec![(NotifyVar::Agent, "claude".into())],
                remove: vec![NotifyVar::Title],
            },
        }
    }

    #[test]
    fn the_command_reads_the_payload_and_its_environment() {
        let w = world();
        let out = w.dir.path().join("out");
        let script = format!(
            "{{ cat; printf \" $CORRAL_AGENT ${{CORRAL_TITLE-none}}\"; }} > {}",
            out.display()
        );
        let ran = w.runner.run(job(&script), true);
        assert_eq!(ran.failure, None);
        assert_eq!(ran.exit_code, Some(0));
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "{\"schema\":2} claude none"
        );
    }

    #[test]
    fn a_failure_is_recorded_and_the_next_clean_run_clears_it() {
        let w = world();
        let ran = w.runner.run(job("echo oops >&2; exit 3"), true);
        assert_eq!(ran.exit_code, Some(3));
        assert_eq!(ran.stderr, b"oops\n");
        let failure = last_failure(&w.runtime).unwrap().unwrap();
        assert_eq!(failure.reason, "exited with status 3");
        assert_eq!(failure.command, "echo oops >&2; exit 3");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(w.runtime.command_failure())
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        w.runner.run(job("kill -9 $$"), false);
        assert_eq!(
            last_failure(&w.runtime).unwrap().unwrap().reason,
            "killed by signal 9",
            "the last failure wins"
        );
        w.runner.run(job("true"), false);
        assert_eq!(last_failure(&w.runtime).unwrap(), None);
    }

    #[test]
    fn a_command_past_its_time_out_is_killed_and_recorded() {
        let w = world();
        let runner = Runner::with_timeout(w.runtime.clone(), Duration::from_millis(100));
        let ran = runner.run(job("sleep 30"), false);
        assert_eq!(ran.exit_code, None);
        assert_eq!(
            last_failure(&w.runtime).unwrap().unwrap().reason,
            "did not finish within 100ms and was killed"
        );
    }

    #[test]
    fn the_time_out_is_the_config_s_command_timeout_s_60_s_by_default() {
        let w = world();
        assert_eq!(w.runner.timeout, Duration::from_secs(60));
        let runner = Runner::new(w.runtime.clone(), &config("command_timeout_s = 1\n"));
        assert_eq!(runner.timeout, Duration::from_secs(1));
        let started = std::time::Instant::now();
        let ran = runner.run(job("sleep 30"), false);
        assert_eq!(ran.exit_code, None);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "killed at its limit"
        );
        assert_eq!(
            ran.failure.as_deref(),
            Some("did not finish within 1s and was killed")
        );
        assert_eq!(
            last_failure(&w.runtime).unwrap().unwrap().reason,
            "did not finish within 1s and was killed"
        );
    }

    #[test]
    fn past_the_bound_a_command_is_not_run_and_that_is_recorded() {
        let w = world();
        let held: Vec<_> = (0..BOUND)
            .map(|_| {
                crate::runtime::slots::claim(&w.runtime.command_slots(), BOUND)
                    .unwrap()
                    .unwrap()
            })
            .collect();
        let out = w.dir.path().join("ran");
        let ran = w
            .runner
            .run(job(&format!("touch {}", out.display())), false);
        assert!(ran.failure.unwrap().starts_with("not run: 8"));
        assert!(!out.exists());
        drop(held);
        // A process another test forks in the same moment holds copies of the slots' lock fds
        // until it execs (they close on exec), so a slot may take a moment to be free.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let ran = w
                .runner
                .run(job(&format!("touch {}", out.display())), false);
            if out.exists() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "a freed slot runs the next command: {:?}",
                ran.failure
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_background_command_records_its_failure_when_it_ends() {
        let w = world();
        w.runner.launch(job("exit 7"), &Launch::Background);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while last_failure(&w.runtime).unwrap().is_none() {
            assert!(std::time::Instant::now() < deadline, "no failure recorded");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            last_failure(&w.runtime).unwrap().unwrap().reason,
            "exited with status 7"
        );
    }

    #[test]
    fn a_supervisor_that_cannot_start_is_recorded() {
        let w = world();
        let launch = Launch::Supervised {
            exe: w.dir.path().join("no-such-corral"),
        };
        w.runner.launch(job("true"), &launch);
        let failure = last_failure(&w.runtime).unwrap().unwrap();
        assert!(failure.reason.starts_with("cannot start"), "{failure:?}");
    }

    #[test]
    fn the_supervisor_gets_the_configured_time_out() {
        let w = world();
        let runner = Runner::new(w.runtime.clone(), &config("command_timeout_s = 7\n"));
        let argv = runner.supervisor(std::path::Path::new("/bin/corral"), "ntfy publish x");
        assert_eq!(
            argv.argv(),
            [
                "/bin/corral",
                "internal",
                "notify-command",
                "--timeout-s",
                "7",
                "--command",
                "ntfy publish x"
            ]
        );
    }
}
