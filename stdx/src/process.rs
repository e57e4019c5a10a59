//! The one place a child process is built ([`command`]): every child runs in a process group of
//! its own, so a Ctrl-C meant for its parent does not reach it, and ending it ends whatever it
//! started too ([`kill_group`], [`wait_or_kill`]); only a wrapper's child stays in its group
//! ([`command_in_this_group`]). Also a wait with a deadline ([`wait_until`])
//! and a signal to a child or its group ([`signal`], [`signal_group`]). clippy's
//! `disallowed_methods` names this module as the one that may call `Command::new` (the reference
//! host has its own runner).

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

pub use rustix::process::Signal;

/// A command for `program`, to run in a process group of its own.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = new(program);
    command.process_group(0);
    command
}

/// A command for `program` that stays in this process's group: for a wrapper that stands in for
/// the child it runs, so that a signal to the wrapper's group (a runner ending the host it
/// started, which is this wrapper) reaches the child too.
pub fn command_in_this_group(program: impl AsRef<OsStr>) -> Command {
    new(program)
}

/// The one `Command::new` outside the reference host's runner.
#[allow(clippy::disallowed_methods)]
fn new(program: impl AsRef<OsStr>) -> Command {
    Command::new(program)
}

/// Sends `signal` to the process `pid` alone. A process already gone is no error: whoever waits
/// for it sees how it ended.
pub fn signal(pid: u32, signal: Signal) {
    if let Some(pid) = to_pid(pid) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Sends `signal` to the process group `pid` leads (a child of [`command`] leads its own): the
/// child and whatever it started that stayed in its group. A group already gone is no error.
pub fn signal_group(pid: u32, signal: Signal) {
    if let Some(pid) = to_pid(pid) {
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

fn to_pid(pid: u32) -> Option<rustix::process::Pid> {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
}

/// Kills a child's whole process group (whatever it started too), then reaps it. The group is
/// killed even when the child itself has ended: what it started may still run in it.
pub fn kill_group(child: &mut Child) {
    signal_group(child.id(), Signal::KILL);
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits for a child until `deadline`: its status, or `None` when it still runs then.
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

/// Waits up to `within` for a child to exit on its own; its status, or `None` when the deadline
/// passed (or the wait failed) and its group was killed (and reaped).
pub fn wait_or_kill(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    match wait_until(child, Instant::now() + within) {
        Ok(Some(status)) => Some(status),
        Ok(None) | Err(_) => {
            kill_group(child);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process group `sh` runs in when `sh` is built by `build`.
    fn group_of(build: fn(&str) -> Command) -> i32 {
        let out = build("sh")
            .args(["-c", "ps -o pgid= -p $$"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn a_child_runs_in_a_group_of_its_own_and_a_wrappers_child_in_its_parents() {
        let ours = rustix::process::getpgrp().as_raw_nonzero().get();
        assert_ne!(group_of(|p| command(p)), ours);
        assert_eq!(group_of(|p| command_in_this_group(p)), ours);
    }

    #[test]
    fn a_signal_reaches_the_child_and_a_wait_until_sees_it_end() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = command("sleep").arg("30").spawn().unwrap();
        let soon = Instant::now() + Duration::from_millis(20);
        assert_eq!(wait_until(&mut child, soon).unwrap(), None);
        signal(child.id(), Signal::TERM);
        let later = Instant::now() + Duration::from_secs(30);
        let status = wait_until(&mut child, later).unwrap().unwrap();
        assert_eq!(status.signal(), Some(15));
    }

    #[test]
    fn a_child_past_its_deadline_is_ended_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild");
        let mut child = command("sh")
            .arg("-c")
            .arg(format!(
                "sleep 300 & echo $! > '{}'; wait",
                pid_file.display()
            ))
            .spawn()
            .unwrap();
        let grandchild: i32 = loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                break pid;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(wait_or_kill(&mut child, Duration::from_millis(50)), None);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let stat =
                std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
            // Gone, or a zombie waiting for init: ended either way.
            if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the grandchild outlived its group"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut quick = command("true").spawn().unwrap();
        assert!(wait_or_kill(&mut quick, Duration::from_secs(30)).is_some_and(|s| s.success()));
    }
}
