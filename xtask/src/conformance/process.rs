//! The conformance kit's only way to start a child process (host processes, `corral-sim`, the
//! build, `kill`), and a bounded wait for one to finish.

use std::ffi::OsStr;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

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

/// Sends a signal (`KILL`, `TERM`) to a process, or to a process group when `group` is set.
pub fn signal(pid: u32, name: &str, group: bool) {
    let target = if group {
        format!("-{pid}")
    } else {
        pid.to_string()
    };
    let _ = command("kill")
        .args(["-s", name, "--", &target])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}
