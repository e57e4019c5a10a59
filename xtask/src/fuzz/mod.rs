//! `cargo xtask fuzz [--seed N] [--lines N] [--no-build]`: feeds one `corral serve` a stream of
//! generated lines (`lines.rs`) against a small fleet on the fake tmux, and checks that every line is
//! answered by exactly one frame, that the frame is valid (its schema, and the wire types'
//! canonical form), that it carries the id the protocol says (the caller's, else `"0"`) and a
//! name the line allows (a valid request gets its own answer), that nothing else reaches stdout,
//! and that the process lives through all of it and exits 0 on end of input. Prints the seed (a
//! failure reruns with `--seed`), the figures per kind of line, and the host's peak memory.
#![allow(clippy::print_stdout, reason = "the fuzz report is stdout")]

mod lines;
mod rng;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use golden::validate::FrameSchema;
use schema::{Frames, Response, decode_line, encode_line};
use stdx::lines::Line;
use stdx::process::command;
use stdx::world::FleetDirs;

use crate::cli::FuzzArgs;
use crate::workspace_root;
use lines::{Case, Fleet, Generator};

/// How long one line may wait for its answer.
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// The longest line the fuzzer takes from the host (an answer to a fuzzed line is small); a longer
/// one is dropped and breaks the contract.
const HOST_LINE_CAP: usize = 16 * 1024 * 1024;

/// The most of the host's stderr kept for a failure's message.
const STDERR_KEPT: usize = 1 << 20;

/// A run's settings: the seed decided.
struct Options {
    seed: u64,
    lines: usize,
}

/// A work dir with a fleet on the fake tmux, a config, and a device holding every scope.
struct World {
    dir: tempfile::TempDir,
    target: PathBuf,
    socket: String,
}

impl World {
    /// A fleet's temp world in the work dir, the fake tmux, and tmux's sockets in the work dir.
    fn vars(&self) -> Vec<(String, String)> {
        let path = |p: PathBuf| p.to_string_lossy().into_owned();
        let mut vars = FleetDirs::new(self.dir.path()).vars();
        vars.extend([
            (
                "CORRAL_TMUX_BIN".into(),
                path(self.target.join("corral-fake-tmux")),
            ),
            ("CORRAL_TMUX_SOCKET".into(), self.socket.clone()),
            ("TMUX_TMPDIR".into(), path(self.dir.path().to_owned())),
        ]);
        vars
    }

    fn run(&self, program: &Path, args: &[&str]) -> anyhow::Result<String> {
        let mut cmd = command(program);
        cmd.args(args).env_remove("TMUX").env_remove("TMUX_PANE");
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        let out = cmd
            .output()
            .with_context(|| format!("running {}", program.display()))?;
        if !out.status.success() {
            bail!(
                "{} {args:?}: {}",
                program.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.run(&self.target.join("corral-sim"), &["down"]);
    }
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace_root().join(dir),
        _ => workspace_root().join("target"),
    }
    .join("debug")
}

pub fn run(args: &FuzzArgs) -> anyhow::Result<()> {
    let options = Options {
        seed: args.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        }),
        lines: args.lines,
    };
    if !args.no_build {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = command(cargo)
            .current_dir(workspace_root())
            .args([
                "build",
                "--quiet",
                "--bins",
                "-p",
                "conformance",
                "-p",
                "reference-host",
            ])
            .status()
            .context("running cargo build")?;
        if !status.success() {
            bail!("cargo build failed ({status})");
        }
    }
    println!("fuzz: seed {} ({} lines)", options.seed, options.lines);
    let world = World {
        dir: tempfile::tempdir()?,
        target: target_dir(),
        socket: format!("corral-fuzz-{}", std::process::id()),
    };
    let fixture = workspace_root().join("golden/fixtures/small.toml");
    let up: golden::SimFile = serde_json::from_str(&world.run(
        &world.target.join("corral-sim"),
        &[
            "up",
            &fixture.to_string_lossy(),
            "--backend",
            "fake",
            "--socket",
            &world.socket,
        ],
    )?)
    .context("reading what corral-sim up answered")?;
    let corral = world.target.join("corral");
    world.run(
        &corral,
        &[
            "device",
            "add",
            "fuzz",
            "--id",
            "fp-fuzz",
            "--scope",
            "read",
            "--scope",
            "act:answer",
            "--scope",
            "act:steer",
            "--scope",
            "act:always",
        ],
    )?;
    let schema = FrameSchema::generated("responses.schema.json")?;
    let mut host = Host::start(&world, &corral)?;
    host.send(br#"{"schema":1,"id":"hello","t":"hello","app":"fuzz","app_version":"1","device":"fp-fuzz"}"#)?;
    host.answer()?;
    let fleet = Fleet {
        panes: up.panes.values().cloned().collect(),
    };
    let mut generator = Generator::new(options.seed, fleet);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let started = Instant::now();
    for index in 0..options.lines {
        let case = generator.next_case();
        *counts.entry(case.kind).or_default() += 1;
        host.send(&case.line)?;
        let frame = host.answer()?;
        if let Err(why) = judge(&schema, &case, &frame) {
            bail!(
                "line {index} ({}) broke the contract: {why}\n  sent: {}\n  got:  {}\n  rerun: cargo xtask fuzz --seed {} --lines {}",
                case.kind,
                shown(&case.line),
                frame.trim_end(),
                options.seed,
                index + 1
            );
        }
    }
    let elapsed = started.elapsed();
    let peak = host.peak_rss_kib();
    let stray = host.finish()?;
    if let Some(stray) = stray {
        bail!("stdout carried a line no request asked for: {stray}");
    }
    for (kind, count) in &counts {
        println!("  {kind:<14} {count}");
    }
    println!(
        "fuzz: {} lines, each answered by exactly one valid frame with the right id; {:.1} s ({:.0} lines/s); host peak RSS {} KiB; exit 0",
        options.lines,
        elapsed.as_secs_f64(),
        options.lines as f64 / elapsed.as_secs_f64(),
        peak.map_or_else(|| "?".to_owned(), |kib| kib.to_string()),
    );
    Ok(())
}

