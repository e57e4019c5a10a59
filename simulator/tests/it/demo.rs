//! `corral-sim demo` as an app developer uses it: started, connected to with the `connect` script
//! it prints (the workspace's `corral serve --stdio`), watched until an agent blocks on a
//! permission or a question, answered from the "app", and stopped with a signal, after which
//! nothing it started is left: no dir, no process. [`frames`] replays golden/README.md's worked
//! example against it; [`upkeep`] runs it fast for hours of story and watches it stay the same
//! size, with no zombie children.

mod frames;
mod upkeep;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use test_support::lines;

use crate::common::{command, corral, corral_sim};

const DEVICE: &str = "SHA256:corral-demo";

/// A running demo.
struct Demo {
    child: Child,
    stdout: Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Every stdout line so far.
    seen: Vec<String>,
}

impl Demo {
    /// Starts `corral-sim demo` with `args`, its temp dir under `tmp`.
    fn start(tmp: &Path, args: &[&str]) -> Demo {
        // The demo runs the workspace's `corral`, which corral-sim finds beside itself.
        corral();
        let mut child = command(corral_sim())
            .arg("demo")
            .args(args)
            .env_remove("CORRAL_SIM_DIR")
            .env_remove("CORRAL_SIM_NOW_MS")
            .env("TMPDIR", tmp)
            .env("TMUX_TMPDIR", tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = lines(child.stdout.take().unwrap());
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Demo {
            child,
            stdout,
            stderr: Some(stderr),
            seen: Vec::new(),
        }
    }

    /// The next stdout line that `wanted` accepts, within `within`.
    fn line(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no such line within {within:?}; the demo printed:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// The banner: the demo's dir, the connect script it names first, and the command line the
    /// script runs.
    fn banner(&mut self) -> Banner {
        let first = self.line(Duration::from_secs(60), |l| l.starts_with("corral demo: "));
        let dir = PathBuf::from(first.rsplit_once(", in ").unwrap().1);
        let script = self.line(Duration::from_secs(5), |l| {
            !l.is_empty() && !l.starts_with("device ")
        });
        let script = script
            .strip_prefix("connect with: ")
            .unwrap_or_else(|| panic!("not the connect line: {script}"));
        let command = self.line(Duration::from_secs(5), |l| l.starts_with("  env "));
        self.line(Duration::from_secs(5), |l| l.starts_with("Ctrl-C stops"));
        Banner {
            script: PathBuf::from(script),
            dir,
            command: command.trim_start().to_owned(),
        }
    }

    /// The demo's pid.
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
    }

    /// Waits for the demo's end; returns its exit code, the rest of its stdout and its stderr.
    fn end(mut self) -> (i32, Vec<String>, String) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = stdx::process::wait_until(&mut self.child, deadline)
            .unwrap()
            .expect("the demo did not stop");
        let mut rest: Vec<String> = Vec::new();
        while let Ok(line) = self.stdout.recv_timeout(Duration::from_secs(5)) {
            rest.push(line);
        }
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status.code().unwrap_or(-1), rest, stderr)
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        // A test that failed half-way still leaves nothing running.
        if self.child.try_wait().ok().flatten().is_none() {
            self.signal(rustix::process::Signal::TERM);
            let _ = self.child.wait();
        }
    }
}

/// What the demo's banner says.
struct Banner {
    /// The demo's dir.
    dir: PathBuf,
    /// `connect with: <script>`.
    script: PathBuf,
    /// The line the script runs.
    command: String,
}

/// A `corral serve --stdio` started with the command the demo printed.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<String>,
    next_id: u32,
}

impl Client {
    /// Runs `command_line` through `sh`: the script's path, or the line it runs.
    fn connect(command_line: &str) -> Client {
        let mut child = command("sh")
            .args(["-c", command_line])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let frames = lines(child.stdout.take().unwrap());
        Client {
            child,
            stdin,
            frames,
            next_id: 0,
        }
    }

