//! `cargo xtask conformance`: runs every golden session (`golden/sessions/*.ndjson`) against a
//! host, each with a fresh host process and simulator state, in parallel; validates every frame
//! against `schema/json`; prints one line per case and `N passed, N failed, N skipped`; writes
//! JSON, JUnit and Markdown reports; compares with a baseline; blesses expectations.
//!
//! Modules, in reading order: [`assign`] (order-free matching), [`runner`] (one case), [`host`]
//! (the process driver), [`sim`] (the simulator driver), [`ledger`] (requirements, coverage),
//! [`report`], [`baseline`], [`bless`], [`selftest`] (the broken-host proof), [`process`]. The
//! sessions, their loader, their patterns and the schema checks of frames are the `golden`
//! crate's, shared with `corral-sim replay`.
#![allow(
    clippy::print_stdout,
    reason = "the conformance report is this command's stdout"
)]

mod assign;
mod baseline;
mod bless;
mod host;
mod ledger;
mod outcome;
mod process;
mod report;
mod runner;
mod selftest;
mod sim;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use golden::Backend;
use golden::session::{self, Session};
use golden::validate::{DocumentSchema, FrameSchema};

use crate::workspace_root;
use outcome::{CaseResult, Grade};
use runner::RunContext;

/// The environment variable that sets the timeout multiplier when `--timeout-scale` is absent.
pub const SCALE_VAR: &str = "CORRAL_CONFORMANCE_TIMEOUT_SCALE";

/// Runs the golden sessions against a host.
#[derive(Debug, Clone, Parser)]
#[command(name = "cargo xtask conformance")]
struct Args {
    /// The simulator backend the fleets run on.
    #[arg(long, default_value = "fake", value_parser = backend_parser())]
    backend: Backend,
    /// Host command template; `{device}` is replaced by the (shell-quoted) device id. Default:
    /// the built `corral serve --stdio --device {device}`.
    #[arg(long)]
    host: Option<String>,
    /// Only cases whose id matches this glob (`*`, `?`); repeatable.
    #[arg(long = "case", value_name = "GLOB")]
    cases: Vec<String>,
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
    /// Cases run at once (default: twice the available parallelism; cases mostly wait).
    #[arg(long)]
    jobs: Option<usize>,
    /// Multiplies every step's time limit (default 1, or $CORRAL_CONFORMANCE_TIMEOUT_SCALE).
    #[arg(long, value_name = "FACTOR")]
    timeout_scale: Option<f64>,
    /// Keep each case's work dir (config, runtime, simulator state, host stderr) and print it.
    #[arg(long)]
    keep: bool,
    /// Use the binaries already built instead of running `cargo build` first.
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

/// A run's settings after validation.
#[derive(Debug, Clone)]
struct Options {
    backend: Backend,
    host: Option<String>,
    cases: Vec<String>,
    bless: bool,
    baseline: Option<PathBuf>,
    report_json: Option<PathBuf>,
    junit: Option<PathBuf>,
    markdown: Option<PathBuf>,
    jobs: usize,
    scale: f64,
    keep: bool,
    build: bool,
}

/// What a run produced.
#[derive(Debug)]
struct Outcome {
    results: Vec<CaseResult>,
    /// Everything printed for the cases, in completion order.
    console: String,
    ok: bool,
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    if args.first().map(String::as_str) == Some(selftest::WRAPPER) {
        return selftest::drop_id(&args[1..]);
    }
    let mut argv = vec!["cargo xtask conformance".to_owned()];
    argv.extend(args.iter().cloned());
    let args = match Args::try_parse_from(argv) {
        Ok(args) => args,
        Err(err) if !err.use_stderr() => {
            print!("{err}");
            return Ok(());
        }
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
    let jobs = args
        .jobs
        .unwrap_or_else(|| 2 * std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let options = Options {
        backend: args.backend,
        host: args.host,
        cases: args.cases,
        bless: args.bless,
        baseline: args.baseline,
        report_json: args.report_json,
        junit: args.junit,
        markdown: args.markdown,
        jobs,
        scale,
        keep: args.keep,
        build: !args.no_build,
    };
    if args.self_test {
        return selftest::run(&options);
    }
    let outcome = execute(&options, true)?;
    if !outcome.ok {
        bail!("conformance failed");
    }
    Ok(())
}

/// Matches a case id against a glob of `*` and `?`.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The target dir cargo builds into: `$CARGO_TARGET_DIR`, else `<workspace>/target`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        _ => workspace_root().join("target"),
    }
}

/// Builds the binaries the run needs (debug: the same artifacts `cargo test` and clippy already
/// built, so CI compiles nothing twice; the host's speed does not matter here).
fn build(with_host: bool) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = process::command(cargo);
    cmd.current_dir(workspace_root())
        .args(["build", "--quiet", "--bins", "-p", "simulator"]);
    if with_host {
        cmd.args(["-p", "reference-host"]);
    }
    let status = cmd.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    Ok(())
}

