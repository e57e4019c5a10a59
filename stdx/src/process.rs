//! The one place a child process is built ([`command`]): every child runs in a process group of
//! its own, so a Ctrl-C meant for its parent does not reach it, and ending it ends whatever it
//! started too ([`kill_group`], [`wait_or_kill`]). clippy's `disallowed_methods` names this
//! module as the one that may call `Command::new` (the reference host has its own runner).

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A command for `program`, to run in a process group of its own.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    // The one `Command::new` outside the reference host's runner.
    #[allow(clippy::disallowed_methods)]
    let mut command = Command::new(program);
    command.process_group(0);
    command
}

/// Kills a child's whole process group (whatever it started too), then reaps it.
pub fn kill_group(child: &mut Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits up to `within` for a child to exit on its own; its status, or `None` when the deadline
/// passed and its group was killed (and reaped).
pub fn wait_or_kill(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + within;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                kill_group(child);
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_runs_in_a_group_of_its_own() {
        let out = command("sh")
            .args(["-c", "ps -o pgid= -p $$"])
            .output()
            .unwrap();
        let child_group: i32 = String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_ne!(
            child_group,
            rustix::process::getpgrp().as_raw_nonzero().get()
        );
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
