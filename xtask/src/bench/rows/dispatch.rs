//! P7 and P7b: the dispatch ledger under a race and under load.
//!
//! P7 starts [`RACERS`] `corral act … --slot S` processes at once for one idle pane and counts
//! what reached the pane (`corral-sim pane input`: the fake's send-keys log, or the bytes a real
//! pane received): one slot must fire exactly once, and every process must answer with the
//! receipt of that one fire. P7b runs `examples/ledger_claims` (the host's own ledger code, built
//! beside `corral`): claims and resolutions of new slots in a ledger held at its cap, timed per
//! batch.

use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::Value;

use super::super::cli::Options;
use super::super::fleet::Fleet;
use super::super::process::{output, stdout};
use super::super::report::{Row, Spec};
use super::super::stats::{Summary, ms};
use super::{CLAIMS_PER_S, RACERS};

/// The idle Claude Code pane the racers steer.
pub const RACED_PANE: &str = "b0-idle-0";

/// One race: how many times the text reached the pane, and the wall time of all the processes.
fn race(fleet: &Fleet, pane: &str, round: usize) -> anyhow::Result<(usize, f64)> {
    output(
        fleet
            .sim()
            .args(["pane", "input", "--pane", RACED_PANE, "--clear"]),
    )?;
    let text = format!("bench-{}-{round}", std::process::id());
    let start = Instant::now();
    let mut racers = Vec::with_capacity(RACERS);
    for _ in 0..RACERS {
        let child = fleet
            .corral()
            .args([
                "act", pane, "steer", "--json", "--text", &text, "--slot", &text,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting corral act")?;
        racers.push(child);
    }
    let mut receipts = Vec::with_capacity(RACERS);
    for child in racers {
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "corral act exited with {}: {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let receipt: Value =
            serde_json::from_slice(&out.stdout).context("reading corral act's receipt")?;
        receipts.push(receipt);
    }
    let wall = ms(start.elapsed());
    for receipt in &receipts {
        if receipt["outcome"] != "sent" {
            bail!("a racer's receipt is not `sent`: {receipt}");
        }
        if receipt["at_ms"] != receipts[0]["at_ms"] {
            bail!(
                "two receipts of one slot tell of different fires: {} and {receipt}",
                receipts[0]
            );
        }
    }
    let input = stdout(fleet.sim().args(["pane", "input", "--pane", RACED_PANE]))?;
    let fires = input
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["text"] == text.as_str())
        .count();
    Ok((fires, wall))
}

/// What `ledger_claims` prints.
#[derive(Debug, Deserialize)]
struct Claims {
    held: usize,
    batch: usize,
    nanos_per_claim: Vec<u64>,
}

/// P7 and P7b.
pub fn p7(fleet: &Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let pane = fleet.pane(RACED_PANE)?;
    let rounds = if options.quick { 2 } else { 10 };
    let (mut fires, mut walls) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (n, wall) = race(fleet, pane, round)?;
        fires.push(n as f64);
        walls.push(wall);
    }
    // The round furthest from one fire is the figure: every round must fire exactly once.
    let worst = fires
        .iter()
        .copied()
        .max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()))
        .expect("at least one round");
    let wall = Summary::of(&walls);

    let dir = fleet.dir.join("ledger-bench");
    std::fs::create_dir_all(&dir)?;
    let batches = if options.quick { 3 } else { 20 };
    let out = output(
        fleet
            .command(&fleet.bins.ledger_claims)
            .arg("--dir")
            .arg(&dir)
            .args(["--batches", &batches.to_string()]),
    )?;
    let claims: Claims =
        serde_json::from_slice(&out.stdout).context("reading ledger_claims's answer")?;
    let micros: Vec<f64> = claims
        .nanos_per_claim
        .iter()
        .map(|&n| n as f64 / 1000.0)
        .collect();
    let per_claim = Summary::of(&micros);
    let per_s = 1e6 / per_claim.median;
    Ok(vec![
        Row::new(&specs[0], "fires", Summary::of(&fires))
            .figure(worst, format!("{worst:.0} fire(s)"))
            .note(format!(
                "{rounds} rounds of {RACERS} `corral act --slot` processes started together; every \
                 receipt told of the same fire; all {RACERS} answered in {:.0} ms (median round)",
                wall.median
            )),
        Row::new(&specs[1], "µs/claim", per_claim)
            .figure(per_s, format!("{per_s:.0}/s"))
            .note(format!(
                "one process, a claim and its resolution per slot, {} batches of {} new slots with \
                 {} held (a batch crosses one rewrite of the log at the cap); the median batch gives \
                 the rate, which must be at least {CLAIMS_PER_S:.0}/s",
                claims.nanos_per_claim.len(),
                claims.batch,
                claims.held
            )),
    ])
}
