//! `corral event <agent> [<hook>] [<payload>]`: what an agent's own hook runs. It stamps the pane
//! it runs in (`$TMUX_PANE` on the server `$TMUX` names) per the pane-option contract, in one tmux
//! invocation, and for a permission request parks the request for a device's verdict and answers
//! the agent in its hook-output format.
//!
//! It must never break the agent: outside tmux, with a broken config, with a dead server, it
//! exits 0 and says why on stderr at most. Only a permission request's answer reaches stdout, and
//! only when a verdict came; otherwise the agent shows its own dialog.
//!
//! Every stamp is followed by a push (`crate::push`): the running `serve` processes and the
//! daemon of the pane's server hear which pane moved, without the hook waiting for any of them.
//! When any listens, the stamp's tmux invocation also reads the pane back, and the push carries
//! that read, so the listeners need not ask tmux again.
//!
//! Modules: [`payload`] (reading a hook's JSON), [`stamp`](mod@stamp) (which options an event
//! writes, pure), [`park`] (the hook lane: request, lock, verdict), [`install`] (the snippets for
//! the agents' settings).

pub mod install;
pub mod park;
pub mod payload;
pub mod stamp;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use schema::PaneOption;
use schema::hook::{Decision, Verdict};

use crate::clock::now_ms;
use crate::paths::Paths;
use crate::push::Carried;
use crate::runtime::RuntimeDir;
use crate::tmux::write::OptionWrite;
use crate::tmux::{Socket, Tmux};
use payload::{Hook, Kind};
use stamp::Stamp;

/// Longest payload read from stdin.
const PAYLOAD_CAP: u64 = 16 * 1024 * 1024;
/// How long one tmux invocation of a hook may take.
const TMUX_TIMEOUT: Duration = Duration::from_secs(2);

/// What `corral event` was asked.
#[derive(Debug, Clone)]
pub struct EventOptions {
    /// The agent (`claude`, `codex`, ...): `@agent_name`.
    pub agent: String,
    /// The hook's event name, when the command line gives it.
    pub hook: Option<String>,
    /// The payload as an argument (Codex's `notify` appends it); else it is read from stdin.
    pub payload: Option<String>,
    /// The tmux binary.
    pub tmux_bin: PathBuf,
    /// The host's files; why they are unknown (no `HOME`), in which case the config is the
    /// defaults and nothing is parked.
    pub paths: Result<Paths, String>,
}

/// Runs one hook event; always exit code 0.
pub fn run(options: EventOptions) -> u8 {
    if let Err(err) = event(&options) {
        tracing::warn!("corral event {}: {err:#}", options.agent);
    }
    0
}

/// The pane and server the hook runs in: `$TMUX_PANE`, and the socket path `$TMUX` starts with
/// (tmux writes there the path `#{socket_path}` reports).
fn whereabouts() -> Option<(String, String)> {
    let pane = std::env::var("TMUX_PANE")
        .ok()
        .filter(|p| p.starts_with('%'))?;
    let tmux = std::env::var("TMUX").ok()?;
    let socket = tmux.split(',').next().filter(|s| !s.is_empty())?;
    Some((pane, socket.to_owned()))
}

/// Where the hook tells the running host processes of the server at `socket` that a pane moved:
/// that server's push dir in the runtime dir; `None` without the host's paths.
struct Push {
    dir: Option<PathBuf>,
    /// Whether any process listens there: only then is the pane read with its stamp.
    heard: bool,
}

