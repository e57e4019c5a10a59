//! `cargo xtask bench`: the host's costs measured against physical limits in one run, on a scratch
//! real tmux server (or the fake), from release builds, written as one report: a Markdown table on
//! stdout, JSON with `--json FILE`. Every row has its median and p95, its ratio or figure, its
//! target and PASS, FAIL, REPORT (no target) or ERROR (the measure could not be taken). Missing a
//! target is what a report is for: the command fails only when a measure could not be taken.
//!
//! Modules, in reading order: [`cli`] (the command line), [`fleet`] (the binaries, the scratch
//! home and the fleet), [`conn`] (one `serve` connection), [`cpu`] (what a process used of a
//! core), [`transcripts`] (the big transcript),
//! [`rows`] (the measures, one group per file, and what each row is), [`stats`], [`report`],
//! [`machine`], [`process`].
#![allow(clippy::print_stdout, reason = "the report is this command's stdout")]

mod cli;
mod conn;
mod cpu;
mod fleet;
mod interrupt;
mod machine;
pub(crate) mod process;
mod report;
mod rows;
mod stats;
mod transcripts;

use std::path::Path;

use anyhow::{Context, bail};
use golden::Backend;

use cli::Options;
use fleet::{Bins, Fleet};
use machine::Machine;
use report::{Report, Row};
use rows::{
    ROWS, dispatch, follow, group, idle, latency, memory, push, remote, snapshot, spawn, suite,
    window,
};
use transcripts::Transcripts;