/// One answer against what its line allows.
fn judge(schema: &FrameSchema, case: &Case, frame: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(frame).map_err(|err| format!("not JSON: {err}"))?;
    schema.validate(&value).map_err(|err| err.to_string())?;
    let decoded =
        decode_line::<Response>(frame).map_err(|err| format!("does not decode: {err}"))?;
    if encode_line(&decoded) != format!("{}\n", frame.trim_end_matches('\n')) {
        return Err("not in canonical form".into());
    }
    if !case.expect.ids.contains(&decoded.id) {
        return Err(format!(
            "id {:?}, expected one of {:?}",
            decoded.id, case.expect.ids
        ));
    }
    let t = decoded.body.name();
    if !case.expect.frames.contains(&t) {
        return Err(format!(
            "a `{t}` frame, expected one of {:?}",
            case.expect.frames
        ));
    }
    Ok(())
}

/// A line as printable text: valid UTF-8 shown as is (cut at 300 characters), else hex.
fn shown(line: &[u8]) -> String {
    match std::str::from_utf8(line) {
        Ok(text) if text.chars().count() <= 300 => text.to_owned(),
        Ok(text) => format!(
            "{}… ({} bytes)",
            text.chars().take(300).collect::<String>(),
            line.len()
        ),
        Err(_) => line.iter().take(200).map(|b| format!("{b:02x}")).collect(),
    }
}

/// The `corral serve` under test.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its stdout's lines; a line it cannot use as one, said so.
    lines: Receiver<Result<String, String>>,
    /// Its stderr so far (drained on a thread so a chatty host never blocks), capped at 1 MiB.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Host {
    fn start(world: &World, corral: &Path) -> anyhow::Result<Host> {
        let mut cmd = command(corral);
        cmd.args(["serve", "--stdio", "--device", "fp-fuzz"])
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in world.vars() {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().context("starting corral serve")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            stdx::lines::each_line(stdout, HOST_LINE_CAP, |line| {
                let line = match line {
                    Line::Text(text) => Ok(text),
                    Line::TooLong => Err(format!("a line longer than {HOST_LINE_CAP} bytes")),
                    Line::NotUtf8(_) => Err("a line that is not UTF-8".to_owned()),
                    Line::Unterminated(_) => Err("an unterminated line at the end".to_owned()),
                    Line::End | Line::Failed(_) => return false,
                };
                tx.send(line).is_ok()
            });
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        if let Some(err) = child.stderr.take() {
            let sink = std::sync::Arc::clone(&stderr);
            std::thread::spawn(move || {
                stdx::lines::each_text_line(err, STDERR_KEPT, |line| {
                    let mut text = sink.lock().expect("stderr buffer");
                    if text.len() < STDERR_KEPT {
                        text.push_str(&line);
                        text.push('\n');
                    }
                    true
                });
            });
        }
        let stdin = child.stdin.take();
        Ok(Host {
            child,
            stdin,
            lines,
            stderr,
        })
    }

    fn send(&mut self, line: &[u8]) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin closed")?;
        stdin.write_all(line)?;
        stdin.write_all(b"\n")?;
        stdin.flush()?;
        Ok(())
    }

    fn answer(&mut self) -> anyhow::Result<String> {
        match self.lines.recv_timeout(ANSWER_WAIT) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(what)) => bail!("the host wrote {what}"),
            Err(_) => {
                let status = self.child.try_wait()?;
                bail!(
                    "no answer within {ANSWER_WAIT:?} (host status: {status:?}); stderr:\n{}",
                    self.stderr()
                )
            }
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// The host's peak resident memory (`VmHWM`), in KiB.
    fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Closes stdin and checks the host exits 0 with nothing more on stdout and no panic on
    /// stderr; a stray stdout line, if any.
    fn finish(mut self) -> anyhow::Result<Option<String>> {
        self.stdin = None;
        let Some(status) = stdx::process::wait_or_kill(&mut self.child, Duration::from_secs(10))
        else {
            bail!("the host did not exit after end of input");
        };
        // Let the drain thread catch up with the last lines.
        std::thread::sleep(Duration::from_millis(50));
        let stderr = self.stderr();
        if stderr.contains("panicked") {
            bail!("the host panicked:\n{stderr}");
        }
        if status.code() != Some(0) {
            bail!("the host exited {status} after end of input:\n{stderr}");
        }
        Ok(self
            .lines
            .try_recv()
            .ok()
            .map(|line| line.unwrap_or_else(|what| what)))
    }
}
