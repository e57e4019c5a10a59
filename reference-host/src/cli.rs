//! The command line, parsed into plain data. Validation and defaults happen in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// corral: watch a fleet of AI coding agents in tmux, from here or from a remote device.
#[derive(Debug, Parser)]
#[command(
    name = "corral",
    version,
    propagate_version = true,
    after_help = "Examples:\n  corral ls                                   the agents of this tmux server\n  corral device add phone --key phone.pub >> ~/.ssh/authorized_keys\n  corral daemon                               notify when an agent needs you\n  corral doctor                               why nothing rings\n\nConfiguration: $CORRAL_CONFIG, else ~/.config/corral/config.toml. `corral <command> --help` says more."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// This process's command line, parsed.
    ///
    /// `corral event` is what every agent hook runs, several times a turn, so its command line is
    /// tried first against the `event` subcommand alone: building the whole tree of commands is
    /// most of what parsing costs. Only a command line it accepts is taken from it; anything
    /// else (help, the version, an error) goes through the whole tree, which alone decides and
    /// words those.
    pub fn parse_args() -> Result<Cli, clap::Error> {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        match Cli::event_only(&args) {
            Some(cli) => Ok(cli),
            None => Cli::try_parse_from(args),
        }
    }

    /// `args` (the program name first) as `corral event …`, parsed against that subcommand
    /// alone; `None` when it is another command or the subcommand does not accept it.
    pub fn event_only(args: &[std::ffi::OsString]) -> Option<Cli> {
        use clap::FromArgMatches;
        if args.get(1)? != "event" {
            return None;
        }
        let command = EventArgs::augment_args(clap::Command::new("event"));
        let matches = command.try_get_matches_from(&args[1..]).ok()?;
        let event = EventArgs::from_arg_matches(&matches).ok()?;
        Some(Cli {
            command: Command::Event(event),
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve one remote device on stdin/stdout (usually an ssh forced command).
    // clap's own usage line in an error names every option that was given, from the environment
    // too: inside the kit, which sets CORRAL_TMUX_BIN and CORRAL_TMUX_SOCKET, it showed them as
    // if required.
    #[command(
        override_usage = "corral serve [OPTIONS] --stdio --device <ID>",
        after_help = "Example, as the forced command of the device's key in ~/.ssh/authorized_keys (`corral device add --key` prints the line):\n  command=\"/usr/local/bin/corral serve --stdio --device SHA256:q3b1YwZk...\",restrict ssh-ed25519 AAAA... phone\n\nBy hand it speaks NDJSON frames on stdin/stdout (logs on stderr):\n  corral serve --stdio --device SHA256:q3b1YwZk...\n\nExit: 0 at end of input or on SIGTERM, 2 refused (unknown or revoked device, connection cap), 1 cannot start."
    )]
    Serve(ServeArgs),
    /// List the agent panes of the fleet.
    #[command(
        after_help = "Examples:\n  corral ls\n  corral ls --tmux-socket work --json\n\nA socket with no tmux server behind it lists nothing and says so on stderr."
    )]
    Ls(LsArgs),
    /// Enrol, list, grant and revoke remote devices.
    #[command(
        subcommand,
        after_help = "Examples:\n  corral device add phone --key ~/phone.pub --scope read >> ~/.ssh/authorized_keys\n  corral device list\n  corral device grant phone act:answer\n  corral device revoke phone\n\nThe store is $XDG_CONFIG_HOME/corral/devices.toml (~/.config/...); a live connection sees a change at its next request."
    )]
    Device(DeviceCommand),
    /// Fire an action at a pane as the person at this host (the slot and binder gates and the
    /// same fire as a device's dispatch; no scope gate).
    #[command(
        after_help = "Examples:\n  corral act %3 approve\n  corral act %3 steer --text 'add a test first'\n  corral act %5 question_reply --answers '[[\"Yes\"]]'\n\nThe exit code is the receipt's: 0 sent/replied/spawned, 4 refused (5 locked), 3 vanished, 1 error, 124 timeout."
    )]
    Act(ActArgs),
    /// Show receipts from the host's dispatch ledger.
    #[command(
        after_help = "Examples:\n  corral receipts\n  corral receipts --slot 7f3a9c --json\n  corral receipts --since 1763780000000"
    )]
    Receipts(ReceiptsArgs),
    /// List the loaded action manifests: every action, its kind, scope and source file.
    #[command(
        after_help = "Examples:\n  corral actions\n  corral actions --json\n\nManifests are read from $XDG_CONFIG_HOME/corral/actions/*.toml (~/.config/...)."
    )]
    Actions(ActionsArgs),
    /// Stamp the pane an agent runs in from one of its hook events (what an agent's hook runs).
    #[command(
        after_help = "Examples, as an agent's hook runs it inside its tmux pane ($TMUX_PANE):\n  echo '{\"hook_event_name\":\"Stop\"}' | corral event claude Stop\n  corral event codex notify '{\"type\":\"agent-turn-complete\"}'\n\nIt always exits 0; only a permission request's answer is written to stdout."
    )]
    Event(EventArgs),
    /// Print or install the hook settings that make an agent run `corral event`.
    #[command(
        subcommand,
        after_help = "Examples:\n  corral hooks print claude\n  corral hooks install codex"
    )]
    Hooks(HooksCommand),
    /// Watch the fleet and notify: one daemon per tmux server, in the foreground.
    #[command(
        after_help = "Examples, in a tmux window of its own (or as a systemd user unit, docs/deploy.md):\n  corral daemon\n  corral daemon --tmux-socket work\n\nSIGHUP re-reads the config; SIGTERM or Ctrl-C ends it."
    )]
    Daemon(DaemonArgs),
    /// Mute a pane's notifications (the current pane by default), or a session's.
    #[command(
        after_help = "Examples:\n  corral mute --for 30m                 this pane, for half an hour\n  corral mute --session work --for 2h\n  corral mute --pane %3 --clear"
    )]
    Mute(MuteArgs),
    /// Say why nothing rings: the last notification-command failure and the checks it needs.
    #[command(
        after_help = "Examples:\n  corral doctor\n  corral doctor --json\n\nIt checks the config, the device store (modes, unknown scopes), the daemon, tmux's passthrough and the runtime dir, and changes nothing. Exit 1 when a check fails."
    )]
    Doctor(DoctorArgs),
    /// Debugging aids for notifications.
    #[command(
        subcommand,
        after_help = "Examples:\n  corral debug notify-test --trigger blocked\n  corral debug transitions"
    )]
    Debug(DebugCommand),
    /// What corral starts itself: the supervisors of detached commands.
    #[command(
        subcommand,
        hide = true,
        after_help = "Example (corral runs these itself; they are not for people):\n  corral internal notify-command --command 'ntfy publish corral' < payload.json"
    )]
    Internal(InternalCommand),
}

