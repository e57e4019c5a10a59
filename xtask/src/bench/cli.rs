//! `cargo xtask bench`'s command line (`crate::cli::BenchArgs`, clap), checked into the settings
//! of a run.

use std::path::PathBuf;

use anyhow::bail;
use golden::Backend;

use super::report::ROWS;
use crate::cli::BenchArgs;

/// A run's settings after validation.
#[derive(Debug, Clone)]
pub struct Options {
    pub backend: Backend,
    pub samples: usize,
    pub quick: bool,
    pub json: Option<PathBuf>,
    pub build: bool,
    pub bin_dir: Option<PathBuf>,
    pub panes: usize,
    pub transcript_bytes: u64,
    pub interval_ms: u64,
    /// The groups of rows to measure; every group when empty.
    pub only: Vec<String>,
}

impl Options {
    /// Whether the group of rows `group` (`P2` measures P2 and P2b) runs.
    pub fn wants(&self, group: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == group)
    }
}

/// The group of `--only`'s `id`, a row id or a group; an unknown one is refused, naming the rows.
fn group_of(id: &str) -> anyhow::Result<String> {
    match ROWS.iter().find(|(row, _)| row.eq_ignore_ascii_case(id)) {
        Some((_, group)) => Ok((*group).to_owned()),
        None => {
            let rows: Vec<&str> = ROWS.iter().map(|(row, _)| *row).collect();
            bail!("--only: no row {id} (rows: {})", rows.join(", "))
        }
    }
}

/// Checks the options of `cargo xtask bench` into a run's settings.
pub fn settings(args: &BenchArgs) -> anyhow::Result<Options> {
    let quick = args.quick;
    let samples = args.samples.unwrap_or(if quick { 5 } else { 30 });
    let panes = args.panes.unwrap_or(if quick { 100 } else { 1000 });
    let size = args
        .transcript
        .as_deref()
        .unwrap_or(if quick { "16M" } else { "1G" });
    let transcript_bytes = golden::fixture::parse_size(size).map_err(anyhow::Error::msg)?;
    if panes < 20 || !panes.is_multiple_of(20) {
        bail!("--panes must be a multiple of 20");
    }
    if transcript_bytes < 2 << 20 {
        bail!("--transcript must be at least 2M (it is compared with a 1 MiB one)");
    }
    Ok(Options {
        backend: args.backend,
        samples,
        quick,
        json: args.json.clone(),
        build: !args.no_build,
        bin_dir: args.bin_dir.clone(),
        panes,
        transcript_bytes,
        interval_ms: args.interval_ms.max(1),
        only: args
            .only
            .iter()
            .map(|id| group_of(id))
            .collect::<anyhow::Result<_>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(line: &str) -> anyhow::Result<Options> {
        use clap::Parser;
        let argv = ["cargo xtask", "bench"]
            .into_iter()
            .chain(line.split_whitespace());
        match crate::cli::Cli::try_parse_from(argv)?.task {
            crate::cli::Task::Bench(args) => settings(&args),
            other => panic!("not the bench: {other:?}"),
        }
    }

    #[test]
    fn defaults_are_the_full_run_on_real_tmux() {
        let o = parse_line("").unwrap();
        assert_eq!(o.backend, Backend::Real);
        assert_eq!(
            (o.samples, o.panes, o.transcript_bytes),
            (30, 1000, 1 << 30)
        );
        assert!(o.build && !o.quick && o.wants("P7"));
    }

    #[test]
    fn quick_shrinks_everything_and_flags_still_win() {
        let o = parse_line("--quick --backend fake --samples 3 --only P2,P7").unwrap();
        assert_eq!(o.backend, Backend::Fake);
        assert_eq!((o.samples, o.panes, o.transcript_bytes), (3, 100, 16 << 20));
        assert!(o.wants("P2") && !o.wants("P3"));
        let o = parse_line("--only p2b,E1").unwrap();
        assert!(o.wants("P2") && o.wants("E1") && !o.wants("P7"));
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse_line("--panes 30").is_err());
        assert!(parse_line("--samples 0").is_err());
        assert!(parse_line("--transcript 1K").is_err());
        assert!(parse_line("--transcript lots").is_err());
        assert!(parse_line("--backend tmux").is_err());
        assert!(parse_line("--only P9").is_err());
    }
}
