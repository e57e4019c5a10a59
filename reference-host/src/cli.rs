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
    /// Watch the fleet and notify: one daemon per tmux server, in the foreground.
    Daemon(DaemonArgs),
    /// Mute a pane's notifications (the current pane by default), or a session's.
    Mute(MuteArgs),
    /// Say why nothing rings: the last notification-command failure and the checks it needs.
    Doctor(DoctorArgs),
    /// Debugging aids for notifications.
    #[command(subcommand)]
    Debug(DebugCommand),
    /// What corral starts itself: the supervisors of detached commands.
    #[command(subcommand, hide = true)]
    Internal(InternalCommand),
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

#[derive(Debug, Args)]
pub struct DaemonArgs {
    #[command(flatten)]
    pub tmux: TmuxArgs,
}

#[derive(Debug, Args)]
pub struct MuteArgs {
    /// The pane to mute; `$TMUX_PANE` (the pane this runs in) by default.
    #[arg(long, value_name = "ID", conflicts_with = "session")]
    pub pane: Option<String>,
    /// Every agent pane of this tmux session.
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// For how long (45s, 30m, 2h, 1d; parts add up: 1h30m); until cleared by default.
    #[arg(
        long = "for",
        value_name = "DURATION",
        value_parser = crate::commands::mute::parse_duration,
        conflicts_with = "clear"
    )]
    pub duration: Option<std::time::Duration>,
    /// Clear the mute instead.
    #[arg(long)]
    pub clear: bool,
    #[command(flatten)]
    pub tmux: TmuxArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print `{"schema":1,"last_failure":...,"checks":[...]}` instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tmux: TmuxArgs,
}

#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Run the command a trigger resolves to with a representative payload, and wait for it.
    NotifyTest {
        /// blocked, done, context_high or stall.
        #[arg(long, value_parser = ["blocked", "done", "context_high", "stall"])]
        trigger: String,
    },
    /// Print the running daemon's transition ring, oldest first.
    Transitions {
        /// Print the ring's JSON form.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        tmux: TmuxArgs,
    },
}

#[derive(Debug, Subcommand)]
pub enum InternalCommand {
    /// Run one notification command (payload on stdin), wait for it and record how it ended.
    NotifyCommand {
        /// The command line, run with `sh -c`.
        #[arg(long)]
        command: String,
    },
    /// Run a detached action and report its completion through the notification sinks.
    ExecAction(Box<ExecActionArgs>),
}

#[derive(Debug, Args)]
pub struct ExecActionArgs {
    /// The command line, run with `sh -c`.
    #[arg(long)]
    pub command: String,
    /// Seconds before it is killed.
    #[arg(long)]
    pub timeout_s: u64,
    /// Its working directory.
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The pane's tty.
    #[arg(long, default_value = "")]
    pub tty: String,
    /// The pane.
    #[arg(long)]
    pub pane: String,
    /// The action's name.
    #[arg(long)]
    pub action: String,
    /// The agent.
    #[arg(long, default_value = "")]
    pub agent: String,
    /// The tmux session.
    #[arg(long, default_value = "")]
    pub session: String,
    /// The pane's locator.
    #[arg(long, default_value = "")]
    pub locator: String,
    /// The repository.
    #[arg(long, default_value = "")]
    pub repo: String,
    /// The branch.
    #[arg(long, default_value = "")]
    pub branch: String,
    #[command(flatten)]
    pub tmux: TmuxArgs,
}
