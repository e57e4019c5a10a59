//! P8 to P8d: an agent's hook (`corral event`) moving a pane, until the edge line on a subscribed
//! `serve`'s stdout (P8, P8c) and until the daemon's notification command has started (P8b,
//! P8d), on the whole fleet, at the bench's interval (200 ms by default) and at the default one
//! (2000 ms): the push path (docs/protocol.md "Pushed reads") makes both a matter of milliseconds
//! whatever the interval.
//!
//! Each sample waits a random part of an interval (so hooks fall anywhere in a cycle), runs
//! `corral event claude Notification` with a permission prompt's payload in [`MOVED_PANE`] (it
//! blocks the pane, a new episode), and times from the hook's spawn to the edge to `blocked` read
//! from the stream and to the command's line read from the FIFO; then `UserPromptSubmit` moves the
//! pane back to working, and its edge is waited for.

use std::time::{Duration, Instant};

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, expect_kind};
use super::super::fleet::Fleet;
use super::super::report::{Row, Spec};
use super::super::stats::{Summary, ms};
use super::idle::default_interval_ms;
use super::spawn::bare_set_ms;

/// The slower interval P8c and P8d run at: the config's default (1000 ms in a quick run, which
/// shows the rows run and not what they cost).
pub fn slow_interval_ms(options: &Options) -> u64 {
    if options.quick {
        1000
    } else {
        default_interval_ms()
    }
}
use super::latency::{Daemon, Fires, Jitter, MOVED_PANE, edge_to};

/// A permission dialog, as Claude Code's `Notification` hook says it is up.
const BLOCKED: &str =
    r#"{"hook_event_name":"Notification","notification_type":"permission_prompt"}"#;
/// The person answered: the turn goes on.
const WORKING: &str = r#"{"hook_event_name":"UserPromptSubmit","prompt":"go on"}"#;

/// Every this many samples, a bare `tmux set-option` of the pane is timed too, at a random point
/// of a cycle of its own: what tmux alone costs a stamp on this machine at that moment (a tmux
/// server of 1000 panes answers a client far slower when the machine sat idle a while).
const PROBE_EVERY: usize = 4;

/// A pane option of no agent's and no host's: the probe's write moves nothing.
const PROBE_OPTION: &str = "@corral_bench_probe";

/// What one interval's samples gave.
struct Samples {
    /// Hook spawned → edge read, ms.
    edges: Vec<f64>,
    /// Hook spawned → the command's line read, ms.
    fires: Vec<f64>,
    /// The hook's own wall time, ms.
    hooks: Vec<f64>,
    /// A bare `tmux set-option` of the pane at a random point of a cycle, every
    /// [`PROBE_EVERY`]th sample, ms.
    bare: Vec<f64>,
    /// Fires of other panes during the samples.
    others: usize,
}

/// `options.samples` hooks on `fleet`'s [`MOVED_PANE`] with a subscribed `serve` and the daemon
/// running, at `fleet`'s interval.
fn sample(fleet: &Fleet, options: &Options) -> anyhow::Result<Samples> {
    let pane = fleet.pane(MOVED_PANE)?;
    let interval = Duration::from_millis(fleet.interval_ms);
    let fires = Fires::open(&fleet.dir)?;
    let daemon = Daemon::start(fleet)?;
    // The fleet's blocked panes were never announced: the daemon's first cycles fire for them.
    fires.drain(
        (interval * 3).max(Duration::from_secs(1)),
        Duration::from_secs(180),
    )?;
    let mut conn = fleet.serve("p8")?;
    conn.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#)?;
    expect_kind(&conn.frame(ANSWER_LIMIT)?, "ack")?;
    // The first cycle after subscribe is a silent baseline; the push socket comes with it.
    std::thread::sleep(interval * 2);
    let mut jitter = Jitter::new();
    let mut samples = Samples {
        edges: Vec::new(),
        fires: Vec::new(),
        hooks: Vec::new(),
        bare: Vec::new(),
        others: 0,
    };
    for n in 0..options.samples {
        std::thread::sleep(jitter.below(interval));
        let spawned = Instant::now();
        fleet.event(pane, "Notification", BLOCKED)?;
        samples.hooks.push(ms(spawned.elapsed()));
        let edge = edge_to(&mut conn, pane, "blocked")?;
        let fired = fires.next_of(pane, &mut samples.others)?;
        samples
            .edges
            .push(ms(edge.saturating_duration_since(spawned)));
        samples
            .fires
            .push(ms(fired.saturating_duration_since(spawned)));
        fleet.event(pane, "UserPromptSubmit", WORKING)?;
        edge_to(&mut conn, pane, "working")?;
        if n % PROBE_EVERY == 0 {
            std::thread::sleep(jitter.below(interval));
            samples.bare.push(bare_set_ms(fleet, pane, PROBE_OPTION)?);
        }
    }
    conn.close()?;
    drop(daemon);
    Ok(samples)
}

/// P8 and P8b at the bench's interval, P8c and P8d at the default one, on `fleet`.
pub fn p8(fleet: &mut Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let fast = sample(fleet, options)?;
    let fast_ms = fleet.interval_ms;
    let slow_ms = slow_interval_ms(options);
    fleet.set_interval(slow_ms)?;
    let slow = sample(fleet, options);
    fleet.set_interval(fast_ms)?;
    let slow = slow?;
    let row = |spec: &Spec, samples: &[f64], of: &Samples, interval: u64, what: &str| {
        let summary = Summary::of(samples);
        let hook = Summary::of(&of.hooks);
        let bare = Summary::of(&of.bare);
        Row::new(spec, "ms", summary)
            .against("reconcile interval", Summary::one(interval as f64))
            .figure(summary.p95, format!("p95 {:.0} ms", summary.p95))
            .note(format!(
                "from the spawn of `corral event claude Notification` (a permission prompt) in \
                 one pane of {} to {what}; the hook itself took {:.1} ms median, {:.1} ms p95, \
                 and a bare `tmux set-option` of that pane (every {PROBE_EVERY}th sample, {} in \
                 all, at a random point of a cycle: what tmux alone costs a stamp here and now) \
                 {:.1} ms median, {:.1} ms p95; reconcile interval {interval} ms, hooks at random \
                 points of a cycle; {} fires of other panes came meanwhile",
                fleet.pane_count(),
                hook.median,
                hook.p95,
                of.bare.len(),
                bare.median,
                bare.p95,
                of.others
            ))
    };
    let edge = "the `edge` line read from a subscribed `serve`";
    let fire = "the daemon's notification command's line read from a FIFO";
    Ok(vec![
        row(&specs[0], &fast.edges, &fast, fast_ms, edge),
        row(&specs[1], &fast.fires, &fast, fast_ms, fire),
        row(&specs[2], &slow.edges, &slow, slow_ms, edge),
        row(&specs[3], &slow.fires, &slow, slow_ms, fire),
    ])
}
