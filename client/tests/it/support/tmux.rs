//! A scratch tmux server (`tmux -L <unique> -f /dev/null`) to run the TUI in: keys sent with
//! `send-keys`, the screen read with `capture-pane -p`, and waits that are conditions with a
//! deadline. The server is killed when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::command;

/// A scratch tmux server with one session.
pub struct Tmux {
    socket: String,
    dir: PathBuf,
}

impl Tmux {
    /// A server whose files go in `dir`; nothing runs until [`Tmux::start`].
    pub fn new(dir: &Path) -> Tmux {
        Tmux {
            socket: test_support::unique("corral-remote-tui"),
            dir: dir.to_owned(),
        }
    }

    /// The server, started with one detached session of `width`×`height` running `shell`.
    pub fn start(dir: &Path, width: u16, height: u16, shell: &str) -> Tmux {
        let tmux = Tmux::new(dir);
        let (width, height) = (width.to_string(), height.to_string());
        tmux.run(&["new-session", "-d", "-x", &width, "-y", &height, shell]);
        tmux
    }

    fn tmux(&self) -> Command {
        let mut tmux = command("tmux", &self.dir);
        tmux.args(["-L", &self.socket, "-f", "/dev/null"]);
        tmux
    }

    /// Runs one tmux command, which must succeed; its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.tmux().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    /// Keys, as `send-keys` names them (`Enter`, `Down`, `a`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        self.run(&args);
    }

    /// A key pressed `n` times.
    pub fn repeat(&self, key: &str, n: usize) {
        if n > 0 {
            self.run(&["send-keys", "-N", &n.to_string(), key]);
        }
    }

    /// Text typed as it is.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-l", text]);
    }

    /// The first screen `wanted` accepts within `within`; the test fails with the last screen
    /// otherwise.
    pub fn wait(&self, within: Duration, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        self.try_wait(within, wanted)
            .unwrap_or_else(|screen| panic!("no {what} on the screen within {within:?}:\n{screen}"))
    }

    /// The first screen `wanted` accepts within `within`, or the last one seen.
    pub fn try_wait(
        &self,
        within: Duration,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + within;
        loop {
            let screen = self.screen();
            if wanted(&screen) {
                return Ok(screen);
            }
            if Instant::now() > deadline {
                return Err(screen);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// [`Tmux::wait`] for a screen holding `needle`.
    pub fn wait_for(&self, what: &str, needle: &str) -> String {
        self.wait(Duration::from_secs(30), what, |screen| {
            screen.contains(needle)
        })
    }

    /// The pid of the process the pane runs.
    pub fn pane_pid(&self) -> i32 {
        self.run(&["list-panes", "-F", "#{pane_pid}"])
            .trim()
            .parse()
            .unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").output();
    }
}

/// The children of process `pid`, whichever of its threads started them.
pub fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        found.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// The command line of process `pid`, its words joined by spaces.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .unwrap_or_default()
}
