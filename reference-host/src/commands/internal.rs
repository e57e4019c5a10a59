//! `corral internal …` (hidden): what corral starts itself, in a process group of its own, so
//! that work outlives the short-lived process that asked for it. `notify-command` runs one
//! notification command for an agent's event hook (payload on stdin, its `CORRAL_*` environment
//! inherited) and records how it ended; `exec-action` runs a detached action and reports its
//! completion. `list-panes-command` prints the tmux command line the host reads the fleet with,
//! for the benchmark that runs tmux with it.

use super::output::say;
use std::io::Read;
use std::time::Duration;

use anyhow::Context;
use schema::notify::Completion;
use schema::{Action, Config, Outcome};

use crate::cli::{ExecActionArgs, InternalCommand, ReadFields};
use crate::notify::command::{Job, Runner};
use crate::notify::completion::{self, Detached};
use crate::paths::Paths;
use crate::runtime::RuntimeDir;
use crate::tmux::Tmux;
use crate::tmux::read::Fields;
use schema::NotifyEnv;

pub fn run(
    command: InternalCommand,
    paths: &Paths,
    tmux: impl FnOnce(&crate::cli::TmuxArgs) -> Tmux,
) -> anyhow::Result<u8> {
    let runtime = || RuntimeDir::open(&paths.runtime_dir);
    match command {
        InternalCommand::ListPanesCommand { fields, tmux: args } => {
            let fields = match fields {
                ReadFields::Host => Fields::Host,
                ReadFields::Row => Fields::Row,
                ReadFields::Notify => Fields::Notify { progress: false },
            };
            print_command(&tmux(&args).list_panes_command(fields))?;
            Ok(0)
        }
        InternalCommand::NotifyCommand { timeout_s, command } => {
            let runtime = runtime()?;
            let mut stdin = Vec::new();
            std::io::stdin().read_to_end(&mut stdin)?;
            let job = Job {
                command,
                stdin,
                env: NotifyEnv::default(),
            };
            let ran = Runner::with_timeout(runtime, Duration::from_secs(timeout_s)).run(job, false);
            Ok(u8::from(ran.failure.is_some()))
        }
        InternalCommand::ExecAction(args) => {
            let runtime = runtime()?;
            let tmux = tmux(&args.tmux);
            // A broken config must not stop the action: its completion then reaches the
            // status line and the tty with the defaults, and no command or log.
            let config = crate::config::load(&paths.config_file).unwrap_or_else(|err| {
                tracing::warn!("{err:#}");
                Config::default()
            });
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            let detached = detached(*args)?;
            completion::supervise(&detached, &config.notify, &tmux, &runtime, home.as_deref());
            Ok(0)
        }
    }
}

/// The command line as one JSON array of strings.
fn print_command(argv: &[std::ffi::OsString]) -> anyhow::Result<()> {
    let argv: Vec<&str> = argv
        .iter()
        .map(|arg| arg.to_str().context("a tmux argument that is not UTF-8"))
        .collect::<anyhow::Result<_>>()?;
    say!("{}", serde_json::to_string(&argv)?);
    Ok(())
}

fn detached(args: ExecActionArgs) -> anyhow::Result<Detached> {
    let action = Action::parse(&args.action).ok_or_else(|| anyhow::anyhow!("an empty action"))?;
    Ok(Detached {
        command: args.command,
        timeout: Duration::from_secs(args.timeout_s),
        cwd: args.cwd,
        tty: args.tty,
        completion: Completion {
            agent: args.agent,
            pane: args.pane,
            action,
            outcome: Outcome::Spawned,
            session: args.session,
            locator: args.locator,
            repo: args.repo,
            branch: args.branch,
        },
    })
}
