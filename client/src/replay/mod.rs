//! `corral-remote --replay`: the client as `corral-sim replay --app` judges it. The host is this
//! process's own stdin and stdout (the replayer stands in for `corral serve --stdio`); the core,
//! the session and the connection are the ones the TUI runs, with a manual policy (nothing is
//! sent that the flow does not ask for). `CORRAL_REPLAY_CASE` and `CORRAL_REPLAY_CONN` pick the
//! flow: the user actions ([`flows`]) a UI test of this client would perform for that case. The
//! session file is never read; what to send comes from the flow and from what the host answered.
//!
//! `corral-remote --replay --list` prints which golden sessions have a flow, and which do not
//! apply to a client, with the reason.

pub mod flows;

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::app::{App, HostSpec, hello};
use crate::config::NotifyConfig;
use crate::connection::Spec;
use client_core::answer::Choice;
use client_core::client::{Change, Command};
use client_core::fleet::Link;
use client_core::session::Policy;

use flows::{Flow, HOST, Step};

/// How long one step may wait for the host.
const STEP_WAIT: Duration = Duration::from_secs(30);

/// Runs the flow of the case the environment names (or lists them all).
pub fn main(list: bool) -> ExitCode {
    if list {
        let mut out = std::io::stdout().lock();
        for (case, verdict) in flows::table() {
            if writeln!(out, "{case:<44} {verdict}").is_err() {
                return ExitCode::from(1);
            }
        }
        return ExitCode::SUCCESS;
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let (case, conn) = (var("CORRAL_REPLAY_CASE"), var("CORRAL_REPLAY_CONN"));
    let conn = if conn.is_empty() {
        "main".to_owned()
    } else {
        conn
    };
    let flow = match flows::flow(&case, &conn) {
        Ok(flow) => flow,
        Err(why) => {
            eprintln!("corral-remote --replay: no flow for {case}@{conn}: {why}");
            return ExitCode::from(1);
        }
    };
    match play(flow, var("CORRAL_REPLAY_DEVICE")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("corral-remote --replay: {case}@{conn}: {why}");
            ExitCode::from(1)
        }
    }
}

/// What a step waits for after its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaited {
    Card,
    Receipt,
    Window,
    Event,
    Snapshot,
    Subscribed,
    Receipts,
}

impl Awaited {
    fn of(command: &Command) -> Awaited {
        match command {
            Command::Card { .. } => Awaited::Card,
            Command::Answer { .. } | Command::Steer { .. } | Command::Interrupt { .. } => {
                Awaited::Receipt
            }
            Command::Window { .. } => Awaited::Window,
            Command::Event { .. } => Awaited::Event,
            Command::Snapshot { .. } => Awaited::Snapshot,
            Command::Subscribe { .. } => Awaited::Subscribed,
            Command::Receipts { .. } => Awaited::Receipts,
        }
    }

    fn request(self) -> &'static str {
        match self {
            Awaited::Card => "card",
            Awaited::Receipt => "dispatch",
            Awaited::Window => "window",
            Awaited::Event => "event",
            Awaited::Snapshot => "snapshot",
            Awaited::Subscribed => "subscribe",
            Awaited::Receipts => "receipts",
        }
    }

    fn answered_by(self, change: &Change) -> bool {
        match (self, change) {
            (Awaited::Card, Change::Card { .. })
            | (Awaited::Window, Change::Window { .. })
            | (Awaited::Event, Change::Event { .. })
            | (Awaited::Snapshot, Change::Snapshot { .. })
            | (Awaited::Subscribed, Change::Subscribed(_))
            | (Awaited::Receipts, Change::Receipts { .. })
            | (Awaited::Receipt, Change::Receipt { retry: None, .. }) => true,
            (_, Change::Failed { what, .. }) => *what == self.request(),
            _ => false,
        }
    }
}

/// The loop of one flow.
struct Player {
    app: App<()>,
    edges: usize,
    ended: bool,
}

