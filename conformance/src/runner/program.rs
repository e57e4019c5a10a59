//! The `run` step: a program of the kit started in the case's environment (`corral` in the host
//! processes', `corral-sim` in the simulator's), its arguments and stdin with `${name}` replaced,
//! run to its end, and its exit code, stdout and stderr judged (with `retry`, run again until they
//! hold). Its output is kept in the case's logs (`run-<n>.out`, `run-<n>.err`; a `corral-sim`
//! run's beside the other simulator logs).

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use golden::pattern::{self, Captures};
use golden::session::{Content, Program, Run};

use super::content::Judge;
use super::{Case, StepError, StepResult};
use crate::adapter;
use crate::process::{self, Finished};

/// How long a `run` with `retry` waits between two runs.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// The least time a run again gets, even when the step's limit is all but spent.
const LAST_RUN_MIN: Duration = Duration::from_secs(2);

impl Case<'_> {
    /// `run`: starts the program, waits for its end (within `timeout`) and judges what it did;
    /// with `retry`, runs it again until it holds or the time is up.
    pub(super) fn run_program(&mut self, run: &Run, timeout: Duration) -> StepResult {
        let deadline = Instant::now() + timeout;
        let mut again = false;
        loop {
            let mut trial = self.captures.clone();
            // A run again gets at least a moment, so the last one's verdict is a real one.
            let limit = deadline.saturating_duration_since(Instant::now());
            let limit = if again {
                limit.max(LAST_RUN_MIN)
            } else {
                limit
            };
            let outcome = self.run_once(run, limit, &mut trial);
            match outcome {
                Ok(()) => {
                    self.captures = trial;
                    return Ok(());
                }
                Err(err) if run.retry && Instant::now() + RETRY_PAUSE < deadline => {
                    drop(err);
                    again = true;
                    std::thread::sleep(RETRY_PAUSE);
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// One run of a `run` step's program, judged; captures bind into `captures`.
    fn run_once(&mut self, run: &Run, timeout: Duration, captures: &mut Captures) -> StepResult {
        let args = self.texts(&run.args)?;
        let stdin = match &run.stdin {
            Some(text) => {
                Some(pattern::instantiate_text(text, &self.captures).map_err(StepError::new)?)
            }
            None => None,
        };
        let stdin = stdin.as_deref().map(str::as_bytes);
        let finished = match run.program {
            Program::CorralSim if run.env.is_empty() => self
                .sim
                .as_mut()
                .expect("the simulator is up")
                .run(&args, stdin, timeout)
                .map_err(StepError::new)?,
            program => self.run_to_end(program, &run.env, &args, stdin, timeout)?,
        };
        let now = self.window();
        let shown = format!("`{} {}`", run.program.as_str(), args.join(" "));
        let utf8 = |bytes: &[u8], stream: &str| {
            String::from_utf8(bytes.to_vec())
                .map_err(|_| StepError::new(format!("the {stream} of {shown} is not UTF-8")))
        };
        let (stdout, stderr) = (
            utf8(&finished.stdout, "stdout")?,
            utf8(&finished.stderr, "stderr")?,
        );
        // Another host's command line is judged on what the protocol fixes: success or
        // failure, and the documents it prints; corral's exit codes and prose are corral's.
        let prose_and_codes = run.program != Program::Corral || self.ctx.profile.is_corral();
        match finished.status.code() {
            Some(code) if code == run.exit => {}
            Some(code) if !prose_and_codes && (code == 0) == (run.exit == 0) => {}
            _ => {
                let how = crate::host::ended(finished.status);
                return Err(StepError::new(format!(
                    "{shown} {how}, expected {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
                    run.exit
                )));
            }
        }
        let document = match &run.document {
            Some(name) => Some(self.ctx.documents.get(name).ok_or_else(|| {
                StepError::new(format!("no schema of the document `{name}` was loaded"))
            })?),
            None => None,
        };
        let out = format!("the stdout of {shown}");
        let judge = Judge {
            what: &out,
            document,
            now,
        };
        // For another host, prose is not judged at all (not even as "nothing printed").
        let judged =
            |content: Option<&Content>| prose_and_codes || content.is_some_and(Content::parses);
        let expected =
            super::manifests::expected(run.stdout.as_ref(), &self.ctx.profile, captures)?;
        if judged(expected.as_ref()) {
            judge.judge(expected.as_ref(), &stdout, captures)?;
        }
        let err = format!("the stderr of {shown}");
        let judge = Judge {
            what: &err,
            document: None,
            now,
        };
        if !judged(run.stderr.as_ref()) {
            return Ok(());
        }
        judge.judge(run.stderr.as_ref(), &stderr, captures)
    }

    /// A program of the kit with its arguments, in its environment: `corral` in the host
    /// processes' (for another host, the host profile's command for what corral's line asks,
    /// through `sh`), `corral-sim` in the simulator's; then a step's changes to it (`${name}`
    /// replaced, `null` removes).
    pub(super) fn program_command(
        &self,
        program: Program,
        changes: &BTreeMap<String, Option<String>>,
        args: &[String],
    ) -> Result<Command, StepError> {
        let mut cmd = match program {
            Program::Corral => {
                let bin =
                    self.ctx.host_cli.as_ref().expect(
                        "a case that runs `corral` is skipped without the host's command line",
                    );
                let cli = bin.display().to_string();
                let mut cmd = match adapter::command(&self.ctx.profile, &cli, args)
                    .map_err(StepError::new)?
                {
                    None => {
                        let mut cmd = stdx::process::command(bin);
                        cmd.args(args);
                        cmd
                    }
                    Some(line) => {
                        let mut cmd = stdx::process::command("sh");
                        cmd.args(["-c", &format!("exec {line}")]);
                        cmd
                    }
                };
                for name in &self.remove {
                    cmd.env_remove(name);
                }
                for (name, value) in &self.env {
                    cmd.env(name, value);
                }
                cmd
            }
            Program::CorralSim => {
                let sim = self.sim.as_ref().expect("the simulator is up");
                let mut cmd = stdx::process::command(&self.ctx.sim_bin);
                cmd.args(args);
                for (name, value) in sim.env() {
                    cmd.env(name, value);
                }
                cmd.env_remove("TMUX").env_remove("TMUX_PANE");
                cmd
            }
        };
        for (name, value) in changes {
            match value {
                Some(value) => {
                    let value =
                        pattern::instantiate_text(value, &self.captures).map_err(StepError::new)?;
                    cmd.env(name, value);
                }
                None => {
                    cmd.env_remove(name);
                }
            }
        }
        Ok(cmd)
    }

    /// Runs a program from the case's dir to its end, its output kept in the case's logs.
    fn run_to_end(
        &mut self,
        program: Program,
        changes: &BTreeMap<String, Option<String>>,
        args: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Finished, StepError> {
        let mut cmd = self.program_command(program, changes, args)?;
        cmd.current_dir(&self.dir);
        self.programs += 1;
        let logs = self.dir.join("logs");
        process::run_to_end(
            &mut cmd,
            stdin,
            &logs.join(format!("run-{}.out", self.programs)),
            &logs.join(format!("run-{}.err", self.programs)),
            timeout,
        )
        .map_err(|err| StepError::new(format!("`{} {}`: {err}", program.as_str(), args.join(" "))))
    }
}