impl Push {
    fn new(options: &EventOptions, socket: &str) -> Push {
        let key = crate::notify::server::Server::at(socket.to_owned()).key;
        let dir = options
            .paths
            .as_ref()
            .ok()
            .map(|paths| RuntimeDir::peek(&paths.runtime_dir).push_dir(&key));
        let heard = dir.as_ref().is_some_and(|dir| {
            std::fs::read_dir(dir).is_ok_and(|mut entries| {
                entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".sock")))
            })
        });
        Push { dir, heard }
    }

    /// Tells every listener that `pane` was stamped, handing on the read made with the stamp.
    fn send(&self, pane: &str, read: Option<&Carried>) {
        if let Some(dir) = &self.dir {
            let done = crate::push::announce(dir, pane, read);
            tracing::debug!(
                sent = done.sent,
                busy = done.busy,
                removed = done.removed,
                "pushed"
            );
        }
    }
}

/// What a hook run outside a tmux pane says, once, when its environment shows a person meant it
/// to stamp one (`CORRAL_TMUX_SOCKET` set, or half of tmux's own variables); `None` for an agent
/// simply started outside tmux, which is no mistake. `var` reads the environment.
fn outside_tmux(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name| var(name).filter(|v| !v.is_empty());
    let why = match (set("TMUX"), set("TMUX_PANE"), set("CORRAL_TMUX_SOCKET")) {
        (Some(_), Some(_), _) => return None,
        (None, Some(_), _) => "$TMUX_PANE is set but $TMUX is not",
        (Some(_), None, _) => "$TMUX is set but $TMUX_PANE is not",
        (None, None, Some(_)) => {
            "CORRAL_TMUX_SOCKET names a server, but a hook stamps the pane it runs in, which \
             $TMUX and $TMUX_PANE name"
        }
        (None, None, None) => return None,
    };
    Some(format!(
        "outside a tmux pane: nothing stamped ({why}; run the agent inside tmux)"
    ))
}

fn event(options: &EventOptions) -> anyhow::Result<()> {
    let Some((pane, socket)) = whereabouts() else {
        match outside_tmux(|name| std::env::var(name).ok()) {
            Some(line) => tracing::warn!("{line}"),
            None => tracing::debug!("not inside tmux: nothing to stamp"),
        }
        return Ok(());
    };
    let text = match &options.payload {
        Some(text) => text.clone(),
        None => read_stdin()?,
    };
    let hook = payload::parse(&text, options.hook.as_deref());
    let push = Push::new(options, &socket);
    let tmux = Tmux::new(
        options.tmux_bin.clone(),
        Some(Socket::Path(PathBuf::from(socket))),
    )
    .with_timeout(TMUX_TIMEOUT);
    let now = now_ms();
    let config = match &options.paths {
        Ok(paths) => crate::config::load(&paths.config_file).unwrap_or_else(|err| {
            tracing::warn!("config: {err:#}; using the defaults");
            schema::Config::default()
        }),
        Err(why) => {
            tracing::warn!("{why}; using the default config");
            schema::Config::default()
        }
    };
    if hook.kind == Kind::Permission {
        return permission(options, &config, &tmux, &push, &pane, &hook, now);
    }
    let stamps = stamp::stamps(&hook, &options.agent, now);
    let read = stamp(
        &tmux,
        &pane,
        &stamps,
        push.heard || config.notify.from_event,
    )
    .context("stamping the pane")?;
    push.send(&pane, read.as_ref());
    if config.notify.from_event {
        announce(options, &config, &tmux, &pane, read.as_ref(), now);
    }
    Ok(())
}

/// Stamps `pane`, and with `read` reads it back (its window's panes and the attached clients)
/// in the same tmux invocation: the read every push listener (and the daemonless fire) takes
/// instead of asking tmux again. `None` when there was nothing to write or nothing was read.
fn stamp(tmux: &Tmux, pane: &str, stamps: &[Stamp], read: bool) -> anyhow::Result<Option<Carried>> {
    if !read {
        tmux.set_pane_options(pane, &writes(stamps))?;
        return Ok(None);
    }
    let started_ms = now_ms();
    let read = tmux.stamp_and_read(pane, &writes(stamps))?;
    Ok(read.map(|(nonce, output)| Carried {
        started_ms,
        answered_ms: now_ms(),
        nonce,
        output,
    }))
}

