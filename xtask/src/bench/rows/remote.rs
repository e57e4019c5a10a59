//! C1, C1b and C1c: the reference client, `corral-remote`, over three hosts of 100 agent panes
//! each (20 in a quick run): three fleets on tmux servers of their own, each host's `corral serve
//! --stdio` started by the client as a `command` host on this machine (no ssh: the transport is
//! the pipes to a local child; over ssh the same bytes go through one more relay).
//!
//! C1: the headless client (`--ndjson`) subscribed to the three; each sample waits a random part
//! of an interval, moves one pane (in turn on each host) from working to blocked with a new
//! episode in one tmux command, and times from the moment that command returned to the client's
//! `row` line saying the row `changed` to blocked; then moves it back and waits for that line
//! too. C1b: the same client, nothing moving, its CPU time (utime + stime of `/proc/<pid>/stat`)
//! over 16 s (3 s quick) in windows of 4 s (1 s quick), as a share of one core; the figure is the
//! whole span's. C1c: the same for the TUI, drawn in a scratch tmux pane of 160×48 (it redraws
//! every second: the wait times move).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use schema::PaneOption;
use serde_json::Value;

use super::super::cli::Options;
use super::super::conn::Conn;
use super::super::cpu::{self, Children};
use super::super::fleet::{Bins, DEVICE, Fleet};
use super::super::process::{output, stdout};
use super::super::report::{Row, Spec};
use super::super::stats::{Summary, ms};
use super::latency::{Jitter, MOVED_PANE};

/// Hosts the client watches.
pub const HOSTS: usize = 3;

/// Agent panes of each host (20 in a quick run).
pub fn host_panes(options: &Options) -> usize {
    if options.quick { 20 } else { 100 }
}

/// The TUI's terminal.
const TUI_SIZE: (u16, u16) = (160, 48);

/// How long a transition's line, or the client's start, may take before the measure fails.
pub(super) const LIMIT: Duration = Duration::from_secs(30);

/// The idle measure: how many windows of how long.
pub(super) fn idle_windows(options: &Options) -> (usize, Duration) {
    if options.quick {
        (3, Duration::from_secs(1))
    } else {
        // 16 s: longer than the 15 s after which a quiet host's session asks for a fresh
        // snapshot, so the span holds one of each host's.
        (4, Duration::from_secs(4))
    }
}

/// C1, C1b and C1c: three fleets brought up under `dir`, then the client over them.
pub fn c1(bins: &Bins, dir: &Path, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let panes = host_panes(options);
    let sized = Options {
        panes,
        ..options.clone()
    };
    let socket = format!("corral-bench-{}-remote", std::process::id());
    let (first, _) = Fleet::up_on(bins, &dir.join("remote"), &sized, "true", socket)
        .context("bringing the first host's fleet up")?;
    let (second, _) = first.beside("h2", panes, &sized)?;
    let (third, _) = first.beside("h3", panes, &sized)?;
    let fleets = [&first, &second, &third];
    let config = first.dir.join("remote.toml");
    let argvs: Vec<Vec<String>> = fleets.iter().map(|f| serve_argv(f)).collect();
    std::fs::write(&config, config_text(&argvs))?;

    let mut client = Headless::start(&first, &config, HOSTS)?;
    let latency = client.transitions(&fleets, options)?;
    let headless = idle_cpu(client.pid(), options)?;
    let refreshed = client.snapshots_written()?;
    client.close()?;
    let tui = Tui::start(&first, &config)?;
    let drawn = idle_cpu(tui.pid, options)?;
    drop(tui);

    let interval_ms = first.interval_ms as f64;
    let stamps = Summary::of(&latency.stamps);
    let summary = Summary::of(&latency.lines);
    let (windows, span) = idle_windows(options);
    let idle_note = |what: &str, idle: &Idle| {
        format!(
            "{what}; {windows} windows of {} s, the figure is the whole {} s: {} clock ticks \
             of {} per second (the client alone: its hosts' `serve` processes poll tmux and are \
             not counted)",
            span.as_secs(),
            span.as_secs() * windows as u64,
            idle.ticks,
            idle.hz
        )
    };
    Ok(vec![
        Row::new(&specs[0], "ms", summary)
            .against("reconcile interval", Summary::one(interval_ms))
            .figure(summary.p95, format!("p95 {:.0} ms", summary.p95))
            .note(format!(
                "from the return of the tmux command that stamped the transition (itself {:.1} \
                 ms median) to the client's `row` line read from its stdout; {HOSTS} hosts of \
                 {panes} panes, each `serve` a local child of the client (no ssh); transitions \
                 fall at random points of a cycle, in turn on each host",
                stamps.median
            )),
        idle_row(&specs[1], &headless).note(idle_note(
            &format!(
                "the headless client (`--ndjson`) subscribed to the three hosts, nothing moving \
                 but the fresh snapshots its sessions ask for after 15 s of quiet ({refreshed} \
                 came during the span)"
            ),
            &headless,
        )),
        idle_row(&specs[2], &drawn).note(idle_note(
            &format!(
                "the TUI in a scratch tmux pane of {}×{}, every host connected, nothing moving \
                 but the wait times it redraws each second",
                TUI_SIZE.0, TUI_SIZE.1
            ),
            &drawn,
        )),
    ])
}

