//! `corral-sim`'s command line, parsed into plain data: clap lives here and nowhere else in the
//! simulator. Each subcommand's arguments convert into the plain options of the module that does
//! the work; [`super::commands`] runs them.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
use clap::{Args, Parser, Subcommand};
use golden::Backend;
use golden::fixture::TranscriptFormat;

use super::demo::DemoOptions;
use super::hook::HookOptions;
use super::record::RecordOptions;
use super::step::{NewPane, StepOptions};

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
    Record(RecordArgs),
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
    Replay(ReplayArgs),
    /// Bring up a lively fleet for a client app and print the command that connects it.
    ///
    /// A fleet on the fake tmux in a temp dir, a device enrolled, the agent API served; agents
    /// start work, ask for permissions and answers, finish, and go on when an app answers them.
    /// It prints `connect with: <dir>/connect`, a script that runs `corral serve --stdio` on the
    /// fleet. Runs until Ctrl-C (SIGINT) or SIGTERM, then removes everything it started. See
    /// golden/README.md.
    #[command(
        after_help = "Examples:\n  corral-sim demo                          prints the command an app runs to connect\n  cargo run -p conformance --bin corral-sim -- demo   from a checkout (after cargo build -p reference-host)\n  corral-sim demo --panes 12 --speed 2 --seed 7\n  corral-sim demo --backend real           a scratch tmux server to attach to and watch"
    )]
    Demo(Box<DemoArgs>),
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
#[derive(Debug, Clone, Args)]
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
    Write(WriteArgs),
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

