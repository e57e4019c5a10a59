//! `cargo xtask`'s command line (clap): one subcommand per task, each with its options as plain
//! data. `conformance` takes its arguments as they come: its own parser (`conformance::cli`)
//! reads them, `--help` included.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use golden::Backend;

/// Project automation for corral: generated schemas, house rules, the conformance kit, the
/// benchmark and the fuzzer.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    after_help = "Examples:\n  cargo xtask conformance            build, then run every golden session against the host\n  cargo xtask schema --check         fail if schema/json/ drifted from the types\n  cargo xtask tidy\n\n`cargo xtask` is an alias (.cargo/config.toml) for `cargo run --package xtask --`: cargo's own\nprogress shows while the first build compiles the workspace (xtask reaches every crate), and\nthe kit's binaries then need no second compile."
)]
pub struct Cli {
    #[command(subcommand)]
    pub task: Task,
}

/// The tasks.
#[derive(Debug, Subcommand)]
pub enum Task {
    /// Write the JSON Schemas under schema/json/ from the wire types and the kit's formats, or
    /// check that the committed files are what would be written.
    #[command(
        after_help = "Examples:\n  cargo xtask schema                 after a wire type changed; commit schema/json/\n  cargo xtask schema --check         fails naming each file that drifted"
    )]
    Schema {
        /// Change nothing; fail when a committed file differs from what would be written, or
        /// is one neither crate generates.
        #[arg(long)]
        check: bool,
    },
    /// Check the house rules: every `.rs` file opens with a `//!` line, no test is ignored or
    /// `should_panic`, no sibling modules use each other in a cycle.
    #[command(
        after_help = "Example:\n  cargo xtask tidy                   one line per problem, exit 1 when there is one"
    )]
    Tidy,
    /// Run the golden sessions against a host (the built `corral`, or another with --host).
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  cargo xtask conformance\n  cargo xtask conformance --backend real --case 'device.*'\n  cargo xtask conformance --host 'my-host serve --device {device}' --host-cli my-host\n  cargo xtask conformance --help     every option"
    )]
    Conformance {
        /// The runner's arguments (`cargo xtask conformance --help` lists them).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Measure the host against physical limits (what tmux, a process spawn, a small file cost
    /// on this machine, in the same run) and write one report: a Markdown table on stdout, JSON
    /// with --json. Builds the host and the simulator with --release first.
    #[command(
        after_help = "Examples:\n  cargo xtask bench --json bench.json     the full report, real tmux (a few minutes)\n  cargo xtask bench --quick --backend fake   a smoke run, well under a minute\n  cargo xtask bench --only P2,P4b"
    )]
    Bench(BenchArgs),
    /// Feed one `corral serve` generated lines (valid, mutated, random bytes, over-long) and
    /// check that each gets exactly one valid answer with the right id.
    #[command(
        after_help = "Examples:\n  cargo xtask fuzz --seed 42 --lines 20000\n  cargo xtask fuzz --seed 42 --no-build    rerun a failure without building"
    )]
    Fuzz(FuzzArgs),
}

/// `cargo xtask bench`'s options (checked into a run's settings by `bench::cli`).
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The tmux the fleet runs on: a scratch real server (`tmux -L <unique> -f /dev/null`) or
    /// the fake.
    #[arg(long, default_value = "real", value_parser = backend_parser())]
    pub backend: Backend,
    /// Samples per timed measure (default 30; 5 with --quick).
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    pub samples: Option<usize>,
    /// Few samples and small sizes (100 panes, a 16 MiB transcript): that the bench runs end to
    /// end, not what the host costs.
    #[arg(long)]
    pub quick: bool,
    /// Write the report as JSON here too.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Use the binaries already built (in --bin-dir) instead of running `cargo build` first.
    #[arg(long)]
    pub no_build: bool,
    /// Where `corral`, `corral-sim` and `examples/ledger_claims` are (default: the release
    /// target dir).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Agent panes in the fleet, a multiple of 20 (default 1000; 100 with --quick).
    #[arg(long, value_name = "N")]
    pub panes: Option<usize>,
    /// Size of the big transcript: bytes, or with K, M, G (default 1G; 16M with --quick).
    #[arg(long, value_name = "SIZE")]
    pub transcript: Option<String>,
    /// The reconcile interval of the serve and daemon processes, in ms (P4's baseline).
    #[arg(long, value_name = "MS", default_value_t = 200, value_parser = at_least_one::<u64>)]
    pub interval_ms: u64,
    /// Only these rows, comma-separated: row ids (`P2b`) or their groups (`P2` is P2 and P2b;
    /// groups P1, E1, P2, P3, P4, P5, P6, P7, P8, H1 (H1 to H2b), C1, C2).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub only: Vec<String>,
}

/// `cargo xtask fuzz`'s options.
#[derive(Debug, clap::Args)]
pub struct FuzzArgs {
    /// The generator's seed (default: the clock); a failure prints it for a rerun.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Lines to send.
    #[arg(long, default_value_t = 100_000)]
    pub lines: usize,
    /// Use the binaries already built instead of running `cargo build` first.
    #[arg(long)]
    pub no_build: bool,
}

/// A whole number of one or more (a count, a duration).
fn at_least_one<N: std::str::FromStr<Err = std::num::ParseIntError> + From<u8> + PartialEq>(
    text: &str,
) -> Result<N, String> {
    match text.parse::<N>() {
        Ok(n) if n == N::from(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(err) => Err(err.to_string()),
    }
}

/// `--backend`: golden's [`Backend`] by name.
fn backend_parser() -> impl TypedValueParser<Value = Backend> {
    PossibleValuesParser::new(Backend::ALL.map(Backend::as_str)).try_map(|name| name.parse())
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use test_support::undocumented;

    use super::Cli;

    #[test]
    fn every_task_says_what_it_is_for_with_an_example() {
        let command = Cli::command();
        command.clone().debug_assert();
        let missing = undocumented(&command, "cargo xtask");
        assert!(missing.is_empty(), "{missing:#?}");
        let bare = clap::Command::new("bare").about("x");
        assert_eq!(
            undocumented(&Cli::command().subcommand(bare), "cargo xtask"),
            ["cargo xtask bare: no example"]
        );
    }

    #[test]
    fn help_and_mistakes_are_told_apart() {
        use clap::error::ErrorKind;
        let kind = |args: &[&str]| {
            let argv = std::iter::once("cargo xtask").chain(args.iter().copied());
            Cli::try_parse_from(argv).map(|_| ()).map_err(|e| e.kind())
        };
        assert_eq!(kind(&["--help"]), Err(ErrorKind::DisplayHelp));
        assert_eq!(kind(&["bench", "--help"]), Err(ErrorKind::DisplayHelp));
        assert_eq!(
            kind(&[]),
            Err(ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
        );
        assert_eq!(kind(&["lint"]), Err(ErrorKind::InvalidSubcommand));
        assert_eq!(
            kind(&["bench", "--samples", "0"]),
            Err(ErrorKind::ValueValidation)
        );
        assert_eq!(kind(&["conformance", "--help", "--case", "x"]), Ok(()));
    }
}