impl Player {
    /// Handles events until `done` says so, the connection ends, or the wait runs out.
    fn until(
        &mut self,
        what: &str,
        mut done: impl FnMut(&Change, &Player) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + STEP_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no {what} within {} s", STEP_WAIT.as_secs()));
            }
            let Some(crate::app::Event::Host(host, event)) = self.app.next(left) else {
                continue;
            };
            for change in self.app.host_event(host, event) {
                log(&change, &self.app);
                if let Change::Edge(..) = change {
                    self.edges += 1;
                }
                if let Change::Host(host) = change
                    && matches!(
                        self.app.client().fleet().host(host).link,
                        Link::Down { .. } | Link::Revoked { .. }
                    )
                {
                    self.ended = true;
                }
                if done(&change, self) || self.ended {
                    return Ok(());
                }
            }
        }
    }
}

/// Plays a flow against the host on this process's stdio.
fn play(flow: Flow, device: String) -> Result<(), String> {
    let host = HostSpec {
        name: HOST.to_owned(),
        spec: Spec {
            argv: None,
            hello: hello(device),
            policy: Policy::manual(),
        },
    };
    let notify = NotifyConfig {
        bell: false,
        command: None,
    };
    let mut player = Player {
        app: App::start(vec![host], notify),
        edges: 0,
        ended: false,
    };
    let mut outcome = Ok(());
    for step in flow.steps {
        if player.ended {
            break;
        }
        let step = match step {
            Step::Answer { pane, choice } => match bind(player.app.client(), &pane, choice) {
                Ok(command) => Step::Do(command),
                Err(why) => {
                    outcome = Err(why);
                    break;
                }
            },
            other => other,
        };
        let waited = match step {
            Step::Answer { .. } => unreachable!("bound above"),
            Step::Do(command) => {
                let awaited = Awaited::of(&command);
                match player.app.command(command) {
                    Ok(changes) if changes.iter().any(|c| awaited.answered_by(c)) => Ok(()),
                    Ok(_) => player.until(awaited.request(), |c, _| awaited.answered_by(c)),
                    Err(why) => Err(why),
                }
            }
            Step::Edges(n) => player.until(&format!("{n} edge(s)"), |_, p| p.edges >= n),
            Step::End => player.until("end of the connection", |_, _| false),
        };
        if let Err(why) = waited {
            outcome = Err(why);
            break;
        }
    }
    player.app.shutdown();
    outcome
}

/// The answer to the card of `pane` an earlier step read, quoting its binder.
fn bind(
    client: &client_core::client::Client,
    pane: &str,
    choice: Choice,
) -> Result<Command, String> {
    let binder = client
        .card(0, pane)
        .and_then(|held| held.binder().cloned())
        .ok_or_else(|| format!("no card of {pane} with a binder was read before its answer"))?;
    Ok(Command::Answer {
        host: HOST.into(),
        pane: pane.into(),
        binder,
        choice,
    })
}

/// One line per change on stderr: the replayer shows the end of it when a case fails.
fn log(change: &Change, app: &App<()>) {
    let line = match change {
        Change::Host(host) => {
            let host = app.client().fleet().host(*host);
            let fault = host
                .fault
                .as_ref()
                .map(|f| f.message.as_str())
                .unwrap_or("");
            format!("host {}: {:?} {fault}", host.name, host.link)
        }
        Change::Failed {
            what,
            code,
            message,
            ..
        } => {
            format!("failed {what}: {code:?} {message}")
        }
        Change::Receipt { receipt, retry, .. } => format!(
            "receipt {} {} {:?} cached={} retry={retry:?}",
            receipt.slot, receipt.outcome, receipt.reason, receipt.cached
        ),
        other => {
            let text = format!("{other:?}");
            text.chars().take(160).collect()
        }
    };
    let _ = writeln!(std::io::stderr(), "corral-remote --replay: {line}");
}