/// `transcript write`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Fixture name or %N.
    #[arg(long)]
    pub pane: String,
    /// Store format: claude, codex, or gemini (a `--sample` only: no Gemini CLI record is
    /// generated).
    #[arg(long, value_parser = parse_format)]
    pub format: TranscriptFormat,
    /// Write this transcript sample as it is instead of generated records: a file name in
    /// the `transcripts/` folder beside the fixture `up` brought up
    /// (`golden/fixtures/transcripts/claude-2.1-late.jsonl`).
    #[arg(long, conflicts_with_all = ["corpus", "events", "unknown_every", "pending_call"])]
    pub sample: Option<String>,
    /// Start with the store's corpus: every event kind of the reader, with its edge cases
    /// (golden/fixtures/README.md lists it record by record).
    #[arg(long)]
    pub corpus: bool,
    /// Records of the cycle to write (after the corpus, if any; default 40, 0 with --corpus).
    #[arg(long)]
    pub events: Option<u64>,
    /// One record of an unknown type every N.
    #[arg(long, default_value_t = 0)]
    pub unknown_every: u32,
    /// End on a tool call with no result.
    #[arg(long)]
    pub pending_call: bool,
    /// Write here instead of the store layout under $CORRAL_SIM_DIR/home.
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Agent session id (default: the pane's, else one derived from its name).
    #[arg(long)]
    pub session_id: Option<String>,
    /// Do not stamp @agent_transcript / @agent_session.
    #[arg(long)]
    pub no_stamp: bool,
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

impl Cli {
    /// This process's command line, parsed; a bad one (and `--help`, `--version`) ends the
    /// process as clap ends it.
    pub fn parse_args() -> Cli {
        Cli::parse()
    }
}

/// Everything a step can change on a pane.
#[derive(Debug, Clone, Args)]
pub struct StepArgs {
    /// `@agent_name`.
    #[arg(long)]
    pub agent: Option<String>,
    /// `@agent_state` (any token, so a host's handling of a bad one can be tested).
    #[arg(long)]
    pub state: Option<String>,
    /// `@agent_detail`.
    #[arg(long)]
    pub detail: Option<String>,
    /// `@agent_since` (default with --state: now).
    #[arg(long, allow_hyphen_values = true)]
    pub since: Option<String>,
    /// With --state, leave `@agent_since` alone.
    #[arg(long)]
    pub keep_since: bool,
    /// `@agent_turn_at`.
    #[arg(long, allow_hyphen_values = true)]
    pub turn_at: Option<String>,
    /// `@agent_stamped_at` (default: now, whenever an @agent_ option changes).
    #[arg(long, allow_hyphen_values = true)]
    pub stamped_at: Option<String>,
    /// Do not stamp `@agent_stamped_at`.
    #[arg(long)]
    pub no_stamp: bool,
    /// Set `@agent_attention`.
    #[arg(long)]
    pub attention: bool,
    /// Unset `@agent_attention`.
    #[arg(long, conflicts_with = "attention")]
    pub no_attention: bool,
    /// `@agent_context` percent (also stamps `@agent_context_at`, default now).
    #[arg(long)]
    pub context: Option<u8>,
    /// `@agent_context_at`.
    #[arg(long, allow_hyphen_values = true)]
    pub context_at: Option<String>,
    /// `@agent_mute_until` (`99999999999999`: until cleared).
    #[arg(long, allow_hyphen_values = true)]
    pub mute_until: Option<String>,
    /// `@agent_transcript`.
    #[arg(long)]
    pub transcript: Option<String>,
    /// `@agent_session`.
    #[arg(long)]
    pub session_id: Option<String>,
    /// `@agent_pending_tool`.
    #[arg(long)]
    pub pending_tool: Option<String>,
    /// `@agent_pending_call`.
    #[arg(long)]
    pub pending_call: Option<String>,
    /// `@agent_api_endpoint`; `auto` takes the URL of the running `corral-sim api serve`.
    #[arg(long)]
    pub api_endpoint: Option<String>,
    /// `@agent_permission_request` (the id only; see --park-request).
    #[arg(long)]
    pub permission_request: Option<String>,
    /// Park a hook request `<runtime>/requests/<ID>.json` and stamp `@agent_permission_request`.
    #[arg(long, value_name = "ID")]
    pub park_request: Option<String>,
    /// Tool name of the parked request.
    #[arg(long, requires = "park_request")]
    pub tool: Option<String>,
    /// Tool input of the parked request, a JSON object.
    #[arg(long, requires = "park_request")]
    pub tool_input: Option<String>,
    /// Remove a parked request file (an expired hold); the option is left alone.
    #[arg(long, value_name = "ID")]
    pub unpark: Option<String>,
    /// `@agent_question_request`.
    #[arg(long)]
    pub question_request: Option<String>,
    /// The questions of --question-request, a JSON array, served by `corral-sim api serve`.
    #[arg(long, requires = "question_request")]
    pub questions: Option<String>,
    /// Any option: `--set @agent_notified_at=1700000000000` (repeatable).
    #[arg(long = "set", value_name = "@OPTION=VALUE")]
    pub set: Vec<String>,
    /// Unset an option: `detail`, `agent_detail` or `@agent_detail` (repeatable).
    #[arg(long, value_name = "OPTION")]
    pub unset: Vec<String>,
    /// Pane title (`select-pane -T`).
    #[arg(long)]
    pub title: Option<String>,
    /// Move the pane to a directory (respawns its program there).
    #[arg(long, conflicts_with = "repo")]
    pub cwd: Option<PathBuf>,
    /// Move the pane to a fixture repo or worktree (respawns its program there).
    #[arg(long)]
    pub repo: Option<String>,
    /// Check out (or create) a branch in the pane's repository.
    #[arg(long)]
    pub checkout: Option<String>,
    /// Host runtime dir for parked requests (default: sim.json's, else the host's own rule).
    #[arg(long)]
    pub runtime_dir: Option<PathBuf>,
    /// Pin "now" (epoch ms); else CORRAL_SIM_NOW_MS, else the clock.
    #[arg(long)]
    pub now_ms: Option<u64>,
}

/// Where a new pane goes.
#[derive(Debug, Clone, Args)]
pub struct AddArgs {
    /// Fixture-local name for the new pane.
    #[arg(long)]
    pub name: String,
    /// Session to add it to (created when missing).
    #[arg(long)]
    pub session: String,
    /// Put it in a new window of the session instead of splitting the last window.
    #[arg(long)]
    pub new_window: bool,
}

/// `corral-sim hook`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// The pane the agent runs in: fixture name or %N.
    #[arg(long)]
    pub pane: String,
    /// The agent (`claude`, `codex`, ...): `corral event`'s first argument.
    pub agent: String,
    /// The hook event (`PermissionRequest`, `Stop`, `notify`, ...): its second argument.
    pub event: String,
    /// The payload: JSON, or `@FILE` (a relative FILE is looked up in the current directory,
    /// then beside the fixture `up` brought up: `@hooks/claude/stop.json`). Default `{}`.
    #[arg(long, allow_hyphen_values = true)]
    pub payload: Option<String>,
    /// Give the payload's `session_id` (`thread-id`), `transcript_path` and `cwd`, where it has
    /// them, the pane's own values from sim.json, as the agent in that pane would send them.
    #[arg(long)]
    pub pane_facts: bool,
    /// Pass the payload as `corral event`'s third argument (Codex's `notify`) instead of stdin.
    #[arg(long)]
    pub as_argument: bool,
    /// The run's name (its files are `hooks/<NAME>.*`); default: the next free number.
    #[arg(long)]
    pub name: Option<String>,
    /// Start it and return once it waits for a verdict (or has finished); prints the name.
    #[arg(long)]
    pub background: bool,
    /// Create this file (relative to $CORRAL_SIM_DIR) once the hook waits for a verdict or has
    /// finished, for a `sim_background` step's `ready_file`.
    #[arg(long)]
    pub ready: Option<PathBuf>,
}

/// `record`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// The record's name: the files `record/NAME.stdin` and `record/NAME.env`.
    pub name: String,
    /// Sleep this long after recording, ms (a command still running).
    #[arg(long, default_value_t = 0)]
    pub sleep_ms: u64,
    /// Write this text to stderr.
    #[arg(long, default_value = "")]
    pub stderr: String,
    /// Exit with this code.
    #[arg(long, default_value_t = 0)]
    pub exit: u8,
}

