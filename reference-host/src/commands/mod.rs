//! The commands behind the command line: each turns parsed arguments into validated options and
//! returns an exit code. Human output for the local commands is written here.

mod act;
mod debug;
mod device;
mod doctor;
mod hooks;
mod internal;
mod ls;
pub mod mute;
mod output;

use std::time::Duration;

use crate::cli::{Command, TmuxArgs};
use crate::notify;
use crate::notify::daemon::DaemonOptions;
use crate::paths::Paths;
use crate::serve::{self, ServeOptions};
use crate::tmux::{Socket, Tmux};

/// Runs one command.
pub fn run(command: Command) -> anyhow::Result<u8> {
    // An agent's hook never fails: without the host's paths it stamps all the same.
    if let Command::Event(args) = command {
        return Ok(crate::hook::run(crate::hook::EventOptions {
            agent: args.agent,
            hook: args.hook,
            payload: args.payload,
            tmux_bin: args.tmux_bin,
            paths: Paths::from_env().map_err(|err| format!("{err:#}")),
        }));
    }
    let paths = Paths::from_env()?;
    match command {
        Command::Serve(args) => Ok(serve::run(ServeOptions {
            device: args.device,
            tmux: tmux(&args.tmux),
            tmux_timeout: args.tmux.tmux_timeout_ms.map(Duration::from_millis),
            paths,
            host: host_name(),
        })),
        Command::Ls(args) => ls::run(args.json, tmux(&args.tmux), host_name(), &paths),
        Command::Device(command) => device::run(command, &paths),
        Command::Act(args) => act::act(args, &paths, host_name()),
        Command::Receipts(args) => act::receipts(args, &paths),
        Command::Actions(args) => act::actions(args, &paths),
        Command::Event(_) => unreachable!("handled above"),
        Command::Hooks(command) => hooks::run(command, &paths),
        Command::Daemon(args) => notify::daemon::run(DaemonOptions {
            tmux: tmux(&args.tmux),
            paths,
            host: host_name(),
            tmux_timeout: args.tmux.tmux_timeout_ms.map(Duration::from_millis),
        }),
        Command::Mute(args) => {
            let tmux = tmux(&args.tmux);
            mute::run(args, tmux, host_name())
        }
        Command::Doctor(args) => doctor::run(args.json, tmux(&args.tmux), &paths),
        Command::Debug(command) => debug::run(command, &paths, tmux),
        Command::Internal(command) => internal::run(command, &paths, tmux),
    }
}

/// Rows as aligned columns (the first row is the header), two spaces apart.
pub fn table<R: AsRef<[String]>>(rows: &[R]) -> String {
    let columns = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.as_ref().get(i))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .as_ref()
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn tmux(args: &TmuxArgs) -> Tmux {
    let socket = args
        .tmux_socket
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(Socket::parse);
    let tmux = Tmux::new(args.tmux_bin.clone(), socket);
    match args.tmux_timeout_ms {
        Some(ms) => tmux.with_timeout(Duration::from_millis(ms)),
        None => tmux,
    }
}

/// The log filter when `RUST_LOG` is unset: the daemon says what it fires and reloads; the
/// other commands speak only of trouble.
pub fn default_log_filter(command: &Command) -> &'static str {
    match command {
        Command::Daemon(_) => "info",
        _ => "warn",
    }
}

pub use crate::fleet::host_name;

/// Whether a command ended because its stdout was closed (`corral ls | head -1`): not a failure.
pub fn stdout_closed(err: &anyhow::Error) -> bool {
    err.downcast_ref::<output::StdoutClosed>().is_some()
}