#[derive(Debug, Args)]
pub struct EventArgs {
    /// The agent (`claude`, `codex`, `gemini`, ...), stamped as `@agent_name`.
    pub agent: String,
    /// The hook's event name (`PreToolUse`, `Stop`, ...); else the payload's `hook_event_name`.
    pub hook: Option<String>,
    /// The payload as an argument (Codex's notify appends it); else it is read from stdin.
    pub payload: Option<String>,
    /// The tmux binary.
    #[arg(
        long,
        env = "CORRAL_TMUX_BIN",
        default_value = "tmux",
        value_name = "PATH"
    )]
    pub tmux_bin: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Print the settings snippet for an agent (claude, codex, gemini).
    #[command(after_help = "Example:\n  corral hooks print claude")]
    Print {
        /// The agent.
        agent: String,
    },
    /// Merge the snippet into the agent's settings, keeping everything else (a backup is kept;
    /// installing twice changes nothing).
    #[command(
        after_help = "Examples:\n  corral hooks install claude     ~/.claude/settings.json\n  corral hooks install codex      ~/.codex/hooks.json and ~/.codex/config.toml\n  corral hooks install gemini     ~/.gemini/settings.json"
    )]
    Install {
        /// The agent.
        agent: String,
    },
}

#[derive(Debug, Args)]
pub struct ActArgs {
    /// The pane (`%N`).
    pub pane: String,
    /// The action (`approve`, `deny`, `steer`, ... or a local exec action's name).
    pub action: String,
    /// The text of a text action (`steer`, `steer_now`, `deny_with_message`).
    #[arg(long)]
    pub text: Option<String>,
    /// The answers of `question_reply`, as JSON: one array of chosen labels per question.
    #[arg(long, value_name = "JSON")]
    pub answers: Option<String>,
    /// The idempotency slot; a fresh one when absent. Repeating a slot returns its receipt.
    #[arg(long)]
    pub slot: Option<String>,
    /// Refuse unless the pane is still in this episode (its `episode_ms`).
    #[arg(long, value_name = "MS")]
    pub expect_episode: Option<u64>,
    /// Refuse unless the pane still carries this permission request.
    #[arg(long, value_name = "ID")]
    pub expect_request: Option<String>,
    /// Print the receipt as JSON instead of a line.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tmux: TmuxArgs,
}