    /// Sends a request with a fresh id; returns the id.
    fn send(&mut self, mut frame: Value) -> String {
        self.next_id += 1;
        let id = format!("app-{}", self.next_id);
        frame["schema"] = json!(1);
        frame["id"] = json!(id);
        self.send_line(&frame.to_string());
        id
    }

    /// Sends one line as it is.
    fn send_line(&mut self, line: &str) {
        let line = format!("{line}\n");
        self.stdin
            .as_mut()
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
    }

    /// The next frame, within `within`.
    fn frame(&mut self, within: Duration) -> Option<Value> {
        let line = self.frames.recv_timeout(within).ok()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// The answer to request `id`, with every streamed frame that came first.
    fn answer(&mut self, id: &str) -> (Value, Vec<Value>) {
        let mut streamed = Vec::new();
        loop {
            let frame = self
                .frame(Duration::from_secs(10))
                .unwrap_or_else(|| panic!("no answer to {id}"));
            if frame["id"] == id && frame["t"] != "edge" {
                return (frame, streamed);
            }
            streamed.push(frame);
        }
    }

    /// Closes stdin; returns serve's exit code.
    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

/// Live processes (but this one) whose command line or environment names `needle`.
fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == std::process::id().to_string() {
            continue;
        }
        let read = |what: &str| std::fs::read(entry.path().join(what)).unwrap_or_default();
        let (cmdline, environ) = (read("cmdline"), read("environ"));
        let names = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains(needle);
        if names(&cmdline) || names(&environ) {
            found.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// Every path under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

/// The beats the demo logged, without their times.
fn beats(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| {
            l.trim_start()
                .split_once("s  ")
                .is_some_and(|(t, _)| t.parse::<f64>().is_ok())
        })
        .map(|l| l.trim_start().split_once("s  ").unwrap().1.to_owned())
        .collect()
}

#[test]
fn an_app_connects_with_the_printed_command_sees_the_fleet_move_and_answers_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut demo = Demo::start(tmp.path(), &["--seed", "3", "--panes", "4", "--speed", "2"]);
    let Banner {
        dir,
        script,
        command: command_line,
    } = demo.banner();
    assert!(dir.starts_with(std::fs::canonicalize(tmp.path()).unwrap()));
    assert!(command_line.ends_with(&format!("serve --stdio --device {DEVICE}")));
    // The short command is a script in the demo's dir that runs the long line.
    assert_eq!(script, dir.join("connect"));
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(
        text.ends_with(&format!("\nexec {command_line}\n")),
        "{text}"
    );

    let mut client = Client::connect(script.to_str().unwrap());
    let id =
        client.send(json!({"t":"hello","app":"demo-test","app_version":"1.0.0","device":DEVICE}));
    let (hello, _) = client.answer(&id);
    assert_eq!(hello["t"], "hello", "{hello}");
    assert_eq!(hello["scopes"], json!(["read", "act:answer", "act:steer"]));
    assert_eq!(hello["reconcile_interval_ms"], 500);
    let id = client.send(json!({"t":"snapshot"}));
    let (snapshot, _) = client.answer(&id);
    let agents = snapshot["agents"].as_array().unwrap();
    let names: Vec<&str> = agents
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["claude", "opencode", "codex", "gemini"],
        "{snapshot}"
    );
    let subscription = client.send(json!({"t":"subscribe","events":true}));
    let (ack, _) = client.answer(&subscription);
    assert_eq!(ack["t"], "ack");

