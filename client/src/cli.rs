//! The command line as data; clap lives here only.

use std::path::PathBuf;

use clap::Parser;

use crate::config::Flags;

const AFTER_HELP: &str = "\
Hosts come from ~/.config/corral/remote.toml ($XDG_CONFIG_HOME honoured; --config FILE), or from
--host and --local (then a file is read only when --config names it):

  [notify]
  bell = true                      # BEL when a pane blocks (default true)
  command = \"ntfy publish corral\"  # run on every ring, the payload JSON on stdin

  [[host]]
  name = \"studio\"
  ssh = \"ana@studio.lan\"           # ssh -T: the forced command picks the device

  [[host]]
  name = \"build\"
  ssh = \"ci@build\"
  device = \"SHA256:q3b1YwZk\"       # ssh ci@build corral serve --stdio --device SHA256:q3b1YwZk
  corral = \"/opt/corral/bin/corral\"
  ssh_options = [\"-p\", \"2222\", \"-i\", \"~/.ssh/corral\"]   # ssh's own, before the destination

  [[host]]
  name = \"here\"
  local = true                     # corral serve --stdio --device ... on this machine
  device = \"SHA256:q3b1YwZk\"

  [[host]]
  name = \"fake\"
  command = [\"sh\", \"-c\", \"exec my-host\"]   # any argv speaking the protocol

Examples:
  corral-remote                                   # the TUI over the hosts of remote.toml
  corral-remote --host studio=ana@studio.lan      # one host whose forced command picks the device
  corral-remote --local here --device here=SHA256:q3b1YwZk
  corral-remote --ndjson < commands.ndjson        # headless: JSON commands in, JSON changes out

Exit codes: 0 when it was told to end, 1 when it failed, 2 for a bad command line or config.";

/// One terminal that watches and answers coding agents on many hosts over ssh.
///
/// Each host's `corral serve --stdio` is started over ssh (or locally), its fleet followed, and
/// every agent shown, blocked ones first; a pane that blocks rings once. Cards are opened,
/// permissions approved or denied, questions answered and agents steered from here, each answer
/// under a slot derived so that pressing it twice answers once.
#[derive(Debug, Parser)]
#[command(name = "corral-remote", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// Read hosts from FILE instead of ~/.config/corral/remote.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A host over ssh (repeatable): `ssh -T DEST`, whose forced command picks the device.
    #[arg(long = "host", value_name = "NAME=DEST")]
    pub hosts: Vec<String>,
    /// This machine's fleet under NAME: `corral serve --stdio` run here (needs --device).
    #[arg(long = "local", value_name = "NAME")]
    pub locals: Vec<String>,
    /// The device fingerprint host NAME serves (for --local, and a --host with no forced command).
    #[arg(long = "device", value_name = "NAME=FINGERPRINT")]
    pub devices: Vec<String>,
    /// The `corral` program of --local hosts (default: `corral` from PATH).
    #[arg(long, value_name = "PATH")]
    pub corral: Option<String>,
    /// Headless: JSON commands on stdin, JSON lines of what changes on stdout.
    #[arg(long, conflicts_with = "replay")]
    pub ndjson: bool,
    /// The replay harness: play the flow $CORRAL_REPLAY_CASE names against a host on this
    /// process's own stdin and stdout (`corral-sim replay --app 'corral-remote --replay'`).
    #[arg(long)]
    pub replay: bool,
    /// With --replay: list every golden session with whether the harness plays it, and why not.
    #[arg(long, requires = "replay")]
    pub list: bool,
    /// Run COMMAND (sh -c) on every ring, the payload JSON on stdin.
    #[arg(long, value_name = "COMMAND")]
    pub notify_command: Option<String>,
    /// No BEL when a pane blocks.
    #[arg(long)]
    pub no_bell: bool,
}

impl Cli {
    /// What the configuration takes from the command line.
    pub fn flags(&self) -> Flags {
        Flags {
            config: self.config.clone(),
            hosts: self.hosts.clone(),
            locals: self.locals.clone(),
            devices: self.devices.clone(),
            corral: self.corral.clone(),
            notify_command: self.notify_command.clone(),
            no_bell: self.no_bell,
        }
    }
}
