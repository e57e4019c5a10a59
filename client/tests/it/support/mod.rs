//! What the tests share: the binaries (this crate's, the simulator's, the host's), the headless
//! client as a child whose JSON lines are read on a thread, `corral-sim demo` as a lively fleet
//! served by the real host, a scratch tmux server to run the TUI in ([`tmux`]) and a real sshd on
//! loopback (`test_support::sshd`). Every child gets temp dirs for every location it could write to, and is
//! ended when its test ends, however it ends.

pub mod tmux;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::{Binaries, in_temp_dirs, lines};

/// This crate's binary.
pub const REMOTE: &str = env!("CARGO_BIN_EXE_corral-remote");

const SIMULATOR: Binaries = Binaries {
    beside: REMOTE,
    package: "conformance",
    names: &["corral-sim", "corral-fake-tmux"],
};

const HOST: Binaries = Binaries {
    beside: REMOTE,
    package: "reference-host",
    names: &["corral"],
};

/// `corral-sim`, built beside this crate's binary by the first test that needs it.
pub fn sim() -> PathBuf {
    SIMULATOR.path("corral-sim")
}

/// The reference host, `corral`.
pub fn corral() -> PathBuf {
    HOST.path("corral")
}

/// A child process of a test, every location it could write to inside `dir`.
pub fn command(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut command = test_support::command(program);
    command.envs(in_temp_dirs(dir)).env("LC_ALL", "C.UTF-8");
    for (name, value) in in_temp_dirs(dir) {
        if name != "TMPDIR" && name != "TMUX_TMPDIR" {
            let _ = std::fs::create_dir_all(value);
        }
    }
    command
}

/// `corral-remote --ndjson` with a config file.
pub struct Remote {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Every line printed so far.
    pub seen: Vec<Value>,
}

impl Remote {
    /// Starts the headless client over the hosts of `config` (the text of a `remote.toml`).
    pub fn start(dir: &Path, config: &str) -> Remote {
        let file = dir.join("remote.toml");
        std::fs::write(&file, config).unwrap();
        Remote::start_args(dir, &["--config".as_ref(), file.as_os_str()])
    }

    /// Starts the headless client over the hosts of `config`, `env` in its environment.
    pub fn start_env(dir: &Path, config: &str, env: &[(&str, &str)]) -> Remote {
        let file = dir.join("remote.toml");
        std::fs::write(&file, config).unwrap();
        Remote::spawn(dir, &["--config".as_ref(), file.as_os_str()], env)
    }

    /// Starts the headless client with these arguments after `--ndjson`.
    pub fn start_args(dir: &Path, args: &[&std::ffi::OsStr]) -> Remote {
        Remote::spawn(dir, args, &[])
    }

    fn spawn(dir: &Path, args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Remote {
        let mut child = command(REMOTE, dir)
            .envs(env.iter().copied())
            .arg("--ndjson")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = lines(child.stdout.take().unwrap());
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Remote {
            child,
            stdin,
            out,
            stderr: Some(stderr),
            seen: Vec::new(),
        }
    }

    /// Sends one command line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line `wanted` accepts, within `within`; the test fails with everything seen
    /// otherwise.
    pub fn wait(&mut self, within: Duration, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.out.recv_timeout(left) {
                Ok(line) => {
                    let value: Value = serde_json::from_str(&line)
                        .unwrap_or_else(|err| panic!("not a JSON line ({err}): {line}"));
                    self.seen.push(value.clone());
                    if wanted(&value) {
                        return value;
                    }
                }
                Err(_) => panic!(
                    "no {what} within {within:?}; corral-remote printed:\n{}",
                    self.shown()
                ),
            }
        }
    }

    /// A line `wanted` accepts, among those seen so far or the next ones, within `within`.
    pub fn seen_or_wait(
        &mut self,
        within: Duration,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        if let Some(line) = self.seen.iter().find(|l| wanted(l)) {
            return line.clone();
        }
        self.wait(within, what, wanted)
    }

