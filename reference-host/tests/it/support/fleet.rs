//! The test fleet: `corral-sim up` from `tests/it/fleet.toml` on the fake or a scratch real tmux
//! server, what its panes received and showed, and the home whose `corral` processes read it.
//! Every process of the fleet keeps its files in the fleet's temp dir.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use golden::{Backend, SimFile};
use serde_json::Value;
use test_support::{Binaries, command, in_temp_dirs, unique};

use super::checks::{eventually, json_lines};
use super::home::Home;

/// The simulator's binaries the fleet runs: `corral-sim`, and the fake tmux it brings up (the
/// kit's package installs them).
const SIMULATOR: Binaries = Binaries {
    beside: env!("CARGO_BIN_EXE_corral"),
    package: "conformance",
    names: &["corral-sim", "corral-fake-tmux"],
};

/// A fleet brought up by `corral-sim up` from `tests/it/fleet.toml`, torn down on drop (the real
/// backend's server is killed even when the test fails, and its socket file removed). Parked hook
/// requests go to a runtime dir inside the fleet's temp dir.
#[derive(Debug)]
pub struct Fleet {
    /// `corral-sim`, found (or built) before anything is brought up, so that tearing down never
    /// has to.
    sim_bin: PathBuf,
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
            sim_bin: SIMULATOR.path("corral-sim"),
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
        let mut cmd = command(&self.sim_bin);
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

    /// How many faults the fake still holds (`corral-sim fault add`): one added `--times 1` is
    /// gone once an invocation has met it.
    pub fn faults_pending(&self) -> usize {
        std::fs::read(self.fake_file("faults.json"))
            .map(|bytes| serde_json::from_slice::<Vec<Value>>(&bytes).unwrap().len())
            .unwrap_or(0)
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