#[derive(Debug, Args)]
pub struct ReceiptsArgs {
    /// Only this slot.
    #[arg(long)]
    pub slot: Option<String>,
    /// Only slots claimed at or after this epoch millisecond.
    #[arg(long, value_name = "MS")]
    pub since: Option<u64>,
    /// Print `{"receipts":[...]}` instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ActionsArgs {
    /// Print `{"schema":1,"actions":[...]}` instead of a table.
    #[arg(long)]
    pub json: bool,
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
    /// cycle clamped to 1-5 s for `serve` and `daemon`, 5 s for the other commands.
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
    #[command(
        after_help = "Examples:\n  corral device add phone --key ~/phone.pub --scope read --scope act:answer >> ~/.ssh/authorized_keys\n  corral device add laptop --id SHA256:q3b1YwZk... --scope read\n\nWith --key, stdout is the authorized_keys line that makes the key's ssh connections run `corral serve` for this device; the confirmation goes to stderr."
    )]
    Add {
        /// A name for the device, unique on this host.
        name: String,
        /// The device's fingerprint, as the spawner will pass it to `serve --device`.
        #[arg(
            long,
            value_name = "FINGERPRINT",
            required_unless_present = "key",
            conflicts_with = "key"
        )]
        id: Option<String>,
        /// The device's ssh public key (a `.pub` file, or the key line itself): its fingerprint is
        /// the device id, and the `authorized_keys` line to paste is printed.
        #[arg(long, value_name = "FILE|LINE")]
        key: Option<String>,
        /// A scope to grant (repeatable): read, act:answer, act:always, act:steer. Default: read.
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
    },
    /// List enrolled devices: name, id, scopes, when paired.
    #[command(after_help = "Examples:\n  corral device list\n  corral device list --json")]
    List {
        /// Print `{"schema":1,"devices":[...]}` instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Grant a device one more scope.
    #[command(
        after_help = "Example:\n  corral device grant phone act:answer\n\nScopes: read, act:answer, act:always, act:steer."
    )]
    Grant {
        /// The device's name.
        name: String,
        /// The scope.
        scope: String,
    },
    /// Remove a device's record: its live connections end at their next request or publish.
    #[command(after_help = "Example:\n  corral device revoke phone")]
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
        value_parser = parse_duration,
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
    #[command(after_help = "Example:\n  corral debug notify-test --trigger blocked")]
    NotifyTest {
        /// blocked, done, context_high or stall.
        #[arg(long, value_parser = ["blocked", "done", "context_high", "stall"])]
        trigger: String,
    },
    /// Print the running daemon's transition ring, oldest first.
    #[command(
        after_help = "Examples:\n  corral debug transitions\n  corral debug transitions --json"
    )]
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
    #[command(
        after_help = "Example (as an agent's event hook starts it):\n  corral internal notify-command --timeout-s 60 --command 'ntfy publish corral' < payload.json"
    )]
    NotifyCommand {
        /// Seconds the command may run before it is killed with its process group: the
        /// `[notify] command_timeout_s` of the process that started this one.
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
        timeout_s: u64,
        /// The command line, run with `sh -c`.
        #[arg(long)]
        command: String,
    },
    /// Run a detached action and report its completion through the notification sinks.
    #[command(
        after_help = "Example (as `corral act` starts it for an exec action):\n  corral internal exec-action --command 'cargo test' --timeout-s 600 --pane %3 --action run-tests"
    )]
    ExecAction(Box<ExecActionArgs>),
    /// Print, as a JSON array, the tmux command line `serve` reads the fleet with (a fresh
    /// nonce), for a benchmark's baseline: tmux run with it costs what the host's read cannot go
    /// below.
    #[command(
        after_help = "Example (as `cargo xtask bench` runs it):\n  corral internal list-panes-command --fields row --tmux-socket bench"
    )]
    ListPanesCommand {
        /// Which read: `serve`'s, only a wire row's fields, or the notification daemon's.
        #[arg(long, value_enum, default_value_t = ReadFields::Host)]
        fields: ReadFields,
        #[command(flatten)]
        tmux: TmuxArgs,
    },
}

