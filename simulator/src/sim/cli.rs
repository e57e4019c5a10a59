//! `corral-sim`'s command line (clap), and the dispatch of each subcommand.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
use clap::{Parser, Subcommand};
use golden::fixture::TranscriptFormat;
use golden::{Backend, SimFile};

use super::api;
use super::hook::{self, HookArgs};
use super::input;
use super::observe;
use super::simfile;
use super::step::{self, AddArgs, StepArgs};
use super::transcript::{self, Generator, Recipe};
use super::up::{self, Up};
use super::{print_bytes, print_line};
use crate::fake::faults::{self, Effect, Fault};
use crate::fake::state::{Client, ServerDir};
use crate::time;

/// The agent simulator: fleets of fake agents on a fake or a real scratch tmux.
#[derive(Debug, Parser)]
#[command(
    name = "corral-sim",
    version,
    long_about = None,
    after_help = "Examples:\n  export CORRAL_SIM_DIR=$(mktemp -d)\n  corral-sim up golden/fixtures/small.toml --socket demo\n  corral-sim step --pane claude-perm --state blocked --detail permission\n  CORRAL_TMUX_BIN=$(jq -r .tmux_bin $CORRAL_SIM_DIR/sim.json) CORRAL_TMUX_SOCKET=demo corral ls\n  corral-sim down\n\nEvery command but replay keeps its state in $CORRAL_SIM_DIR. Fixtures and files: golden/fixtures/README.md."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Bring a fixture up; prints sim.json (one JSON object).
    #[command(
        after_help = "Examples:\n  corral-sim up golden/fixtures/small.toml --socket demo\n  corral-sim up golden/fixtures/small.toml --socket demo --backend real --runtime-dir $CORRAL_SIM_DIR/run/corral"
    )]
    Up {
        /// Fixture file (TOML).
        fixture: PathBuf,
        /// Which tmux.
        #[arg(long, value_parser = backend_parser(), default_value = "fake")]
        backend: Backend,
        /// The `-L` socket name (use a unique one).
        #[arg(long)]
        socket: String,
        /// Pin "now" (epoch ms); else CORRAL_SIM_NOW_MS, else the clock.
        #[arg(long)]
        now_ms: Option<u64>,
        /// Host runtime dir for parked requests (default: the host's own rule).
        #[arg(long)]
        runtime_dir: Option<PathBuf>,
    },
    /// Change one pane (options, title, directory, branch, parked request, question).
    #[command(
        after_help = "Examples:\n  corral-sim step --pane claude-perm --state blocked --detail permission\n  corral-sim step --pane codex-work --state idle --context 85\n  corral-sim step --pane %3 --state working --keep-since"
    )]
    Step {
        /// Fixture name or %N.
        #[arg(long)]
        pane: String,
        #[command(flatten)]
        args: Box<StepArgs>,
    },
    /// Add or kill a pane, or read what it received.
    #[command(
        after_help = "Examples:\n  corral-sim pane add --name extra --session work --agent claude --state working\n  corral-sim pane kill --pane extra\n  corral-sim pane input --pane claude-perm"
    )]
    Pane {
        #[command(subcommand)]
        action: PaneAction,
    },
    /// Write and change transcripts.
    #[command(
        after_help = "Examples:\n  corral-sim transcript write --pane claude-perm --format claude --corpus\n  corral-sim transcript grow --pane claude-perm --events 5\n  corral-sim transcript rotate --pane claude-perm"
    )]
    Transcript {
        #[command(subcommand)]
        action: TranscriptAction,
    },
    /// The agent HTTP API.
    #[command(
        after_help = "Examples:\n  corral-sim api serve &\n  corral-sim api question --id q1 --questions '[{\"question\":\"Ship it?\",\"header\":\"Ship\",\"options\":[{\"label\":\"Yes\",\"description\":\"now\"},{\"label\":\"No\",\"description\":\"later\"}],\"multiple\":false,\"custom\":false}]'\n  corral-sim api delay 3000 --post"
    )]
    Api {
        #[command(subcommand)]
        action: ApiAction,
    },
    /// Inject faults into the fake tmux.
    #[command(
        after_help = "Examples:\n  corral-sim fault add --command list-panes --fail --times 1\n  corral-sim fault add --command send-keys --hang-ms 3000\n  corral-sim fault clear"
    )]
    Fault {
        #[command(subcommand)]
        action: FaultAction,
    },
    /// Attach or detach clients on the fake tmux.
    #[command(
        after_help = "Examples:\n  corral-sim client attach --name /dev/pts/41 --session work\n  corral-sim client detach --name /dev/pts/41"
    )]
    Client {
        #[command(subcommand)]
        action: ClientAction,
    },
    /// Run the host's `corral event <agent> <event>` in a pane's environment with a hook payload
    /// on stdin; prints what it printed (a permission request's decision), or with --background
    /// the run's name.
    #[command(
        after_help = "Examples:\n  corral-sim hook --pane claude-perm claude Stop --payload @hooks/claude/stop.json\n  corral-sim hook --pane claude-perm claude PermissionRequest --payload @hooks/claude/permission-request.json --background\n  corral-sim hook --pane codex-work codex notify --payload '{\"type\":\"agent-turn-complete\"}' --as-argument"
    )]
    Hook(Box<HookArgs>),
    /// Print the verdicts dispatches wrote for parked requests and nothing consumed yet, one JSON
    /// line each: `{"request":ID,"verdict":{...}}`, by request id.
    #[command(
        after_help = "Examples:\n  corral-sim verdicts\n  corral-sim verdicts --runtime-dir $XDG_RUNTIME_DIR/corral"
    )]
    Verdicts {
        /// The host's runtime dir (default: sim.json's).
        #[arg(long)]
        runtime_dir: Option<PathBuf>,
    },
    /// Print what a hook run printed, once it has finished.
    #[command(
        after_help = "Examples:\n  corral-sim hook-output 1\n  corral-sim hook-output perm --wait-ms 30000 --stderr"
    )]
    HookOutput {
        /// The run's name (`hook --name`, or the number `hook --background` printed).
        name: String,
        /// Wait this long for it to finish, ms.
        #[arg(long, default_value_t = 10_000)]
        wait_ms: u64,
        /// Its stderr instead.
        #[arg(long)]
        stderr: bool,
    },
    /// Kill the fleet's server (that socket only) after stopping running hooks; idempotent.
    #[command(after_help = "Example:\n  corral-sim down")]
    Down,
    /// The notification command the kit provides: appends its stdin to `record/NAME.stdin` and
    /// its `CORRAL_*` environment (but the kit's own variables) as one JSON line to
    /// `record/NAME.env`, then sleeps, writes `--stderr` and exits with `--exit`.
    #[command(
        after_help = "Examples:\n  [notify]\n  command = \"corral-sim record fired\"      in the host's config.toml\n  corral-sim record slow --sleep-ms 5000 --exit 3 --stderr \"busy\""
    )]
    Record(super::record::RecordArgs),
    /// Watch what is written to a pane's tty (the bell, OSC sequences).
    #[command(after_help = "Example:\n  cat \"$(corral-sim tty watch --pane claude-perm)\"")]
    Tty {
        #[command(subcommand)]
        action: TtyAction,
    },
    /// Print a pane's options of the pane-option contract that are set, as one JSON object.
    #[command(after_help = "Example:\n  corral-sim options --pane claude-perm")]
    Options {
        /// Fixture name or %N.
        #[arg(long)]
        pane: String,
    },
    /// Run one tmux command on the fleet's server (fake or real) and print its stdout.
    #[command(
        after_help = "Examples:\n  corral-sim tmux kill-session -t work\n  corral-sim tmux display-message -p -t %2 '#{pane_tty}'"
    )]
    Tmux {
        /// The command and its arguments (`kill-session -t work`).
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Send one line to a unix socket and print the one line it answers (a host's daemon
    /// socket: `corral-sim socket --path "$RUN/corral/notify/daemon-KEY.sock" ping`).
    #[command(
        after_help = "Example:\n  corral-sim socket --path \"$XDG_RUNTIME_DIR/corral/notify/daemon-KEY.sock\" ping"
    )]
    Socket {
        /// The socket's path.
        #[arg(long)]
        path: PathBuf,
        /// The request line (without its newline).
        line: String,
    },
    /// Play the host's half of a golden session over stdio, judging a client app's frames.
    ///
    /// Frames on stdout, verdicts on stderr; exit 0 when every app frame passed, 1 otherwise, 2
    /// for a load or usage error. Needs no CORRAL_SIM_DIR. See golden/README.md.
    #[command(
        after_help = "Examples:\n  corral-sim replay --app './my-app --stdio' golden/sessions    every session, one report\n  corral-sim replay golden/sessions/handshake.hello-request.ndjson    the host's half on stdin/stdout\n  corral-sim replay --list golden/sessions"
    )]
    Replay(crate::replay::ReplayArgs),
    /// Bring up a lively fleet for a client app and print the command that connects it.
    ///
    /// A fleet on the fake tmux in a temp dir, a device enrolled, the agent API served; agents
    /// start work, ask for permissions and answers, finish, and go on when an app answers them.
    /// Runs until Ctrl-C (SIGINT) or SIGTERM, then removes everything it started. See
    /// golden/README.md.
    #[command(
        after_help = "Examples:\n  corral-sim demo                          prints the command an app runs to connect\n  corral-sim demo --panes 12 --speed 2 --seed 7\n  corral-sim demo --backend real           a scratch tmux server to attach to and watch"
    )]
    Demo(Box<super::demo::DemoArgs>),
}

