//! `cargo xtask bench`: the host's performance figures, measured against what tmux itself costs.
//!
//! Builds release binaries, brings the 1000-pane fixture up (real scratch tmux by default, or the
//! fake), and times: spawning `corral serve` until its hello answer; one `snapshot` round trip
//! over the whole fleet; and, beside it, one bare `tmux list-panes -a` on the same server, which
//! is the floor a snapshot cannot beat. Prints min / median / p95 / max per figure.
#![allow(clippy::print_stdout, reason = "a benchmark report is stdout")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use golden::{Backend, SimFile};

use crate::cli::BenchArgs;
use crate::workspace_root;

/// The one place the bench builds a child process.
#[allow(clippy::disallowed_methods)]
fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    Command::new(program)
}

/// Figures of one measurement, in milliseconds.
struct Figures {
    name: String,
    samples: Vec<Duration>,
}

impl Figures {
    fn line(&self) -> String {
        let mut sorted = self.samples.clone();
        sorted.sort();
        let at = |q: f64| {
            let index = ((sorted.len() - 1) as f64 * q).round() as usize;
            sorted[index].as_secs_f64() * 1000.0
        };
        format!(
            "{:<44} n={:<4} min {:>8.2}  median {:>8.2}  p95 {:>8.2}  max {:>8.2}  (ms)",
            self.name,
            sorted.len(),
            at(0.0),
            at(0.5),
            at(0.95),
            at(1.0)
        )
    }
}

pub fn run(options: &BenchArgs) -> anyhow::Result<()> {
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = command(&cargo)
        .current_dir(&root)
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "reference-host",
            "-p",
            "simulator",
        ])
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build failed");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let bin = target.join("release");
    let scratch = tempfile::tempdir().context("creating a scratch dir")?;
    let bench = Bench::new(&bin, scratch.path(), options)?;
    let result = bench.measure(options.runs);
    bench.down();
    let figures = result?;
    println!(
        "backend {}, fixture {}",
        options.backend,
        options.fixture.display()
    );
    for f in &figures {
        println!("{}", f.line());
    }
    Ok(())
}

struct Bench {
    bin: PathBuf,
    dir: PathBuf,
    socket: String,
    tmux_bin: PathBuf,
    panes: usize,
    fake: bool,
}

impl Bench {
    fn new(bin: &Path, dir: &Path, options: &BenchArgs) -> anyhow::Result<Bench> {
        let socket = format!("corral-bench-{}", std::process::id());
        for sub in ["sim", "config/corral", "runtime"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        std::fs::write(
            dir.join("config/corral/config.toml"),
            "[serve]\nmax_connections = 64\n",
        )?;
        let mut bench = Bench {
            bin: bin.to_owned(),
            dir: dir.to_owned(),
            socket,
            tmux_bin: PathBuf::new(),
            panes: 0,
            fake: options.backend == Backend::Fake,
        };
        let started = Instant::now();
        let out = bench
            .sim()
            .arg("up")
            .arg(&options.fixture)
            .args([
                "--backend",
                options.backend.as_str(),
                "--socket",
                &bench.socket,
            ])
            .output()
            .context("running corral-sim up")?;
        if !out.status.success() {
            bail!(
                "corral-sim up failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let up: SimFile =
            serde_json::from_slice(&out.stdout).context("reading corral-sim up's answer")?;
        bench.tmux_bin = PathBuf::from(up.tmux_bin);
        bench.panes = up.panes.len();
        println!(
            "fixture up in {:.1} s ({} panes)",
            started.elapsed().as_secs_f64(),
            bench.panes
        );
        let status = bench
            .corral()
            .args(["device", "add", "bench", "--id", "fp-bench"])
            .status()
            .context("enrolling the bench device")?;
        if !status.success() {
            bail!("corral device add failed");
        }
        Ok(bench)
    }

    fn env(&self, cmd: &mut Command) {
        cmd.env("CORRAL_SIM_DIR", self.dir.join("sim"))
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env("XDG_RUNTIME_DIR", self.dir.join("runtime"))
            .env("CORRAL_TMUX_SOCKET", &self.socket)
            .env("CORRAL_TMUX_BIN", &self.tmux_bin);
    }

    fn sim(&self) -> Command {
        let mut cmd = command(self.bin.join("corral-sim"));
        self.env(&mut cmd);
        cmd
    }

    fn corral(&self) -> Command {
        let mut cmd = command(self.bin.join("corral"));
        self.env(&mut cmd);
        cmd
    }

    fn serve(&self) -> anyhow::Result<(Child, BufReader<std::process::ChildStdout>)> {
        let mut child = self
            .corral()
            .args(["serve", "--stdio", "--device", "fp-bench"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting corral serve")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        Ok((child, stdout))
    }

    fn measure(&self, runs: usize) -> anyhow::Result<Vec<Figures>> {
        const HELLO: &[u8] = b"{\"schema\":1,\"id\":\"1\",\"t\":\"hello\",\"app\":\"bench\",\"app_version\":\"1\",\"device\":\"fp-bench\"}\n";
        let mut spawn = Figures {
            name: "spawn serve -> hello answer".into(),
            samples: Vec::new(),
        };
        for _ in 0..runs {
            let start = Instant::now();
            let (mut child, mut stdout) = self.serve()?;
            child.stdin.as_mut().context("no stdin")?.write_all(HELLO)?;
            let mut line = String::new();
            stdout.read_line(&mut line)?;
            spawn.samples.push(start.elapsed());
            if !line.contains("\"t\":\"hello\"") {
                bail!("unexpected hello answer: {line}");
            }
            drop(child.stdin.take());
            child.wait()?;
        }

        let (mut child, mut stdout) = self.serve()?;
        let mut stdin = child.stdin.take().context("no stdin")?;
        stdin.write_all(HELLO)?;
        let mut line = String::new();
        stdout.read_line(&mut line)?;
        let mut snapshot = Figures {
            name: format!("snapshot round trip ({} panes)", self.panes),
            samples: Vec::new(),
        };
        let mut frame_bytes = 0;
        for i in 0..runs {
            let start = Instant::now();
            writeln!(stdin, "{{\"schema\":1,\"id\":\"s{i}\",\"t\":\"snapshot\"}}")?;
            line.clear();
            stdout.read_line(&mut line)?;
            snapshot.samples.push(start.elapsed());
            frame_bytes = line.len();
        }
        drop(stdin);
        child.wait()?;
        snapshot.name = format!("{} [{} KiB frame]", snapshot.name, frame_bytes / 1024);

        // tmux's default `list-panes -a` format; the fake supports only `-F`, so it gets a
        // comparable one-line-per-pane format.
        let mut args = vec!["-L", &self.socket, "list-panes", "-a"];
        if self.fake {
            args.extend([
                "-F",
                "#{session_name}:#{window_index}.#{pane_index}: #{pane_id}",
            ]);
        }
        let program = self
            .tmux_bin
            .file_name()
            .map_or("tmux".into(), |n| n.to_string_lossy());
        let mut bare = Figures {
            name: format!("bare `{program} {}`", args[2..].join(" ")),
            samples: Vec::new(),
        };
        for _ in 0..runs {
            let mut cmd = command(&self.tmux_bin);
            self.env(&mut cmd);
            let start = Instant::now();
            let out = cmd.args(&args).output()?;
            bare.samples.push(start.elapsed());
            if !out.status.success() {
                bail!(
                    "list-panes failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
        }
        Ok(vec![spawn, snapshot, bare])
    }

    fn down(&self) {
        let _ = self.sim().arg("down").status();
    }
}