    // Edges until a pane blocks on a permission or a question; its card, then an answer.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut edges = 0;
    let mut answered: Option<(String, String)> = None;
    while answered.is_none() {
        assert!(
            Instant::now() < deadline,
            "no answerable block in time; {edges} edges"
        );
        let Some(edge) = client.frame(Duration::from_secs(1)) else {
            continue;
        };
        assert_eq!(edge["t"], "edge", "{edge}");
        assert_eq!(edge["id"], subscription.as_str());
        edges += 1;
        let detail = edge["detail"].as_str().unwrap_or_default();
        if edge["to"] != "blocked" || !["permission", "question"].contains(&detail) {
            continue;
        }
        let pane = edge["pane"].as_str().unwrap().to_owned();
        let id = client.send(json!({"t":"card","pane":pane}));
        let (card, _) = client.answer(&id);
        let kind = card["card"].as_str().unwrap().to_owned();
        if kind == "none" {
            // The desk answered first; wait for the next one.
            continue;
        }
        assert_eq!(kind, detail, "{card}");
        let episode = card["binder"]["expect_episode_ms"].as_u64().unwrap();
        let mut dispatch = json!({
            "t":"dispatch", "host":"", "pane":pane, "binder":card["binder"],
        });
        if kind == "permission" {
            dispatch["slot"] = json!(format!("{pane}:{episode}:approve"));
            dispatch["action"] = json!("approve");
        } else {
            let answers: Vec<Value> = card["questions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| json!([q["options"][0]["label"]]))
                .collect();
            dispatch["slot"] = json!(format!("{pane}:{episode}:question_reply"));
            dispatch["action"] = json!("question_reply");
            dispatch["answers"] = json!(answers);
        }
        let id = client.send(dispatch);
        let (receipt, _) = client.answer(&id);
        assert_eq!(receipt["t"], "receipt", "{receipt}");
        let outcome = receipt["outcome"].as_str().unwrap();
        if outcome == "refused" && receipt["reason"] == "episode-changed" {
            continue;
        }
        assert!(["replied", "sent"].contains(&outcome), "{card}\n{receipt}");
        answered = Some((pane, kind));
    }
    let (pane, kind) = answered.unwrap();
    // The demo saw the app's answer and let the agent go on.
    let line = demo.line(Duration::from_secs(20), |l| {
        l.contains(&format!(" {pane} ")) && l.contains(" app: ")
    });
    assert!(line.contains("→ working"), "{kind}: {line}");
    loop {
        let edge = client
            .frame(Duration::from_secs(10))
            .expect("the answered pane's edge to working");
        if edge["pane"] == pane.as_str() && edge["to"] == "working" {
            break;
        }
    }
    assert_eq!(client.close(), 0);

    // Stopped while a permission hook waits, so the clean-up has a process of its own to end.
    demo.line(Duration::from_secs(120), |l| {
        l.ends_with("(hook lane: its hook waits)")
    });
    let running = processes_naming(dir.to_str().unwrap());
    assert!(
        running
            .iter()
            .any(|p| p.contains(" event claude PermissionRequest")),
        "{running:#?}"
    );
    demo.signal(rustix::process::Signal::INT);
    let (code, rest, stderr) = demo.end();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "", "the demo warned");
    assert!(
        rest.last().unwrap().starts_with("stopped by SIGINT"),
        "{rest:?}"
    );
    assert!(!dir.exists(), "{} is left", dir.display());
    let left = processes_naming(dir.to_str().unwrap());
    assert!(left.is_empty(), "left running: {left:#?}");
    assert_eq!(walk(tmp.path()), Vec::<PathBuf>::new());
}

#[test]
fn a_seed_plays_the_same_story_and_a_given_dir_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |dir: &Path, seed: &str| {
        let mut demo = Demo::start(
            tmp.path(),
            &[
                "--seed",
                seed,
                "--panes",
                "3",
                "--speed",
                "6",
                "--dir",
                dir.to_str().unwrap(),
            ],
        );
        demo.banner();
        let start = demo.seen.len();
        for _ in 0..10 {
            demo.line(Duration::from_secs(30), |l| !l.is_empty());
        }
        let told = beats(&demo.seen[start..]);
        demo.signal(rustix::process::Signal::TERM);
        let (code, rest, stderr) = demo.end();
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stderr, "");
        assert!(rest.last().unwrap().starts_with("stopped by SIGTERM"));
        assert!(rest.last().unwrap().ends_with("kept"));
        told
    };
    let (one, two, other) = (
        tmp.path().join("one"),
        tmp.path().join("two"),
        tmp.path().join("other"),
    );
    let first = run(&one, "42");
    assert_eq!(first.len(), 10, "{first:?}");
    assert_eq!(run(&two, "42"), first);
    assert_ne!(run(&other, "43"), first);
    // The dirs are kept, with the fleet's state in them.
    for dir in [&one, &two, &other] {
        assert!(dir.join("sim/sim.json").is_file(), "{}", dir.display());
        assert!(processes_naming(dir.to_str().unwrap()).is_empty());
    }
    // A dir with something in it is refused, and nothing is started.
    let demo = Demo::start(tmp.path(), &["--dir", one.to_str().unwrap()]);
    let (code, _, stderr) = demo.end();
    assert_eq!(code, 1);
    assert!(stderr.contains("is not empty"), "{stderr}");
}

