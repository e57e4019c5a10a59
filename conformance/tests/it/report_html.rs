//! The HTML report as a person sees it: `corral-conformance --report-html` run for real against
//! the built `corral` (cases that pass, a case that fails through the self-test's wrapper that
//! drops `id` from every frame, a case skipped for want of `--host-cli`), each page opened in
//! Debian's headless Chromium and its DOM read back after the page's script ran, and a
//! screenshot taken. Chromium is required, not optional: without it the test fails saying how
//! to install it. Every Chromium run has a time limit, its process group is killed whatever its
//! end, and everything it writes (profile, caches, crash dumps) is in the test's temp dir.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use test_support::LOCATIONS;

use crate::common::{command, corral, locate_in};

const RUNNER: &str = env!("CARGO_BIN_EXE_corral-conformance");

/// Debian's Chromium (`apt-get install chromium`).
const CHROMIUM: &str = "/usr/bin/chromium";

/// How long one Chromium run may take: it starts in about a second, but the machine may be two
/// CPUs busy with the rest of the tests.
const CHROMIUM_LIMIT: Duration = Duration::from_secs(240);

/// What a run of the kit printed.
struct Run {
    ok: bool,
    stdout: String,
    /// Each case with its grade as the page writes it, from the console's case lines (printed
    /// as the cases end), by case id.
    cases: Vec<(String, String)>,
}

impl Run {
    /// The closing line: the last line printed.
    fn closing_line(&self) -> &str {
        self.stdout.lines().last().unwrap_or_default()
    }
}

/// Runs the kit with `args` from `dir`, every location it writes to inside `dir`.
fn run_kit(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = command(RUNNER);
    locate_in(&mut cmd, &dir.join("env"));
    let out = cmd.current_dir(dir).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut cases: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|line| {
            let (label, rest) = line.split_once(' ')?;
            let grade = match label {
                "pass" => "pass",
                "FAIL" => "fail",
                "NON-STRICT" => "non-strict",
                "skip" => "skipped",
                _ => return None,
            };
            let case = rest.split_whitespace().next()?;
            Some((case.to_owned(), grade.to_owned()))
        })
        .collect();
    cases.sort();
    let run = Run {
        ok: out.status.success(),
        stdout,
        cases,
    };
    assert!(
        run.closing_line().starts_with("conformance: "),
        "stdout:\n{}\nstderr:\n{stderr}",
        run.stdout
    );
    run
}

/// The longest `TMPDIR` Chromium can start in: it binds a socket at
/// `$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket`, and a socket's path has at most 107
/// bytes.
const CHROMIUM_TMPDIR_MAX: usize = 107 - "/org.chromium.Chromium.XXXXXX/SingletonSocket".len();

/// Runs headless Chromium on `url` with `args` (`--dump-dom`, `--screenshot=...`); returns what
/// it printed. Its profile, home, caches and temp files are in `dir`, under short names.
fn chromium(dir: &Path, args: &[&str], url: &str) -> String {
    let dir = dir.join(format!("c{}", unique()));
    let mut cmd = command(CHROMIUM);
    for name in LOCATIONS {
        let location = match *name {
            "TMPDIR" => dir.join("t"),
            _ => dir.join("env").join(name),
        };
        std::fs::create_dir_all(&location).unwrap();
        cmd.env(name, location);
    }
    let tmp = dir.join("t");
    assert!(
        tmp.as_os_str().len() <= CHROMIUM_TMPDIR_MAX,
        "{} is too long a TMPDIR for Chromium's socket (at most {CHROMIUM_TMPDIR_MAX} bytes): \
         run the tests with a shorter TMPDIR",
        tmp.display()
    );
    let (stdout, stderr) = (dir.join("stdout"), dir.join("stderr"));
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", dir.join("profile").display()))
    .arg(format!(
        "--crash-dumps-dir={}",
        dir.join("crashes").display()
    ))
    .args(args)
    .arg(url)
    .current_dir(&dir)
    .stdin(Stdio::null())
    .stdout(File::create(&stdout).unwrap())
    .stderr(File::create(&stderr).unwrap());
    // In a group of its own (as every test's child): its renderer, GPU and zygote processes go
    // with it.
    let mut child = cmd.spawn().unwrap();
    let status = stdx::process::wait_or_kill(&mut child, CHROMIUM_LIMIT);
    // Whatever its end, nothing it started stays.
    stdx::process::kill_group(&mut child);
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    let tail: Vec<&str> = err.lines().rev().take(20).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    let Some(status) = status else {
        panic!(
            "chromium {args:?} {url} did not finish in {CHROMIUM_LIMIT:?} and was killed; its \
             stderr ended:\n{}",
            tail.join("\n")
        );
    };
    assert!(
        status.success(),
        "chromium {args:?} {url}: {status}; its stderr ended:\n{}",
        tail.join("\n")
    );
    std::fs::read_to_string(&stdout).unwrap()
}

fn unique() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

fn url(page: &Path, query: &str) -> String {
    format!("file://{}{query}", page.display())
}

/// Text as the DOM serializer escapes it, read back.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The text of the element whose opening tag holds `marker`, up to `end`.
fn text_of(dom: &str, marker: &str, end: &str) -> String {
    let at = dom
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker} in\n{dom}"));
    let open = at + dom[at..].find('>').unwrap() + 1;
    let close = open + dom[open..].find(end).unwrap();
    unescape(&dom[open..close])
}