    /// Every line seen within `within` (none may be missed: it reads until the time is up).
    pub fn drain(&mut self, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        let mut got = Vec::new();
        while let Ok(line) = self
            .out
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            let value: Value = serde_json::from_str(&line).unwrap();
            self.seen.push(value.clone());
            got.push(value);
        }
        got
    }

    /// What was printed, one line each, cut for reading.
    pub fn shown(&self) -> String {
        self.seen
            .iter()
            .map(|v| v.to_string().chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Says quit; the exit code and stderr.
    pub fn quit(mut self) -> (i32, String) {
        self.send(r#"{"cmd":"quit"}"#);
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = stdx::process::wait_until(&mut self.child, deadline)
            .unwrap()
            .expect("corral-remote did not quit");
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status.code().unwrap_or(-1), stderr)
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether `line` is an `ev` line of host `host`.
pub fn is(line: &Value, ev: &str, host: &str) -> bool {
    line["ev"] == ev && line["host"] == host
}

/// A running `corral-sim demo`.
pub struct Demo {
    child: Child,
    stdout: Receiver<String>,
    /// Every line it printed so far.
    pub log: Vec<String>,
    /// The command that connects a client (`env … corral serve --stdio --device …`).
    pub connect: String,
    /// The `connect` script that runs it.
    pub script: PathBuf,
    /// The `authorized_keys` line it prints for ssh, the key left as a placeholder.
    pub forced: String,
}

impl Demo {
    /// Starts a demo fleet of `panes` agents under `dir` (seed 3).
    pub fn start(dir: &Path, panes: u32, speed: u32) -> Demo {
        let mut demo = Demo::spawn(dir, 3, panes, speed);
        demo.ready();
        demo
    }

    /// Starts a demo fleet of `panes` agents under `dir`; [`Demo::ready`] waits for its banner.
    pub fn spawn(dir: &Path, seed: u32, panes: u32, speed: u32) -> Demo {
        corral();
        let mut child = command(sim(), dir)
            .args(["demo", "--seed", &seed.to_string()])
            .args(["--panes", &panes.to_string(), "--speed", &speed.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = lines(child.stdout.take().unwrap());
        Demo {
            child,
            stdout,
            log: Vec::new(),
            connect: String::new(),
            script: PathBuf::new(),
            forced: String::new(),
        }
    }

    /// Reads the banner: the connect script, the command it runs and the forced command line.
    pub fn ready(&mut self) {
        self.line(Duration::from_secs(60), "the banner's end", |l| {
            l.starts_with("Ctrl-C stops")
        });
        for line in &self.log {
            if let Some(script) = line.strip_prefix("connect with: ") {
                self.script = PathBuf::from(script);
            } else if let Some(connect) = line.strip_prefix("  env ") {
                self.connect = format!("env {connect}");
            } else if let Some(forced) = line.strip_prefix("  command=") {
                self.forced = format!("command={forced}");
            }
        }
        assert!(
            !self.connect.is_empty() && self.script.is_file() && !self.forced.is_empty(),
            "the banner:\n{}",
            self.log.join("\n")
        );
    }

    /// Where its log is now: what [`Demo::line_since`] reads from.
    pub fn mark(&mut self) -> usize {
        while let Ok(line) = self.stdout.try_recv() {
            self.log.push(line);
        }
        self.log.len()
    }

    /// The next line of its log that `wanted` accepts, among those seen or the next ones, within
    /// `within`; the test fails with the log otherwise.
    pub fn line(&mut self, within: Duration, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        self.line_since(0, within, what, wanted)
    }

    /// [`Demo::line`], among the lines from `mark` on.
    pub fn line_since(
        &mut self,
        mark: usize,
        within: Duration,
        what: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> String {
        if let Some(line) = self.log.iter().skip(mark).find(|l| wanted(l)) {
            return line.clone();
        }
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no {what} within {within:?}; the demo printed:\n{}",
                    self.log.join("\n")
                ),
            }
        }
    }

    /// The `NAME=VALUE` settings of the connect command (where the demo's host keeps its files).
    pub fn env(&self) -> Vec<(String, String)> {
        self.connect
            .split_whitespace()
            .skip(1)
            .map_while(|word| word.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect()
    }

    /// A `[[host]]` table that connects to the demo, running `before` first in the same shell.
    pub fn host(&self, name: &str, before: &str) -> String {
        let script = format!("{before}exec {}", self.connect);
        format!(
            "[[host]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", {}]\n",
            toml_string(&script)
        )
    }

    /// `corral <args>` in the demo's environment, which must succeed; its stdout.
    pub fn corral(&self, dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = command(corral(), dir)
            .envs(self.env())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "corral {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// The receipts of the demo's host ledger: `corral receipts --json` in its environment.
    pub fn receipts(&self, dir: &Path) -> Vec<Value> {
        let answer: Value =
            serde_json::from_slice(&self.corral(dir, &["receipts", "--json"])).unwrap();
        answer["receipts"].as_array().unwrap().clone()
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        stdx::process::signal(self.child.id(), stdx::process::Signal::TERM);
        let _ = self.child.wait();
    }
}

/// A TOML basic string holding `text`.
pub fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}
