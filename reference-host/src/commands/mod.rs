//! The commands behind the command line: each turns parsed arguments into validated options and
//! returns an exit code. Human output for the local commands is written here.

mod device;
mod ls;

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
    Tmux::new(args.tmux_bin.clone(), socket)
}

/// This machine's host name.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}
