//! `corral debug notify-test --trigger T` (run the command a trigger resolves to with a
//! representative payload, wait, report) and `corral debug transitions [--json]` (the running
//! daemon's ring, over its socket).

use super::output::{say, say_raw, tell};
use anyhow::Context;
use schema::{State, Trigger};

use crate::cli::DebugCommand;
use crate::clock::now_ms;
use crate::notify::command::{self, Job, Runner};
use crate::notify::{payload, server, socket};
use crate::paths::Paths;
use crate::runtime::RuntimeDir;
use crate::tmux::Tmux;

pub fn run(
    command: DebugCommand,
    paths: &Paths,
    tmux: impl FnOnce(&crate::cli::TmuxArgs) -> Tmux,
) -> anyhow::Result<u8> {
    match command {
        DebugCommand::NotifyTest { trigger } => notify_test(&trigger, paths),
        DebugCommand::Transitions { json, tmux: args } => transitions(json, &tmux(&args), paths),
    }
}

/// Exit 0 only when the command ran and exited 0; the failure record follows the run.
fn notify_test(trigger: &str, paths: &Paths) -> anyhow::Result<u8> {
    let config = crate::config::load(&paths.config_file)?;
    let trigger = Trigger::parse(trigger).context("an empty trigger")?;
    let fire = payload::sample(&config.notify, trigger.clone(), now_ms());
    let body = serde_json::to_string(&payload::payload(&fire))?;
    say!("payload: {body}");
    let Some(line) = command::resolve(&config.notify, &trigger) else {
        say!("command: none");
        say!(
            "result: not delivered: no command resolves for {trigger} (set notify.command, or \
             command in [notify.{trigger}])"
        );
        return Ok(1);
    };
    say!("command: {line}");
    let runtime = RuntimeDir::open(&paths.runtime_dir)?;
    let job = Job {
        command: line.to_owned(),
        stdin: format!("{body}\n").into_bytes(),
        env: schema::NotifyEnv::of_fire(&fire),
    };
    let ran = Runner::new(runtime, &config.notify).run(job, true);
    match ran.exit_code {
        Some(code) => say!("exit code: {code}"),
        None => say!("exit code: none"),
    }
    let stderr = String::from_utf8_lossy(&ran.stderr);
    say!("stderr:{}", if stderr.is_empty() { " (empty)" } else { "" });
    if !stderr.is_empty() {
        say_raw!("{stderr}");
        if !stderr.ends_with('\n') {
            say!();
        }
    }
    match ran.failure {
        None => {
            say!("result: delivered");
            Ok(0)
        }
        Some(reason) => {
            say!("result: not delivered: {reason}");
            Ok(1)
        }
    }
}

/// The ring of the daemon serving `tmux`'s server; exit 1 when none runs.
fn transitions(json: bool, tmux: &Tmux, paths: &Paths) -> anyhow::Result<u8> {
    let server = server::identify(tmux);
    let path = RuntimeDir::peek(&paths.runtime_dir).daemon_socket(&server.key);
    let ring = match socket::ring(&path) {
        Ok(ring) => ring,
        Err(err) => {
            tracing::debug!(%err, socket = %path.display(), "no answer");
            tell!(
                "corral: no notification daemon runs for the tmux server {} (start `corral daemon`)",
                server.socket_path
            );
            return Ok(1);
        }
    };
    if json {
        say!("{}", serde_json::to_string(&ring)?);
        return Ok(0);
    }
    say!(
        "{} transitions recorded, the last {} kept, oldest first",
        ring.recorded,
        ring.transitions.len()
    );
    let end = |state: Option<State>| state.map_or("-".to_owned(), |s| s.to_string());
    for t in &ring.transitions {
        say!(
            "{}  {:<6} {:>8} -> {:<8} {}",
            t.at,
            t.pane,
            end(t.from),
            end(t.to),
            t.source
        );
    }
    Ok(0)
}
