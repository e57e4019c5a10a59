//! Helpers: a temp simulator directory, running the binaries in it, and a guard that kills a
//! real scratch tmux server however the test ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

pub const FAKE: &str = env!("CARGO_BIN_EXE_corral-fake-tmux");
pub const SIM: &str = env!("CARGO_BIN_EXE_corral-sim");

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

/// The one place the tests build a process.
#[allow(clippy::disallowed_methods)]
pub fn command(program: &str) -> Command {
    let mut command = Command::new(program);
    command
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("LC_ALL", "C.UTF-8");
    command
}

/// A temp `CORRAL_SIM_DIR`.
pub struct Sim {
    pub dir: tempfile::TempDir,
}

impl Sim {
    pub fn new() -> Sim {
        Sim {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        command(program)
            .args(args)
            .env("CORRAL_SIM_DIR", self.path())
            .output()
            .unwrap()
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

pub fn split(output: Output) -> (String, String, i32) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

/// Runs real tmux on a scratch socket; returns (stdout, stderr, code).
pub fn real(socket: &str, args: &[&str]) -> (String, String, i32) {
    split(
        command("tmux")
            .args(["-L", socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap(),
    )
}

/// Kills a real scratch server on drop, even when the test panicked.
pub struct RealServer {
    pub socket: String,
}

impl Drop for RealServer {
    fn drop(&mut self) {
        let _ = real(&self.socket, &["kill-server"]);
        // tmux leaves its socket file behind; a test leaves nothing.
        let tmp = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
        let uid = simulator::env::uid(Path::new(&tmp));
        let _ = std::fs::remove_file(
            Path::new(&tmp)
                .join(format!("tmux-{uid}"))
                .join(&self.socket),
        );
    }
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
