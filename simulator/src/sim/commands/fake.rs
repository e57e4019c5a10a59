//! `fault add|clear|release` and `client attach|detach`: what only the fake tmux can be made to
//! do, written into its state.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::{Backend, SimFile};

use super::super::cli::{ClientAction, FaultAction};
use super::super::simfile;
use crate::fake::faults::{self, Effect, Fault};
use crate::fake::state::{Client, ServerDir};

/// `fault add|clear|release`.
pub fn fault(sim_dir: &Path, action: FaultAction) -> anyhow::Result<()> {
    let sim = simfile::load(sim_dir)?;
    let dir = fake_dir(&sim)?;
    let mut list = faults::load(&dir)?;
    match action {
        FaultAction::Add {
            command,
            pane,
            fail,
            exit_code,
            stderr,
            stdout,
            hang_ms,
            hang_after_ms,
            times,
        } => {
            let pane = pane.map(|p| sim.pane(&p).map(|(_, id)| id)).transpose()?;
            let effect = match (fail, hang_ms, hang_after_ms) {
                (true, _, _) => Effect::Fail {
                    exit_code,
                    stderr,
                    stdout,
                },
                (false, Some(ms), _) => Effect::Hang { ms },
                (false, None, Some(ms)) => Effect::HangAfter { ms },
                (false, None, None) => bail!("give --fail, --hang-ms or --hang-after-ms"),
            };
            list.push(Fault {
                command: canonical(&command)?.to_owned(),
                pane,
                effect,
                remaining: times,
            });
        }
        FaultAction::Clear => list.clear(),
        FaultAction::Release => {
            return faults::release(&dir)
                .with_context(|| format!("releasing the hangs of {}", dir.path.display()));
        }
    }
    let _lock = dir.lock(false)?;
    faults::store(&dir, &list)?;
    Ok(())
}

/// `client attach|detach`.
pub fn client(sim_dir: &Path, action: ClientAction) -> anyhow::Result<()> {
    let sim = simfile::load(sim_dir)?;
    let dir = fake_dir(&sim)?;
    crate::fake::edit(&dir, |server| match action {
        ClientAction::Attach { name, session } => {
            let pid = 90_000 + server.clients.len() as u32;
            server.clients.retain(|c| c.name != name);
            server.clients.push(Client { name, session, pid });
        }
        ClientAction::Detach { name } => server.clients.retain(|c| c.name != name),
    })?;
    Ok(())
}

/// The fake server's state dir, or an error on a real fleet.
fn fake_dir(sim: &SimFile) -> anyhow::Result<ServerDir> {
    if sim.backend != Backend::Fake {
        bail!("this needs the fake backend (sim.json says real)");
    }
    Ok(ServerDir::new(PathBuf::from(&sim.socket_path)))
}

/// The fake's own name of tmux command `command` (an alias resolved).
fn canonical(command: &str) -> anyhow::Result<&'static str> {
    crate::fake::cli::parse_command(&[command.to_owned()])
        .map(|c| c.name)
        .or_else(|_| {
            // Commands that need arguments still name themselves.
            [
                "set-option",
                "list-panes",
                "send-keys",
                "display-message",
                "show-options",
                "kill-pane",
            ]
            .into_iter()
            .find(|n| *n == command)
            .ok_or(())
        })
        .map_err(|()| anyhow::anyhow!("unknown tmux command {command:?}"))
}
