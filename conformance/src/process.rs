//! The kit's run of a child to its end (a `run` step's program, `corral-sim`): its
//! input written, its output kept in files, a deadline that ends its whole group. Every child of
//! the kit is built by `stdx::process::command`, in a process group of its own.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use anyhow::anyhow;

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
/// full pipe, and the case's logs keep them). A child still running at the deadline is killed,
/// with its whole group, and is an error.
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
    let Some(status) = stdx::process::wait_or_kill(&mut child, timeout) else {
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
