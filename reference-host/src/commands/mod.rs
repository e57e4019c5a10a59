//! The commands behind the command line: each turns parsed arguments into validated options and
//! returns an exit code. Human output for the local commands is written here.

mod device;
mod ls;

use std::time::Duration;

use crate::cli::{Command, TmuxArgs};
use crate::paths::Paths;
use crate::serve::{self, ServeOptions};
use crate::tmux::{Socket, Tmux};

/// Runs one command.
pub fn run(command: Command) -> anyhow::Result<u8> {
    let paths = Paths::from_env()?;
    match command {
        Command::Serve(args) => Ok(serve::run(ServeOptions {
            device: args.device,
            tmux: tmux(&args.tmux),
            tmux_timeout: args.tmux.tmux_timeout_ms.map(Duration::from_millis),
            paths,
            host: host_name(),
        })),
        Command::Ls(args) => ls::run(args.json, tmux(&args.tmux), host_name()),
        Command::Device(command) => device::run(command, &paths),
    }
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

/// This machine's host name.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}
