//! The command line, parsed into plain data. Validation and defaults happen in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// corral: watch a fleet of AI coding agents in tmux, from here or from a remote device.
#[derive(Debug, Parser)]
#[command(name = "corral", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve one remote device on stdin/stdout (usually an ssh forced command).
    Serve(ServeArgs),
    /// List the agent panes of the fleet.
    Ls(LsArgs),
    /// Enrol, list, grant and revoke remote devices.
    #[command(subcommand)]
    Device(DeviceCommand),
}

/// Which tmux server to read.
#[derive(Debug, Clone, Args)]
pub struct TmuxArgs {
    /// The tmux binary.
    #[arg(
        long,
        env = "CORRAL_TMUX_BIN",
        default_value = "tmux",
        value_name = "PATH"
    )]
    pub tmux_bin: PathBuf,
    /// The tmux socket: a bare name means `-L NAME`, a path means `-S PATH`.
    #[arg(long, env = "CORRAL_TMUX_SOCKET", value_name = "NAME|PATH")]
    pub tmux_socket: Option<String>,
    /// How long one tmux invocation may take before it is killed, in milliseconds. Default: the
    /// cycle clamped to 1-5 s for `serve`, 5 s for `ls`.
    #[arg(
        long,
        env = "CORRAL_TMUX_TIMEOUT_MS",
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub tmux_timeout_ms: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Speak NDJSON frames on stdin/stdout (the only transport).
    #[arg(long, required = true)]
    pub stdio: bool,
    /// The fingerprint of the device the spawner authenticated.
    #[arg(long, value_name = "ID")]
    pub device: String,
    #[command(flatten)]
    pub tmux: TmuxArgs,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print `{"schema":1,"agents":[...]}` (wire rows plus `title`) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tmux: TmuxArgs,
}

#[derive(Debug, Subcommand)]
pub enum DeviceCommand {
    /// Enrol a device.
    Add {
        /// A name for the device, unique on this host.
        name: String,
        /// The device's fingerprint, as the spawner will pass it to `serve --device`.
        #[arg(long, value_name = "FINGERPRINT")]
        id: String,
        /// A scope to grant (repeatable): read, act:answer, act:always, act:steer. Default: read.
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
    },
    /// List enrolled devices.
    List {
        /// Print `{"schema":1,"devices":[...]}` instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Grant a device one more scope.
    Grant {
        /// The device's name.
        name: String,
        /// The scope.
        scope: String,
    },
    /// Remove a device's record: its live connections end at their next request or publish.
    Revoke {
        /// The device's name.
        name: String,
    },
}
