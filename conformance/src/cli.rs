//! The runner's command line (clap), the same for `corral-conformance` and
//! `cargo xtask conformance`, checked into the settings of a run.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory, FromArgMatches, Parser};
use golden::{Backend, HostProfile, Suite};

use super::Launcher;

/// Cases run at once per CPU, by default. A case spends most of its time waiting (on a host's
/// cycle, a program's answer, a time the spec fixes), little of it on a CPU: on 2 busy CPUs the
/// fake suite took 19 s with 4 cases at once, 14 s with 8, 12.5 s with 12, and no less with 16.
const JOBS_PER_CPU: usize = 6;

/// How many cases run at once without `--jobs`: `JOBS_PER_CPU` per available CPU.
pub fn default_jobs() -> usize {
    JOBS_PER_CPU * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The environment variable that sets the timeout multiplier when `--timeout-scale` is absent.
pub const SCALE_VAR: &str = "CORRAL_CONFORMANCE_TIMEOUT_SCALE";

/// Runs the golden sessions against a host.
#[derive(Debug, Clone, Parser)]
#[command(version)]
struct Args {
    /// The simulator backend the fleets run on.
    #[arg(long, default_value = "fake", value_parser = backend_parser())]
    backend: Backend,
    /// Host command template; `{device}` is replaced by the (shell-quoted) device id. Default,
    /// in a checkout only: the built `corral serve --stdio --device {device}`;
    /// `corral-conformance` needs it.
    #[arg(long)]
    host: Option<String>,
    /// The host's own command line (its `corral`), which `run` steps with program `corral` and
    /// `corral-sim hook` start. Default: the built `corral` when --host is absent; with --host and
    /// without it, the cases that run `corral` are skipped.
    #[arg(long, value_name = "PATH")]
    host_cli: Option<PathBuf>,
    /// The kit to run: a directory laid out as a corral checkout (`golden/sessions`,
    /// `golden/fixtures`, `golden/requirements.toml`, `schema/json`), for sessions being edited.
    /// Default: `corral-conformance` runs the copy embedded in it, `cargo xtask conformance` the
    /// checkout's.
    #[arg(long, value_name = "DIR")]
    kit: Option<PathBuf>,
    /// The host profile (TOML): the host's tool name, hello version key, serve command, the
    /// environment names, paths and daemon it uses, its command lines for what sessions ask.
    /// Default: corral's. `profile init FILE` writes a commented starting one.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Only cases whose id matches this glob (`*`, `?`); repeatable.
    #[arg(long = "case", value_name = "GLOB")]
    cases: Vec<String>,
    /// Only cases of this suite (wire, host-files, notify, corral-cli); repeatable.
    #[arg(long = "suite", value_name = "SUITE", value_parser = suite_parser())]
    suites: Vec<Suite>,
    /// Fail a case on a strict-grade note too (a key the protocol does not name, keys in another
    /// order than corral writes them): for corral's own CI. Without it, notes are reported and
    /// never change the exit code.
    #[arg(long)]
    strict: bool,
    /// Run the long cases too: those that wait out more than 20 s the protocol fixes (a client
    /// that stops reading is let go after 30 s). Without it they are skipped, saying so.
    #[arg(long)]
    long: bool,
    /// Rewrite the literal expectations of failing `expect` steps from what was received,
    /// keeping wildcards and captures.
    #[arg(long)]
    bless: bool,
    /// A file of known-failing case ids: fail on a failure it does not list and on a listed
    /// case that passes.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Write the JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write the Markdown compliance table (every ledger requirement) here.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Write the HTML report here: one self-contained page (the suites, every case with its
    /// failure and wire log, every ledger requirement), filtered in the browser.
    #[arg(long, value_name = "FILE")]
    report_html: Option<PathBuf>,
    /// Cases run at once (default: six times the available parallelism; cases mostly wait on
    /// host cycles and on times the spec fixes).
    #[arg(long)]
    jobs: Option<usize>,
    /// Multiplies every step's time limit (default 1, or $CORRAL_CONFORMANCE_TIMEOUT_SCALE).
    #[arg(long, value_name = "FACTOR")]
    timeout_scale: Option<f64>,
    /// Keep each case's work dir (config, runtime, simulator state, host stderr) and print it.
    #[arg(long)]
    keep: bool,
    /// Where the run's work dir is made (default: $TMPDIR when set, else /dev/shm when it is a
    /// directory you can write, else the system's temp dir).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Use the binaries already built instead of running `cargo build` first (a checkout only:
    /// an installed runner builds nothing).
    #[arg(long)]
    no_build: bool,
    /// Prove the kit catches a broken host: run against a wrapper that drops `id` from every
    /// frame and check that the run fails with a diff and a rerun command.
    #[arg(long)]
    self_test: bool,
}

/// `--backend`: golden's [`Backend`] by name.
fn backend_parser() -> impl TypedValueParser<Value = Backend> {
    PossibleValuesParser::new(Backend::ALL.map(Backend::as_str)).try_map(|name| name.parse())
}

/// `--suite`: golden's [`Suite`] by name.
fn suite_parser() -> impl TypedValueParser<Value = Suite> {
    PossibleValuesParser::new(Suite::ALL.map(Suite::as_str)).try_map(|name| name.parse())
}

/// A run's settings after validation.
#[derive(Debug, Clone)]
pub struct Options {
    /// The backend the fleets run on.
    pub backend: Backend,
    /// The host command template, when not the built `corral`.
    pub host: Option<String>,
    /// The host's own command line, when not the built `corral`.
    pub host_cli: Option<PathBuf>,
    /// The kit on disk, when not the launcher's own.
    pub kit: Option<PathBuf>,
    /// The host profile file, when not corral's.
    pub profile_path: Option<PathBuf>,
    /// The host profile: corral's unless `--profile` named another.
    pub profile: HostProfile,
    /// Case id globs; every case when empty.
    pub cases: Vec<String>,
    /// Suites; every suite when empty.
    pub suites: Vec<Suite>,
    /// Strict-grade notes fail their case.
    pub strict: bool,
    /// Run the long cases too.
    pub long: bool,
    /// Rewrite failing expectations from what was received.
    pub bless: bool,
    /// The file of known-failing cases.
    pub baseline: Option<PathBuf>,
    /// Where the JSON report goes.
    pub report_json: Option<PathBuf>,
    /// Where the JUnit report goes.
    pub junit: Option<PathBuf>,
    /// Where the Markdown compliance table goes.
    pub markdown: Option<PathBuf>,
    /// Where the HTML report goes.
    pub report_html: Option<PathBuf>,
    /// Cases run at once.
    pub jobs: usize,
    /// The multiplier of every time limit.
    pub scale: f64,
    /// Keep the work dirs.
    pub keep: bool,
    /// Where the run's work dir is made, when not the default place.
    pub work_dir: Option<PathBuf>,
    /// Build the binaries first.
    pub build: bool,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// `--help`: print this text.
    Help(String),
    /// Run the sessions.
    Run(Options),
    /// `--self-test`: prove the kit catches a broken host.
    SelfTest(Options),
}

/// Reads the arguments after the command.
/// The examples `--help` ends with, in the launcher's own words.
fn examples(launcher: &Launcher) -> String {
    let run = launcher.command();
    match launcher {
        Launcher::Installed => format!(
            "Examples:\n  {run} --host 'my-host serve --stdio --device {{device}}' --host-cli my-host\n  \
             {run} --host 'corral serve --stdio --device {{device}}' --host-cli corral --case 'handshake.*'\n  \
             {run} --host 'my-host serve --device {{device}}' --backend real --markdown report.md"
        ),
        Launcher::Checkout { .. } => format!(
            "Examples:\n  {run}\n  {run} --backend real --case 'device.*' --keep\n  \
             {run} --host 'my-host serve --device {{device}}' --host-cli my-host --markdown report.md"
        ),
    }
}

pub fn parse(args: &[String], launcher: &Launcher) -> anyhow::Result<Invocation> {
    let mut argv = vec![launcher.command().to_owned()];
    argv.extend(args.iter().cloned());
    let parsed = Args::command()
        .name(launcher.command())
        .bin_name(launcher.command())
        .after_help(examples(launcher))
        .try_get_matches_from(argv)
        .and_then(|matches| Args::from_arg_matches(&matches));
    let args = match parsed {
        Ok(args) => args,
        Err(err) if !err.use_stderr() => return Ok(Invocation::Help(err.to_string())),
        Err(err) => bail!("{err}"),
    };
    let scale = match args.timeout_scale {
        Some(scale) => scale,
        None => match std::env::var(SCALE_VAR) {
            Ok(text) => text
                .parse()
                .with_context(|| format!("{SCALE_VAR}={text} is not a number"))?,
            Err(_) => 1.0,
        },
    };
    if !(scale.is_finite() && scale > 0.0) {
        bail!("the timeout scale must be a positive number, not {scale}");
    }
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let options = Options {
        backend: args.backend,
        host: args.host,
        host_cli: args.host_cli,
        kit: args.kit,
        profile: match &args.profile {
            Some(path) => HostProfile::load(path)?,
            None => HostProfile::corral(),
        },
        profile_path: args.profile,
        cases: args.cases,
        suites: args.suites,
        strict: args.strict,
        long: args.long,
        bless: args.bless,
        baseline: args.baseline,
        report_json: args.report_json,
        junit: args.junit,
        markdown: args.markdown,
        report_html: args.report_html,
        jobs,
        scale,
        keep: args.keep,
        work_dir: args.work_dir,
        build: !args.no_build,
    };
    Ok(if args.self_test {
        Invocation::SelfTest(options)
    } else {
        Invocation::Run(options)
    })
}

#[cfg(test)]
mod tests {
    use super::{Invocation, Launcher, parse};

    #[test]
    fn help_says_what_the_runner_is_for_with_examples_in_each_launcher_s_words() {
        let checkout = Launcher::Checkout {
            root: std::path::PathBuf::from("/nowhere"),
        };
        for (launcher, command) in [
            (Launcher::Installed, "corral-conformance --host"),
            (checkout, "cargo xtask conformance --backend real"),
        ] {
            let Invocation::Help(help) = parse(&["--help".to_owned()], &launcher).unwrap() else {
                panic!("--help is help");
            };
            assert!(help.contains("Runs the golden sessions"), "{help}");
            assert!(help.contains("Examples:"), "{help}");
            assert!(help.contains(command), "{help}");
        }
    }
}
