//! C2 to C2d: the reference client, `corral-remote --ndjson`, following [`HOSTS`] hosts of 100
//! agent panes each (5 of 20 in a quick run), each a fleet of its own on the fake tmux (5000 real
//! panes would take more ptys than Linux gives by default, 4096) served by a local `corral serve`
//! child at the default reconcile interval: so many hosts polling at the bench's 200 ms would
//! take a core of this machine by themselves, where each would have its own in earnest.
//!
//! C2: a transition stamped by a plain tmux command (no hook: only the cycle sees it), until the
//! client's `row` line; C2b: the same made by an agent's hook (`corral event`, pushed); in turn on
//! each host, at random points of a cycle. C2c: the client's CPU while nothing moves; C2d: its
//! peak resident set (`VmHWM`) at the end.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::super::cli::Options;
use super::super::fleet::{Bins, Fleet};
use super::super::report::{Row, Spec};
use super::super::stats::{Summary, ms};
use super::idle::idle_interval_ms;
use super::latency::{Jitter, MOVED_PANE};
use super::remote::{Headless, config_text, idle_cpu, idle_row, idle_windows, serve_argv, stamp};

/// Hosts the client follows (5 in a quick run).
pub fn hosts(options: &Options) -> usize {
    if options.quick { 5 } else { HOSTS }
}

/// Hosts the client follows in a full run.
pub const HOSTS: usize = 50;

/// A permission dialog, as Claude Code's `Notification` hook says it is up.
const BLOCKED: &str =
    r#"{"hook_event_name":"Notification","notification_type":"permission_prompt"}"#;
/// The person answered: the turn goes on.
const WORKING: &str = r#"{"hook_event_name":"UserPromptSubmit","prompt":"go on"}"#;

/// How a sample moves its pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mover {
    /// One tmux command: only a cycle sees it.
    Tmux,
    /// An agent's hook: pushed.
    Hook,
}

/// `options.samples` transitions, in turn on each fleet's [`MOVED_PANE`]: blocked, then back
/// to working; the time from the move (its command's return, or the hook's spawn) to the
/// client's line of the blocked row.
fn transitions(
    client: &mut Headless,
    fleets: &[Fleet],
    options: &Options,
    mover: Mover,
) -> anyhow::Result<Vec<f64>> {
    let interval = Duration::from_millis(fleets[0].interval_ms);
    let mut jitter = Jitter::new();
    let mut lines = Vec::new();
    for sample in 0..options.samples {
        let index = sample % fleets.len();
        let (fleet, host) = (&fleets[index], format!("h{}", index + 1));
        let pane = fleet.pane(MOVED_PANE)?;
        std::thread::sleep(jitter.below(interval));
        let moved = match mover {
            Mover::Tmux => {
                stamp(fleet, pane, "blocked")?;
                Instant::now()
            }
            Mover::Hook => {
                let spawned = Instant::now();
                fleet.event(pane, "Notification", BLOCKED)?;
                spawned
            }
        };
        let read = client.row_to(&host, pane, "blocked")?;
        lines.push(ms(read.saturating_duration_since(moved)));
        match mover {
            Mover::Tmux => stamp(fleet, pane, "working")?,
            Mover::Hook => fleet.event(pane, "UserPromptSubmit", WORKING)?,
        }
        client.row_to(&host, pane, "working")?;
    }
    Ok(lines)
}

/// `VmHWM` of process `pid`, in MiB.
fn peak_rss_mib(pid: u32) -> anyhow::Result<f64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no VmHWM in {path}"))?;
    Ok(kib / 1024.0)
}

/// C2..C2d: [`hosts`] fleets brought up under `dir`, then the headless client over them.
pub fn c2(bins: &Bins, dir: &Path, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let panes = super::remote::host_panes(options);
    let sized = Options {
        panes,
        interval_ms: idle_interval_ms(options),
        backend: golden::Backend::Fake,
        ..options.clone()
    };
    let count = hosts(options);
    let socket = format!("corral-bench-{}-follow", std::process::id());
    let (first, _) = Fleet::up_on(bins, &dir.join("follow"), &sized, "true", socket)
        .context("bringing the first host's fleet up")?;
    let started = Instant::now();
    let mut fleets = vec![first];
    for n in 2..=count {
        let (fleet, _) = fleets[0].beside(&format!("h{n}"), panes, &sized)?;
        fleets.push(fleet);
    }
    let up_s = started.elapsed().as_secs_f64();
    let config = fleets[0].dir.join("follow.toml");
    let argvs: Vec<Vec<String>> = fleets.iter().map(serve_argv).collect();
    std::fs::write(&config, config_text(&argvs))?;

    let mut client = Headless::start(&fleets[0], &config, count)?;
    let polled = transitions(&mut client, &fleets, options, Mover::Tmux)?;
    let pushed = transitions(&mut client, &fleets, options, Mover::Hook)?;
    let idle = idle_cpu(client.pid(), options)?;
    let refreshed = client.snapshots_written()?;
    let rss = peak_rss_mib(client.pid())?;
    client.close()?;

    let interval_ms = sized.interval_ms as f64;
    let (windows, span) = idle_windows(options);
    let latency = |spec: &Spec, samples: &[f64], how: &str| {
        let summary = Summary::of(samples);
        Row::new(spec, "ms", summary)
            .against("reconcile interval", Summary::one(interval_ms))
            .figure(summary.p95, format!("p95 {:.0} ms", summary.p95))
            .note(format!(
                "{how} to the client's `row` line read from its stdout; {count} hosts of {panes} \
                 panes on fake tmux servers of their own (up in {up_s:.0} s), each `serve` a \
                 local child of the client at a reconcile interval of {interval_ms:.0} ms; moves at \
                 random points of a cycle, in turn on each host"
            ))
    };
    Ok(vec![
        latency(
            &specs[0],
            &polled,
            "from the return of the tmux command that stamped the transition (no hook: only a \
             cycle sees it)",
        ),
        latency(
            &specs[1],
            &pushed,
            "from the spawn of the agent's hook that stamped it (`corral event claude \
             Notification`, pushed)",
        ),
        idle_row(&specs[2], &idle).note(format!(
            "the headless client following {count} hosts, nothing moving but the fresh \
             snapshots its sessions ask for after 15 s of quiet ({refreshed} came during the \
             span); {windows} windows of {} s: {} clock ticks of {} per second (the client \
             alone: its hosts' `serve` processes are the H rows' business)",
            span.as_secs(),
            idle.ticks,
            idle.hz
        )),
        Row::new(&specs[3], "MiB", Summary::one(rss))
            .figure(rss, format!("{rss:.1} MiB"))
            .note(format!(
                "`VmHWM` of the client at the end: its peak resident set over the run, \
                 {count} hosts of {panes} panes followed, every move above streamed"
            )),
    ])
}