pub(super) fn idle_row(spec: &Spec, idle: &Idle) -> Row {
    Row::new(spec, "% of a core", Summary::of(&idle.windows))
        .figure(idle.whole, format!("{:.2}%", idle.whole))
}

/// The argv of `fleet`'s `serve`, run with that fleet's environment.
pub(super) fn serve_argv(fleet: &Fleet) -> Vec<String> {
    let cmd = fleet.corral();
    let mut argv = vec!["env".to_owned()];
    for (name, value) in cmd.get_envs() {
        if let Some(value) = value {
            argv.push(format!(
                "{}={}",
                name.to_string_lossy(),
                value.to_string_lossy()
            ));
        }
    }
    argv.push(fleet.bins.corral.to_string_lossy().into_owned());
    argv.extend(["serve", "--stdio", "--device", DEVICE].map(String::from));
    argv
}

/// The client's config: host `h<N>` runs the N-th argv, and the bell is off.
pub(super) fn config_text(hosts: &[Vec<String>]) -> String {
    let mut text = String::from("[notify]\nbell = false\n");
    for (i, argv) in hosts.iter().enumerate() {
        let argv: Vec<String> = argv
            .iter()
            .map(|word| toml::Value::String(word.clone()).to_string())
            .collect();
        text.push_str(&format!(
            "\n[[host]]\nname = \"h{}\"\ncommand = [{}]\n",
            i + 1,
            argv.join(", ")
        ));
    }
    text
}

/// What C1's samples gave.
struct Latency {
    /// Transition → the client's row line, ms.
    lines: Vec<f64>,
    /// The stamping tmux command itself, ms.
    stamps: Vec<f64>,
}

/// `corral-remote --ndjson`, its JSON lines read from its stdout.
pub(super) struct Headless {
    conn: Conn,
}

impl Headless {
    /// Starts the client on `config`, with `fleet`'s clean environment, and waits until its
    /// `hosts` hosts are subscribed.
    pub(super) fn start(fleet: &Fleet, config: &Path, hosts: usize) -> anyhow::Result<Headless> {
        let mut cmd = fleet.command(&fleet.bins.remote);
        cmd.arg("--ndjson").arg("--config").arg(config);
        let conn = Conn::spawn(cmd, &fleet.dir.join("logs/remote.err"))?;
        let mut client = Headless { conn };
        let mut subscribed = 0;
        while subscribed < hosts {
            let line = client.line(LIMIT)?;
            match line["ev"].as_str() {
                Some("subscribed") => subscribed += 1,
                Some("failed" | "fault") => bail!("corral-remote: {line}"),
                Some("host") if line["link"] == "disconnected" || line["link"] == "revoked" => {
                    bail!("corral-remote lost a host: {line}")
                }
                _ => {}
            }
        }
        // The first cycle after subscribe is a silent baseline.
        std::thread::sleep(Duration::from_millis(fleet.interval_ms * 2));
        Ok(client)
    }

