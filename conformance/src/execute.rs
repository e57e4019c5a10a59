//! One run of the golden sessions against a host, step by step: place, load and check the kit,
//! select the cases, find (or build) the binaries, run the cases in parallel each in its own work
//! dir, then bless, write the reports, judge the baseline and print the summary.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use anyhow::{Context, bail};
use golden::session::Session;
use golden::{Ledger, Suite};

use super::baseline::Baseline;
use super::binaries::Binaries;
use super::cli::Options;
use super::kit::{self, Kit};
use super::outcome::{CaseResult, Grade};
use super::runner::RunContext;
use super::{Launcher, bless, ledger, report};

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    /// Every selected case's result, in session order.
    pub results: Vec<CaseResult>,
    /// Where each case ran, result for result: its host processes' working dir (removed after
    /// the case unless `--keep`).
    pub dirs: Vec<PathBuf>,
    /// Everything printed for the cases, in completion order.
    pub console: String,
    /// Whether the run passed (with the baseline, when one is given).
    pub ok: bool,
}

/// Runs the selected cases; with `echo`, prints as it goes.
pub fn execute(options: &Options, launcher: &Launcher, echo: bool) -> anyhow::Result<Outcome> {
    let work = work_dir(options.work_dir.as_deref())?;
    // tmux reports real paths (`pane_current_path`, `socket_path`); goldens compare against them.
    let work_path = work
        .path()
        .canonicalize()
        .context("resolving the run's work dir")?;
    let root = kit::place(options, launcher, &work_path)?;
    let kit = Kit::load(&root)?;
    kit.refuse_unknown_requirements()?;
    let warnings = kit.warnings();
    let Kit {
        ledger,
        sessions,
        requests,
        responses,
        config,
        documents,
    } = kit;
    let selected = select(&sessions, &options.cases, &options.suites)?;
    let binaries = Binaries::prepare(options, launcher)?;
    let ctx = RunContext {
        backend: options.backend,
        host_template: binaries.host_template,
        host_cli: binaries.host_cli,
        sim_bin: binaries.sim_bin,
        scale: options.scale,
        kit_root: root,
        work: work_path,
        bless: options.bless,
        strict: options.strict,
        long: options.long,
        profile: options.profile.clone(),
        requests,
        responses,
        config,
        documents,
        rerun: rerun_prefix(options, launcher),
        host_name: host_name(),
    };
    let console = Console::new(echo);
    let results = run_cases(&ctx, &ledger, &selected, options, &console);
    let dirs = (0..results.len()).map(|i| case_dir(&ctx.work, i)).collect();
    if options.keep {
        let kept = work.keep();
        if echo {
            println!("work dirs kept under {}", kept.display());
        }
    }
    for warning in &warnings {
        console.say(&format!("ledger: {warning}"));
    }
    if options.bless {
        write_blessings(&results, &console)?;
    }
    write_reports(options, &ctx.host_template, &ledger, &results)?;
    let ok = judge(options, &ledger, &sessions, &results, &console)?;
    Ok(Outcome {
        results,
        dirs,
        console: console.into_text(),
        ok,
    })
}

/// Where a memory filesystem usually is on Linux.
const MEMORY_FS: &str = "/dev/shm";

/// Makes the run's work dir: in `chosen` (`--work-dir`), else in `$TMPDIR` when it is set, else
/// in [`MEMORY_FS`] when this user can make a dir there, else in the system's temp dir. Each case
/// makes and removes a few hundred small files (its fleet's repositories, its hosts' runtime
/// dirs, logs); on a disk filesystem that is a large part of what a run costs, in memory next to
/// nothing.
fn work_dir(chosen: Option<&Path>) -> anyhow::Result<tempfile::TempDir> {
    make_work_dir(chosen, std::env::var_os("TMPDIR"), Path::new(MEMORY_FS))
}

/// [`work_dir`], with `$TMPDIR` and the memory filesystem given.
fn make_work_dir(
    chosen: Option<&Path>,
    tmpdir: Option<std::ffi::OsString>,
    memory: &Path,
) -> anyhow::Result<tempfile::TempDir> {
    let make = |dir: &Path| {
        tempfile::Builder::new()
            .prefix("corral-kit-")
            .tempdir_in(dir)
            .with_context(|| format!("making the run's work dir in {}", dir.display()))
    };
    if let Some(dir) = chosen {
        return make(dir);
    }
    match tmpdir.filter(|dir| !dir.is_empty()) {
        Some(dir) => make(Path::new(&dir)),
        None => make(memory).or_else(|_| make(&std::env::temp_dir())),
    }
}

