//! Claims per second of the dispatch ledger when it is full: `cargo xtask bench`'s P7 runs this
//! (built with `--release` beside `corral`), so the figure is the library's own code path, the
//! one every `serve` and `corral act` takes, with nothing of a benchmark inside the host.
//!
//! `ledger_claims --dir DIR [--held 4096] [--batches 20] [--batch 512]`: fills a fresh ledger in
//! `DIR` with `--held` resolved slots (untimed), then times `--batches` batches of `--batch` new
//! slots, each claimed and resolved as a dispatch does, and prints one JSON object:
//! `{"held":N,"batch":N,"nanos_per_claim":[...]}`, one figure per batch. A batch of `CAP / 8`
//! claims crosses one rewrite of the log at the cap.
#![allow(clippy::print_stdout, reason = "the figures are this program's output")]

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use reference_host::act::ledger::{Claim, Ledger, Request};
use schema::{Action, Outcome, Receipt};

/// An epoch-ms "now" well inside every slot's time-to-live.
const BASE_MS: u64 = 1_700_000_000_000;

struct Options {
    dir: PathBuf,
    held: usize,
    batches: usize,
    batch: usize,
}

fn parse() -> anyhow::Result<Options> {
    let mut options = Options {
        dir: PathBuf::new(),
        held: reference_host::act::ledger::CAP,
        batches: 20,
        batch: reference_host::act::ledger::CAP / 8,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--dir" => options.dir = PathBuf::from(value),
            "--held" => options.held = value.parse().context("--held")?,
            "--batches" => options.batches = value.parse().context("--batches")?,
            "--batch" => options.batch = value.parse().context("--batch")?,
            _ => bail!("usage: ledger_claims --dir DIR [--held N] [--batches N] [--batch N]"),
        }
    }
    if options.dir.as_os_str().is_empty() || options.batch == 0 {
        bail!("--dir is required and --batch must be at least 1");
    }
    Ok(options)
}

/// Claims slot `n` at `BASE_MS + n` and resolves it `sent`.
fn dispatch(ledger: &mut Ledger, n: usize) -> anyhow::Result<()> {
    let slot = format!("%1:{n}:approve");
    let at_ms = BASE_MS + n as u64;
    let request = Request {
        slot: &slot,
        device: "fp-bench",
        pane: "%1",
        action: &Action::Approve,
    };
    match ledger.claim(&request, at_ms)? {
        Claim::Claimed => {}
        other => bail!("slot {slot} was not free: {other:?}"),
    }
    ledger.resolve(&Receipt {
        slot,
        pane: "%1".into(),
        action: Action::Approve,
        outcome: Outcome::Sent,
        reason: None,
        exit_code: 0,
        cached: false,
        device: "fp-bench".into(),
        at_ms,
    })?;
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let options = parse()?;
    let mut ledger = Ledger::new(&options.dir);
    for n in 0..options.held {
        dispatch(&mut ledger, n)?;
    }
    let mut nanos = Vec::with_capacity(options.batches);
    let mut next = options.held;
    for _ in 0..options.batches {
        let start = Instant::now();
        for _ in 0..options.batch {
            dispatch(&mut ledger, next)?;
            next += 1;
        }
        nanos.push(start.elapsed().as_nanos() / options.batch as u128);
    }
    let report = serde_json::json!({
        "held": options.held,
        "batch": options.batch,
        "nanos_per_claim": nanos,
    });
    println!("{report}");
    Ok(())
}
