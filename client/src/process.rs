//! The client's child processes: a host's `serve` (over ssh, locally, or any argv) and the
//! notification command, built by `stdx::process` (a process group of their own, so a Ctrl-C
//! meant for the client does not reach its hosts, and a time-out ends the whole group).

use std::io::Write;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schema::NotifyEnv;
use stdx::process::{command, wait_or_kill};

/// How long a notification command may run before its group is killed.
pub const NOTIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// At most this many notification commands run at once; a ring past it runs none.
pub const NOTIFY_RUNNING_CAP: usize = 8;

static NOTIFY_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Starts `argv` with its stdin, stdout and stderr piped to the client.
pub fn spawn_piped(argv: &[String]) -> std::io::Result<Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("an empty command"))?;
    command(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Runs `sh -c <command>` with `stdin` as its input and `env`'s variables set and removed, in
/// the background: a thread waits for it and kills its group after [`NOTIFY_TIMEOUT`]. Its output
/// is discarded. `Err` when it could not start, or too many still run.
pub fn run_notify_command(
    shell_command: &str,
    stdin: String,
    env: &NotifyEnv,
) -> Result<(), String> {
    if NOTIFY_RUNNING.fetch_add(1, Ordering::SeqCst) >= NOTIFY_RUNNING_CAP {
        NOTIFY_RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(format!(
            "not run: {NOTIFY_RUNNING_CAP} notification commands were still running"
        ));
    }
    let mut sh = command("sh");
    sh.arg("-c").arg(shell_command);
    for (var, value) in &env.set {
        sh.env(var.as_str(), value);
    }
    for var in &env.remove {
        sh.env_remove(var.as_str());
    }
    let child = sh
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) => {
            NOTIFY_RUNNING.fetch_sub(1, Ordering::SeqCst);
            return Err(format!("cannot start sh: {err}"));
        }
    };
    let input = child.stdin.take();
    std::thread::spawn(move || {
        if let Some(mut input) = input {
            let _ = input.write_all(stdin.as_bytes());
        }
        wait_or_kill(&mut child, NOTIFY_TIMEOUT);
        NOTIFY_RUNNING.fetch_sub(1, Ordering::SeqCst);
    });
    Ok(())
}
