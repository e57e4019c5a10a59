//! P5 and P5b: the wall time of `cargo xtask conformance --backend fake`, run in this process as
//! the command runs it (its debug binaries built first, untimed; cargo's own start-up is not
//! counted), once whole and once without the cases whose floor is a fixed spec time (a golden
//! header's `floor_ms`: `dispatch.in-flight-bounded` must wait out the 10 s a dispatch waits for
//! a slot in flight, so the whole suite cannot take less than that).
//!
//! A run in which a case failed still took the time it took: its row keeps the figure and names
//! the failed cases. Only a run that could not be made at all is an error, of its own row.

use std::time::Instant;

use super::super::cli::Options;
use super::super::report::{Row, Spec};
use super::super::stats::Summary;
use crate::conformance;

/// The cases a quick run takes instead of the whole suite: a few, one of them with a floor.
const QUICK: [&str; 2] = ["handshake.*", "card.question-timeout"];

/// One silent run of `cases` (every case when empty), and its wall time in seconds.
fn run(cases: &[String]) -> anyhow::Result<(f64, conformance::Silent)> {
    let mut args: Vec<String> = ["--backend", "fake", "--no-build"]
        .map(str::to_owned)
        .to_vec();
    for case in cases {
        args.extend(["--case".to_owned(), case.clone()]);
    }
    let start = Instant::now();
    let run = conformance::run_silently(&args)?;
    Ok((start.elapsed().as_secs_f64(), run))
}

/// The row of one run: its wall time, how long its cases took together, what failed.
fn row(spec: &Spec, wall: f64, run: &conformance::Silent, about: &str) -> Row {
    let total: f64 = run.durations.iter().map(|(_, d)| d.as_secs_f64()).sum();
    let mut note = format!(
        "{about}; its {} cases took {total:.0} s together",
        run.durations.len()
    );
    if !run.ok {
        note.push_str(&format!(
            "; the run had failures ({}): {}",
            run.summary,
            run.failed.join(", ")
        ));
    }
    Row::new(spec, "s", Summary::one(wall))
        .figure(wall, format!("{wall:.1} s"))
        .note(note)
}

/// P5 and P5b.
pub fn p5(options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    if options.build {
        conformance::build_binaries()?;
    }
    let floors = conformance::floors()?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let whole: Vec<String> = if options.quick {
        QUICK.map(str::to_owned).to_vec()
    } else {
        Vec::new()
    };
    let scope = if options.quick {
        format!("quick: only {}; ", QUICK.join(", "))
    } else {
        String::new()
    };
    let mut rows = Vec::new();
    let ran: Vec<String> = match run(&whole) {
        Ok((wall, full)) => {
            let longest = full
                .durations
                .iter()
                .max_by_key(|(_, d)| *d)
                .map(|(case, d)| format!("`{case}` {:.1} s", d.as_secs_f64()))
                .unwrap_or_default();
            let about = format!(
                "{scope}one run, {} cases at once on {cores} cores, the cases with a floor \
                 started first (its floor is the spec's, not the host's); longest case {longest}",
                conformance::default_jobs()
            );
            rows.push(row(&specs[0], wall, &full, &about));
            full.durations.into_iter().map(|(case, _)| case).collect()
        }
        Err(err) => {
            rows.push(Row::failed(&specs[0], &err));
            return Ok(rows);
        }
    };
    let floored: Vec<(&str, u64)> = floors
        .iter()
        .filter_map(|(case, floor)| Some((case.as_str(), (*floor)?)))
        .filter(|(case, _)| ran.iter().any(|c| c == case))
        .collect();
    let rest: Vec<String> = ran
        .iter()
        .filter(|case| !floored.iter().any(|(c, _)| c == case))
        .cloned()
        .collect();
    let named: Vec<String> = floored
        .iter()
        .map(|(case, floor)| format!("`{case}` (floor {} s)", *floor as f64 / 1000.0))
        .collect();
    rows.push(match run(&rest) {
        Ok((wall, part)) => row(
            &specs[1],
            wall,
            &part,
            &format!("one run without {}", named.join(", ")),
        ),
        Err(err) => Row::failed(&specs[1], &err),
    });
    Ok(rows)
}
