//! Test support, defined once for every test module: a fleet on the fake or a scratch tmux server,
//! a per-test home (config, device store, runtime dir), a `corral serve` process driven over its
//! real stdin/stdout, and the checks the modules share. Nothing lands in `/tmp/tmux-<uid>` or the
//! user's runtime dir: sockets and files stay in each test's temp dirs.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use golden::SimFile;
use serde_json::Value;

/// Which tmux a test fleet runs on: the kit's one backend type.
pub use golden::Backend;

/// How long a test waits for a frame or an exit before failing.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Where a child process may write when its test gave it no directory of its own: nowhere.
/// Nothing can be created under `/dev/null`, not even by root, so a test that forgets its temp
/// dirs fails loudly instead of writing into `/tmp/tmux-<uid>`, the user's runtime dir
/// (`/tmp/corral-<uid>` without `XDG_RUNTIME_DIR`) or their home.
pub const NOWHERE: &str = "/dev/null/no-temp-dir-given";

/// The variables that say where a process writes: tmux's socket dir, the host's config, device
/// store and runtime dir (and its fallback under `TMPDIR`), and whatever else follows HOME.
pub const LOCATIONS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "TMUX_TMPDIR",
    "TMPDIR",
];

/// The mark `.ci/hygiene` gives a whole test run, which every child keeps (a [`Home`]'s, whose
/// environment is otherwise cleared, too) so that whatever a test leaves running is found when
/// the run ends.
pub const RUN_MARK: &str = "HYGIENE_RUN_MARK";

/// The one place these tests build a child process. It inherits none of the developer's tmux
/// or corral settings, and every location points [`NOWHERE`] until the test gives it temp dirs
/// ([`in_temp_dirs`]; a [`Home`] and a [`Fleet`] do).
#[allow(clippy::disallowed_methods)]
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_remove("TMUX").env_remove("TMUX_PANE");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CORRAL_") {
            command.env_remove(name);
        }
    }
    for name in LOCATIONS {
        command.env(name, nowhere(name));
    }
    command
}

/// The value of a location variable that lets nothing be written: [`NOWHERE`]`/<name>`, but
/// `/dev/null` itself for `TMUX_TMPDIR`: tmux passes over a `TMUX_TMPDIR` that does not exist
/// and puts its socket in `/tmp/tmux-<uid>` instead, while under an existing file it fails
/// ("couldn't create directory /dev/null/tmux-0").
pub fn nowhere(name: &str) -> PathBuf {
    if name == "TMUX_TMPDIR" {
        PathBuf::from("/dev/null")
    } else {
        Path::new(NOWHERE).join(name)
    }
}

/// Every location of [`LOCATIONS`] inside `dir`: a home at `dir/home` (its XDG dirs in their
/// usual places), `XDG_RUNTIME_DIR` at `dir/runtime`, tmux's sockets and temp files in `dir`.
pub fn in_temp_dirs(dir: &Path) -> Vec<(String, String)> {
    let home = dir.join("home");
    [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_RUNTIME_DIR", dir.join("runtime")),
        ("TMUX_TMPDIR", dir.to_owned()),
        ("TMPDIR", dir.to_owned()),
    ]
    .into_iter()
    .map(|(name, path)| (name.to_owned(), path.to_string_lossy().into_owned()))
    .collect()
}

/// True when `frame` is an error frame with this id and code, and a message.
pub fn is_error(frame: &Value, id: &str, code: &str) -> bool {
    frame["t"] == "error"
        && frame["id"] == id
        && frame["code"] == code
        && frame["message"].is_string()
}

/// The row of `pane` in a snapshot frame or an ls document (both list rows under `agents`).
pub fn row<'a>(listing: &'a Value, pane: &str) -> &'a Value {
    listing["agents"]
        .as_array()
        .unwrap_or_else(|| panic!("no agents in {listing}"))
        .iter()
        .find(|row| row["pane"] == pane)
        .unwrap_or_else(|| panic!("no row for {pane} in {listing}"))
}

/// A name no other test or run uses.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A binary of the simulator, built beside `corral` by `cargo test --workspace`.
fn simulator_bin(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_corral"))
        .parent()
        .unwrap()
        .to_owned();
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is not built: run `cargo test --workspace` (it builds the simulator) or `cargo build -p simulator`",
        bin.display()
    );
    bin
}

