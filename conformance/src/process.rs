//! The conformance kit's only way to start a child process (host processes, `corral-sim`, the
//! build, a `run` step's program, the app `corral-sim replay --app` judges) and to signal one, a
//! bounded wait for one to finish, and a run to the end with its output kept.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::anyhow;
pub use rustix::process::Signal;
use rustix::process::{Pid, kill_process, kill_process_group};

/// A `Command` for a program; every child process of the kit is built here.
#[allow(clippy::disallowed_methods)]
pub fn command(program: impl AsRef<OsStr>) -> Command {
    Command::new(program)
}

/// Waits for a child until the deadline; `None` when it is still running then.
pub fn wait_until(child: &mut Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(5)));
    }
}

/// A child that ran to its end.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub status: ExitStatus,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

/// Runs a command to its end: `stdin` written to it (then closed; absent, its stdin is empty),
/// its stdout and stderr kept in the files `out` and `err` (so a chatty child never blocks on a
/// full pipe, and the case's logs keep them). A child still running at the deadline is killed
/// and is an error.
pub fn run_to_end(
    cmd: &mut Command,
    stdin: Option<&[u8]>,
    out: &Path,
    err: &Path,
    timeout: Duration,
) -> anyhow::Result<Finished> {
    let create = |path: &Path| {
        std::fs::File::create(path).map_err(|e| anyhow!("creating {}: {e}", path.display()))
    };
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(create(out)?)
    .stderr(create(err)?);
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow!("starting {program}: {e}"))?;
    let writer = match (stdin, child.stdin.take()) {
        (Some(bytes), Some(mut pipe)) => {
            let bytes = bytes.to_vec();
            // A child that exits without reading its input closes the pipe: not our failure.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let status = wait_until(&mut child, Instant::now() + timeout)
        .map_err(|e| anyhow!("waiting for {program}: {e}"))?;
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(anyhow!(
            "{program} did not finish within {} ms",
            timeout.as_millis()
        ));
    };
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let read = |path: &Path| std::fs::read(path).map_err(|e| anyhow!("{}: {e}", path.display()));
    Ok(Finished {
        status,
        stdout: read(out)?,
        stderr: read(err)?,
    })
}

/// Sends `signal` to a process, or to its process group when `group` is set. A process already
/// gone is no error: whoever waits for it sees how it ended. (No `kill` program: a case sends a
/// few of these, and a process less is a case quicker.)
pub fn signal(pid: u32, signal: Signal, group: bool) {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let _ = if group {
        kill_process_group(pid, signal)
    } else {
        kill_process(pid, signal)
    };
}
