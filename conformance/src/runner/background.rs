//! The programs a case keeps running beside its hosts (a `corral daemon`): the `background` step
//! starts one under a name, in the environment a `run` step gives the same program and in a
//! process group of its own, and waits until its ready file exists; the `signal` step signals it
//! and, with `exit`, waits for its end and judges its exit code and stderr (`KILL` waits for its
//! end and judges nothing); the `write` step
//! writes a file of the case whole. Whatever still runs at the end of the case is stopped with
//! SIGTERM, then killed with its group.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use golden::pattern;
use golden::session::{Program, SignalName, SignalStep, Started, WriteFile};
use stdx::process::{Signal, kill_group, signal, signal_group, wait_or_kill, wait_until};

use super::content::Judge;
use super::{Case, StepError, StepResult};
use crate::adapter;
use crate::host::ended;

/// How long a program still running at the end of a case gets to stop after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A program a `background` step started.
#[derive(Debug)]
pub(super) struct Running {
    child: Child,
    /// Where its stderr goes (`logs/bg-<name>-<n>.err`).
    stderr: PathBuf,
    /// `program args...`, for messages.
    shown: String,
}

impl Running {
    /// Stops it (SIGTERM, then SIGKILL to its group after a grace) and reaps it. Whatever it
    /// left running in its group (a shell's `sleep` outlives the shell SIGTERM ended) is killed
    /// too. While a member lives, no new process can take the group's id; when none does, the
    /// signal finds no group (pids are handed out in sequence, so the leader's was not reused
    /// moments after it was reaped).
    pub(super) fn stop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            signal(self.child.id(), Signal::TERM);
            wait_or_kill(&mut self.child, STOP_GRACE);
        }
        kill_group(&mut self.child);
    }

    /// `KILL`: SIGKILL to the program alone and its end within the deadline; then whatever it
    /// left in its process group is killed too, so nothing of it outlives the step.
    fn kill(&mut self, deadline: Instant) -> anyhow::Result<()> {
        let _ = self.child.kill();
        let status = wait_until(&mut self.child, deadline)
            .map_err(|err| anyhow!("waiting for `{}`: {err}", self.shown))?;
        signal_group(self.child.id(), Signal::KILL);
        match status {
            Some(_) => Ok(()),
            None => Err(anyhow!("`{}` still runs after SIGKILL", self.shown)),
        }
    }

    /// Its stderr so far.
    pub(super) fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Case<'_> {
    /// `background`: starts the program and waits (within `timeout`) until its ready file
    /// exists.
    pub(super) fn background(&mut self, started: &Started, timeout: Duration) -> StepResult {
        if self.running.contains_key(&started.name) {
            return Err(StepError::new(format!(
                "a program named `{}` is already running",
                started.name
            )));
        }
        let args = self.texts(&started.args)?;
        // Another host's daemon is ready where its profile says, not where corral's is.
        let ready_file = match (&self.ctx.profile.daemon, started.program) {
            (Some(daemon), Program::Corral)
                if !self.ctx.profile.is_corral() && adapter::is_daemon(&args) =>
            {
                Some(&daemon.ready)
            }
            _ => started.ready_file.as_ref(),
        };
        let ready = ready_file.map(|file| self.case_path(file)).transpose()?;
        let mut cmd = self.program_command(started.program, &started.env, &args)?;
        cmd.current_dir(&self.dir).stdin(Stdio::null());
        self.programs += 1;
        let logs = self.dir.join("logs");
        let log = |suffix: &str| -> Result<(PathBuf, std::fs::File), StepError> {
            let path = logs.join(format!("bg-{}-{}.{suffix}", started.name, self.programs));
            let file = std::fs::File::create(&path)
                .map_err(|err| StepError::new(format!("creating {}: {err}", path.display())))?;
            Ok((path, file))
        };
        let (_, out) = log("out")?;
        let (stderr, err) = log("err")?;
        cmd.stdout(out).stderr(err);
        let shown = format!("{} {}", started.program.as_str(), args.join(" "));
        let child = cmd
            .spawn()
            .map_err(|err| StepError::new(format!("starting `{shown}`: {err}")))?;
        let mut running = Running {
            child,
            stderr,
            shown,
        };
        if let Some(ready) = ready {
            let waited = wait_ready(&mut running, &ready, Instant::now() + timeout);
            if let Err(message) = waited {
                running.stop();
                return Err(StepError::new(message));
            }
        }
        self.running.insert(started.name.clone(), running);
        Ok(())
    }

    /// `signal`: the signal, then, with `exit`, the end (within `timeout`) and its judgement.
    pub(super) fn signal(&mut self, step: &SignalStep, timeout: Duration) -> StepResult {
        let running = self.running.get_mut(&step.name).ok_or_else(|| {
            StepError::new(format!("no program named `{}` is running", step.name))
        })?;
        if let Ok(Some(status)) = running.child.try_wait() {
            return Err(StepError::new(format!(
                "`{}` already ended ({status}) before the {} signal; its stderr:\n{}",
                running.shown,
                step.signal.as_str(),
                running.stderr_text()
            )));
        }
        if step.signal == SignalName::Kill {
            let mut running = self.running.remove(&step.name).expect("found above");
            return running
                .kill(Instant::now() + timeout)
                .map_err(StepError::new);
        }
        signal(running.child.id(), os_signal(step.signal));
        let Some(code) = step.exit else {
            return Ok(());
        };
        let mut running = self.running.remove(&step.name).expect("found above");
        let status = wait_until(&mut running.child, Instant::now() + timeout)
            .map_err(|err| StepError::new(format!("waiting for `{}`: {err}", running.shown)))?;
        let Some(status) = status else {
            running.stop();
            return Err(StepError::new(format!(
                "`{}` did not exit within {} ms of the {} signal; its stderr:\n{}",
                running.shown,
                timeout.as_millis(),
                step.signal.as_str(),
                running.stderr_text()
            )));
        };
        let stderr = running.stderr_text();
        if status.code() != Some(code) {
            return Err(StepError::new(format!(
                "`{}` {}, expected exit {code}; its stderr:\n{stderr}",
                running.shown,
                ended(status)
            )));
        }
        let Some(expected) = &step.stderr else {
            return Ok(());
        };
        let what = format!("the stderr of `{}`", running.shown);
        let judge = Judge {
            what: &what,
            document: None,
            now: self.window(),
        };
        judge.judge(Some(expected), &stderr, &mut self.captures)
    }

    /// `write`: the file written whole (a temporary file renamed over it), its parents made.
    pub(super) fn write_file(&mut self, write: &WriteFile) -> StepResult {
        use std::os::unix::fs::PermissionsExt;
        let path = self.case_path(&write.path)?;
        let text =
            pattern::instantiate_text(&write.text, &self.captures).map_err(StepError::new)?;
        let mode = match &write.mode {
            Some(mode) => u32::from_str_radix(mode, 8)
                .map_err(|err| StepError::new(format!("mode {mode}: {err}")))?,
            None => 0o600,
        };
        let dir = path.parent().expect("a case path has a parent");
        let fail = |what: &Path, err: std::io::Error| {
            StepError::new(format!("writing {}: {err}", what.display()))
        };
        std::fs::create_dir_all(dir).map_err(|err| fail(dir, err))?;
        let temp = dir.join(format!(
            ".{}.kit-write",
            path.file_name().unwrap_or_default().to_string_lossy()
        ));
        std::fs::write(&temp, text).map_err(|err| fail(&temp, err))?;
        std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode))
            .map_err(|err| fail(&temp, err))?;
        std::fs::rename(&temp, &path).map_err(|err| fail(&path, err))
    }

    /// Stops every program still running (the end of the case).
    pub(super) fn stop_background(&mut self) {
        for running in self.running.values_mut() {
            running.stop();
        }
        self.running.clear();
    }
}

