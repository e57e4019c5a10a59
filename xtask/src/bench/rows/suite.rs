//! P5 and P5b: the wall time of `cargo xtask conformance --backend fake`, run in this process as
//! the command runs it (its debug binaries built first, untimed; cargo's own start-up is not
//! counted), once whole and once without the cases whose floor is a fixed spec time (a golden
//! header's `floor_ms`: `notify.command-timeout` must wait out the 60 s command limit, so the
//! whole suite cannot take less than a minute).

use std::time::Instant;

use anyhow::bail;

use super::super::cli::Options;
use super::super::report::{Row, Spec};
use super::super::stats::Summary;
use crate::conformance;

/// The cases a quick run takes instead of the whole suite: a few, one of them with a floor.
const QUICK: [&str; 2] = ["handshake.*", "card.question-timeout"];

/// One silent run of `cases` (every case when empty), in seconds.
fn run(cases: &[String]) -> anyhow::Result<(f64, conformance::Silent)> {
    let mut args: Vec<String> = ["--backend", "fake", "--no-build"]
        .map(str::to_owned)
        .to_vec();
    for case in cases {
        args.extend(["--case".to_owned(), case.clone()]);
    }
    let start = Instant::now();
    let run = conformance::run_silently(&args)?;
    let wall = start.elapsed().as_secs_f64();
    if !run.ok {
        bail!(
            "the run failed after {wall:.1} s ({}; failed: {})",
            run.summary,
            run.failed.join(", ")
        );
    }
    Ok((wall, run))
}

/// P5 and P5b.
pub fn p5(options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    if options.build {
        conformance::build_binaries(true)?;
    }
    let all = conformance::floors()?;
    let whole: Vec<String> = if options.quick {
        QUICK.map(str::to_owned).to_vec()
    } else {
        Vec::new()
    };
    let (wall, full_run) = run(&whole)?;
    let ran: Vec<&(String, std::time::Duration)> = full_run.durations.iter().collect();
    let floored: Vec<(&String, u64)> = all
        .iter()
        .filter_map(|(case, floor)| Some((case, (*floor)?)))
        .filter(|(case, _)| ran.iter().any(|(c, _)| c == *case))
        .collect();
    let rest: Vec<String> = ran
        .iter()
        .map(|(case, _)| case.clone())
        .filter(|case| !floored.iter().any(|(c, _)| *c == case))
        .collect();
    let (wall_rest, rest_run) = run(&rest)?;
    let rest_total: f64 = rest_run
        .durations
        .iter()
        .map(|(_, d)| d.as_secs_f64())
        .sum();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let named: Vec<String> = floored
        .iter()
        .map(|(case, floor)| format!("`{case}` ({} s)", *floor as f64 / 1000.0))
        .collect();
    let total: f64 = ran.iter().map(|(_, d)| d.as_secs_f64()).sum();
    let longest = ran
        .iter()
        .max_by_key(|(_, d)| *d)
        .map(|(case, d)| format!("`{case}` {:.1} s", d.as_secs_f64()))
        .unwrap_or_default();
    let scope = if options.quick {
        format!("quick: only {}; ", QUICK.join(", "))
    } else {
        String::new()
    };
    Ok(vec![
        Row::new(&specs[0], "s", Summary::one(wall))
            .figure(wall, format!("{wall:.1} s"))
            .note(format!(
                "{scope}one run of {} cases taking {total:.0} s together, {} at once on {cores} \
                 cores, the cases with a floor started first; its floor is the spec's, not the \
                 host's: {}; longest case {longest}",
                ran.len(),
                2 * cores,
                named.join(", ")
            )),
        Row::new(&specs[1], "s", Summary::one(wall_rest))
            .figure(wall_rest, format!("{wall_rest:.1} s"))
            .note(format!(
                "one run of the {} other cases taking {rest_total:.0} s together, without {}",
                rest.len(),
                named.join(", ")
            )),
    ])
}
