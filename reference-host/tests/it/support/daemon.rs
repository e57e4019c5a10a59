//! A running `corral daemon`, its stderr collected as it comes, and the signals a test sends it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use test_support::command;

use super::checks::{PATIENCE, exit_code_within_patience};
use super::home::Home;

/// A running `corral daemon`, killed on drop; its stderr collected as it comes.
#[derive(Debug)]
pub struct Daemon {
    child: Child,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Home {
    /// The running daemon's transition ring (`corral debug transitions --json`).
    pub fn ring(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok(&["debug", "transitions", "--json"])).unwrap()
    }

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
        exit_code_within_patience(&mut self.child)
            .unwrap_or_else(|| panic!("the daemon did not exit; it logged:\n{}", self.log()))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