/// `--backend`: golden's [`Backend`], each value offered with what it is.
fn backend_parser() -> impl clap::builder::TypedValueParser<Value = Backend> {
    let help = |backend| match backend {
        Backend::Fake => "`corral-fake-tmux`, state under `$CORRAL_SIM_DIR`",
        Backend::Real => "A scratch real tmux server (`tmux -L <socket> -f /dev/null`)",
    };
    let values =
        Backend::ALL.map(|backend| PossibleValue::new(backend.as_str()).help(help(backend)));
    PossibleValuesParser::new(values).try_map(|name| name.parse::<Backend>())
}

/// `pane ...`.
#[derive(Debug, Subcommand)]
pub enum PaneAction {
    /// Add a pane; prints its %N.
    #[command(
        after_help = "Examples:\n  corral-sim pane add --name extra --session work --agent claude --state working\n  corral-sim pane add --name side --session play --new-window"
    )]
    Add {
        #[command(flatten)]
        add: AddArgs,
        #[command(flatten)]
        args: Box<StepArgs>,
    },
    /// Kill a pane.
    #[command(after_help = "Example:\n  corral-sim pane kill --pane extra")]
    Kill {
        /// Fixture name or %N.
        #[arg(long)]
        pane: String,
    },
    /// Print what reached a pane since the fleet came up (or the last --clear), in order: one
    /// JSON line per run of keys (`{"keys":["Escape","Enter"]}`) or of text (`{"text":"yes"}`).
    #[command(
        after_help = "Examples:\n  corral-sim pane input --pane claude-perm\n  corral-sim pane input --pane claude-perm --clear"
    )]
    Input {
        /// Fixture name or %N.
        #[arg(long)]
        pane: String,
        /// Then start afresh: the next read prints only what arrives after this one.
        #[arg(long)]
        clear: bool,
    },
}

