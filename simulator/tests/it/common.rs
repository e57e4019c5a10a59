//! Helpers: a temp simulator directory, running the binaries in it, and a guard that kills a
//! real scratch tmux server however the test ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

pub const FAKE: &str = env!("CARGO_BIN_EXE_corral-fake-tmux");
pub const SIM: &str = env!("CARGO_BIN_EXE_corral-sim");

/// The reference host, built beside the simulator by `cargo test --workspace`.
pub fn corral() -> PathBuf {
    let built = Path::new(SIM).with_file_name("corral");
    assert!(
        built.is_file(),
        "{} is not built: run `cargo test --workspace` (it builds the host) or `cargo build -p reference-host`",
        built.display()
    );
    built
}

/// The brief's parity format.
pub const PARITY_FORMAT: &str =
    "#{pane_id} #{@agent_name} #{@agent_state} #{session_name}:#{window_index}.#{pane_index}";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A socket name no other test (or process) uses.
pub fn unique_socket(tag: &str) -> String {
    format!(
        "corral-sim-it-{tag}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    )
}

/// The fixture directory.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../golden/fixtures")
        .join(name)
}

/// Where a child process may write when its test gave it no directory of its own: nowhere.
/// Nothing can be created under `/dev/null`, not even by root, so a test that forgets its temp
/// dirs fails loudly instead of writing into `/tmp/tmux-<uid>`, the user's runtime dir or home.
pub const NOWHERE: &str = "/dev/null/no-temp-dir-given";

/// The variables that say where a process writes: tmux's socket dir, the host's config, device
/// store and runtime dir, and whatever else follows HOME or TMPDIR.
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

/// The one place the tests build a process. It inherits none of the developer's tmux or corral
/// settings, and every location points [`NOWHERE`] until the test gives it a temp dir
/// ([`Sim::command`] does).
#[allow(clippy::disallowed_methods)]
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("LC_ALL", "C.UTF-8");
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

/// Points every location a program writes to (HOME, the XDG dirs, TMPDIR, TMUX_TMPDIR) at a dir
/// of its own under `env`, made here.
pub fn locate_in(command: &mut Command, env: &Path) {
    for name in LOCATIONS {
        let dir = env.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        command.env(name, dir);
    }
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

/// A temp `CORRAL_SIM_DIR`, and the real scratch tmux servers brought up in it: their sockets sit
/// in it (`TMUX_TMPDIR`), and they are killed when it is dropped, before the dir goes (a server
/// whose socket file is gone can no longer be reached), however the test ended.
pub struct Sim {
    pub dir: tempfile::TempDir,
    real: std::cell::RefCell<Vec<String>>,
}

impl Sim {
    pub fn new() -> Sim {
        Sim {
            dir: tempfile::tempdir().unwrap(),
            real: Default::default(),
        }
    }

    /// Marks `socket` as a real server of this simulator (`up --backend real`), to be killed
    /// when the simulator is dropped.
    pub fn real_server(&self, socket: &str) {
        self.real.borrow_mut().push(socket.to_owned());
    }

    /// Runs real tmux on a server of this simulator; returns (stdout, stderr, code).
    pub fn real(&self, socket: &str, args: &[&str]) -> (String, String, i32) {
        split(
            self.command("tmux")
                .args(["-L", socket, "-f", "/dev/null"])
                .args(args)
                .output()
                .unwrap(),
        )
    }

    pub fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    /// A command whose every location is inside this simulator's temp dir: its state
    /// (`CORRAL_SIM_DIR`), a real server's socket (`TMUX_TMPDIR`), the host's runtime dir
    /// (`$XDG_RUNTIME_DIR/corral` is `xdg/corral`) and a home.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let dir = self.path();
        let home = dir.join("home");
        let mut command = command(program);
        command
            .env("CORRAL_SIM_DIR", &dir)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_RUNTIME_DIR", dir.join("xdg"))
            .env("TMUX_TMPDIR", &dir)
            .env("TMPDIR", &dir);
        command
    }

    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program).args(args).output().unwrap()
    }

    /// Runs the fake tmux; returns (stdout, stderr, code).
    pub fn fake(&self, args: &[&str]) -> (String, String, i32) {
        split(self.run(FAKE, args))
    }

    /// Runs corral-sim and expects success; returns stdout.
    pub fn sim(&self, args: &[&str]) -> String {
        let (out, err, code) = split(self.run(SIM, args));
        assert_eq!(code, 0, "corral-sim {args:?} failed: {err}");
        out
    }

    /// What `corral-sim up` wrote (and printed).
    pub fn sim_json(&self) -> golden::SimFile {
        serde_json::from_slice(&std::fs::read(self.path().join("sim.json")).unwrap()).unwrap()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        for socket in self.real.take() {
            let _ = self.real(&socket, &["kill-server"]);
        }
    }
}

pub fn split(output: Output) -> (String, String, i32) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

/// A fleet brought up from a fixture on the fake backend with a pinned clock.
pub fn fake_fleet(fixture_name: &str) -> (Sim, String) {
    let sim = Sim::new();
    let socket = unique_socket("fake");
    let runtime = sim.path().join("run");
    sim.sim(&[
        "up",
        fixture(fixture_name).to_str().unwrap(),
        "--backend",
        "fake",
        "--socket",
        &socket,
        "--now-ms",
        "1700000000000",
        "--runtime-dir",
        runtime.to_str().unwrap(),
    ]);
    (sim, socket)
}

/// What a child of these tests sees of the locations: each variable of [`LOCATIONS`] and its
/// value, as `env` printed them.
fn locations(mut command: Command) -> Vec<(String, String)> {
    let (out, err, code) = split(command.output().unwrap());
    assert_eq!(code, 0, "{err}");
    let mut seen: Vec<(String, String)> = out
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(name, _)| LOCATIONS.contains(name))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    seen.sort();
    seen
}

#[test]
fn a_child_given_no_temp_dir_can_write_nowhere() {
    let seen = locations(command("env"));
    assert_eq!(seen.len(), LOCATIONS.len(), "{seen:?}");
    for (name, value) in &seen {
        assert_eq!(Path::new(value), nowhere(name), "{name}");
    }
    let (_, err, code) = split(
        command("tmux")
            .args(["-L", &unique_socket("nowhere"), "-f", "/dev/null"])
            .args(["new-session", "-d"])
            .output()
            .unwrap(),
    );
    assert_ne!(code, 0, "a tmux server started in /tmp/tmux-<uid>");
    assert!(
        err.contains("couldn't create directory /dev/null/"),
        "{err}"
    );
    let (_, err, code) = split(
        command(SIM)
            .args(["up", fixture("small.toml").to_str().unwrap()])
            .args(["--backend", "fake", "--socket", "nowhere"])
            .output()
            .unwrap(),
    );
    assert_ne!(code, 0, "corral-sim found a state dir");
    assert!(err.contains("CORRAL_SIM_DIR"), "{err}");
}

#[test]
fn a_simulators_children_write_inside_its_temp_dir() {
    let sim = Sim::new();
    let seen = locations(sim.command("env"));
    assert_eq!(seen.len(), LOCATIONS.len(), "{seen:?}");
    for (name, value) in &seen {
        assert!(
            Path::new(value).starts_with(sim.path()),
            "{name}={value} is outside {}",
            sim.path().display()
        );
    }
}
