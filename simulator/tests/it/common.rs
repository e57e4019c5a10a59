//! Helpers: the simulator's binaries, a temp simulator directory, running the binaries in it, and
//! a guard that kills a real scratch tmux server however the test ends. What the host's tests
//! need too (child processes, the locations they write to, another package's binaries) is in the
//! `test-support` crate.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use test_support::{Binaries, THIS_TEST, in_temp_dirs, seen_locations, unique};

/// The simulator's binaries: thin mains over this crate that the kit's package installs, so cargo
/// builds them for its tests, not for these.
const SIMULATOR: Binaries = Binaries {
    beside: THIS_TEST,
    package: "conformance",
    names: &["corral-sim", "corral-fake-tmux"],
};

/// The reference host's binary, which the tests that run a host need.
const HOST: Binaries = Binaries {
    beside: THIS_TEST,
    package: "reference-host",
    names: &["corral"],
};

/// `corral-sim`, built by the first test that needs it.
pub fn corral_sim() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| path_text(SIMULATOR.path("corral-sim")))
}

/// `corral-fake-tmux`, built with `corral-sim`.
pub fn fake_tmux() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| path_text(SIMULATOR.path("corral-fake-tmux")))
}

fn path_text(path: PathBuf) -> String {
    path.into_os_string()
        .into_string()
        .expect("the target dir's path is UTF-8")
}

/// The reference host, built beside the simulator (by the first test that needs it).
pub fn corral() -> PathBuf {
    HOST.path("corral")
}

/// The brief's parity format.
pub const PARITY_FORMAT: &str =
    "#{pane_id} #{@agent_name} #{@agent_state} #{session_name}:#{window_index}.#{pane_index}";

/// A socket name no other test (or process) uses.
pub fn unique_socket(tag: &str) -> String {
    unique(&format!("corral-sim-it-{tag}"))
}

/// The fixture directory.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../golden/fixtures")
        .join(name)
}

/// The one place the tests build a process: `test-support`'s, in a UTF-8 locale (what the fake
/// tmux and a real one print depends on it). It inherits none of the developer's tmux or corral
/// settings, and every location points nowhere until the test gives it a temp dir
/// ([`Sim::command`] does).
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = test_support::command(program);
    command.env("LC_ALL", "C.UTF-8");
    command
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
        let mut command = command(program);
        command
            .env("CORRAL_SIM_DIR", &dir)
            .envs(in_temp_dirs(&dir))
            .env("XDG_RUNTIME_DIR", dir.join("xdg"));
        command
    }

    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program).args(args).output().unwrap()
    }

    /// Runs the fake tmux; returns (stdout, stderr, code).
    pub fn fake(&self, args: &[&str]) -> (String, String, i32) {
        split(self.run(fake_tmux(), args))
    }

    /// Runs corral-sim and expects success; returns stdout.
    pub fn sim(&self, args: &[&str]) -> String {
        let (out, err, code) = split(self.run(corral_sim(), args));
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

/// What `corral-sim` does with the locations a child given no temp dir gets: it finds no state
/// dir. (`test-support` checks that a child sees them, and what tmux does.)
#[test]
fn a_child_given_no_temp_dir_can_write_nowhere() {
    let (_, err, code) = split(
        command(corral_sim())
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
    for (name, value) in &seen_locations(sim.command("env")) {
        assert!(
            Path::new(value).starts_with(sim.path()),
            "{name}={value} is outside {}",
            sim.path().display()
        );
    }
}