/// `tty ...`.
#[derive(Debug, Subcommand)]
pub enum TtyAction {
    /// From now on, every byte written to the pane's tty is appended to
    /// `$CORRAL_SIM_DIR/tty/<pane name>` (real: `pipe-pane -O`; fake: its tty file, emptied, is
    /// linked there); prints that path.
    #[command(
        after_help = "Example:\n  tty=$(corral-sim tty watch --pane claude-perm); corral debug notify-test --trigger blocked; od -c \"$tty\""
    )]
    Watch {
        /// Fixture name or %N.
        #[arg(long)]
        pane: String,
    },
}

/// Which transcript file.
#[derive(Debug, Clone, clap::Args)]
pub struct Which {
    /// The pane whose transcript (from sim.json).
    #[arg(long, conflicts_with = "path", required_unless_present = "path")]
    pub pane: Option<String>,
    /// A transcript file.
    #[arg(long)]
    pub path: Option<PathBuf>,
}

/// `transcript ...`.
#[derive(Debug, Subcommand)]
pub enum TranscriptAction {
    /// Write a new transcript for a pane (replacing one there); prints its path.
    #[command(
        after_help = "Examples:\n  corral-sim transcript write --pane claude-perm --format claude --corpus\n  corral-sim transcript write --pane codex-work --format codex --events 200 --pending-call\n  corral-sim transcript write --pane claude-idle --format claude --sample claude-2.1-late.jsonl\n  corral-sim transcript write --pane gemini-idle --format gemini --sample gemini-0.39.jsonl"
    )]
    Write {
        /// Fixture name or %N.
        #[arg(long)]
        pane: String,
        /// Store format: claude, codex, or gemini (a `--sample` only: no Gemini CLI record is
        /// generated).
        #[arg(long, value_parser = parse_format)]
        format: TranscriptFormat,
        /// Write this transcript sample as it is instead of generated records: a file name in
        /// the `transcripts/` folder beside the fixture `up` brought up
        /// (`golden/fixtures/transcripts/claude-2.1-late.jsonl`).
        #[arg(long, conflicts_with_all = ["corpus", "events", "unknown_every", "pending_call"])]
        sample: Option<String>,
        /// Start with the store's corpus: every event kind of the reader, with its edge cases
        /// (golden/fixtures/README.md lists it record by record).
        #[arg(long)]
        corpus: bool,
        /// Records of the cycle to write (after the corpus, if any; default 40, 0 with --corpus).
        #[arg(long)]
        events: Option<u64>,
        /// One record of an unknown type every N.
        #[arg(long, default_value_t = 0)]
        unknown_every: u32,
        /// End on a tool call with no result.
        #[arg(long)]
        pending_call: bool,
        /// Write here instead of the store layout under $CORRAL_SIM_DIR/home.
        #[arg(long)]
        path: Option<PathBuf>,
        /// Agent session id (default: the pane's, else one derived from its name).
        #[arg(long)]
        session_id: Option<String>,
        /// Do not stamp @agent_transcript / @agent_session.
        #[arg(long)]
        no_stamp: bool,
    },
    /// Append records.
    #[command(
        after_help = "Examples:\n  corral-sim transcript grow --pane claude-perm --events 5\n  corral-sim transcript grow --path /tmp/t.jsonl --events 1 --pending-call"
    )]
    Grow {
        #[command(flatten)]
        which: Which,
        /// Records to append.
        #[arg(long, default_value_t = 10)]
        events: u64,
        /// One record of an unknown type every N.
        #[arg(long, default_value_t = 0)]
        unknown_every: u32,
        /// End on a tool call with no result.
        #[arg(long)]
        pending_call: bool,
    },
    /// Grow a transcript to at least a size with ~4 KiB records, streamed (benchmarks: `--bytes
    /// 1G` takes seconds); prints its path.
    #[command(after_help = "Example:\n  corral-sim transcript big --pane claude-perm --bytes 1G")]
    Big {
        #[command(flatten)]
        which: Which,
        /// Target size: bytes, or with K, M, G (powers of 1024).
        #[arg(long)]
        bytes: String,
        /// Format, when the file does not exist yet: claude or codex (gemini is refused: no
        /// Gemini CLI record is generated).
        #[arg(long, value_parser = parse_format)]
        format: Option<TranscriptFormat>,
    },
    /// Rewrite in place: same inode, same length, different bytes.
    #[command(after_help = "Example:\n  corral-sim transcript rewrite --pane claude-perm")]
    Rewrite {
        #[command(flatten)]
        which: Which,
    },
    /// Truncate in place.
    #[command(
        after_help = "Examples:\n  corral-sim transcript truncate --pane claude-perm --lines 3\n  corral-sim transcript truncate --pane claude-perm --bytes 0"
    )]
    Truncate {
        #[command(flatten)]
        which: Which,
        /// Keep this many bytes.
        #[arg(long, conflicts_with = "lines", required_unless_present = "lines")]
        bytes: Option<u64>,
        /// Keep this many lines.
        #[arg(long)]
        lines: Option<usize>,
    },
    /// Replace with a new inode (same bytes, or N freshly generated records).
    #[command(
        after_help = "Examples:\n  corral-sim transcript replace --pane claude-perm\n  corral-sim transcript replace --pane claude-perm --events 20"
    )]
    Replace {
        #[command(flatten)]
        which: Which,
        /// Regenerate with this many records instead of copying.
        #[arg(long)]
        events: Option<u64>,
    },
    /// Rotate: move the file to `<path>.1` (or the next free number) and start a new one at the
    /// same path with N records of the same session; prints where the old file went.
    #[command(
        after_help = "Example:\n  corral-sim transcript rotate --pane claude-perm --events 3"
    )]
    Rotate {
        #[command(flatten)]
        which: Which,
        /// Records in the new file.
        #[arg(long, default_value_t = 10)]
        events: u64,
    },
}