/// Waits until `ready` exists, failing early when the program ends first.
fn wait_ready(running: &mut Running, ready: &Path, deadline: Instant) -> anyhow::Result<()> {
    loop {
        if std::fs::symlink_metadata(ready).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = running.child.try_wait() {
            return Err(anyhow!(
                "`{}` {} before {} existed; its stderr:\n{}",
                running.shown,
                ended(status),
                ready.display(),
                running.stderr_text()
            ));
        }
        if Instant::now() >= deadline {
            return Err(anyhow!(
                "`{}` made no {} in time; its stderr:\n{}",
                running.shown,
                ready.display(),
                running.stderr_text()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The signal a step names.
fn os_signal(name: SignalName) -> Signal {
    match name {
        SignalName::Hup => Signal::HUP,
        SignalName::Int => Signal::INT,
        SignalName::Term => Signal::TERM,
        SignalName::Kill => Signal::KILL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(script: &str, dir: &Path) -> Running {
        let stderr = dir.join("err");
        let child = stdx::process::command("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Running {
            child,
            stderr,
            shown: format!("sh -c {script}"),
        }
    }

    #[test]
    fn a_program_that_ignores_sigterm_is_killed_after_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let mut running = start("trap '' TERM; sleep 30 & wait", dir.path());
        let started = Instant::now();
        running.stop();
        assert!(matches!(running.child.try_wait(), Ok(Some(_))));
        assert!(started.elapsed() < STOP_GRACE + Duration::from_secs(2));
    }

    #[test]
    fn a_kill_ends_a_program_that_ignores_sigterm_and_what_its_group_holds() {
        let dir = tempfile::tempdir().unwrap();
        let child_pid = dir.path().join("child");
        let mut running = start(
            &format!(
                "trap '' TERM; sleep 30 & echo $! > {}; wait",
                child_pid.display()
            ),
            dir.path(),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(&child_pid).map_or(true, |t| !t.ends_with('\n')) {
            assert!(
                Instant::now() < deadline,
                "the program never started its child"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        running
            .kill(Instant::now() + Duration::from_secs(5))
            .unwrap();
        let status = running.child.try_wait().unwrap().expect("reaped");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        // The child it left in its group is gone too.
        let pid = std::fs::read_to_string(&child_pid).unwrap();
        let gone = Instant::now() + Duration::from_secs(5);
        while Path::new(&format!("/proc/{}", pid.trim())).exists()
            && !std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
                .is_ok_and(|stat| stat.contains(") Z "))
        {
            assert!(
                Instant::now() < gone,
                "the program's child outlived the kill"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn waiting_for_a_ready_file_fails_early_when_the_program_ends() {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let mut running = start("echo broken config >&2; exit 1", dir.path());
        let err = wait_ready(
            &mut running,
            &ready,
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("exited with code 1 before"), "{err}");
        assert!(err.contains("broken config"), "{err}");
        let pid_file = dir.path().join("sleep.pid");
        let mut running = start(
            &format!(
                "sleep 30 & echo $! > {}; touch {}; wait",
                pid_file.display(),
                ready.display()
            ),
            dir.path(),
        );
        wait_ready(
            &mut running,
            &ready,
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap();
        let sleep = std::fs::read_to_string(&pid_file).unwrap();
        running.stop();
        assert!(
            gone(sleep.trim()),
            "the program's child {sleep} outlived the stop"
        );
    }

    /// True once no live process (a zombie is not) has this pid, within a second.
    fn gone(pid: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| Some(stat.rsplit_once(") ")?.1.starts_with('Z')));
            if state.is_none_or(|zombie| zombie) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