/// A fleet brought up by `corral-sim up` from `tests/it/fleet.toml`, torn down on drop (the real
/// backend's server is killed even when the test fails, and its socket file removed). Parked hook
/// requests go to a runtime dir inside the fleet's temp dir.
#[derive(Debug)]
pub struct Fleet {
    pub sim_dir: tempfile::TempDir,
    pub socket: String,
    pub tmux_bin: PathBuf,
    pub backend: Backend,
    panes: std::collections::BTreeMap<String, String>,
    /// The real server's socket file, which tmux leaves behind when it exits.
    real_socket: Option<PathBuf>,
}

impl Fleet {
    /// Brings the test fleet up on `backend`.
    pub fn up(backend: Backend) -> Fleet {
        let mut fleet = Fleet {
            sim_dir: tempfile::tempdir().unwrap(),
            socket: unique("corral-it"),
            tmux_bin: PathBuf::new(),
            backend,
            panes: Default::default(),
            real_socket: None,
        };
        fleet.bring_up();
        fleet
    }

    /// Brings the fixture up again on the fleet's socket, once its server is gone (killed, or
    /// `corral-sim down`): a new server, the same panes.
    pub fn revive(&mut self) {
        self.bring_up();
    }

    fn bring_up(&mut self) {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fleet.toml");
        // The host's own rule under the XDG_RUNTIME_DIR every process of the fleet gets.
        let runtime = self.sim_dir.path().join("runtime/corral");
        let out = self.sim(&[
            "up",
            fixture.to_str().unwrap(),
            "--backend",
            self.backend.as_str(),
            "--socket",
            &self.socket,
            "--runtime-dir",
            runtime.to_str().unwrap(),
        ]);
        let up: SimFile = serde_json::from_str(&out).unwrap();
        self.tmux_bin = PathBuf::from(up.tmux_bin);
        self.panes = up.panes;
        if up.backend == Backend::Real {
            self.real_socket = Some(PathBuf::from(up.socket_path));
        }
    }

