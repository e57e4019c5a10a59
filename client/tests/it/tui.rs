//! The TUI in a scratch tmux server: it draws the fleet, and whether it ends by its quit key or by
//! SIGTERM, SIGINT or SIGHUP, the terminal is left in cooked mode on its main screen.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{REMOTE, command, toml_string};

/// A scratch tmux server, killed when dropped.
struct Tmux {
    socket: String,
    dir: std::path::PathBuf,
}

impl Tmux {
    fn new(dir: &Path) -> Tmux {
        Tmux {
            socket: test_support::unique("corral-remote-tui"),
            dir: dir.to_owned(),
        }
    }

    fn tmux(&self) -> Command {
        let mut tmux = command("tmux", &self.dir);
        tmux.args(["-L", &self.socket, "-f", "/dev/null"]);
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.tmux().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    fn wait_for(&self, what: &str, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} on the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The pid of the pane's shell's child, corral-remote.
    fn remote_pid(&self) -> i32 {
        let shell = self.run(&["list-panes", "-F", "#{pane_pid}"]);
        let shell = shell.trim();
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
        children.split_whitespace().next().unwrap().parse().unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").output();
    }
}

fn fake_host() -> String {
    let row = r#"{"pane":"%7","agent":"claude","state":"blocked","detail":"permission","since_ms":1000,"episode_ms":1000,"locator":"w:0.0","attention":false,"done":false,"session":"w","transcript":null,"permission_request":null,"stamped_at_ms":null,"context":61,"context_at_ms":null,"muted":false,"repo":"api","branch":"main","worktree":null,"pending_tool":"Bash","pending_call":null,"server":"/tmp/s","host":"fake"}"#;
    let lines = [
        r#"{"schema":1,"id":"1","t":"hello","host":"fake","tool_version":"9.9","reconcile_interval_ms":500,"scopes":["read"]}"#.to_owned(),
        format!(r#"{{"schema":1,"id":"2","t":"snapshot","agents":[{row}]}}"#),
        r#"{"schema":1,"id":"3","t":"ack"}"#.to_owned(),
    ];
    let mut script = String::new();
    for line in lines {
        script.push_str(&format!("read -r l; printf '%s\\n' '{line}'; "));
    }
    script.push_str("while read -r l; do :; done");
    format!(
        "[[host]]\nname = \"fake\"\ncommand = [\"sh\", \"-c\", {}]\n",
        toml_string(&script)
    )
}

fn start(tmux: &Tmux, config: &Path) {
    let shell = format!(
        "'{REMOTE}' --config '{}'; echo EXITED $?; stty -a | grep -o -- '-*icanon'; sleep 60",
        config.display()
    );
    tmux.run(&["new-session", "-d", "-x", "120", "-y", "30", &shell]);
}

#[test]
fn the_tui_draws_the_fleet_and_always_gives_the_terminal_back() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("remote.toml");
    std::fs::write(&config, fake_host()).unwrap();
    for end in ["q", "TERM", "INT", "HUP"] {
        let tmux = Tmux::new(tmp.path());
        start(&tmux, &config);
        let screen = tmux.wait_for("the fleet", "BLOCKED");
        assert!(screen.contains("fake connected"), "{screen}");
        assert!(screen.contains("%7"), "{screen}");
        assert!(screen.contains("61%"), "{screen}");
        match end {
            "q" => {
                tmux.run(&["send-keys", "?"]);
                tmux.wait_for("the help", "corral-remote keys");
                tmux.run(&["send-keys", "x"]);
                tmux.run(&["send-keys", "q"]);
            }
            signal => {
                let pid = rustix::process::Pid::from_raw(tmux.remote_pid()).unwrap();
                let signal = match signal {
                    "TERM" => rustix::process::Signal::TERM,
                    "INT" => rustix::process::Signal::INT,
                    _ => rustix::process::Signal::HUP,
                };
                rustix::process::kill_process(pid, signal).unwrap();
            }
        }
        let screen = tmux.wait_for("the end", "EXITED");
        let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines, ["EXITED 0", "icanon"], "after {end}: {screen}");
    }
}
