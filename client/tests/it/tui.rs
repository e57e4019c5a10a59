//! The TUI in a scratch tmux server: it draws the fleet, and whether it ends by its quit key, by
//! SIGTERM, SIGINT or SIGHUP, or by a panic (the key only debug builds have), the terminal is left
//! in cooked mode on its main screen.

use std::path::Path;
use std::time::Duration;

use crate::support::tmux::{Tmux, children};
use crate::support::{REMOTE, toml_string};

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

fn start(dir: &Path, config: &Path) -> Tmux {
    start_with(dir, config, "")
}

/// The TUI in a pane, `env` (`NAME=VALUE `) set for it; the shell then says how it exited and
/// whether the terminal is in canonical mode.
fn start_with(dir: &Path, config: &Path, env: &str) -> Tmux {
    let shell = format!(
        "{env}'{REMOTE}' --config '{}'; echo EXITED $?; stty -a | grep -o -- '-*icanon'; sleep 60",
        config.display()
    );
    Tmux::start(dir, 120, 30, &shell)
}

/// The pid of corral-remote, the child of the pane's shell.
fn remote_pid(tmux: &Tmux) -> i32 {
    children(tmux.pane_pid())[0]
}

#[test]
fn the_tui_draws_the_fleet_and_always_gives_the_terminal_back() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("remote.toml");
    std::fs::write(&config, fake_host()).unwrap();
    for end in ["q", "TERM", "INT", "HUP"] {
        let tmux = start(tmp.path(), &config);
        let screen = tmux.wait_for("the fleet", "BLOCKED");
        assert!(screen.contains("fake connected"), "{screen}");
        assert!(screen.contains("%7"), "{screen}");
        assert!(screen.contains("61%"), "{screen}");
        match end {
            "q" => {
                tmux.keys(&["?"]);
                tmux.wait_for("the help", "corral-remote keys");
                tmux.keys(&["x"]);
                tmux.keys(&["q"]);
            }
            signal => {
                let pid = rustix::process::Pid::from_raw(remote_pid(&tmux)).unwrap();
                let signal = match signal {
                    "TERM" => rustix::process::Signal::TERM,
                    "INT" => rustix::process::Signal::INT,
                    _ => rustix::process::Signal::HUP,
                };
                rustix::process::kill_process(pid, signal).unwrap();
            }
        }
        // The shell prints the exit code, then what stty says: both, or the screen is read
        // between the two.
        let screen = tmux.wait(Duration::from_secs(30), "the end", |s| {
            s.contains("EXITED") && s.contains("icanon")
        });
        let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines, ["EXITED 0", "icanon"], "after {end}: {screen}");
    }
}

#[test]
fn a_panic_gives_the_terminal_back_before_its_message() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("remote.toml");
    std::fs::write(&config, fake_host()).unwrap();
    let tmux = start_with(
        tmp.path(),
        &config,
        "RUST_BACKTRACE=0 CORRAL_REMOTE_TEST_PANIC_KEY=P ",
    );
    tmux.wait_for("the fleet", "BLOCKED");
    tmux.keys(&["P"]);
    let screen = tmux.wait(Duration::from_secs(30), "the end", |s| {
        s.contains("EXITED") && s.contains("icanon")
    });
    // The panic's message is on the main screen (the hook restored the terminal before it was
    // printed), the process failed, and the terminal is canonical again.
    assert!(
        screen.contains("the test panic key was pressed"),
        "{screen}"
    );
    assert!(
        !screen.contains("BLOCKED"),
        "still the alternate screen: {screen}"
    );
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines[lines.len() - 2..],
        ["EXITED 101", "icanon"],
        "{screen}"
    );
}

#[test]
fn a_host_sending_malformed_lines_shows_its_faults_and_the_other_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("remote.toml");
    std::fs::write(&config, crate::faults::good_and_bad_hosts()).unwrap();
    let tmux = start(tmp.path(), &config);
    let faults = |screen: &str| -> Option<u32> {
        let line = screen.lines().find(|l| l.starts_with("● bad connected"))?;
        let (_, count) = line.split_once("faults: ")?;
        count.split_whitespace().next()?.parse().ok()
    };
    let screen = tmux.wait(Duration::from_secs(30), "the bad host's faults", |s| {
        faults(s).is_some_and(|n| n >= 4) && s.contains("BLOCKED")
    });
    // Both stay connected; only the bad host counts faults; every row of both is shown.
    let good = screen.lines().find(|l| l.starts_with("● good connected"));
    assert!(good.is_some_and(|l| !l.contains("faults")), "{screen}");
    for (pane, state) in [("%1", "BLOCKED"), ("%0", "idle"), ("%2", "working")] {
        assert!(
            screen
                .lines()
                .any(|l| l.contains(&format!(" {pane} ")) && l.contains(state)),
            "no {pane} {state}:\n{screen}"
        );
    }
    // The status line said what the last fault was, until the good host's ring took it.
    let status = screen.lines().rev().nth(1).unwrap_or_default();
    assert!(
        status.starts_with("bad: ") || status.starts_with("good %1 claude is blocked"),
        "{screen}"
    );
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the end", "EXITED");
    assert!(screen.contains("EXITED 0"), "{screen}");
}
