//! The `run` step: a program of the kit started in the case's environment (`corral` in the host
//! processes', `corral-sim` in the simulator's), its arguments and stdin with `${name}` replaced,
//! run to its end, and its exit code, stdout and stderr judged. Its output is kept in the case's
//! logs (`run-<n>.out`, `run-<n>.err`; a `corral-sim` run's beside the other simulator logs).

use std::time::Duration;

use golden::pattern;
use golden::session::{Program, Run};

use super::content::Judge;
use super::{Case, StepError, StepResult};
use crate::conformance::process::{self, Finished};

impl Case<'_> {
    /// `run`: starts the program, waits for its end (within `timeout`) and judges what it did.
    pub(super) fn run_program(&mut self, run: &Run, timeout: Duration) -> StepResult {
        let args = self.texts(&run.args)?;
        let stdin = match &run.stdin {
            Some(text) => {
                Some(pattern::instantiate_text(text, &self.captures).map_err(StepError::new)?)
            }
            None => None,
        };
        let stdin = stdin.as_deref().map(str::as_bytes);
        let finished = match run.program {
            Program::Corral => self.run_corral(&args, stdin, timeout)?,
            Program::CorralSim => self
                .sim
                .as_mut()
                .expect("the simulator is up")
                .run(&args, stdin, timeout)
                .map_err(StepError::new)?,
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
        match finished.status.code() {
            Some(code) if code == run.exit => {}
            code => {
                let how = code.map_or_else(
                    || format!("was killed ({})", finished.status),
                    |code| format!("exited with {code}"),
                );
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
        judge.judge(run.stdout.as_ref(), &stdout, &mut self.captures)?;
        let err = format!("the stderr of {shown}");
        let judge = Judge {
            what: &err,
            document: None,
            now,
        };
        judge.judge(run.stderr.as_ref(), &stderr, &mut self.captures)
    }

    /// The host's own command line, in the host processes' environment, from the case's dir.
    fn run_corral(
        &mut self,
        args: &[String],
        stdin: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Finished, StepError> {
        let bin = self
            .ctx
            .host_cli
            .as_ref()
            .expect("a case that runs `corral` is skipped without the host's command line");
        let mut cmd = process::command(bin);
        cmd.args(args).current_dir(&self.dir);
        for name in &self.remove {
            cmd.env_remove(name);
        }
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        self.programs += 1;
        let logs = self.dir.join("logs");
        process::run_to_end(
            &mut cmd,
            stdin,
            &logs.join(format!("run-{}.out", self.programs)),
            &logs.join(format!("run-{}.err", self.programs)),
            timeout,
        )
        .map_err(|err| StepError::new(format!("`corral {}`: {err}", args.join(" "))))
    }
}