    /// Runs `corral-sim <args>`; panics with its stderr on failure.
    pub fn sim(&self, args: &[&str]) -> String {
        let out = self.sim_command().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "corral-sim {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A short Claude transcript (3 events) for pane `name`, stamped on it: something for a
    /// `window` or `event` request to read.
    pub fn small_transcript(&self, name: &str) {
        self.sim(&[
            "transcript",
            "write",
            "--pane",
            name,
            "--format",
            "claude",
            "--events",
            "3",
        ]);
    }

    /// A `corral-sim` command for this fleet. A real server's socket and the parked hook
    /// requests go inside the fleet's temp dir, never in `/tmp/tmux-<uid>` or the user's
    /// runtime dir.
    fn sim_command(&self) -> Command {
        let mut cmd = command(simulator_bin("corral-sim"));
        cmd.envs(in_temp_dirs(self.sim_dir.path()))
            .env("CORRAL_SIM_DIR", self.sim_dir.path());
        cmd
    }

    /// Where tmux puts the fleet's socket (`TMUX_TMPDIR`, as [`in_temp_dirs`] sets it), for
    /// every process that talks to it.
    fn tmux_tmpdir(&self) -> &Path {
        self.sim_dir.path()
    }

    /// The id of a fixture pane.
    pub fn pane(&self, name: &str) -> String {
        self.panes
            .get(name)
            .unwrap_or_else(|| panic!("no fixture pane {name}"))
            .clone()
    }

    /// `corral-sim step --pane <pane> <args>`.
    pub fn step(&self, pane: &str, args: &[&str]) {
        let mut all = vec!["step", "--pane", pane];
        all.extend_from_slice(args);
        self.sim(&all);
    }

    /// Adds an agent pane to `session`; its id.
    pub fn add(&self, name: &str, session: &str, agent: &str, state: &str) -> String {
        self.sim(&[
            "pane",
            "add",
            "--name",
            name,
            "--session",
            session,
            "--agent",
            agent,
            "--state",
            state,
        ])
        .trim()
        .to_owned()
    }

    /// Every tmux invocation the fake has answered so far (its `calls.ndjson`), as argv lists.
    pub fn fake_calls(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.fake_file("calls.ndjson"))
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let call: Value = serde_json::from_str(line).unwrap();
                call["argv"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect()
            })
            .collect()
    }

    /// A file of the fake server's directory: `calls.ndjson`, `log.ndjson`, `faults.json`.
    fn fake_file(&self, name: &str) -> PathBuf {
        let sim: SimFile =
            serde_json::from_slice(&std::fs::read(self.sim_dir.path().join("sim.json")).unwrap())
                .unwrap();
        Path::new(&sim.socket_path).join(name)
    }

    /// What `pane` received since the fleet came up, one line per run of keys (`{"keys":[..]}`)
    /// or of text (`{"text":".."}`), the same on both backends (`corral-sim pane input`).
    pub fn input(&self, pane: &str) -> Vec<Value> {
        self.sim(&["pane", "input", "--pane", pane])
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// How many times `pane` received `text` typed as one run.
    pub fn typed(&self, pane: &str, text: &str) -> usize {
        self.input(pane)
            .iter()
            .filter(|run| run["text"] == text)
            .count()
    }

    /// Runs the fleet's tmux (`-L <socket>`) with `args`; its stdout. Panics on failure.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = command(&self.tmux_bin)
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .envs(in_temp_dirs(self.sim_dir.path()))
            .env("CORRAL_SIM_DIR", self.sim_dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A pane option's value, `None` when unset.
    pub fn option(&self, pane: &str, name: &str) -> Option<String> {
        let value = self.tmux(&["show-options", "-p", "-q", "-v", "-t", pane, name]);
        let value = value.trim_end_matches('\n');
        (!value.is_empty()).then(|| value.to_owned())
    }

    /// What is written to `pane`'s tty from now on. On the fake, the tty is a plain file; on a
    /// real server, everything the pane's programs (and the notifier) write to the pty is piped
    /// out by `pipe-pane -O` (a program in the pane reading its tty would see keyboard input,
    /// not these writes).
    pub fn tty(&self, pane: &str) -> Tty {
        match self.backend {
            Backend::Fake => {
                let path = self.tmux(&["display-message", "-p", "-t", pane, "#{pane_tty}"]);
                let path = PathBuf::from(path.trim_end());
                let skip = std::fs::metadata(&path).map_or(0, |m| m.len());
                Tty { path, skip }
            }
            Backend::Real => {
                let path = self.sim_dir.path().join(format!("tty-{}", &pane[1..]));
                std::fs::write(&path, b"").unwrap();
                let pipe = format!("cat >> {}", path.display());
                self.tmux(&["pipe-pane", "-O", "-t", pane, &pipe]);
                Tty { path, skip: 0 }
            }
        }
    }

    /// On the fake, attaches client `/dev/pts/40` to session `work`, which status-line messages
    /// then reach ([`Fleet::messages`]); real tmux gets no client in a test.
    pub fn attach_client_on_fake(&self) {
        if self.backend == Backend::Fake {
            self.sim(&[
                "client",
                "attach",
                "--name",
                "/dev/pts/40",
                "--session",
                "work",
            ]);
        }
    }

    /// The status-line messages shown so far (the fake's log of `display-message -c`), as
    /// (client, text).
    pub fn messages(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(self.fake_file("log.ndjson"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|entry| entry["command"] == "display-message")
            .map(|entry| {
                (
                    entry["client"].as_str().unwrap_or_default().to_owned(),
                    entry["text"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// The process id of the real backend's tmux server.
    pub fn server_pid(&self) -> u32 {
        self.tmux(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .unwrap()
    }

    /// Kills a pane.
    pub fn kill(&self, pane: &str) {
        self.sim(&["pane", "kill", "--pane", pane]);
    }

    /// A home whose `corral` processes read this fleet, with a fast cycle.
    pub fn home(&self) -> Home {
        let mut home = Home::new(&self.socket);
        home.tmux_bin = self.tmux_bin.clone();
        home.env.push((
            "CORRAL_SIM_DIR".into(),
            self.sim_dir.path().to_string_lossy().into_owned(),
        ));
        home.env.push((
            "TMUX_TMPDIR".into(),
            self.tmux_tmpdir().to_string_lossy().into_owned(),
        ));
        // The host and the simulator share one runtime dir: the parked hook requests the fixture
        // writes are the host's to read.
        home.runtime_dir = self.sim_dir.path().join("runtime");
        home.write_config("[serve]\nreconcile_interval_ms = 100\n");
        home
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.sim_command().arg("down").output();
        if let Some(socket) = &self.real_socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// The test fleet on `backend`, a home reading it, and a device `phone` (`fp-phone`) with read
/// and act:answer.
pub fn fleet_with_phone(backend: Backend) -> (Fleet, Home) {
    let fleet = Fleet::up(backend);
    let home = fleet.home();
    home.enrol("phone", "fp-phone", &["read", "act:answer"]);
    (fleet, home)
}

/// A per-test home: config dir (devices.toml, config.toml) and runtime dir.
#[derive(Debug)]
pub struct Home {
    pub dir: tempfile::TempDir,
    /// `CORRAL_TMUX_BIN` for every process started from this home.
    pub tmux_bin: PathBuf,
    /// `CORRAL_TMUX_SOCKET`.
    pub tmux_socket: String,
    /// Extra environment (e.g. `CORRAL_SIM_DIR`).
    pub env: Vec<(String, String)>,
    /// `XDG_RUNTIME_DIR`: the home's own, or the simulator's for a fleet's home.
    pub runtime_dir: PathBuf,
}

impl Home {
    /// A home reading the given tmux socket.
    pub fn new(socket: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config/corral")).unwrap();
        Home {
            runtime_dir: dir.path().join("runtime"),
            dir,
            tmux_bin: "tmux".into(),
            tmux_socket: socket.into(),
            env: Vec::new(),
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.dir.path().join("config/corral/config.toml")
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_file(), text).unwrap();
    }

    pub fn runtime(&self) -> PathBuf {
        self.runtime_dir.clone()
    }

    /// The environment every `corral` process of this home gets (besides `PATH`), each name once:
    /// every location inside the home's temp dir, HOME the dir itself.
    pub fn vars(&self) -> Vec<(String, String)> {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let mut vars = in_temp_dirs(self.dir.path());
        vars.extend([
            ("HOME".to_owned(), path(self.dir.path())),
            (
                "XDG_CONFIG_HOME".to_owned(),
                path(&self.dir.path().join("config")),
            ),
            ("XDG_RUNTIME_DIR".to_owned(), path(&self.runtime())),
            ("CORRAL_TMUX_BIN".to_owned(), path(&self.tmux_bin)),
            ("CORRAL_TMUX_SOCKET".to_owned(), self.tmux_socket.clone()),
        ]);
        vars.extend(self.env.iter().cloned());
        if let Some(mark) = std::env::var_os(RUN_MARK) {
            vars.push((RUN_MARK.to_owned(), mark.to_string_lossy().into_owned()));
        }
        // Each name once, with its last value: sshd's `SetEnv` keeps the first.
        let mut seen = std::collections::HashSet::new();
        let mut last_first: Vec<_> = vars
            .into_iter()
            .rev()
            .filter(|(name, _)| seen.insert(name.clone()))
            .collect();
        last_first.reverse();
        last_first
    }

    /// A `corral` command with this home's environment.
    pub fn corral(&self) -> Command {
        self.environment(command(env!("CARGO_BIN_EXE_corral")))
    }

    /// A `corral` command with this home's environment, run under `umask` (octal, as `sh` takes
    /// it): `corral <args>` becomes `sh -c 'umask <umask>; exec "$0" "$@"' corral <args>`.
    pub fn corral_under_umask(&self, umask: &str) -> Command {
        let mut cmd = command("sh");
        cmd.arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_corral"));
        self.environment(cmd)
    }

    /// `program` with this home's environment and nothing else (but `PATH`).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        self.environment(command(program))
    }

    fn environment(&self, mut cmd: Command) -> Command {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `corral <args>` to completion; panics unless it succeeds.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.corral().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "corral {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Gives every tmux invocation of this home's processes ten seconds instead of the one a
    /// fast cycle leaves it: for a test that makes many reads on a loaded machine and is not
    /// about tmux's time-out, where a slow fake tmux would be a failed read.
    pub fn patient_tmux(&mut self) {
        self.env
            .push(("CORRAL_TMUX_TIMEOUT_MS".into(), "10000".into()));
    }

    /// Enrols a device.
    pub fn enrol(&self, name: &str, id: &str, scopes: &[&str]) {
        let mut args = vec!["device", "add", name, "--id", id];
        for scope in scopes {
            args.extend(["--scope", scope]);
        }
        self.ok(&args);
    }

    /// Starts `corral serve --stdio --device <id>`.
    pub fn serve(&self, device: &str) -> Host {
        Host::start(self.serve_command(device))
    }

    /// The command [`Home::serve`] starts, for a test that changes its environment first.
    pub fn serve_command(&self, device: &str) -> Command {
        let mut cmd = self.corral();
        cmd.args(["serve", "--stdio", "--device", device])
            .env("RUST_LOG", "debug");
        cmd
    }
}

/// A running `corral serve`.
#[derive(Debug)]
pub struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The host's stdout when the test does not read it ([`Host::start_unread`]).
    unread: Option<std::process::ChildStdout>,
    lines: Receiver<String>,
    stderr_lines: Receiver<String>,
    /// Every stdout line received so far, verbatim.
    pub raw: Vec<String>,
}

impl Host {
    /// Starts `command` (a `corral serve`) with its stdin, stdout and stderr on pipes.
    pub fn start(command: Command) -> Host {
        Host::spawn(command, true)
    }

    /// Starts `command` with its stdout on a pipe nobody reads: a client that stopped reading.
    /// [`Host::close_stdout`] closes the pipe's read end.
    pub fn start_unread(command: Command) -> Host {
        Host::spawn(command, false)
    }

    /// Starts `command` with its stderr on `stderr` (a file, `/dev/full`) instead of a pipe:
    /// [`Host::stderr`] is then empty.
    pub fn start_with_stderr(command: Command, stderr: Stdio) -> Host {
        Host::spawn_with(command, true, stderr)
    }

    fn spawn(command: Command, read: bool) -> Host {
        Host::spawn_with(command, read, Stdio::piped())
    }

    fn spawn_with(mut command: Command, read: bool, stderr: Stdio) -> Host {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        let unread = if read {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
            None
        } else {
            Some(stdout)
        };
        let (etx, stderr_lines) = channel();
        if let Some(stderr) = child.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = etx.send(line);
                }
            });
        }
        Host {
            stdin: child.stdin.take(),
            child,
            unread,
            lines,
            stderr_lines,
            raw: Vec::new(),
        }
    }

    /// Writes bytes to the host's stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `lines` from a thread of their own, so a host that stops reading cannot block the
    /// test, and stops at the first failed write. The thread hands stdin back when done: until
    /// the handle is dropped, the host sees no end of input.
    pub fn feed(&mut self, lines: Vec<String>) -> std::thread::JoinHandle<ChildStdin> {
        let mut stdin = self.stdin.take().expect("stdin is open");
        std::thread::spawn(move || {
            for line in lines {
                if stdin.write_all(format!("{line}\n").as_bytes()).is_err() {
                    break;
                }
            }
            stdin
        })
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Says hello and returns the answer.
    pub fn hello(&mut self) -> Value {
        self.send(r#"{"schema":1,"id":"hello","t":"hello","app":"it","app_version":"1","device":"claimed"}"#);
        let reply = self.recv();
        assert_eq!(reply["t"], "hello", "{reply}");
        reply
    }

    /// The next frame; fails the test after [`PATIENCE`]. Every line must be a whole frame.
    pub fn recv(&mut self) -> Value {
        self.recv_within(PATIENCE)
            .unwrap_or_else(|| panic!("no frame within {PATIENCE:?}; stderr:\n{}", self.stderr()))
    }

    /// The next frame, or `None` when none arrives within `wait`.
    pub fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                assert!(line.ends_with('\n'), "a partial line: {line:?}");
                let frame = schema::decode_line::<schema::Response>(&line)
                    .unwrap_or_else(|err| panic!("not a response frame: {line:?}: {err}"));
                assert_eq!(schema::encode_line(&frame), line, "not canonical");
                self.raw.push(line.clone());
                Some(serde_json::from_str(&line).unwrap())
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Asserts nothing arrives for `wait`.
    pub fn silent_for(&mut self, wait: Duration) {
        if let Some(frame) = self.recv_within(wait) {
            panic!("expected silence, got {frame}");
        }
    }

    /// Closes stdin (EOF).
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for the process to exit; its code.
    pub fn exit_code(&mut self) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                start.elapsed() < PATIENCE,
                "the host did not exit; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `wait` for the process to exit; its code, or `None` while it runs.
    pub fn exit_within(&mut self, wait: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code().unwrap_or(-1));
            }
            if start.elapsed() >= wait {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes the read end of the host's stdout (started with [`Host::start_unread`]).
    pub fn close_stdout(&mut self) {
        assert!(self.unread.take().is_some(), "stdout is read by the test");
    }

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().to_string();
        assert!(
            command("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// The stderr lines so far (waiting briefly for lines still in flight).
    pub fn stderr(&self) -> String {
        let mut lines = Vec::new();
        while let Ok(line) = self.stderr_lines.recv_timeout(Duration::from_millis(200)) {
            lines.push(line);
        }
        lines.join("\n")
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bytes written to one pane's tty since [`Fleet::tty`].
#[derive(Debug)]
pub struct Tty {
    path: PathBuf,
    skip: u64,
}

impl Tty {
    /// Everything written so far.
    pub fn bytes(&self) -> Vec<u8> {
        let bytes = std::fs::read(&self.path).unwrap_or_default();
        bytes[usize::try_from(self.skip).unwrap().min(bytes.len())..].to_vec()
    }
}

/// Waits until `done` holds; fails the test naming `what` after [`PATIENCE`].
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The JSON lines of a file (none when it does not exist).
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect()
}

/// A running `corral daemon`, killed on drop; its stderr collected as it comes.
#[derive(Debug)]
pub struct Daemon {
    child: Child,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Home {
    /// Starts `corral daemon` (logging at info) and waits until it has started.
    pub fn daemon(&self) -> Daemon {
        self.daemon_logging("info")
    }

    /// Starts `corral daemon` logging at `level` (`RUST_LOG`) and waits until it has started.
    pub fn daemon_logging(&self, level: &str) -> Daemon {
        let mut child = self
            .corral()
            .arg("daemon")
            .env("RUST_LOG", level)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let daemon = Daemon { child, log };
        daemon.wait_log("notification daemon started");
        daemon
    }
}

impl Daemon {
    /// Its stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits until its stderr contains `needle`.
    pub fn wait_log(&self, needle: &str) {
        let start = Instant::now();
        while !self.log().contains(needle) {
            assert!(
                start.elapsed() < PATIENCE,
                "the daemon never logged {needle:?}; it logged:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends it a signal (`TERM`, `INT`, `HUP`, `STOP`, `CONT`).
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        assert!(
            command("kill")
                .args([&format!("-{name}"), &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Waits for it to exit; its code.
    pub fn exit_code(&mut self) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                start.elapsed() < PATIENCE,
                "the daemon did not exit; it logged:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How many threads process `pid` runs now.
pub fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

/// How many file descriptors process `pid` holds now.
pub fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// The live processes (zombies excluded) whose environment carries `CORRAL_IT_MARK=<mark>`: a
/// host started with the mark and everything it started, orphans included.
pub fn marked_processes(mark: &str) -> Vec<u32> {
    let needle = format!("CORRAL_IT_MARK={mark}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let live = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| Some(!stat.rsplit_once(") ")?.1.starts_with('Z')))
                .unwrap_or(false);
            live && environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes())
        })
        .collect()
}

/// Writes an executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;

    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// An exclusive lock on one of the host's lock files, held by the test as another host process
/// would hold it, until dropped. Its dir is made 0700 and the file 0600, as the host makes them.
#[derive(Debug)]
pub struct Held {
    _file: std::fs::File,
}

/// Takes the lock on `path` (waiting for it).
pub fn hold(path: &Path) -> Held {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

    let dir = path.parent().unwrap();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .unwrap();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    file.lock().unwrap();
    Held { _file: file }
}

/// A gate in front of a home's tmux: a wrapper script that, while the gate is closed, holds
/// every invocation naming one of the commands the gate was closed on (or every invocation, for
/// `*`): it records that one entered and waits until the gate opens, then runs tmux. A process
/// stopped there is stopped where the host itself calls tmux, on either backend, and what it
/// was about to do still happens once the gate opens, as it would with a slow tmux.
#[derive(Debug)]
pub struct Gate {
    closed: PathBuf,
    entered: PathBuf,
}

impl Gate {
    /// Puts the gate in front of `home`'s tmux. The host's tmux time-out is raised to a minute:
    /// the gate, not the time-out, decides how long a held invocation waits.
    pub fn install(home: &mut Home) -> Gate {
        let dir = home.dir.path();
        let gate = Gate {
            closed: dir.join("gate"),
            entered: dir.join("gate-entered"),
        };
        let wrapper = dir.join("gated-tmux");
        script(
            &wrapper,
            &format!(
                r#"set -f
if [ -e '{closed}' ]; then
    for held in $(cat '{closed}' 2>/dev/null); do
        for arg in "$@"; do
            if [ "$held" = '*' ] || [ "$arg" = "$held" ]; then
                : > '{entered}'
                while [ -e '{closed}' ]; do sleep 0.005; done
                break 2
            fi
        done
    done
fi
exec '{tmux}' "$@""#,
                closed = gate.closed.display(),
                entered = gate.entered.display(),
                tmux = home.tmux_bin.display()
            ),
        );
        home.tmux_bin = wrapper;
        home.env
            .push(("CORRAL_TMUX_TIMEOUT_MS".into(), "60000".into()));
        gate
    }

    /// Closes the gate on these tmux commands (`*`: on every invocation).
    pub fn close(&self, commands: &[&str]) {
        std::fs::write(&self.closed, commands.join("\n")).unwrap();
    }

    /// True once an invocation has been held since the gate closed.
    pub fn entered(&self) -> bool {
        self.entered.exists()
    }

    /// Opens the gate: held invocations run.
    pub fn open(&self) {
        let _ = std::fs::remove_file(&self.closed);
        let _ = std::fs::remove_file(&self.entered);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

/// A `corral-sim` command left running in the background (`api serve`), killed on drop.
#[derive(Debug)]
pub struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Fleet {
    /// Starts `corral-sim api serve` (the agent HTTP API, `simulator/src/sim/api.rs`) and waits
    /// until it listens.
    pub fn api(&self) -> Background {
        let child = self
            .sim_command()
            .args(["api", "serve", "--port", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let running = Background(child);
        let address = self.sim_dir.path().join("api.json");
        eventually("the agent API listens", || address.exists());
        running
    }

    /// Every POST the agent API received, in order (`api-replies.ndjson`).
    pub fn api_replies(&self) -> Vec<Value> {
        json_lines(&self.sim_dir.path().join("api-replies.ndjson"))
    }
}

/// How many runs a repeated test makes: `short` in the default test run, `long` when
/// `CORRAL_IT_LONG` is set (`CORRAL_IT_LONG=1 cargo test -p reference-host --test it`), the
/// form whose closing figures a change to the host's fault handling quotes.
pub fn runs(short: usize, long: usize) -> usize {
    if std::env::var_os("CORRAL_IT_LONG").is_some() {
        long
    } else {
        short
    }
}

/// A log of every tmux invocation a home's processes make, on either backend: a wrapper in front
/// of the home's tmux appends the invocation's arguments as one line, then runs tmux as its child
/// (not `exec`: killing only the wrapper would orphan tmux).
#[derive(Debug)]
pub struct CallLog {
    path: PathBuf,
}

impl CallLog {
    /// Puts the log in front of `home`'s tmux.
    pub fn install(home: &mut Home) -> CallLog {
        let path = home.dir.path().join("tmux-calls");
        let wrapper = home.dir.path().join("logged-tmux");
        script(
            &wrapper,
            &format!(
                "printf '%s\\n' \"$*\" >> '{}'\n'{}' \"$@\"",
                path.display(),
                home.tmux_bin.display()
            ),
        );
        home.tmux_bin = wrapper;
        CallLog { path }
    }

    /// Every invocation so far, its arguments joined by spaces.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// How many invocations so far.
    pub fn len(&self) -> usize {
        self.calls().len()
    }

    /// The log file (a test's own notification command may append to it too).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts afresh.
    pub fn clear(&self) {
        std::fs::write(&self.path, "").unwrap();
    }
}

/// The flock locks process `pid` holds, and those it waits for (`/proc/locks`).
pub fn locks_of(pid: u32) -> (usize, usize) {
    let pid = pid.to_string();
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    let mine = locks
        .lines()
        .filter(|line| line.split_whitespace().nth_back(3) == Some(pid.as_str()));
    mine.fold((0, 0), |(held, waiting), line| {
        if line.contains("->") {
            (held, waiting + 1)
        } else {
            (held + 1, waiting)
        }
    })
}