fn load_sessions(dir: &Path) -> anyhow::Result<Vec<Session>> {
    let mut sessions = Vec::new();
    let mut errors = Vec::new();
    for path in session::files(dir).map_err(anyhow::Error::msg)? {
        match session::load(&path) {
            Ok(session) => sessions.push(session),
            Err(err) => errors.push(err.to_string()),
        }
    }
    if !errors.is_empty() {
        bail!("golden sessions that cannot be run:\n{}", errors.join("\n"));
    }
    Ok(sessions)
}

fn default_host(target: &Path) -> String {
    format!(
        "{} serve --stdio --device {{device}}",
        host::shell_quote(&target.join("debug/corral").display().to_string())
    )
}

/// The kit's committed data: the ledger, every golden session, and the two frame schemas.
struct Kit {
    ledger: golden::Ledger,
    sessions: Vec<Session>,
    requests: FrameSchema,
    responses: FrameSchema,
}

impl Kit {
    /// Loads it from the workspace at `root`.
    fn load(root: &Path) -> anyhow::Result<Kit> {
        let golden = root.join("golden");
        let schemas = root.join("schema/json");
        let frames = |file| FrameSchema::load(&schemas, file).map_err(anyhow::Error::msg);
        Ok(Kit {
            ledger: golden::ledger::load(&golden.join("requirements.toml"))
                .map_err(anyhow::Error::msg)?,
            sessions: load_sessions(&golden.join("sessions"))?,
            requests: frames("requests.schema.json")?,
            responses: frames("responses.schema.json")?,
        })
    }

    /// Every frame variant of the generated schemas.
    fn variants(&self) -> Vec<String> {
        ledger::variants(&self.requests, &self.responses)
    }
}

fn execute(options: &Options, echo: bool) -> anyhow::Result<Outcome> {
    let root = workspace_root();
    let golden = root.join("golden");
    let kit = Kit::load(&root)?;
    let variants = kit.variants();
    let Kit {
        ledger,
        sessions: all,
        requests,
        responses,
    } = kit;
    let mut refused = Vec::new();
    for session in &all {
        let unknown = ledger::unknown_ids(&ledger, session);
        if !unknown.is_empty() {
            refused.push(format!(
                "{}: names requirements the ledger does not have: {}",
                session.path.display(),
                unknown.join(", ")
            ));
        }
    }
    if !refused.is_empty() {
        bail!("{}", refused.join("\n"));
    }
    let schemas = root.join("schema/json");
    let mut warnings = ledger::check(&ledger, &all, &variants);
    warnings.extend(
        ledger::uncovered(&variants, &all, &ledger)
            .into_iter()
            .map(|v| {
                format!("frame variant `{v}` is in no golden session and no pending requirement")
            }),
    );
    let selected: Vec<&Session> = all
        .iter()
        .filter(|s| {
            options.cases.is_empty() || options.cases.iter().any(|g| glob(g, &s.header.case))
        })
        .collect();
    if selected.is_empty() {
        bail!("no golden session matches {:?}", options.cases);
    }
    let target = target_dir();
    if options.build {
        build(options.host.is_none())?;
    }
    let host_template = options
        .host
        .clone()
        .unwrap_or_else(|| default_host(&target));
    let sim_bin = target.join("debug/corral-sim");
    if !sim_bin.exists() {
        bail!(
            "{} is missing; build it or drop --no-build",
            sim_bin.display()
        );
    }
    let mut rerun = format!(
        "cargo xtask conformance --backend {}",
        options.backend.as_str()
    );
    if let Some(host) = &options.host {
        rerun.push_str(&format!(" --host {}", host::shell_quote(host)));
    }
    if options.scale != 1.0 {
        rerun.push_str(&format!(" --timeout-scale {}", options.scale));
    }
    let work = tempfile::Builder::new()
        .prefix("corral-kit-")
        .tempdir()
        .context("making the run's work dir")?;
    // tmux reports real paths (`pane_current_path`, `socket_path`); goldens compare against them.
    let work_path = work
        .path()
        .canonicalize()
        .context("resolving the run's work dir")?;
    let ctx = RunContext {
        backend: options.backend,
        host_template: host_template.clone(),
        sim_bin,
        scale: options.scale,
        golden: golden.clone(),
        work: work_path,
        bless: options.bless,
        requests,
        responses,
        config: DocumentSchema::load(&schemas, "config.schema.json").map_err(anyhow::Error::msg)?,
        rerun,
    };
    let run_id = std::process::id();
    let next = AtomicUsize::new(0);
    let console = Mutex::new(String::new());
    let slots: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; selected.len()]);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.min(selected.len()) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(session) = selected.get(index) else {
                        return;
                    };
                    let dir = ctx.work.join(format!("{index:03}"));
                    let socket = format!("ck{run_id}-{index}");
                    let strict = ledger::strict(&ledger, &session.header.requirements);
                    let result = ctx.run_case(session, &dir, &socket, strict);
                    let mut text = report::console(&result);
                    if options.keep && result.grade != Grade::Skipped {
                        text.push_str(&format!("    work dir: {}\n", dir.display()));
                    }
                    {
                        let mut console = console.lock().expect("console lock");
                        console.push_str(&text);
                        if echo {
                            let mut out = std::io::stdout().lock();
                            let _ = out.write_all(text.as_bytes());
                            let _ = out.flush();
                        }
                    }
                    slots.lock().expect("results lock")[index] = Some(result);
                }
            });
        }
    });
    let results: Vec<CaseResult> = slots
        .into_inner()
        .expect("results lock")
        .into_iter()
        .map(|slot| slot.expect("every case ran"))
        .collect();
    if options.keep {
        let kept = work.keep();
        if echo {
            println!("work dirs kept under {}", kept.display());
        }
    }
    let mut console = console.into_inner().expect("console lock");
    let mut say = |line: String| {
        if echo {
            println!("{line}");
        }
        console.push_str(&line);
        console.push('\n');
    };
    for warning in &warnings {
        say(format!("ledger: {warning}"));
    }
    if options.bless {
        for result in results.iter().filter(|r| !r.blessed.is_empty()) {
            bless::write(&result.file, &result.blessed).map_err(anyhow::Error::msg)?;
            say(format!(
                "blessed {} line(s) of {}",
                result.blessed.len(),
                result.file.display()
            ));
        }
    }
    let write = |path: &Option<PathBuf>, text: String| -> anyhow::Result<()> {
        if let Some(path) = path {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    };
    write(
        &options.report_json,
        report::json_report(options.backend, &host_template, &results),
    )?;
    write(&options.junit, report::junit(options.backend, &results))?;
    write(
        &options.markdown,
        report::markdown(options.backend, &host_template, &ledger, &results),
    )?;
    let summary = report::Summary::of(&results);
    let mut ok = summary.failed == 0;
    if let Some(path) = &options.baseline {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the baseline {}", path.display()))?;
        let baseline = baseline::Baseline::parse(&text)
            .map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
        let ids: Vec<String> = all.iter().map(|s| s.header.case.clone()).collect();
        let ok_entries = baseline.unknown(&ids).is_empty();
        for entry in baseline.unknown(&ids) {
            say(format!(
                "baseline {}:{}: `{}` names no golden session",
                path.display(),
                entry.line,
                entry.case
            ));
        }
        let verdict = baseline.judge(&results, options.backend);
        if !verdict.known.is_empty() {
            say(format!(
                "known failures (baseline): {}",
                verdict.known.join(", ")
            ));
        }
        for case in &verdict.now_passing {
            say(format!(
                "`{case}` is listed in the baseline but passes now: remove it from {}",
                path.display()
            ));
        }
        // Listed failures are tolerated; new failures and listed passes are not.
        ok = ok_entries && verdict.ok();
    }
    if summary.non_strict > 0 {
        say(format!(
            "{} non-strict: failures of cases whose requirements are all `should` or `may`",
            summary.non_strict
        ));
    }
    say(summary.line());
    Ok(Outcome {
        results,
        console,
        ok,
    })
}