/// `notify.from_event`: the hook announces what it just stamped itself, from the read made with
/// its stamp (or, without one, a read of the pane afresh), through the same marker claim and
/// sinks as the daemon (`crate::notify::fire_from_event`). A running daemon heard of the move
/// from the push.
fn announce(
    options: &EventOptions,
    config: &schema::Config,
    tmux: &Tmux,
    pane: &str,
    stamped: Option<&Carried>,
    now: u64,
) {
    let Some((read, clients)) = read_pane_and_clients(tmux, pane, stamped) else {
        return;
    };
    let runtime = match runtime_dir(options) {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::warn!("{err:#}");
            return;
        }
    };
    let launch = match crate::notify::supervised_launch() {
        Ok(launch) => launch,
        Err(err) => {
            tracing::warn!(%err, "cannot find this binary to launch the notify command");
            return;
        }
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let log = crate::notify::sinks::log_path(&config.notify, home.as_deref());
    let runner = crate::notify::command::Runner::new(runtime.clone(), &config.notify);
    let notify = crate::notify::Notify {
        sinks: crate::notify::sinks::Sinks {
            config: &config.notify,
            tmux,
            runner: &runner,
            launch: &launch,
            log: log.as_deref(),
        },
        runtime: &runtime,
        clients: &clients,
    };
    crate::notify::fire_from_event(&notify, &read, now);
}

/// Pane `pane` as the fleet read sees it, with the clients attached (a fire shows them its
/// status-line message): from `stamped`, the read made with the stamp, else from one
/// `list-panes` (the clients in the same invocation); `None` when it is no agent pane or tmux
/// does not answer.
fn read_pane_and_clients(
    tmux: &Tmux,
    pane: &str,
    stamped: Option<&Carried>,
) -> Option<(crate::fleet::Pane, Vec<String>)> {
    use crate::fleet::{FleetReader, FleetSource};
    let mut reader = FleetReader::new(tmux.clone(), crate::fleet::host_name()).with_clients();
    let read = match stamped.and_then(|read| reader.carried(pane, read)) {
        Some(found) => found?,
        None => reader.pane(pane).ok().flatten()?,
    };
    Some((read, reader.clients().to_vec()))
}

/// The runtime dir, opened (made when missing).
fn runtime_dir(options: &EventOptions) -> anyhow::Result<RuntimeDir> {
    let paths = options
        .paths
        .as_ref()
        .map_err(|why| anyhow::anyhow!("{why}"))?;
    RuntimeDir::open(&paths.runtime_dir)
}

fn read_stdin() -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    let mut text = String::new();
    stdin
        .lock()
        .take(PAYLOAD_CAP)
        .read_to_string(&mut text)
        .context("reading the hook's payload")?;
    Ok(text)
}

fn writes(stamps: &[Stamp]) -> Vec<OptionWrite<'_>> {
    stamps
        .iter()
        .map(|stamp| match (&stamp.value, stamp.unless_state) {
            (Some(value), None) => OptionWrite::Set(stamp.option, value),
            (Some(value), Some(state)) => {
                OptionWrite::SetUnless(stamp.option, value, (PaneOption::State, state))
            }
            (None, _) => OptionWrite::Unset(stamp.option),
        })
        .collect()
}