/// The fleet reads `corral internal list-panes-command` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReadFields {
    /// What `serve` reads every cycle.
    Host,
    /// Only the fields a wire row needs: the cheapest format a snapshot could be read with.
    Row,
    /// What the notification daemon reads every cycle (`osc_progress` off).
    Notify,
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

/// A duration as `--for` takes it: one or more `<number><unit>` parts, unit `s`, `m`, `h` or
/// `d` (`45s`, `30m`, `2h`, `1d`, `1h30m`), more than zero in all.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let bad = || format!("`{text}` is not a duration such as 45s, 30m, 2h or 1d");
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
    }
    if !digits.is_empty() || total == 0 {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};
    use test_support::undocumented;

    use super::Cli;

    #[test]
    fn every_command_says_what_it_is_for_with_an_example() {
        let command = Cli::command();
        command.clone().debug_assert();
        let missing = undocumented(&command, "corral");
        assert!(missing.is_empty(), "{missing:#?}");
    }

    #[test]
    fn the_walk_reaches_a_hidden_commands_subcommands() {
        let bare = clap::Command::new("bare").about("x");
        let command = Cli::command().mut_subcommand("internal", |c| c.subcommand(bare));
        assert_eq!(
            undocumented(&command, "corral"),
            ["corral internal bare: no example"]
        );
    }

    /// `corral event`'s own parse takes exactly what the whole tree would make of a command line,
    /// and leaves to the whole tree everything it would word itself: help, the version, errors,
    /// and every other command.
    #[test]
    fn the_event_command_line_parses_alone_as_the_whole_tree_parses_it() {
        let argv = |words: &[&str]| -> Vec<std::ffi::OsString> {
            std::iter::once("corral")
                .chain(words.iter().copied())
                .map(Into::into)
                .collect()
        };
        let taken = [
            &["event", "claude"][..],
            &["event", "claude", "UserPromptSubmit"],
            &[
                "event",
                "codex",
                "notify",
                r#"{"type":"agent-turn-complete"}"#,
            ],
            &["event", "claude", "Stop", "--tmux-bin", "/usr/bin/tmux"],
            &["event", "--tmux-bin=/t", "gemini", "AfterAgent"],
            &["event", "claude", "--", "-starts-with-a-dash"],
        ];
        for words in taken {
            let args = argv(words);
            let alone = Cli::event_only(&args).unwrap_or_else(|| panic!("{words:?} not taken"));
            let whole = Cli::try_parse_from(&args).unwrap();
            assert_eq!(format!("{alone:?}"), format!("{whole:?}"), "{words:?}");
            assert!(matches!(alone.command, super::Command::Event(_)));
        }
        let left = [
            &["event"][..],
            &["event", "--help"],
            &["event", "-h"],
            &["event", "--version"],
            &["event", "-V"],
            &["event", "claude", "--frob"],
            &["event", "a", "b", "c", "d"],
            &["ls"],
            &["--version"],
            &[],
        ];
        for words in left {
            assert!(Cli::event_only(&argv(words)).is_none(), "{words:?}");
        }
    }
}