    pub(super) fn pid(&self) -> u32 {
        self.conn.pid()
    }

    fn line(&mut self, limit: Duration) -> anyhow::Result<Value> {
        let text = self.conn.recv(limit)?;
        serde_json::from_str(&text)
            .with_context(|| format!("corral-remote wrote a line that is not JSON: {text:.200}"))
    }

    /// Reads lines until host `host`'s row of `pane` changed to `state`; the instant it was read.
    pub(super) fn row_to(
        &mut self,
        host: &str,
        pane: &str,
        state: &str,
    ) -> anyhow::Result<Instant> {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!("no row line of {host} {pane} to {state} within {LIMIT:?}");
            }
            let line = self.line(left)?;
            let at = Instant::now();
            if line["ev"] == "row"
                && line["host"] == host
                && line["change"] == "changed"
                && line["row"]["pane"] == pane
                && line["row"]["state"] == state
            {
                return Ok(at);
            }
        }
    }

    /// `options.samples` transitions, in turn on each fleet's [`MOVED_PANE`].
    fn transitions(&mut self, fleets: &[&Fleet], options: &Options) -> anyhow::Result<Latency> {
        let interval = Duration::from_millis(fleets[0].interval_ms);
        let mut jitter = Jitter::new();
        let (mut lines, mut stamps) = (Vec::new(), Vec::new());
        for sample in 0..options.samples {
            let index = sample % fleets.len();
            let (fleet, host) = (fleets[index], format!("h{}", index + 1));
            let pane = fleet.pane(MOVED_PANE)?;
            std::thread::sleep(jitter.below(interval));
            let asked = Instant::now();
            stamp(fleet, pane, "blocked")?;
            let moved = Instant::now();
            stamps.push(ms(moved - asked));
            let read = self.row_to(&host, pane, "blocked")?;
            lines.push(ms(read.saturating_duration_since(moved)));
            stamp(fleet, pane, "working")?;
            self.row_to(&host, pane, "working")?;
        }
        Ok(Latency { lines, stamps })
    }

    /// How many `snapshot` lines it wrote that were not read yet (those of an idle span).
    pub(super) fn snapshots_written(&mut self) -> anyhow::Result<usize> {
        let mut snapshots = 0;
        while let Ok(text) = self.conn.recv(Duration::from_millis(200)) {
            let line: Value = serde_json::from_str(&text)?;
            snapshots += usize::from(line["ev"] == "snapshot");
        }
        Ok(snapshots)
    }

    pub(super) fn close(self) -> anyhow::Result<()> {
        self.conn.close()
    }
}

/// Moves `pane` to `state` with a new episode, in one tmux command.
pub(super) fn stamp(fleet: &Fleet, pane: &str, state: &str) -> anyhow::Result<()> {
    let now = stdx::now_ms();
    fleet.set_options(
        pane,
        &[
            (PaneOption::State, state.to_owned()),
            (PaneOption::Since, now.to_string()),
        ],
    )
}

/// The TUI in a scratch tmux server of its own, killed when dropped.
struct Tui<'a> {
    fleet: &'a Fleet,
    socket: String,
    pid: u32,
}