/// A permission request: park it, stamp the pane blocked with its id, wait for a verdict, answer
/// the agent with it (or say nothing), and leave the pane and the runtime dir clean.
fn permission(
    options: &EventOptions,
    config: &schema::Config,
    tmux: &Tmux,
    push: &Push,
    pane: &str,
    hook: &Hook,
    now: u64,
) -> anyhow::Result<()> {
    // The handlers go in before anything is parked: a SIGTERM between the park and the wait
    // would otherwise kill the hook with its request file and stamp left behind.
    let stop = interrupted();
    let runtime = runtime_dir(options)?;
    let parked = park::park(&runtime, pane, hook, now).context("parking the request")?;
    let mut stamps = stamp::stamps(hook, &options.agent, now);
    stamps.push(Stamp::set(PaneOption::PermissionRequest, parked.id.clone()));
    let read = stamp(tmux, pane, &stamps, push.heard || config.notify.from_event)
        .context("stamping the pane")?;
    push.send(pane, read.as_ref());
    // Announced before the wait: the person may be the one who answers.
    if config.notify.from_event {
        announce(options, config, tmux, pane, read.as_ref(), now);
    }
    let deadline = Instant::now() + Duration::from_secs(config.event.permission_wait_s);
    let verdict = parked.wait(deadline, &|| stop.load(Ordering::Relaxed));
    let mut after: Vec<Stamp> = Vec::new();
    if let Some(verdict) = &verdict {
        answer(hook, verdict);
        // The agent goes on with the answer: its turn is working again, from now.
        let now = now_ms().to_string();
        after.extend([
            Stamp::set(PaneOption::State, "working"),
            Stamp::set(PaneOption::Since, now.clone()),
            Stamp::set(PaneOption::StampedAt, now),
            Stamp::unset(PaneOption::Detail),
        ]);
    }
    // The stamp is cleared only while it still names this request.
    if tmux
        .pane_option(pane, PaneOption::PermissionRequest)
        .ok()
        .flatten()
        .as_deref()
        == Some(parked.id.as_str())
    {
        after.push(Stamp::unset(PaneOption::PermissionRequest));
    }
    if !after.is_empty() {
        match stamp(tmux, pane, &after, push.heard) {
            Ok(read) => push.send(pane, read.as_ref()),
            Err(err) => tracing::warn!("clearing the pane's permission stamp: {err:#}"),
        }
    }
    Ok(())
}

/// A flag that turns true when SIGTERM, SIGINT or SIGHUP arrives (the agent giving up on its
/// hook), so the wait ends and everything is cleaned up instead of the process dying mid-way.
fn interrupted() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    // A plain thread, not `crate::threads::spawn`: this one is here to take the signals.
    std::thread::spawn(move || {
        use tokio::signal::unix::{SignalKind, signal};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build();
        let Ok(runtime) = runtime else {
            let _ = ready_tx.send(());
            return;
        };
        runtime.block_on(async move {
            let streams = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
            );
            let _ = ready_tx.send(());
            let (Ok(mut term), Ok(mut int), Ok(mut hup)) = streams else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = hup.recv() => {}
            }
            set.store(true, Ordering::Relaxed);
        });
    });
    // The handlers are in place before the wait starts.
    let _ = ready_rx.recv_timeout(Duration::from_secs(1));
    flag
}

/// Writes the agent's hook-output decision for `verdict` on stdout; an agent that stopped
/// reading gets nothing, and the hook still exits 0.
fn answer(hook: &Hook, verdict: &Verdict) {
    let output = decision(hook, verdict);
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = writeln!(stdout, "{output}").and_then(|()| stdout.flush()) {
        tracing::warn!(%err, "the agent did not take the decision");
    }
}

/// The hook output that hands `verdict` to the agent. Claude Code and Codex read the same shape,
/// `hookSpecificOutput.decision.behavior` (code.claude.com/docs/en/hooks, "PermissionRequest
/// decision control"; openai/codex `codex-rs/hooks/src/schema.rs`). A question's answers go back
/// as an allow whose `updatedInput` is the tool's own input with `answers` set, an object from
/// each question's text to the chosen labels joined by ", " (or the typed text): the input
/// replaces the tool's whole input, so its `questions` are echoed, and a bare allow would run the
/// tool with no answers at all (anthropics/claude-code#15400; the answer shape of the
/// AskUserQuestion tool's own result, `toolUseResult.answers`).
pub fn decision(hook: &Hook, verdict: &Verdict) -> serde_json::Value {
    let decision = match (verdict.decision, &verdict.answers) {
        (Decision::Allow, Some(answers)) => {
            let mut input = hook.tool_input.clone();
            input.insert("answers".into(), answers_object(hook, answers).into());
            serde_json::json!({"behavior": "allow", "updatedInput": input})
        }
        (Decision::Allow, None) => serde_json::json!({"behavior": "allow"}),
        (Decision::Deny, _) => serde_json::json!({
            "behavior": "deny",
            "message": verdict
                .message
                .clone()
                .unwrap_or_else(|| "Denied from a device through corral.".to_owned()),
        }),
    };
    serde_json::json!({
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
    })
}