/// The sessions whose case id matches one of the globs and whose suite is one of `suites` (all
/// of them when there is none).
fn select<'a>(
    sessions: &'a [Session],
    globs: &[String],
    suites: &[Suite],
) -> anyhow::Result<Vec<&'a Session>> {
    let selected: Vec<&Session> = sessions
        .iter()
        .filter(|s| globs.is_empty() || globs.iter().any(|g| glob(g, s.case())))
        .filter(|s| suites.is_empty() || suites.contains(&s.header.suite))
        .collect();
    if selected.is_empty() {
        let suites: Vec<&str> = suites.iter().map(|suite| suite.as_str()).collect();
        bail!("no golden session matches the cases {globs:?} in the suites {suites:?}");
    }
    Ok(selected)
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

/// This machine's name (uname's nodename), as a host running here reports it.
fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// The command that reruns one case of this run, without its `--case <id>`.
fn rerun_prefix(options: &Options, launcher: &Launcher) -> String {
    let mut rerun = format!(
        "{} --backend {}",
        launcher.command(),
        options.backend.as_str()
    );
    if let Some(kit) = &options.kit {
        rerun.push_str(&format!(
            " --kit {}",
            stdx::shell_quote(&kit.display().to_string())
        ));
    }
    if let Some(profile) = &options.profile_path {
        rerun.push_str(&format!(
            " --profile {}",
            stdx::shell_quote(&profile.display().to_string())
        ));
    }
    if let Some(host) = &options.host {
        rerun.push_str(&format!(" --host {}", stdx::shell_quote(host)));
    }
    if let Some(cli) = &options.host_cli {
        rerun.push_str(&format!(
            " --host-cli {}",
            stdx::shell_quote(&cli.display().to_string())
        ));
    }
    if options.scale != 1.0 {
        rerun.push_str(&format!(" --timeout-scale {}", options.scale));
    }
    if options.strict {
        rerun.push_str(" --strict");
    }
    if options.long {
        rerun.push_str(" --long");
    }
    rerun
}

/// What a run prints, kept for the caller (the self-test reads it) and echoed when asked.
#[derive(Debug)]
struct Console {
    text: Mutex<String>,
    echo: bool,
}

impl Console {
    fn new(echo: bool) -> Console {
        Console {
            text: Mutex::new(String::new()),
            echo,
        }
    }