impl<'a> Tui<'a> {
    /// Starts the TUI on `config` in a detached session, and waits until it shows every host
    /// connected.
    fn start(fleet: &'a Fleet, config: &Path) -> anyhow::Result<Tui<'a>> {
        let shell = format!(
            "exec '{}' --config '{}'",
            fleet.bins.remote.display(),
            config.display()
        );
        let (width, height) = (TUI_SIZE.0.to_string(), TUI_SIZE.1.to_string());
        let mut tui = Tui {
            fleet,
            socket: format!("corral-bench-{}-tui", std::process::id()),
            pid: 0,
        };
        output(
            tui.tmux()
                .args(["new-session", "-d", "-x", &width, "-y", &height, &shell]),
        )
        .context("starting the TUI in a scratch tmux server")?;
        tui.pid = stdout(tui.tmux().args(["list-panes", "-F", "#{pane_pid}"]))?.parse()?;
        let deadline = Instant::now() + LIMIT;
        loop {
            let screen = stdout(tui.tmux().args(["capture-pane", "-p"]))?;
            let connected = screen
                .lines()
                .filter(|l| l.starts_with('●') && l.contains(" connected "))
                .count();
            if connected == HOSTS {
                break;
            }
            if Instant::now() > deadline {
                bail!("the TUI did not show {HOSTS} hosts connected within {LIMIT:?}:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Its hosts' first snapshots and subscriptions are drawn; then it is idle.
        std::thread::sleep(Duration::from_millis(fleet.interval_ms * 2));
        Ok(tui)
    }

    /// The system's tmux on the TUI's own server, with the fleet's clean environment and its
    /// socket dir inside the fleet's dir (nothing left in the default `TMUX_TMPDIR`).
    fn tmux(&self) -> Command {
        let mut cmd = self.fleet.command("tmux");
        let sockets = self.fleet.dir.join("tui-tmux");
        let _ = std::fs::create_dir_all(&sockets);
        cmd.env("TMUX_TMPDIR", sockets)
            .args(["-L", &self.socket, "-f", "/dev/null"]);
        cmd
    }
}

impl Drop for Tui<'_> {
    /// Kills the server, and removes the socket file tmux 3.3a leaves behind.
    fn drop(&mut self) {
        let socket = stdout(
            self.tmux()
                .args(["display-message", "-p", "#{socket_path}"]),
        );
        let _ = self.tmux().arg("kill-server").output();
        if let Ok(socket) = socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// What an idle measure gave.
pub(super) struct Idle {
    /// CPU per window, % of one core.
    pub(super) windows: Vec<f64>,
    /// CPU over the whole span, % of one core.
    pub(super) whole: f64,
    /// Clock ticks used over the whole span.
    pub(super) ticks: u64,
    /// Clock ticks per second.
    pub(super) hz: u64,
}

/// The CPU process `pid` uses over [`idle_windows`], as a share of one core.
pub(super) fn idle_cpu(pid: u32, options: &Options) -> anyhow::Result<Idle> {
    let hz = cpu::hz();
    let (count, span) = idle_windows(options);
    let first = cpu::ticks(pid, Children::Excluded)?;
    let started = Instant::now();
    let mut last = (first, started);
    let mut windows = Vec::new();
    for _ in 0..count {
        std::thread::sleep(span);
        let now = (cpu::ticks(pid, Children::Excluded)?, Instant::now());
        let seconds = (now.1 - last.1).as_secs_f64();
        windows.push(100.0 * (now.0 - last.0) as f64 / hz as f64 / seconds);
        last = now;
    }
    let ticks = last.0 - first;
    let whole = 100.0 * ticks as f64 / hz as f64 / (last.1 - started).as_secs_f64();
    Ok(Idle {
        windows,
        whole,
        ticks,
        hz,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_is_one_command_host_per_fleet_as_the_client_reads_it() {
        let argv = |dir: &str| -> Vec<String> {
            [
                "env",
                &format!("CORRAL_SIM_DIR={dir} \"quoted\""),
                "/bin/corral",
                "serve",
            ]
            .map(String::from)
            .to_vec()
        };
        let hosts = [argv("/a"), argv("/b c")];
        let config = client::config::parse(&config_text(&hosts)).unwrap();
        assert!(!config.notify.bell);
        let read: Vec<_> = config
            .hosts
            .iter()
            .map(|h| (h.name.clone(), h.target.clone()))
            .collect();
        assert_eq!(
            read,
            [
                (
                    "h1".to_owned(),
                    client::config::Target::Command(hosts[0].clone())
                ),
                (
                    "h2".to_owned(),
                    client::config::Target::Command(hosts[1].clone())
                ),
            ]
        );
    }
}
