//! The simulator driver: `corral-sim up` before a case, `corral-sim <args>` for its `sim` steps,
//! and `corral-sim down` after it, on success, failure or timeout alike (on drop).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use golden::{Backend, SimFile};

use super::process::{self, Finished};

/// A simulator standing up one case's fleet.
#[derive(Debug)]
pub struct Sim {
    driver: Driver,
    /// What `up` answered.
    pub up: SimFile,
}

/// Runs `corral-sim` for one case, and `corral-sim down` when dropped: from the moment `up` is
/// attempted, so a fleet half brought up is torn down too.
#[derive(Debug)]
struct Driver {
    bin: PathBuf,
    env: Vec<(String, String)>,
    logs: PathBuf,
    runs: usize,
    down: bool,
    background: Vec<Child>,
}

/// The outcome of one `corral-sim` run.
#[derive(Debug)]
pub struct Ran {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `corral-sim <args>` to its end, its output kept in `logs/sim-<tag>.out` and `.err`.
fn run(
    bin: &Path,
    args: &[String],
    env: &[(String, String)],
    logs: &Path,
    tag: &str,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> anyhow::Result<Finished> {
    let mut cmd = stdx::process::command(bin);
    cmd.args(args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.env_remove("TMUX").env_remove("TMUX_PANE");
    process::run_to_end(
        &mut cmd,
        stdin,
        &logs.join(format!("sim-{tag}.out")),
        &logs.join(format!("sim-{tag}.err")),
        timeout,
    )
    .map_err(|err| anyhow!("`corral-sim {}`: {err}", args.join(" ")))
}

impl Ran {
    fn of(finished: Finished) -> Ran {
        Ran {
            ok: finished.status.success(),
            stdout: String::from_utf8_lossy(&finished.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&finished.stderr).into_owned(),
        }
    }
}

/// The fleet a case brings up: its fixture, on a backend and tmux socket, for a host whose
/// runtime dir is `runtime_dir`.
#[derive(Debug)]
pub struct Fleet<'a> {
    pub fixture: &'a Path,
    pub backend: Backend,
    pub socket: &'a str,
    pub runtime_dir: &'a Path,
}

impl Sim {
    /// Sets a variable for every later `corral-sim` run (the host's names for the fleet's
    /// tmux, known once the fleet is up).
    pub fn set_env(&mut self, name: &str, value: &str) {
        self.driver.env.retain(|(known, _)| known != name);
        self.driver.env.push((name.to_owned(), value.to_owned()));
    }

    /// Brings a fleet up.
    pub fn up(
        bin: &Path,
        fleet: &Fleet<'_>,
        env: Vec<(String, String)>,
        logs: &Path,
        timeout: Duration,
    ) -> anyhow::Result<Sim> {
        let args = vec![
            "up".to_owned(),
            fleet.fixture.display().to_string(),
            "--backend".to_owned(),
            fleet.backend.as_str().to_owned(),
            "--socket".to_owned(),
            fleet.socket.to_owned(),
            "--runtime-dir".to_owned(),
            fleet.runtime_dir.display().to_string(),
        ];
        // `down` runs on drop even when `up` fails half-way.
        let driver = Driver {
            bin: bin.to_owned(),
            env,
            logs: logs.to_owned(),
            runs: 0,
            down: false,
            background: Vec::new(),
        };
        let ran = Ran::of(run(bin, &args, &driver.env, logs, "up", None, timeout)?);
        if !ran.ok {
            return Err(anyhow!(
                "`corral-sim {}` failed: {}",
                args.join(" "),
                ran.stderr.trim()
            ));
        }
        let up = serde_json::from_str(ran.stdout.trim()).map_err(|err| {
            anyhow!(
                "`corral-sim up` printed something other than its JSON object ({err}): {}",
                ran.stdout.trim()
            )
        })?;
        Ok(Sim { driver, up })
    }

    /// Runs `corral-sim <args>`.
    pub fn step(&mut self, args: &[String], timeout: Duration) -> anyhow::Result<Ran> {
        self.driver.run(args, None, timeout).map(Ran::of)
    }

    /// Runs `corral-sim <args>` with `stdin`, for a `run` step that judges its exit code and
    /// output.
    pub fn run(
        &mut self,
        args: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> anyhow::Result<Finished> {
        self.driver.run(args, stdin, timeout)
    }

    /// Starts `corral-sim <args>` in the background and waits until `ready` (a path under the
    /// simulator dir) exists.
    pub fn background(
        &mut self,
        args: &[String],
        ready: Option<&Path>,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        self.driver.background(args, ready, timeout)
    }

    /// Tears the fleet down (also done on drop), background processes first.
    pub fn down(&mut self) -> anyhow::Result<()> {
        self.driver.down()
    }

    /// The environment every `corral-sim` run gets (besides `TMUX` and `TMUX_PANE` removed).
    pub fn env(&self) -> &[(String, String)] {
        &self.driver.env
    }
}

impl Driver {
    /// Runs `corral-sim <args>`.
    fn run(
        &mut self,
        args: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> anyhow::Result<Finished> {
        self.runs += 1;
        let tag = format!("step{}", self.runs);
        run(&self.bin, args, &self.env, &self.logs, &tag, stdin, timeout)
    }

    /// Starts `corral-sim <args>` in the background and waits until `ready` (a path under the
    /// simulator dir) exists.
    fn background(
        &mut self,
        args: &[String],
        ready: Option<&Path>,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        self.runs += 1;
        let log = |suffix: &str| {
            let path = self.logs.join(format!("sim-bg{}.{suffix}", self.runs));
            std::fs::File::create(&path)
                .map_err(|err| anyhow!("creating {}: {err}", path.display()))
        };
        let mut cmd = stdx::process::command(&self.bin);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(log("out")?)
            .stderr(log("err")?);
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        let child = cmd
            .spawn()
            .map_err(|err| anyhow!("starting {}: {err}", self.bin.display()))?;
        self.background.push(child);
        let Some(ready) = ready else {
            return Ok(());
        };
        let deadline = Instant::now() + timeout;
        while !ready.exists() {
            let child = self.background.last_mut().expect("just pushed");
            if let Ok(Some(status)) = child.try_wait() {
                return Err(anyhow!(
                    "`corral-sim {}` exited ({status}) before it was ready",
                    args.join(" ")
                ));
            }
            if Instant::now() >= deadline {
                return Err(anyhow!(
                    "`corral-sim {}` wrote no {} within {} ms",
                    args.join(" "),
                    ready.display(),
                    timeout.as_millis()
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Tears the fleet down (also done on drop), background processes first.
    fn down(&mut self) -> anyhow::Result<()> {
        for mut child in self.background.drain(..) {
            stdx::process::kill_group(&mut child);
        }
        if self.down {
            return Ok(());
        }
        self.down = true;
        let ran = Ran::of(run(
            &self.bin,
            &["down".to_owned()],
            &self.env,
            &self.logs,
            "down",
            None,
            Duration::from_secs(30),
        )?);
        if ran.ok {
            Ok(())
        } else {
            Err(anyhow!("`corral-sim down` failed: {}", ran.stderr.trim()))
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.down();
    }
}
