//! One session played against an app the replayer starts itself: `sh -c <command>` in a process
//! group of its own, the host's frames written on its stdin, its stdout read as its frames. The
//! app learns which session it is in from its environment, so a harness can drive the flow the
//! session scripts; its stderr is kept for the report. When the script is done its stdin is
//! closed, and an app that has not exited a few seconds later is killed, with its whole group.

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::Duration;

use anyhow::Context;
use golden::session::{Session, Step};
use golden::validate::FrameSchema;
use serde::Serialize;

use super::play::{self, Outcome, Settings};
use super::script::Script;

/// How long an app has to exit once its input ended, before the scale.
const EXIT_WITHIN: Duration = Duration::from_secs(5);

/// The most of an app's stderr a report keeps: its last bytes.
const STDERR_KEPT: usize = 4096;

/// What the app is told about the session it plays, by variable.
pub fn app_env(session: &Session, conn: &str) -> Vec<(&'static str, String)> {
    let device = session
        .steps
        .iter()
        .filter(|located| located.conn() == conn)
        .find_map(|located| match &located.step.step {
            Step::Spawn(spawn) => Some(spawn.device.clone()),
            _ => None,
        })
        .unwrap_or_default();
    vec![
        ("CORRAL_REPLAY_SESSION", session.path.display().to_string()),
        ("CORRAL_REPLAY_CASE", session.header.case.clone()),
        ("CORRAL_REPLAY_CONN", conn.to_owned()),
        ("CORRAL_REPLAY_DEVICE", device),
    ]
}

/// How the app's process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppEnd {
    /// Its exit code; `null` when a signal ended it.
    pub exit: Option<i32>,
    /// Whether the replayer killed it (it had not exited in time after its input ended).
    pub killed: bool,
    /// The end of what it wrote on stderr (lossy UTF-8).
    pub stderr: String,
}

/// A session played against one run of the app.
#[derive(Debug, Clone)]
pub struct AppRun {
    /// The verdicts.
    pub outcome: Outcome,
    /// The verdict lines, as `replay` prints them for one session.
    pub verdicts: String,
    /// How the app ended.
    pub end: AppEnd,
}

/// Starts `command` with the session's environment and plays `script` against it.
pub fn run(
    command: &str,
    env: &[(&'static str, String)],
    script: &Script,
    requests: &FrameSchema,
    settings: Settings,
) -> anyhow::Result<AppRun> {
    let mut child = stdx::process::command("sh")
        // The app is no child of a developer's tmux: it never talks to their server.
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .arg("-c")
        .arg(command)
        .envs(env.iter().map(|(name, value)| (*name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting the app: sh -c {command:?}"))?;
    let stdin = child.stdin.take().context("the app's stdin")?;
    let stdout = child.stdout.take().context("the app's stdout")?;
    let mut stderr = child.stderr.take().context("the app's stderr")?;
    let stderr = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        let start = bytes.len().saturating_sub(STDERR_KEPT);
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    });
    let mut verdicts = Vec::new();
    // `play` drops the app's stdin when it returns: the app sees the end of its input.
    let outcome = play::play(script, requests, settings, stdout, stdin, &mut verdicts);
    let (exit, killed) = reap(&mut child, EXIT_WITHIN.mul_f64(settings.scale));
    let end = AppEnd {
        exit,
        killed,
        stderr: stderr.join().unwrap_or_default(),
    };
    Ok(AppRun {
        outcome,
        verdicts: String::from_utf8_lossy(&verdicts).into_owned(),
        end,
    })
}

/// Waits for the app up to `within`, then kills its group; its exit code, and whether it was
/// killed. Whatever it started in its group goes with it.
fn reap(child: &mut Child, within: Duration) -> (Option<i32>, bool) {
    let status = stdx::process::wait_or_kill(child, within);
    // Anything the app left running in its group ends with it.
    stdx::process::kill_group(child);
    (status.and_then(|status| status.code()), status.is_none())
}