/// `api ...`.
#[derive(Debug, Subcommand)]
pub enum ApiAction {
    /// Serve in the foreground on 127.0.0.1; writes api.json.
    #[command(
        after_help = "Examples:\n  corral-sim api serve\n  corral-sim api serve --port 8765 --question-delay-ms 500"
    )]
    Serve {
        /// Port (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Delay before answering GET /question, ms.
        #[arg(long)]
        question_delay_ms: Option<u64>,
        /// Delay before answering a POST (recorded at once), ms.
        #[arg(long)]
        post_delay_ms: Option<u64>,
    },
    /// Add (or replace) a pending question request.
    #[command(
        after_help = "Example:\n  corral-sim api question --id q1 --questions '[{\"question\":\"Ship it?\",\"header\":\"Ship\",\"options\":[{\"label\":\"Yes\",\"description\":\"now\"},{\"label\":\"No\",\"description\":\"later\"}],\"multiple\":false,\"custom\":false}]'"
    )]
    Question {
        /// Request id.
        #[arg(long)]
        id: String,
        /// The questions, a JSON array.
        #[arg(long)]
        questions: String,
        /// Agent session id.
        #[arg(long)]
        session_id: Option<String>,
    },
    /// Change the GET /question delay (or with --post, the POST delay) of a running server.
    #[command(
        after_help = "Examples:\n  corral-sim api delay 1000\n  corral-sim api delay 3000 --post"
    )]
    Delay {
        /// Milliseconds.
        ms: u64,
        /// The delay of POST answers (a reply, a reject) instead: over 2000 provokes a
        /// dispatch's api-lane time-out.
        #[arg(long)]
        post: bool,
    },
    /// Forget every pending question.
    #[command(after_help = "Example:\n  corral-sim api clear")]
    Clear,
}

