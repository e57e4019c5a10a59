//! `cargo xtask bench`'s command line (clap), checked into the settings of a run.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use golden::Backend;

use super::report::ROWS;

/// Measures the host against physical limits (what tmux, a process spawn, a small file cost on
/// this machine, measured in the same run) and writes one report: a Markdown table on stdout,
/// JSON with --json. Builds the host and the simulator with --release first.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "cargo xtask bench",
    after_help = "Examples:\n  cargo xtask bench --json bench.json      # the full report, real tmux (a few minutes)\n  cargo xtask bench --quick --backend fake # a smoke run, well under a minute"
)]
struct Args {
    /// The tmux the fleet runs on: a scratch real server (`tmux -L <unique> -f /dev/null`) or
    /// the fake.
    #[arg(long, default_value = "real", value_parser = backend_parser())]
    backend: Backend,
    /// Samples per timed measure (default 30; 5 with --quick).
    #[arg(long, value_name = "N")]
    samples: Option<usize>,
    /// Few samples and small sizes (100 panes, a 16 MiB transcript): that the bench runs end to
    /// end, not what the host costs.
    #[arg(long)]
    quick: bool,
    /// Write the report as JSON here too.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Use the binaries already built (in --bin-dir) instead of running `cargo build` first.
    #[arg(long)]
    no_build: bool,
    /// Where `corral`, `corral-sim` and `examples/ledger_claims` are (default: the release
    /// target dir).
    #[arg(long, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
    /// Agent panes in the fleet, a multiple of 20 (default 1000; 100 with --quick).
    #[arg(long, value_name = "N")]
    panes: Option<usize>,
    /// Size of the big transcript: bytes, or with K, M, G (default 1G; 16M with --quick).
    #[arg(long, value_name = "SIZE")]
    transcript: Option<String>,
    /// The reconcile interval of the serve and daemon processes, in ms (P4's baseline).
    #[arg(long, value_name = "MS", default_value_t = 200)]
    interval_ms: u64,
    /// Only these rows, comma-separated: row ids (`P2b`) or their groups (`P2` is P2 and P2b;
    /// groups P1, E1, P2, P3, P4, P5, P6, P7).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    only: Vec<String>,
}

/// `--backend`: golden's [`Backend`] by name.
fn backend_parser() -> impl TypedValueParser<Value = Backend> {
    PossibleValuesParser::new(Backend::ALL.map(Backend::as_str)).try_map(|name| name.parse())
}

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

/// Parses the arguments after `bench`.
pub fn parse(args: &[String]) -> anyhow::Result<Options> {
    let argv = std::iter::once("cargo xtask bench".to_owned()).chain(args.iter().cloned());
    let args = match Args::try_parse_from(argv) {
        Ok(args) => args,
        Err(err) if !err.use_stderr() => {
            // --help and --version: print and stop, as clap itself would.
            err.print().context("printing help")?;
            std::process::exit(0);
        }
        Err(err) => bail!("{err}"),
    };
    let quick = args.quick;
    let samples = args.samples.unwrap_or(if quick { 5 } else { 30 });
    let panes = args.panes.unwrap_or(if quick { 100 } else { 1000 });
    let size = args
        .transcript
        .as_deref()
        .unwrap_or(if quick { "16M" } else { "1G" });
    let transcript_bytes = size_of(size)?;
    if samples == 0 {
        bail!("--samples must be at least 1");
    }
    if panes < 20 || panes % 20 != 0 {
        bail!("--panes must be a multiple of 20");
    }
    if transcript_bytes < 2 << 20 {
        bail!("--transcript must be at least 2M (it is compared with a 1 MiB one)");
    }
    Ok(Options {
        backend: args.backend,
        samples,
        quick,
        json: args.json,
        build: !args.no_build,
        bin_dir: args.bin_dir,
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

/// `1G`, `64M`, `512K` or plain bytes (powers of 1024).
fn size_of(text: &str) -> anyhow::Result<u64> {
    let (digits, shift) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    let n: u64 = digits
        .parse()
        .with_context(|| format!("a size is bytes or a number with K, M or G: {text}"))?;
    Ok(n << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(line: &str) -> anyhow::Result<Options> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        parse(&args)
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