/// One case row of the page as the browser holds it.
#[derive(Debug)]
struct Row {
    case: String,
    grade: String,
    hidden: bool,
    /// The row's markup, up to its `</tr>`.
    markup: String,
}

/// Every `<tr>` with a `data-case`, in order.
fn rows(dom: &str) -> Vec<Row> {
    dom.match_indices("<tr ")
        .filter_map(|(at, _)| {
            let tag = &dom[at..at + dom[at..].find('>').unwrap()];
            let attribute = |name: &str| {
                let needle = format!(" {name}=\"");
                let start = tag.find(&needle)? + needle.len();
                let len = tag[start..].find('"')?;
                Some(unescape(&tag[start..start + len]))
            };
            Some(Row {
                case: attribute("data-case")?,
                grade: attribute("data-grade")?,
                hidden: attribute("hidden").is_some(),
                markup: dom[at..at + dom[at..].find("</tr>").unwrap()].to_owned(),
            })
        })
        .collect()
}

/// What every page must show of its run: the closing line the runner printed last, one row per
/// case it ran with the grade it printed, and the page's script having run.
fn check_page(dom: &str, run: &Run) {
    assert!(dom.contains("<body data-script=\"ready\">"), "{dom}");
    assert_eq!(
        text_of(dom, "id=\"closing-line\"", "</p>"),
        run.closing_line()
    );
    let mut on_page: Vec<(String, String)> = rows(dom)
        .into_iter()
        .map(|row| (row.case, row.grade))
        .collect();
    on_page.sort();
    assert_eq!(on_page, run.cases, "the page's rows against the console's");
}

#[test]
fn the_html_report_opens_in_a_browser_with_every_case_and_the_closing_line() {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is missing: apt-get install chromium (this test opens the HTML report in \
         headless Chromium)"
    );
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().canonicalize().unwrap();
    let corral = corral();
    let corral = corral.to_str().unwrap();
    let host = format!("{corral} serve --stdio --device {{device}}");

    // A host that passes: the handshake cases (wire) and a corral-cli case.
    let passing = dir.join("passing.html");
    let run = run_kit(
        &dir,
        &[
            "--host",
            &host,
            "--host-cli",
            corral,
            "--case",
            "handshake.*",
            "--case",
            "ls.no-server",
            "--report-html",
            passing.to_str().unwrap(),
        ],
    );
    assert!(run.ok, "{}", run.stdout);
    assert!(run.cases.len() > 2, "{}", run.stdout);
    let dom = chromium(&dir, &["--dump-dom"], &url(&passing, ""));
    check_page(&dom, &run);
    assert!(
        rows(&dom)
            .iter()
            .all(|row| row.grade == "pass" && !row.hidden)
    );
    assert!(dom.contains("<tr data-suite=\"wire\">"), "{dom}");
    assert!(dom.contains("<tr data-suite=\"corral-cli\">"), "{dom}");
    let count = run.cases.len().to_string();
    assert_eq!(text_of(&dom, "id=\"shown-count\"", "</span>"), count);

    // A host that drops `id` from every frame fails its handshake; without `--host-cli`, the
    // corral-cli case is skipped.
    let failing = dir.join("failing.html");
    let broken = format!("{RUNNER} drop-id {host}");
    let run = run_kit(
        &dir,
        &[
            "--host",
            &broken,
            "--case",
            "handshake.second-hello",
            "--case",
            "ls.no-server",
            "--report-html",
            failing.to_str().unwrap(),
        ],
    );
    assert!(!run.ok, "{}", run.stdout);
    assert_eq!(
        run.cases,
        [
            ("handshake.second-hello".to_owned(), "fail".to_owned()),
            ("ls.no-server".to_owned(), "skipped".to_owned())
        ],
        "{}",
        run.stdout
    );
    // Filtered to failures by the page's query, as a link to it would be.
    let dom = chromium(&dir, &["--dump-dom"], &url(&failing, "?grade=fail"));
    check_page(&dom, &run);
    let rows = rows(&dom);
    let failed = rows
        .iter()
        .find(|row| row.case == "handshake.second-hello")
        .unwrap();
    assert!(!failed.hidden, "{}", failed.markup);
    assert!(
        failed.markup.contains("class=\"d-del\">-"),
        "{}",
        failed.markup
    );
    assert!(failed.markup.contains("\"id\""), "{}", failed.markup);
    assert!(
        failed
            .markup
            .contains("corral-conformance --backend fake --host "),
        "{}",
        failed.markup
    );
    assert!(failed.markup.contains(" --case handshake.second-hello"));
    assert!(
        failed.markup.contains("class=\"sent\""),
        "{}",
        failed.markup
    );
    let skipped = rows.iter().find(|row| row.case == "ls.no-server").unwrap();
    assert!(skipped.hidden, "{}", skipped.markup);
    assert_eq!(text_of(&dom, "id=\"shown-count\"", "</span>"), "1");

    // As it looks: a real picture, not an empty page.
    let shot = dir.join("shot.png");
    chromium(
        &dir,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
        ],
        &url(&failing, ""),
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 20_000, "a {}-byte screenshot", png.len());
}