/// `fault ...`.
#[derive(Debug, Subcommand)]
pub enum FaultAction {
    /// Make a command fail or hang (fake backend).
    #[command(
        after_help = "Examples:\n  corral-sim fault add --command list-panes --fail --exit-code 1 --stderr \"server exited unexpectedly\"\n  corral-sim fault add --command send-keys --pane claude-perm --hang-ms 3000 --times 1"
    )]
    Add {
        /// tmux command name (`list-panes`, `send-keys`, ...; aliases allowed).
        #[arg(long)]
        command: String,
        /// Only when it targets this pane (fixture name or %N).
        #[arg(long)]
        pane: Option<String>,
        /// Fail with this exit code.
        #[arg(long, conflicts_with_all = ["hang_ms", "hang_after_ms"])]
        fail: bool,
        /// Exit code of a failure.
        #[arg(long, default_value_t = 1)]
        exit_code: i32,
        /// Stderr of a failure.
        #[arg(long, default_value = "server exited unexpectedly")]
        stderr: String,
        /// Stdout of a failure (with `--exit-code 0`: an answer that is not what was asked).
        #[arg(long, default_value = "")]
        stdout: String,
        /// Hang this long, then run normally.
        #[arg(long, required_unless_present_any = ["fail", "hang_after_ms"], conflicts_with = "hang_after_ms")]
        hang_ms: Option<u64>,
        /// Run at once, then hang this long before answering (the caller acted, unknowing).
        #[arg(long)]
        hang_after_ms: Option<u64>,
        /// Only this many times.
        #[arg(long)]
        times: Option<u32>,
    },
    /// Remove every fault.
    #[command(after_help = "Example:\n  corral-sim fault clear")]
    Clear,
    /// End every hang under way now (a `--hang-ms` command then runs, a `--hang-after-ms` one
    /// answers); later hangs are not affected.
    #[command(after_help = "Example:\n  corral-sim fault release")]
    Release,
}

