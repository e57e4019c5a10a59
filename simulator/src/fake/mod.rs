//! `corral-fake-tmux`: the subset of tmux's command line the host (and `corral-sim`) uses, with
//! tmux 3.3a's output formats, exit codes and error texts, and state in files under
//! `$CORRAL_SIM_DIR` instead of a server process.
//!
//! An invocation parses every command first (as tmux does), takes the server's exclusive lock,
//! applies any injected fault, runs the commands in order against the loaded state, stops at the
//! first error, writes the state back whole, and appends to the observable logs. Read in this
//! order:
//!
//! - [`cli`]: the command line, split and parsed as tmux 3.3a does.
//! - [`invoke`]: one invocation against a server directory (lock, faults, state, logs).
//! - [`commands`]: the dispatcher and each command.
//! - [`state`], [`target`]: the server's state and how a `-t` target finds a pane in it.
//! - [`format`](mod@format), [`vars`]: `-F` formats (tmux's format language) and the one table of tmux's
//!   variables, each modelled, constant, or refused.
//! - [`escape`]: what tmux does to output for a client that is not UTF-8 capable.
//! - [`faults`]: injected failures and hangs.

pub mod cli;
pub mod commands;
pub mod escape;
pub mod faults;
pub mod format;
pub mod invoke;
pub mod state;
pub mod target;
pub mod vars;

use std::path::{Path, PathBuf};

use serde_json::json;

use cli::{CliError, Socket};
use state::ServerDir;

pub use invoke::edit;

/// What an invocation printed and how it exited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Bytes for stdout.
    pub stdout: Vec<u8>,
    /// Bytes for stderr.
    pub stderr: Vec<u8>,
    /// Exit status.
    pub code: i32,
}

impl Output {
    /// A failure: one line on stderr, exit 1.
    fn fail(line: &str) -> Output {
        Output {
            stdout: Vec::new(),
            stderr: format!("{line}\n").into_bytes(),
            code: 1,
        }
    }
}

/// What `-V` prints: the tmux version the fake stands in for.
pub const VERSION: &str = "tmux 3.3a";

/// The fake's own prefix on errors about what it does not implement.
pub const PREFIX: &str = "corral-fake-tmux";

/// The usage text of `corral-fake-tmux --help`.
pub const HELP: &str = "\
corral-fake-tmux: a stand-in for tmux 3.3a's command line, for tests (state under $CORRAL_SIM_DIR)

usage: corral-fake-tmux [-uV] [-f file] [-L socket-name | -S socket-path] command [flags] [; command ...]

commands: list-panes (lsp), display-message (display), show-options (show), set-option (set),
send-keys (send), list-clients (lsc), if-shell (if, -F only), has-session (has), kill-pane (killp),
kill-session, kill-server, new-session (new), new-window (neww), split-window (splitw),
select-pane (selectp), select-layout (selectl), respawn-pane (respawnp)

-L name uses $CORRAL_SIM_DIR/tmux-<uid>/<name>; -S path uses path. Output is sanitized to
printable ASCII unless -u is given or LC_ALL / LC_CTYPE / LANG names UTF-8 or TMUX is set,
as tmux does. See golden/fixtures/README.md.

Examples (a fleet `corral-sim up --backend fake --socket demo` brought up):
  corral-fake-tmux -L demo list-panes -a -F '#{pane_id} #{@agent_name} #{@agent_state}'
  corral-fake-tmux -L demo set-option -p -t %2 @agent_state idle
  CORRAL_TMUX_BIN=corral-fake-tmux CORRAL_TMUX_SOCKET=demo corral ls";

/// Whether tmux would treat the client as UTF-8 capable, from the environment.
pub fn utf8_from_env() -> bool {
    if std::env::var_os("TMUX").is_some() {
        return true;
    }
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.is_empty())
        .unwrap_or_default()
        .to_ascii_uppercase();
    locale.contains("UTF-8") || locale.contains("UTF8")
}

/// The socket path of a socket selection.
pub fn socket_path(sim_dir: &Path, uid: u32, socket: &Socket) -> PathBuf {
    match socket {
        Socket::Name(name) => sim_dir.join(format!("tmux-{uid}")).join(name),
        Socket::Path(path) => path.clone(),
    }
}

/// Runs one invocation (argv without the program name).
pub fn run(args: &[String], sim_dir: &Path, utf8_env: bool) -> Output {
    let (global, rest) = match cli::parse_global(args) {
        Ok(parsed) => parsed,
        Err(err) => return cli_error(err),
    };
    if global.version {
        return Output {
            stdout: format!("{VERSION}\n").into_bytes(),
            ..Output::default()
        };
    }
    let mut commands = Vec::new();
    for argv in cli::split_commands(rest) {
        match cli::parse_command(&argv) {
            Ok(command) => commands.push(command),
            Err(err) => return cli_error(err),
        }
    }
    if commands.is_empty() {
        return Output::fail(&format!(
            "{PREFIX}: no command given (the fake cannot attach a terminal)"
        ));
    }
    let uid = crate::env::uid(sim_dir);
    let path = socket_path(sim_dir, uid, &global.socket);
    let dir = ServerDir::new(path.clone());
    let output = invoke::execute(&dir, &commands, global.utf8 || utf8_env, true);
    if dir.exists() {
        // The commands by tmux's canonical names (`list-panes` for `lsp` too), whatever global
        // options and flag order the caller used: what a session judges of a host's tmux use.
        let names: Vec<&str> = commands.iter().map(|command| command.name).collect();
        let line = json!({ "argv": args, "commands": names, "exit": output.code }).to_string();
        let _ = dir.append(&dir.calls_file(), &[line]);
    }
    output
}

fn cli_error(err: CliError) -> Output {
    match err {
        CliError::Tmux(text) => Output::fail(&text),
        CliError::Unsupported(text) => Output::fail(&format!("{PREFIX}: {text}")),
    }
}