/// `{"<question text>": "<label>, <label>"}` for the parked questions, in their order.
fn answers_object(
    hook: &Hook,
    answers: &[Vec<String>],
) -> serde_json::Map<String, serde_json::Value> {
    let questions = hook
        .tool_input
        .get("questions")
        .and_then(serde_json::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    questions
        .iter()
        .zip(answers)
        .filter_map(|(question, chosen)| {
            let text = question.get("question")?.as_str()?;
            Some((text.to_owned(), chosen.join(", ").into()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_outside_tmux_says_why_only_when_someone_meant_it_to_stamp() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(
            outside_tmux(env(&[])),
            None,
            "an agent started outside tmux"
        );
        assert_eq!(
            outside_tmux(env(&[("TMUX", "/tmp/t,1,0"), ("TMUX_PANE", "%1")])),
            None
        );
        let line = outside_tmux(env(&[("CORRAL_TMUX_SOCKET", "/tmp/t")])).unwrap();
        assert!(
            line.starts_with("outside a tmux pane: nothing stamped (CORRAL_TMUX_SOCKET"),
            "{line}"
        );
        let line = outside_tmux(env(&[("TMUX_PANE", "%1"), ("TMUX", "")])).unwrap();
        assert!(
            line.contains("$TMUX_PANE is set but $TMUX is not"),
            "{line}"
        );
    }

    fn verdict(decision: Decision, answers: Option<Vec<Vec<String>>>) -> Verdict {
        Verdict {
            decision,
            request: "req-1".into(),
            message: None,
            answers,
        }
    }

    #[test]
    fn a_question_is_answered_with_its_input_and_the_chosen_labels() {
        let hook = payload::parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[
                {"question":"Which framework should we use?","header":"Framework","options":[{"label":"React","description":"r"},{"label":"Vue","description":"v"}],"multiSelect":false},
                {"question":"Which languages?","header":"Languages","options":[{"label":"Rust","description":"r"},{"label":"Go","description":"g"}],"multiSelect":true}]}}"#,
            None,
        );
        let out = decision(
            &hook,
            &verdict(
                Decision::Allow,
                Some(vec![vec!["React".into()], vec!["Rust".into(), "Go".into()]]),
            ),
        );
        let decided = &out["hookSpecificOutput"]["decision"];
        assert_eq!(
            out["hookSpecificOutput"]["hookEventName"],
            "PermissionRequest"
        );
        assert_eq!(decided["behavior"], "allow");
        let input = &decided["updatedInput"];
        assert_eq!(
            input["questions"], hook.tool_input["questions"],
            "echoed whole"
        );
        assert_eq!(
            input["answers"],
            serde_json::json!({"Which framework should we use?": "React", "Which languages?": "Rust, Go"})
        );
    }

    #[test]
    fn a_permission_is_a_bare_allow_or_a_deny_with_its_message() {
        let hook = payload::parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            None,
        );
        assert_eq!(
            decision(&hook, &verdict(Decision::Allow, None)),
            serde_json::json!({"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}})
        );
        let mut no = verdict(Decision::Deny, None);
        no.message = Some("not now".into());
        assert_eq!(
            decision(&hook, &no)["hookSpecificOutput"]["decision"],
            serde_json::json!({"behavior":"deny","message":"not now"})
        );
    }
}