/// Runs `cargo xtask bench`.
pub fn run(args: &crate::cli::BenchArgs) -> anyhow::Result<()> {
    let options = cli::settings(args)?;
    let report = measure(&options)?;
    print!("{}", report.markdown());
    if let Some(path) = &options.json {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let errors = report.errors();
    if !errors.is_empty() {
        bail!(
            "{} measure(s) could not be taken: {}",
            errors.len(),
            errors.join(", ")
        );
    }
    Ok(())
}

/// One line on stderr about what the run is doing: a full run takes minutes.
fn progress(what: &str) {
    eprintln!("bench: {what}");
}

/// Takes every measure `options` asks for; the report, whatever the figures.
pub fn measure(options: &Options) -> anyhow::Result<Report> {
    let scratch = tempfile::Builder::new()
        .prefix("corral-bench-")
        .tempdir()
        .context("making a scratch dir")?;
    // tmux reports real paths; the transcripts' and the FIFO's must compare equal to them.
    let dir = scratch.path().canonicalize()?;
    interrupt::clean_up_on_signal(std::process::id(), dir.clone())?;
    let paged = options.wants("P3") || options.wants("P6");
    if paged {
        transcripts::check_disk(&dir, options.transcript_bytes)?;
    }
    let fake = options.backend == Backend::Fake;
    let machine = Machine::probe(Path::new("tmux"), fake);
    if options.build {
        progress("building the release binaries");
    }
    let bins = Bins::prepare(options)?;
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    let on_fleet = ["P1", "E1", "P2", "P3", "P4", "P6", "P7", "P8", "H1"];
    if on_fleet.iter().any(|g| options.wants(g)) {
        progress(&format!(
            "bringing {} panes up ({} backend)",
            options.panes, options.backend
        ));
        match Fleet::up(&bins, &dir, options, &latency::notify_command(&dir)) {
            Ok((mut fleet, up_s)) => {
                notes.push(format!(
                    "the fleet of {} panes came up in {up_s:.1} s ({} backend)",
                    fleet.pane_count(),
                    options.backend
                ));
                rows.extend(fleet_rows(&mut fleet, &dir, options));
            }
            Err(err) => {
                let err = err.context("the fleet did not come up");
                for g in on_fleet.iter().filter(|g| options.wants(g)) {
                    rows.extend(group(g, options, |_| Err(anyhow::anyhow!("{err:#}"))));
                }
            }
        }
    }
    if options.wants("P5") {
        rows.extend(group("P5", options, |specs| suite::p5(options, specs)));
    }
    if options.wants("C2") {
        progress(&format!(
            "bringing {} hosts of {} panes up for the client",
            follow::hosts(options),
            remote::host_panes(options)
        ));
        rows.extend(group("C2", options, |specs| {
            follow::c2(&bins, &dir, options, specs)
        }));
    }
    if options.wants("C1") {
        progress(&format!(
            "bringing {} hosts of {} panes up for the client",
            remote::HOSTS,
            remote::host_panes(options)
        ));
        rows.extend(group("C1", options, |specs| {
            remote::c1(&bins, &dir, options, specs)
        }));
    }
    rows.sort_by_key(|row| ROWS.iter().position(|(id, _)| *id == row.id));
    Ok(Report {
        machine,
        load_end: machine::load(),
        backend: options.backend.as_str().to_owned(),
        build: bins.profile,
        quick: options.quick,
        samples: options.samples,
        panes: options.panes,
        transcript_bytes: options.transcript_bytes,
        interval_ms: options.interval_ms,
        notes,
        rows,
    })
}

/// The measures taken on the fleet, in the order they run; the transcript pages last, then goes.
fn fleet_rows(fleet: &mut Fleet, dir: &Path, options: &Options) -> Vec<Row> {
    let mut rows = Vec::new();
    if options.wants("P1") {
        rows.extend(group("P1", options, |s| spawn::p1(fleet, options, s)));
    }
    if options.wants("E1") {
        rows.extend(group("E1", options, |s| spawn::e1(fleet, options, s)));
    }
    if options.wants("P2") {
        rows.extend(group("P2", options, |s| snapshot::p2(fleet, options, s)));
    }
    let paged = options.wants("P3") || options.wants("P6");
    let transcripts: Option<Result<Transcripts, String>> = paged.then(|| {
        progress(&format!(
            "writing a {} transcript",
            report::bytes(options.transcript_bytes)
        ));
        transcripts::write(fleet, dir, options.transcript_bytes).map_err(|err| format!("{err:#}"))
    });
    let with = || -> anyhow::Result<&Transcripts> {
        match &transcripts {
            Some(Ok(t)) => Ok(t),
            Some(Err(err)) => Err(anyhow::anyhow!("the transcripts were not written: {err}")),
            None => Err(anyhow::anyhow!("no transcripts")),
        }
    };
    if options.wants("P3") {
        rows.extend(group("P3", options, |s| {
            window::p3(fleet, with()?, options, s)
        }));
    }
    if options.wants("P7") {
        rows.extend(group("P7", options, |s| dispatch::p7(fleet, options, s)));
    }
    if options.wants("P4") {
        rows.extend(group("P4", options, |s| latency::p4(fleet, options, s)));
    }
    if options.wants("P8") {
        rows.extend(group("P8", options, |s| push::p8(fleet, options, s)));
    }
    if options.wants("H1") {
        rows.extend(group("H1", options, |s| idle::h(fleet, options, s)));
    }
    if options.wants("P6") {
        rows.extend(group("P6", options, |s| {
            memory::p6(fleet, with()?, options, s)
        }));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::Verdict;

    /// A quick run on the fake, from the debug binaries `cargo test --workspace` builds: every
    /// row is there in order, measured (none an error), with a figure and a target, and each
    /// renders as one table line with its verdict.
    #[test]
    fn a_quick_run_reports_every_row_measured_and_judged() {
        let bin_dir = crate::conformance::target_dir().join("debug");
        for bin in [
            "corral",
            "corral-sim",
            "corral-fake-tmux",
            "corral-remote",
            "examples/ledger_claims",
        ] {
            assert!(
                bin_dir.join(bin).exists(),
                "{} is not built: run `cargo test --workspace` (it builds every binary and example)",
                bin_dir.join(bin).display()
            );
        }
        let args = crate::cli::BenchArgs {
            backend: Backend::Fake,
            samples: None,
            quick: true,
            json: None,
            no_build: true,
            bin_dir: Some(bin_dir),
            panes: None,
            transcript: None,
            interval_ms: 200,
            only: Vec::new(),
        };
        let report = measure(&cli::settings(&args).unwrap()).unwrap();
        let ids: Vec<&str> = report.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ROWS.map(|(id, _)| id));
        assert!(report.quick && report.build == "debug");
        for row in &report.rows {
            assert_ne!(row.verdict, Verdict::Error, "{}: {}", row.id, row.note);
            let figure = row.figure.expect("a measured row has a figure");
            assert!(figure.is_finite() && figure >= 0.0, "{}: {figure}", row.id);
            let s = row.summary.expect("a measured row has samples");
            assert!(
                s.n >= 1 && s.min <= s.median && s.median <= s.p95 && s.p95 <= s.max,
                "{}: {s:?}",
                row.id
            );
            assert!(!row.figure_text.is_empty() && !row.target_text.is_empty());
        }
        let markdown = report.markdown();
        assert!(markdown.contains("A quick run"));
        for id in &ids {
            let line = markdown
                .lines()
                .find(|l| l.starts_with(&format!("| {id} |")))
                .unwrap_or_else(|| panic!("no line for {id} in\n{markdown}"));
            assert!(
                ["| PASS |", "| **FAIL** |", "| REPORT |"]
                    .iter()
                    .any(|v| line.ends_with(v)),
                "{line}"
            );
        }
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["rows"].as_array().map(Vec::len), Some(ROWS.len()));
    }
}