/// `client ...`.
#[derive(Debug, Subcommand)]
pub enum ClientAction {
    /// Attach a client (fake backend).
    #[command(
        after_help = "Example:\n  corral-sim client attach --name /dev/pts/41 --session work"
    )]
    Attach {
        /// Client name, such as /dev/pts/40.
        #[arg(long)]
        name: String,
        /// Session.
        #[arg(long)]
        session: String,
    },
    /// Detach a client (fake backend).
    #[command(after_help = "Example:\n  corral-sim client detach --name /dev/pts/41")]
    Detach {
        /// Client name.
        #[arg(long)]
        name: String,
    },
}

fn fake_dir(sim: &SimFile) -> anyhow::Result<ServerDir> {
    if sim.backend != Backend::Fake {
        bail!("this needs the fake backend (sim.json says real)");
    }
    Ok(ServerDir::new(PathBuf::from(&sim.socket_path)))
}

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

fn parse_format(text: &str) -> Result<TranscriptFormat, String> {
    match text {
        "claude" => Ok(TranscriptFormat::Claude),
        "codex" => Ok(TranscriptFormat::Codex),
        "gemini" => Ok(TranscriptFormat::Gemini),
        other => Err(format!(
            "{other:?} is not a transcript format (claude, codex, gemini)"
        )),
    }
}

/// A size: bytes, or a number with K, M or G (powers of 1024; `KiB`, `kb` and a space before the
/// unit read the same; [`golden::fixture::parse_size`]). `corral-sim transcript --size` and
/// `cargo xtask bench --transcript` read sizes with it.
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    golden::fixture::parse_size(text).map_err(anyhow::Error::msg)
}

fn resolve(sim_dir: &Path, which: &Which) -> anyhow::Result<(PathBuf, Option<TranscriptFormat>)> {
    if let Some(path) = &which.path {
        return Ok((path.clone(), None));
    }
    let sim = simfile::load(sim_dir)?;
    let (name, _) = sim.pane(which.pane.as_deref().unwrap_or_default())?;
    let (path, format) = sim
        .details
        .get(&name)
        .and_then(|d| d.transcript.clone())
        .with_context(|| format!("pane {name} has no transcript (use `transcript write`)"))?;
    Ok((PathBuf::from(path), Some(format)))
}

/// `transcripts/<sample>` beside the fixture `up` brought up, as a fixture's `sample` is found.
fn sample_file(sim_dir: &Path, sample: &str) -> anyhow::Result<PathBuf> {
    golden::fixture::check_sample_name(sample).map_err(anyhow::Error::msg)?;
    let fixture = hook::fixture(sim_dir).context(
        "--sample names a file beside the fixture `up` brought up, and no fixture was brought up",
    )?;
    Ok(golden::fixture::sample_path(&fixture, sample))
}

