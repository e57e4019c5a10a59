//! P1 and E1: what starting a `corral` process costs, against starting `/bin/true` (the least a
//! process spawn costs on this machine), sample for sample in turn.
//!
//! P1 times `corral serve` from spawn until its hello answer is read. E1 times `corral event
//! claude <hook>` as an agent's hook runs it inside a pane (payload on stdin, `$TMUX` and
//! `$TMUX_PANE` set) from spawn to exit, and checks after each run, untimed, that the pane's
//! `@agent_state` moved as the hook says: `corral event` exits 0 whatever happened. E1 runs on a
//! scratch server of its own with a realistic fleet ([`EVENT_PANES`]): what a stamp costs there
//! is mostly tmux's own work on the server, which grows with the server (E1b, the big fleet).

use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, bail};
use schema::PaneOption;

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, hello_line};
use super::super::fleet::{DEVICE, Fleet};
use super::super::report::{Row, Spec};
use super::super::stats::{Summary, ms};
use super::{EVENT_PANES, EVENT_RUNS};

/// The pane E1's hooks stamp.
pub const EVENT_PANE: &str = "a0-work-3";

/// One spawn of `/bin/true` to its exit, in ms.
fn true_ms(fleet: &Fleet) -> anyhow::Result<f64> {
    let mut cmd = fleet.command("/bin/true");
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let status = cmd.status().context("running /bin/true")?;
    let elapsed = ms(start.elapsed());
    if !status.success() {
        bail!("/bin/true exited with {status}");
    }
    Ok(elapsed)
}

/// One `corral serve` from spawn to its hello answer, in ms.
fn serve_ms(fleet: &Fleet) -> anyhow::Result<f64> {
    let hello = hello_line(DEVICE);
    let start = Instant::now();
    let mut conn = fleet.spawn_serve("p1")?;
    conn.send(&hello)?;
    let line = conn.recv(ANSWER_LIMIT)?;
    let elapsed = ms(start.elapsed());
    let frame: serde_json::Value = serde_json::from_str(&line)?;
    super::super::conn::expect_kind(&frame, "hello")?;
    conn.close()?;
    Ok(elapsed)
}

/// P1.
pub fn p1(fleet: &Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let (mut serve, mut truth) = (Vec::new(), Vec::new());
    // One of each first, untimed: the binaries' pages into the cache.
    true_ms(fleet)?;
    serve_ms(fleet)?;
    for _ in 0..options.samples {
        truth.push(true_ms(fleet)?);
        serve.push(serve_ms(fleet)?);
    }
    Ok(vec![
        Row::new(&specs[0], "ms", Summary::of(&serve))
            .against("spawn of `/bin/true`", Summary::of(&truth))
            .ratio(),
    ])
}

/// One `corral event claude <hook>` in `pane`, spawn to exit, in ms.
fn event_ms(fleet: &Fleet, pane: &str, hook: &str) -> anyhow::Result<f64> {
    let payload = format!(r#"{{"hook_event_name":"{hook}","session_id":"corral-bench"}}"#);
    let start = Instant::now();
    fleet.event(pane, hook, &payload)?;
    Ok(ms(start.elapsed()))
}

/// One bare `tmux set-option` of `pane` (the stamp time), spawn to exit, in ms.
fn bare_stamp_ms(fleet: &Fleet, pane: &str) -> anyhow::Result<f64> {
    bare_set_ms(fleet, pane, PaneOption::StampedAt.as_str())
}

/// One bare `tmux set-option` of `pane`'s `option`, spawn to exit, in ms: what tmux alone costs a
/// stamp.
pub fn bare_set_ms(fleet: &Fleet, pane: &str, option: &str) -> anyhow::Result<f64> {
    let mut cmd = fleet.tmux();
    cmd.args(["set-option", "-p", "-t", pane, option, "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    let status = cmd.status().context("running tmux set-option")?;
    let elapsed = ms(start.elapsed());
    if !status.success() {
        bail!("tmux set-option exited with {status}");
    }
    Ok(elapsed)
}

/// E1 on a scratch server of its own ([`EVENT_PANES`] panes), E1b on the big fleet.
pub fn e1(fleet: &Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let (small, up_s) = fleet.beside("e1", EVENT_PANES, options)?;
    let e1 = stamps(&small, options)?;
    drop(small);
    let e1b = stamps(fleet, options)?;
    let row = |spec: &Spec, s: &Stamps, note: String| {
        let summary = Summary::of(&s.event);
        Row::new(spec, "ms", summary)
            .against("spawn of `/bin/true`", Summary::of(&s.truth))
            .figure(summary.median, format!("{:.2} ms", summary.median))
            .note(note)
    };
    let bare = |s: &Stamps| Summary::of(&s.bare);
    Ok(vec![
        row(
            &specs[0],
            &e1,
            format!(
                "on a scratch server of its own, {EVENT_PANES} agent panes (up in {up_s:.1} s); \
                 {} runs alternating UserPromptSubmit and Stop on one pane, each checked to have \
                 stamped its state; the figure is the median wall time; one bare `tmux \
                 set-option` of that pane, the least a stamp costs, took {:.2} ms median, {:.2} ms \
                 p95",
                e1.runs,
                bare(&e1).median,
                bare(&e1).p95,
            ),
        ),
        row(
            &specs[1],
            &e1b,
            format!(
                "the same on the fleet of {} panes, where tmux's own work grows with the server: \
                 one bare `tmux set-option` took {:.2} ms median, {:.2} ms p95",
                fleet.pane_count(),
                bare(&e1b).median,
                bare(&e1b).p95,
            ),
        ),
    ])
}

/// The samples of one E1 measure, the first (warm-up) run of each left out.
struct Stamps {
    runs: usize,
    event: Vec<f64>,
    truth: Vec<f64>,
    bare: Vec<f64>,
}

/// `corral event` runs on `fleet`'s [`EVENT_PANE`], each beside a spawn of `/bin/true` and a
/// bare `tmux set-option`.
fn stamps(fleet: &Fleet, options: &Options) -> anyhow::Result<Stamps> {
    let pane = fleet.pane(EVENT_PANE)?;
    let runs = if options.quick {
        options.samples
    } else {
        EVENT_RUNS.max(options.samples)
    };
    let (mut event, mut truth, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=runs {
        let (hook, state) = if i % 2 == 0 {
            ("UserPromptSubmit", "working")
        } else {
            ("Stop", "idle")
        };
        let t = true_ms(fleet)?;
        let e = event_ms(fleet, pane, hook)?;
        let b = bare_stamp_ms(fleet, pane)?;
        let stamped = fleet.option(pane, PaneOption::State)?;
        if stamped != state {
            bail!(
                "after `corral event claude {hook}` the pane's state is {stamped:?}, not {state}"
            );
        }
        // The first run of each is a warm-up.
        if i > 0 {
            truth.push(t);
            event.push(e);
            bare.push(b);
        }
    }
    Ok(Stamps {
        runs,
        event,
        truth,
        bare,
    })
}