#[test]
fn the_real_backend_serves_a_scratch_tmux_server_and_takes_it_down() {
    let tmp = tempfile::tempdir().unwrap();
    let mut demo = Demo::start(
        tmp.path(),
        &["--backend", "real", "--panes", "2", "--speed", "4"],
    );
    let Banner {
        dir,
        command: command_line,
        ..
    } = demo.banner();
    assert!(!command_line.contains("CORRAL_SIM_DIR"), "{command_line}");
    let watch = demo
        .seen
        .iter()
        .find(|l| l.starts_with("Watch the panes: tmux -S "))
        .unwrap()
        .clone();
    let socket = watch.split_whitespace().nth(5).unwrap().to_owned();
    assert!(command_line.contains(&format!("CORRAL_TMUX_SOCKET={socket} ")));
    let mut client = Client::connect(&command_line);
    let id =
        client.send(json!({"t":"hello","app":"demo-test","app_version":"1.0.0","device":DEVICE}));
    client.answer(&id);
    let id = client.send(json!({"t":"snapshot"}));
    let (snapshot, _) = client.answer(&id);
    assert_eq!(
        snapshot["agents"].as_array().unwrap().len(),
        2,
        "{snapshot}"
    );
    let server = snapshot["agents"][0]["server"].as_str().unwrap().to_owned();
    assert_eq!(server, socket);
    assert!(server.starts_with(tmp.path().to_str().unwrap()), "{server}");
    assert_eq!(client.close(), 0);
    demo.signal(rustix::process::Signal::TERM);
    let (code, _, stderr) = demo.end();
    assert_eq!(code, 0, "{stderr}");
    assert!(!dir.exists());
    let alive = command("tmux")
        .args(["-S", &socket, "has-session"])
        .output()
        .unwrap();
    assert!(!alive.status.success(), "the demo's tmux server still runs");
    assert!(!Path::new(&server).exists(), "{server} is left");
    let name = Path::new(&socket).file_name().unwrap().to_str().unwrap();
    assert!(processes_naming(name).is_empty());
    // tmux's own dir for the socket, under the test's TMUX_TMPDIR, is all that is left.
    let left: Vec<_> = walk(tmp.path());
    assert!(left.iter().all(|p| p.is_dir()), "{left:?}");
}

#[test]
fn without_the_host_binary_the_demo_says_how_to_get_it_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    // A corral-sim with no `corral` beside it, and none on PATH.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(corral_sim(), bin.join("corral-sim")).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = command(bin.join("corral-sim").to_str().unwrap())
        .args(["demo", "--panes", "2"])
        .env("PATH", &bin)
        .env("TMPDIR", &work)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "corral-sim demo: the host's `corral` is neither beside corral-sim nor on PATH"
        ),
        "{stderr}"
    );
    assert_eq!(walk(&work), Vec::<PathBuf>::new());

    let out = command(corral_sim())
        .args(["demo", "--speed", "0"])
        .env("TMPDIR", &work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "corral-sim demo: --speed must be a positive number, not 0\n"
    );
    assert_eq!(walk(&work), Vec::<PathBuf>::new());
}