/// Runs one subcommand.
pub fn run(command: Command, sim_dir: &Path) -> anyhow::Result<()> {
    match command {
        Command::Up {
            fixture,
            backend,
            socket,
            now_ms,
            runtime_dir,
        } => {
            let sim = up::up(
                sim_dir,
                &Up {
                    fixture,
                    backend,
                    socket,
                    now_ms: time::now(now_ms)?,
                    runtime_dir,
                },
            )?;
            print_line(&serde_json::to_string(&sim)?);
        }
        Command::Down => {
            up::down(sim_dir)?;
        }
        Command::Replay(_) => {
            bail!("`replay` runs before the simulator directory is read (simulator::sim::main)")
        }
        Command::Demo(_) => {
            bail!("`demo` makes a simulator directory of its own (simulator::sim::main)")
        }
        Command::Record(_) => {
            bail!("`record` picks its own exit code (simulator::sim::main)")
        }
        Command::Tty {
            action: TtyAction::Watch { pane },
        } => print_line(&observe::watch_tty(sim_dir, &pane)?.display().to_string()),
        Command::Options { pane } => {
            print_line(&serde_json::to_string(&observe::options(sim_dir, &pane)?)?);
        }
        Command::Socket { path, line } => print_line(&observe::socket_line(&path, &line)?),
        Command::Tmux { args } => print_bytes(observe::tmux(sim_dir, &args)?.as_bytes())?,
        Command::Step { pane, args } => step::step(sim_dir, &pane, &args)?,
        Command::Hook(args) => match hook::run(sim_dir, &args)? {
            hook::Run::Background(name) => print_line(&name),
            hook::Run::Finished(name) => print_bytes(&hook::output(
                sim_dir,
                &name,
                std::time::Duration::ZERO,
                false,
            )?)?,
        },
        Command::Verdicts { runtime_dir } => {
            let runtime = match runtime_dir {
                Some(dir) => dir,
                None => PathBuf::from(simfile::load(sim_dir)?.runtime_dir),
            };
            for verdict in super::park::verdicts(&runtime)? {
                print_line(&verdict.to_string());
            }
        }
        Command::HookOutput {
            name,
            wait_ms,
            stderr,
        } => print_bytes(&hook::output(
            sim_dir,
            &name,
            std::time::Duration::from_millis(wait_ms),
            stderr,
        )?)?,
        Command::Pane {
            action: PaneAction::Add { add, args },
        } => {
            print_line(&step::add(sim_dir, &add, &args)?);
        }
        Command::Pane {
            action: PaneAction::Kill { pane },
        } => step::kill(sim_dir, &pane)?,
        Command::Pane {
            action: PaneAction::Input { pane, clear },
        } => {
            for item in input::received(sim_dir, &pane, clear)? {
                print_line(&serde_json::to_string(&item)?);
            }
        }
        Command::Transcript { action } => transcript_command(sim_dir, action)?,
        Command::Api { action } => match action {
            ApiAction::Serve {
                port,
                question_delay_ms,
                post_delay_ms,
            } => api::serve(sim_dir, port, question_delay_ms, post_delay_ms)?,
            ApiAction::Question {
                id,
                questions,
                session_id,
            } => {
                let questions =
                    serde_json::from_str(&questions).context("--questions must be a JSON array")?;
                api::edit(sim_dir, |s| {
                    s.questions.retain(|q| q.request_id != id);
                    s.questions.push(api::Pending {
                        request_id: id,
                        session_id,
                        questions,
                    });
                })?;
            }
            ApiAction::Delay { ms, post: false } => api::edit(sim_dir, |s| s.delay_ms = ms)?,
            ApiAction::Delay { ms, post: true } => api::edit(sim_dir, |s| s.post_delay_ms = ms)?,
            ApiAction::Clear => api::edit(sim_dir, |s| s.questions.clear())?,
        },
        Command::Fault { action } => {
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
                        (false, None, None) => {
                            bail!("give --fail, --hang-ms or --hang-after-ms")
                        }
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
        }
        Command::Client { action } => {
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
        }
    }
    Ok(())
}