    /// Keeps (and echoes) text as it is.
    fn print(&self, text: &str) {
        let mut kept = self.text.lock().expect("console lock");
        kept.push_str(text);
        if self.echo {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    /// Keeps (and echoes) one line.
    fn say(&self, line: &str) {
        self.print(&format!("{line}\n"));
    }

    fn into_text(self) -> String {
        self.text.into_inner().expect("console lock")
    }
}

/// The order cases start in: those with a floor (`floor_ms`, a time the spec makes them wait
/// out) first, the highest first, then the rest in session order. A case that must take a minute
/// then runs beside the others instead of starting last and adding its minute to the run.
fn start_order(selected: &[&Session]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..selected.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(selected[i].header.floor_ms.unwrap_or(0)));
    order
}

/// Runs the cases on `options.jobs` threads, each in its own work dir and with its own tmux
/// socket name, in [`start_order`]; one console line per case as it ends. Results come back in
/// session order. Unless `--keep`, a finished case's work dir is removed by a thread of its own
/// while the other cases run: removing a whole run's dirs (tens of thousands of files, most of
/// them the fixtures' git repositories) at the end took half a minute on a slow disk.
fn run_cases(
    ctx: &RunContext,
    ledger: &Ledger,
    selected: &[&Session],
    options: &Options,
    console: &Console,
) -> Vec<CaseResult> {
    let run_id = std::process::id();
    let order = &start_order(selected);
    let next = &AtomicUsize::new(0);
    let slots: &Mutex<Vec<Option<CaseResult>>> = &Mutex::new(vec![None; selected.len()]);
    let (sweep, swept) = mpsc::channel::<PathBuf>();
    std::thread::scope(|scope| {
        if !options.keep {
            scope.spawn(move || sweeper(&swept));
        }
        for _ in 0..options.jobs.min(selected.len()) {
            let sweep = sweep.clone();
            scope.spawn(move || {
                loop {
                    let Some(&index) = order.get(next.fetch_add(1, Ordering::SeqCst)) else {
                        return;
                    };
                    let session = selected[index];
                    let dir = case_dir(&ctx.work, index);
                    let socket = format!("ck{run_id}-{index}");
                    let strict = ledger::strict(ledger, &session.header.requirements);
                    let result = ctx.run_case(session, &dir, &socket, strict);
                    let mut text = report::console(&result);
                    if options.keep && result.grade != Grade::Skipped {
                        text.push_str(&format!("    work dir: {}\n", dir.display()));
                    }
                    console.print(&text);
                    slots.lock().expect("results lock")[index] = Some(result);
                    if !options.keep {
                        // The sweeper is gone only if it panicked; the run's dir goes at the end.
                        let _ = sweep.send(dir);
                    }
                }
            });
        }
        drop(sweep);
    });
    std::mem::take(&mut *slots.lock().expect("results lock"))
        .into_iter()
        .map(|slot| slot.expect("every case ran"))
        .collect()
}

/// The work dir of the selection's case at `index`.
fn case_dir(work: &Path, index: usize) -> PathBuf {
    work.join(format!("{index:03}"))
}

/// Removes every dir it is sent until the senders are gone. A dir a straggling process still
/// writes into may stay; the run's own work dir, removed at the end, takes it.
fn sweeper(dirs: &mpsc::Receiver<PathBuf>) {
    for dir in dirs {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `--bless`: rewrites the session files of the cases whose expectations failed.
fn write_blessings(results: &[CaseResult], console: &Console) -> anyhow::Result<()> {
    for result in results.iter().filter(|r| !r.blessed.is_empty()) {
        bless::write(&result.file, &result.blessed)?;
        console.say(&format!(
            "blessed {} line(s) of {}",
            result.blessed.len(),
            result.file.display()
        ));
    }
    Ok(())
}

/// Writes the JSON, JUnit, Markdown and HTML reports that were asked for, making only those (a
/// whole run's HTML page, every case's wire log in it, is over a megabyte).
fn write_reports(
    options: &Options,
    host_template: &str,
    ledger: &Ledger,
    results: &[CaseResult],
) -> anyhow::Result<()> {
    let write = |path: &Option<PathBuf>, text: &dyn Fn() -> String| -> anyhow::Result<()> {
        if let Some(path) = path {
            std::fs::write(path, text()).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    };
    write(&options.report_json, &|| {
        report::json_report(options.backend, host_template, ledger, results)
    })?;
    write(&options.junit, &|| {
        report::junit(options.backend, ledger, results)
    })?;
    write(&options.markdown, &|| {
        report::markdown(options.backend, host_template, ledger, results)
    })?;
    write(&options.report_html, &|| {
        super::report_html::html(options.backend, host_template, ledger, results)
    })
}

/// The verdict: no failure, or with a baseline, exactly its failures. Prints the summary.
fn judge(
    options: &Options,
    ledger: &Ledger,
    sessions: &[Session],
    results: &[CaseResult],
    console: &Console,
) -> anyhow::Result<bool> {
    let summary = report::Summary::of(results);
    let mut ok = summary.failed == 0;
    if let Some(path) = &options.baseline {
        ok = judge_baseline(path, options, sessions, results, console)?;
    }
    if summary.non_strict > 0 {
        console.say(&format!(
            "{} non-strict: failures of cases whose requirements are all `should` or `may`",
            summary.non_strict
        ));
    }
    let noted = results.iter().filter(|r| !r.notes.is_empty()).count();
    if noted > 0 && !options.strict {
        console.say(&format!(
            "strict grade: {noted} passing case(s) with notes (what the protocol allows but corral \
             does not send); --strict fails them"
        ));
    }
    for tally in report::by_suite(ledger, results) {
        console.say(&tally.line());
    }
    console.say(&report::closing_line(ledger, results));
    Ok(ok)
}

/// Listed failures are tolerated; new failures, listed passes and lines naming no case are not.
fn judge_baseline(
    path: &Path,
    options: &Options,
    sessions: &[Session],
    results: &[CaseResult],
    console: &Console,
) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the baseline {}", path.display()))?;
    let baseline =
        Baseline::parse(&text).map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
    let ids: Vec<String> = sessions.iter().map(|s| s.case().to_owned()).collect();
    let unknown = baseline.unknown(&ids);
    for entry in &unknown {
        console.say(&format!(
            "baseline {}:{}: `{}` names no golden session",
            path.display(),
            entry.line,
            entry.case
        ));
    }
    let verdict = baseline.judge(results, options.backend);
    if !verdict.known.is_empty() {
        console.say(&format!(
            "known failures (baseline): {}",
            verdict.known.join(", ")
        ));
    }
    for case in &verdict.now_passing {
        console.say(&format!(
            "`{case}` is listed in the baseline but passes now: remove it from {}",
            path.display()
        ));
    }
    Ok(unknown.is_empty() && verdict.ok())
}

#[cfg(test)]
mod tests {
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

    fn session(case: &str, floor: Option<u64>) -> Session {
        let floor = floor.map_or(String::new(), |ms| format!(r#","floor_ms":{ms}"#));
        let text = format!(
            r#"{{"case":"{case}","suite":"wire","about":"a","requirements":["r"],"fixture":"small"{floor}}}
{{"comment":"c"}}
"#
        );
        golden::session::parse(Path::new(&format!("{case}.ndjson")), &text).unwrap()
    }

    #[test]
    fn the_work_dir_is_the_one_asked_for_else_tmpdir_else_memory_else_the_temp_dir() {
        let root = tempfile::tempdir().unwrap();
        let place = |name: &str| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        };
        let (chosen, tmp, memory) = (place("chosen"), place("tmp"), place("memory"));
        let inside = |work: tempfile::TempDir, dir: &Path| {
            assert!(work.path().starts_with(dir), "{}", work.path().display());
            assert!(work.path().is_dir());
        };
        let tmpdir = || Some(tmp.clone().into_os_string());
        inside(
            make_work_dir(Some(&chosen), tmpdir(), &memory).unwrap(),
            &chosen,
        );
        inside(make_work_dir(None, tmpdir(), &memory).unwrap(), &tmp);
        inside(make_work_dir(None, None, &memory).unwrap(), &memory);
        inside(
            make_work_dir(None, Some("".into()), &memory).unwrap(),
            &memory,
        );
        let fallback = make_work_dir(None, None, &root.path().join("no-memory-fs")).unwrap();
        inside(fallback, &std::env::temp_dir());
        let err = make_work_dir(Some(&root.path().join("missing")), None, &memory).unwrap_err();
        assert!(format!("{err:#}").contains("missing"), "{err:#}");
    }

    #[test]
    fn the_sweeper_removes_every_dir_it_is_sent() {
        let root = tempfile::tempdir().unwrap();
        let (sweep, swept) = mpsc::channel();
        let dirs: Vec<PathBuf> = (0..3)
            .map(|i| root.path().join(format!("{i:03}")))
            .collect();
        for dir in &dirs {
            std::fs::create_dir_all(dir.join("sim/repos/api/.git")).unwrap();
            std::fs::write(dir.join("sim/repos/api/.git/HEAD"), "ref: main\n").unwrap();
            sweep.send(dir.clone()).unwrap();
        }
        sweep.send(root.path().join("never-made")).unwrap();
        drop(sweep);
        sweeper(&swept);
        for dir in &dirs {
            assert!(!dir.exists(), "{} is still there", dir.display());
        }
        assert!(root.path().exists());
    }

    #[test]
    fn cases_with_a_floor_start_first_the_highest_first() {
        let sessions = [
            session("a", None),
            session("b", Some(750)),
            session("c", None),
            session("d", Some(60_000)),
            session("e", None),
        ];
        let selected: Vec<&Session> = sessions.iter().collect();
        assert_eq!(start_order(&selected), [3, 1, 0, 2, 4]);
    }
}
