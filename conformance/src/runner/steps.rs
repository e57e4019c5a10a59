//! Playing a session's steps in order on a case: each step dispatched by kind (frames sent,
//! expectations judged, the simulator stepped, the store rewritten, connections spawned, closed,
//! terminated, killed, read or not, programs run, started and signalled, files checked and
//! written, stderr judged), then the end of the session, where every connection still open is
//! closed and must exit 0 without another frame.

use std::time::{Duration, Instant};

use golden::pattern;
use golden::session::limits::{BACKGROUND_MS, EXIT_MS, RUN_MS, SIGNAL_EXIT_MS, SIM_MS};
use golden::session::{Background, Located, Spawn, Step, barrier_answer, barrier_request};
use serde_json::Value;

use super::{Case, CaseError, StepError, StepResult};
use crate::host::HostProcess;
use crate::outcome::Found;

impl Case<'_> {
    /// Plays the whole case: set up, every step, the end of the session.
    pub(super) fn run(&mut self, socket: &str) -> Result<(), CaseError> {
        let last = self.session.lines.len();
        self.prepare(socket)
            .map_err(|err| (1, self.session.lines[0].clone(), err))?;
        for located in &self.session.steps {
            let text = self.session.lines[located.line - 1].clone();
            self.step(located)
                .map_err(|err| (located.line, text, err.on_default(located.conn())))?;
        }
        self.finish().map_err(|err| {
            (
                last,
                "(end of session: stdin closed, exit 0 expected)".into(),
                err,
            )
        })
    }

    /// Plays one step.
    fn step(&mut self, located: &Located) -> StepResult {
        let line = &located.step;
        let conn = located.conn().to_owned();
        if let Some(mark) = &line.mark {
            self.marks
                .insert(mark.clone(), std::time::SystemTime::now());
        }
        match &line.step {
            Step::Comment(_) => Ok(()),
            Step::Spawn(spawn) => self.spawn(&conn, spawn),
            Step::Send(frame) => self.send(&conn, frame),
            Step::SendRaw(raw) => self.conn(&conn)?.send(raw.bytes()).map_err(StepError::new),
            Step::Expect(pattern) => self.expect(&conn, pattern, located),
            Step::Barrier(id) => {
                self.send_line(&conn, &barrier_request(id))?;
                self.expect(&conn, &barrier_answer(id), located)
            }
            Step::ExpectUnordered(patterns) => self.expect_unordered(&conn, patterns, located),
            Step::ExpectSilence(ms) => self.expect_silence(&conn, *ms),
            Step::Sim(args) => self.sim(args, self.timeout(line, SIM_MS)),
            Step::SimBackground(background) => {
                self.sim_background(background, self.timeout(line, SIM_MS))
            }
            Step::Revoke(id) => self.revoke(id),
            Step::Close(_) => {
                self.conn(&conn)?.close();
                Ok(())
            }
            Step::Terminate(_) => {
                self.conn(&conn)?.terminate();
                Ok(())
            }
            Step::Kill(_) => {
                let deadline = Instant::now() + self.timeout(line, EXIT_MS);
                self.conn(&conn)?.kill_now(deadline).map_err(StepError::new)
            }
            Step::Exit(code) => {
                let deadline = Instant::now() + self.timeout(line, EXIT_MS);
                self.exit(&conn, *code, deadline)
            }
            Step::Run(run) => self.run_program(run, self.timeout(line, RUN_MS)),
            Step::File(check) => {
                let timeout = line.timeout_ms.map(|ms| self.ctx.scaled(ms));
                self.file(check, timeout)
            }
            Step::Background(started) => {
                self.background(started, self.timeout(line, BACKGROUND_MS))
            }
            Step::Signal(signal) => self.signal(signal, self.timeout(line, SIGNAL_EXIT_MS)),
            Step::Write(write) => self.write_file(write),
            Step::Repeat(repeat) => self.repeat(&conn, repeat, located),
            Step::Stderr(check) => {
                let timeout = line.timeout_ms.map(|ms| self.ctx.scaled(ms));
                self.stderr(&conn, check, timeout)
            }
            Step::CloseStdout(_) => {
                self.conn(&conn)?.close_stdout().map_err(StepError::new)?;
                Ok(())
            }
            Step::PauseReading(_) => {
                self.conn(&conn)?.pause();
                Ok(())
            }
            Step::ResumeReading(_) => {
                self.conn(&conn)?.resume();
                Ok(())
            }
        }
    }

    /// `send`: the frame with every `${name}` replaced, checked against the request schema.
    fn send(&mut self, conn: &str, frame: &Value) -> StepResult {
        let frame = pattern::instantiate(frame, &self.captures).map_err(StepError::new)?;
        self.ctx
            .requests
            .validate(&frame)
            .map_err(|err| StepError::new(format!("the golden frame we send {err}")))?;
        self.send_line(conn, &frame)
    }

    /// Writes a frame as one line.
    fn send_line(&mut self, conn: &str, frame: &Value) -> StepResult {
        let mut bytes = serde_json::to_vec(frame).expect("values encode");
        bytes.push(b'\n');
        self.conn(conn)?.send(&bytes).map_err(StepError::new)
    }

    /// `expect_silence`: nothing arrives for that long.
    fn expect_silence(&mut self, conn: &str, ms: u64) -> StepResult {
        let deadline = Instant::now() + self.ctx.scaled(ms);
        match self.receive(conn, deadline)? {
            None => Ok(()),
            Some(received) => Err(StepError::new(format!(
                "expected silence for {ms} ms, received {}",
                received.text
            ))
            .found(Found::Unexpected {
                received: received.text,
            })),
        }
    }

    /// A step's arguments with every `${name}` replaced.
    pub(super) fn texts(&self, args: &[String]) -> Result<Vec<String>, StepError> {
        args.iter()
            .map(|arg| pattern::instantiate_text(arg, &self.captures))
            .collect::<Result<_, _>>()
            .map_err(StepError::new)
    }

    /// `sim`: runs `corral-sim` and waits for its success.
    fn sim(&mut self, args: &[String], timeout: Duration) -> StepResult {
        let args = self.texts(args)?;
        let sim = self.sim.as_mut().expect("the simulator is up");
        let ran = sim.step(&args, timeout).map_err(StepError::new)?;
        if ran.ok {
            Ok(())
        } else {
            Err(StepError::new(format!(
                "`corral-sim {}` failed: {}",
                args.join(" "),
                ran.stderr.trim()
            )))
        }
    }

    /// `sim_background`: starts `corral-sim` for the rest of the case and waits until it is ready.
    fn sim_background(&mut self, background: &Background, timeout: Duration) -> StepResult {
        let args = self.texts(&background.args)?;
        let ready = background
            .ready_file
            .as_ref()
            .map(|file| stdx::world::FleetDirs::new(&self.dir).sim().join(file));
        let sim = self.sim.as_mut().expect("the simulator is up");
        sim.background(&args, ready.as_deref(), timeout)
            .map_err(StepError::new)
    }

    /// `revoke`: the device store rewritten without the device.
    fn revoke(&mut self, id: &str) -> StepResult {
        let before = self.devices.devices.len();
        self.devices.devices.retain(|device| device.id != id);
        if self.devices.devices.len() == before {
            return Err(StepError::new(format!(
                "no device `{id}` in the store to revoke"
            )));
        }
        self.write_store()
    }

    /// `spawn`: a host process for the connection, which must not be running, in the case's
    /// environment changed as the step says.
    fn spawn(&mut self, conn: &str, spawn: &Spawn) -> StepResult {
        if let Some(existing) = self.conns.get_mut(conn)
            && existing.wait(Instant::now()).is_none()
        {
            return Err(StepError::new(format!(
                "connection `{conn}` is still running"
            )));
        }
        let command = self
            .ctx
            .host_template
            .replace("{device}", &stdx::shell_quote(&spawn.device));
        let mut env: Vec<(String, String)> = self
            .env
            .iter()
            .filter(|(name, _)| !spawn.env.contains_key(name))
            .cloned()
            .collect();
        let mut remove = self.remove.clone();
        for (name, value) in &spawn.env {
            match value {
                Some(value) => env.push((
                    name.clone(),
                    pattern::instantiate_text(value, &self.captures).map_err(StepError::new)?,
                )),
                None => remove.push(name.clone()),
            }
        }
        let stderr = self.dir.join("logs").join(format!("host-{conn}.err"));
        let process = HostProcess::spawn(&command, &env, &remove, &self.dir, stderr)
            .map_err(StepError::new)?;
        self.conns.insert(conn.to_owned(), process);
        Ok(())
    }
}