fn transcript_command(sim_dir: &Path, action: TranscriptAction) -> anyhow::Result<()> {
    match action {
        TranscriptAction::Write {
            pane,
            format,
            sample,
            corpus,
            events,
            unknown_every,
            pending_call,
            path,
            session_id,
            no_stamp,
        } => {
            let mut sim = simfile::load(sim_dir)?;
            let (name, _) = sim.pane(&pane)?;
            let detail = sim.details.get(&name).cloned().unwrap_or_default();
            let session = session_id
                .or(detail.session_id.clone())
                .unwrap_or_else(|| crate::plan::session_id_for(&name));
            let now = time::now(None)?;
            let cwd = if detail.cwd.is_empty() {
                sim_dir.display().to_string()
            } else {
                detail.cwd.clone()
            };
            let path = path.unwrap_or_else(|| {
                transcript::store_path(
                    &sim_dir.join("home"),
                    format,
                    &cwd,
                    &session,
                    now,
                    sample.as_deref(),
                )
            });
            match sample {
                Some(sample) => transcript::write_sample(&path, &sample_file(sim_dir, &sample)?)?,
                None => {
                    let branch =
                        super::git::branch(Path::new(&cwd)).unwrap_or_else(|_| "main".into());
                    let recipe = Recipe {
                        corpus,
                        events: events.unwrap_or(if corpus { 0 } else { 40 }),
                        unknown_every,
                        pending_call,
                        hole: 0,
                    };
                    transcript::write(&path, format, &session, (&cwd, &branch), now, &recipe)?;
                }
            }
            let entry = sim.details.entry(name.clone()).or_default();
            entry.transcript = Some((path.display().to_string(), format));
            entry.session_id = Some(session.clone());
            simfile::store(&sim, sim_dir)?;
            if !no_stamp {
                step::step(
                    sim_dir,
                    &name,
                    &StepArgs {
                        transcript: Some(path.display().to_string()),
                        session_id: Some(session),
                        no_stamp: true,
                        ..StepArgs::default()
                    },
                )?;
            }
            print_line(&path.display().to_string());
        }
        TranscriptAction::Grow {
            which,
            events,
            unknown_every,
            pending_call,
        } => {
            let (path, known) = resolve(sim_dir, &which)?;
            if let Some(format) = known {
                transcript::generates(format)?;
            }
            Generator::resume(&path)?.append(&path, events, unknown_every, pending_call)?;
        }
        TranscriptAction::Big {
            which,
            bytes,
            format,
        } => {
            let (path, known) = resolve(sim_dir, &which)?;
            if let Some(format) = format.or(known) {
                transcript::generates(format)?;
            }
            let target = parse_size(&bytes)?;
            let mut generator = if path.exists() {
                Generator::resume(&path)?
            } else {
                let format = format
                    .or(known)
                    .context("--format is needed for a new file")?;
                Generator::new(
                    format,
                    &crate::plan::session_id_for(&path.display().to_string()),
                    "/",
                    "main",
                    time::now(None)?,
                )
            };
            generator.fill_to(&path, target)?;
            print_line(&path.display().to_string());
        }
        TranscriptAction::Rewrite { which } => transcript::rewrite(&resolve(sim_dir, &which)?.0)?,
        TranscriptAction::Truncate {
            which,
            bytes,
            lines,
        } => {
            transcript::truncate(&resolve(sim_dir, &which)?.0, bytes, lines)?;
        }
        TranscriptAction::Replace { which, events } => {
            let (path, _) = resolve(sim_dir, &which)?;
            let content = events
                .map(|n| transcript::regenerated(&path, n))
                .transpose()?;
            transcript::replace(&path, content)?;
        }
        TranscriptAction::Rotate { which, events } => {
            let (path, _) = resolve(sim_dir, &which)?;
            print_line(&transcript::rotate(&path, events)?.display().to_string());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_are_bytes_or_powers_of_1024_and_nonsense_is_refused() {
        for (text, bytes) in [
            ("512", 512),
            ("512K", 512 << 10),
            ("64M", 64 << 20),
            ("1G", 1 << 30),
            ("1g", 1 << 30),
            ("2 MiB", 2 << 20),
            ("3kb", 3 << 10),
        ] {
            assert_eq!(parse_size(text).unwrap(), bytes, "{text}");
        }
        for text in [
            "lots",
            "",
            "1T",
            "G",
            "99999999999999999999G",
            "17179869184G",
        ] {
            assert!(parse_size(text).is_err(), "{text}");
        }
    }
}