/// `corral-sim demo`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// The story's seed: the same seed plays the same moves in the same order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Agent panes in the fleet (claude, opencode, codex and gemini in turn).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub panes: u16,
    /// How fast the story goes: 2 is twice as fast (a tick is 500 ms divided by this).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Work in this dir (empty or missing) and keep it afterwards, instead of a temp dir that is
    /// removed.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// `fake` (`corral-fake-tmux`, nothing to install) or `real` (a scratch tmux server you can
    /// attach to and watch).
    #[arg(long, default_value = "fake", value_parser = parse_backend)]
    pub backend: Backend,
    /// The device the printed command connects as.
    #[arg(long, default_value = "SHA256:corral-demo")]
    pub device: String,
}

fn parse_backend(text: &str) -> Result<Backend, String> {
    text.parse::<Backend>().map_err(|err| err.to_string())
}

/// `corral-sim replay`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The golden session (`golden/sessions/<case>.ndjson`); with `--list` or `--app`, session
    /// files or directories of them.
    #[arg(required = true, value_name = "SESSION")]
    pub sessions: Vec<PathBuf>,
    /// Print, for every connection of every session, whether it can be replayed, and why not.
    #[arg(long, conflicts_with_all = ["conn", "report", "timeout_scale", "app"])]
    pub list: bool,
    /// Start the app to judge, a command for `sh -c`, once per connection of every session: the
    /// host's frames on its stdin, its frames read from its stdout; `CORRAL_REPLAY_CASE`,
    /// `CORRAL_REPLAY_CONN`, `CORRAL_REPLAY_SESSION` and `CORRAL_REPLAY_DEVICE` say which.
    /// Prints one line per case and `N passed, N failed, N skipped`.
    #[arg(long, value_name = "COMMAND")]
    pub app: Option<String>,
    /// The connection whose host half is played (default `main`; with `--app`, every
    /// connection of every session).
    #[arg(long)]
    pub conn: Option<String>,
    /// Also write the verdicts to this file as JSON (with `--app`, the whole report).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Multiplies every wait for the app and every silence.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub timeout_scale: f64,
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
/// unit read the same; [`golden::fixture::parse_size`], which `cargo xtask bench --transcript`
/// reads with too). `corral-sim transcript --size` reads sizes with it.
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    golden::fixture::parse_size(text).map_err(anyhow::Error::msg)
}

// Each subcommand's arguments as its module's plain options. A destructuring `let` names every
// field, so an argument added to a command and not passed on does not compile.

impl From<StepArgs> for StepOptions {
    fn from(args: StepArgs) -> StepOptions {
        let StepArgs {
            agent,
            state,
            detail,
            since,
            keep_since,
            turn_at,
            stamped_at,
            no_stamp,
            attention,
            no_attention,
            context,
            context_at,
            mute_until,
            transcript,
            session_id,
            pending_tool,
            pending_call,
            api_endpoint,
            permission_request,
            park_request,
            tool,
            tool_input,
            unpark,
            question_request,
            questions,
            set,
            unset,
            title,
            cwd,
            repo,
            checkout,
            runtime_dir,
            now_ms,
        } = args;
        StepOptions {
            agent,
            state,
            detail,
            since,
            keep_since,
            turn_at,
            stamped_at,
            no_stamp,
            attention,
            no_attention,
            context,
            context_at,
            mute_until,
            transcript,
            session_id,
            pending_tool,
            pending_call,
            api_endpoint,
            permission_request,
            park_request,
            tool,
            tool_input,
            unpark,
            question_request,
            questions,
            set,
            unset,
            title,
            cwd,
            repo,
            checkout,
            runtime_dir,
            now_ms,
        }
    }
}

impl From<AddArgs> for NewPane {
    fn from(args: AddArgs) -> NewPane {
        let AddArgs {
            name,
            session,
            new_window,
        } = args;
        NewPane {
            name,
            session,
            new_window,
        }
    }
}

impl From<HookArgs> for HookOptions {
    fn from(args: HookArgs) -> HookOptions {
        let HookArgs {
            pane,
            agent,
            event,
            payload,
            pane_facts,
            as_argument,
            name,
            background,
            ready,
        } = args;
        HookOptions {
            pane,
            agent,
            event,
            payload,
            pane_facts,
            as_argument,
            name,
            background,
            ready,
            env: Vec::new(),
        }
    }
}

impl From<RecordArgs> for RecordOptions {
    fn from(args: RecordArgs) -> RecordOptions {
        let RecordArgs {
            name,
            sleep_ms,
            stderr,
            exit,
        } = args;
        RecordOptions {
            name,
            sleep_ms,
            stderr,
            exit,
        }
    }
}

impl From<DemoArgs> for DemoOptions {
    fn from(args: DemoArgs) -> DemoOptions {
        let DemoArgs {
            seed,
            panes,
            speed,
            dir,
            backend,
            device,
        } = args;
        DemoOptions {
            seed,
            panes,
            speed,
            dir,
            backend,
            device,
        }
    }
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