#[cfg(test)]
mod tests {
    use golden::pattern;

    use super::*;

    #[test]
    fn globs_match_star_and_question_mark() {
        assert!(glob("framing.*", "framing.long-line"));
        assert!(glob("*", "x"));
        assert!(glob("edge?.appear", "edges.appear"));
        assert!(glob("*.appear", "edges.appear"));
        assert!(!glob("framing.*", "handshake.hello"));
        assert!(!glob("a?", "a"));
        assert!(glob("a*b*c", "a-x-b-y-c"));
    }

    #[test]
    fn every_golden_session_loads_and_agrees_with_the_ledger() {
        let kit = Kit::load(&workspace_root()).unwrap();
        let problems = ledger::check(&kit.ledger, &kit.sessions, &kit.variants());
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn every_frame_variant_appears_in_a_golden_session_or_is_pending() {
        let kit = Kit::load(&workspace_root()).unwrap();
        let uncovered = ledger::uncovered(&kit.variants(), &kit.sessions, &kit.ledger);
        assert!(
            uncovered.is_empty(),
            "frame variants in no golden session and in no pending requirement's `frames`: {uncovered:?}"
        );
    }

    #[test]
    fn every_concrete_golden_send_validates_against_the_request_schema() {
        let root = workspace_root();
        let sessions = load_sessions(&root.join("golden/sessions")).unwrap();
        let requests =
            FrameSchema::load(&root.join("schema/json"), "requests.schema.json").unwrap();
        for session in &sessions {
            for located in &session.steps {
                if let golden::Step::Send(frame) = &located.step.step
                    && pattern::is_concrete(frame)
                {
                    let checked = requests.validate(frame);
                    assert!(
                        checked.is_ok(),
                        "{}:{}: {checked:?}",
                        session.path.display(),
                        located.line
                    );
                }
            }
        }
    }
}
