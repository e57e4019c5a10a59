//! `corral act`, `corral receipts`, `corral actions`: dispatch and its ledger from the host's own
//! command line. `act` goes through the same slot and binder gates and the same fire as a device's
//! dispatch (surface `cli`, no scope gate: the person at the host holds every scope), and exits
//! with the receipt's exit code.

use super::output::{say, say_raw};
use std::io::Write as _;

use anyhow::{Context, bail};
use schema::manifest::{ActionList, ActionListing};
use schema::{Action, Binder, Receipt, Receipts, SCHEMA_VERSION};

use crate::act::dispatch::{self, Dispatcher, Order, Refusal, Surface};
use crate::act::exec::Exec;
use crate::act::ledger::Ledger;
use crate::act::manifest::{Manifests, Source};
use crate::cli::{ActArgs, ActionsArgs, ReceiptsArgs};
use crate::clock::now_ms;
use crate::fleet::FleetReader;
use crate::paths::Paths;
use crate::runtime::RuntimeDir;

/// Exit code of `act` when the request itself is malformed (no receipt).
const USAGE: u8 = 2;

pub fn act(args: ActArgs, paths: &Paths, host: String) -> anyhow::Result<u8> {
    let config = crate::config::load(&paths.config_file)?;
    let manifests = Manifests::load(&paths.actions_dir)?;
    let runtime = RuntimeDir::open(&paths.runtime_dir)?;
    let Some(action) = Action::parse(&args.action) else {
        bail!("an action name cannot be empty");
    };
    let answers: Option<Vec<Vec<String>>> = args
        .answers
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .context("--answers must be a JSON array of arrays of labels, like [[\"Yes\"]]")?;
    let slot = args
        .slot
        .clone()
        .unwrap_or_else(|| format!("cli:{}:{}:{action}", args.pane, now_ms()));
    let binder = Binder {
        expect_episode_ms: args.expect_episode.unwrap_or(0),
        expect_permission_request: args.expect_request.clone(),
    };
    let order = Order {
        slot: &slot,
        pane: &args.pane,
        action: &action,
        binder: &binder,
        text: args.text.as_deref(),
        answers: answers.as_deref(),
        surface: Surface::Cli,
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let tmux = super::tmux(&args.tmux);
    let exec = Exec::current(tmux.clone()).context("finding this binary for a detached action")?;
    let mut fleet = FleetReader::new(tmux, host);
    let mut ledger = Ledger::new(runtime.path());
    let mut dispatcher = Dispatcher {
        manifests: &manifests,
        runtime: &runtime,
        ledger: &mut ledger,
        act_log: config
            .act
            .log
            .as_deref()
            .map(|log| crate::files::expand_home(log, home.as_deref())),
        exec: Some(exec),
    };

    match dispatch::dispatch(&mut fleet, &mut dispatcher, &order) {
        Ok(receipt) => {
            if args.json {
                say!("{}", serde_json::to_string(&receipt)?);
            } else {
                say!("{}", line(&receipt));
            }
            Ok(u8::try_from(receipt.exit_code).unwrap_or(1))
        }
        Err(Refusal::BadRequest(message)) => {
            // Not `eprintln!`, which panics on a stderr that cannot be written.
            let _ = writeln!(std::io::stderr(), "corral: {message}");
            Ok(USAGE)
        }
        Err(Refusal::Internal(message)) => bail!(message),
    }
}

/// `sent %3 approve (slot cli:%3:…)`, `refused/requires-unmet …`, with `cached` when repeated.
fn line(receipt: &Receipt) -> String {
    let mut out = receipt.outcome.to_string();
    if let Some(reason) = &receipt.reason {
        out.push('/');
        out.push_str(reason.as_str());
    }
    out.push_str(&format!(
        " {} {} (slot {})",
        receipt.pane, receipt.action, receipt.slot
    ));
    if receipt.cached {
        out.push_str(", cached");
    }
    out
}

pub fn receipts(args: ReceiptsArgs, paths: &Paths) -> anyhow::Result<u8> {
    let runtime = RuntimeDir::open(&paths.runtime_dir)?;
    let found = Ledger::new(runtime.path()).receipts(args.slot.as_deref(), args.since)?;
    let receipts: Vec<Receipt> = found
        .into_iter()
        .map(|r| Receipt { cached: true, ..r })
        .collect();
    if args.json {
        say!("{}", serde_json::to_string(&Receipts { receipts })?);
        return Ok(0);
    }
    if receipts.is_empty() {
        say!("no receipts in the ledger");
        return Ok(0);
    }
    let mut rows = vec![
        [
            "AT_MS", "SLOT", "PANE", "ACTION", "OUTCOME", "EXIT", "DEVICE",
        ]
        .map(str::to_owned),
    ];
    for r in &receipts {
        let outcome = match &r.reason {
            Some(reason) => format!("{}/{reason}", r.outcome),
            None => r.outcome.to_string(),
        };
        rows.push([
            r.at_ms.to_string(),
            r.slot.clone(),
            r.pane.clone(),
            r.action.to_string(),
            outcome,
            r.exit_code.to_string(),
            r.device.clone(),
        ]);
    }
    say_raw!("{}", super::table(&rows));
    Ok(0)
}

pub fn actions(args: ActionsArgs, paths: &Paths) -> anyhow::Result<u8> {
    let manifests = Manifests::load(&paths.actions_dir)?;
    let actions: Vec<ActionListing> = manifests
        .all()
        .map(|loaded| {
            let exec = matches!(loaded.spec, schema::manifest::ActionSpec::Exec(_));
            ActionListing {
                agent: loaded.agent.clone(),
                name: loaded.spec.name().clone(),
                kind: loaded.spec.kind().to_owned(),
                scope: if exec {
                    None
                } else {
                    dispatch::scope_needed(loaded.spec.name())
                },
                label: loaded.spec.label().to_owned(),
                source: match &loaded.source {
                    Source::Bundled(name) => format!("bundled:{name}"),
                    Source::File(path) => path.display().to_string(),
                },
            }
        })
        .collect();
    if args.json {
        let list = ActionList {
            schema: SCHEMA_VERSION,
            actions,
        };
        say!("{}", serde_json::to_string(&list)?);
        return Ok(0);
    }
    let mut rows = vec![["AGENT", "ACTION", "KIND", "SCOPE", "LABEL", "SOURCE"].map(str::to_owned)];
    for a in actions {
        rows.push([
            a.agent,
            a.name.to_string(),
            a.kind,
            a.scope.map_or_else(|| "-".to_owned(), |s| s.to_string()),
            a.label,
            a.source,
        ]);
    }
    say_raw!("{}", super::table(&rows));
    Ok(0)
}
