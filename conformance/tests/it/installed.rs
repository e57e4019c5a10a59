//! The kit as another host's team installs it: `corral-conformance`, `corral-sim` and
//! `corral-fake-tmux` copied into a folder of their own, run from a folder with no checkout
//! around, against the reference host's `corral` kept in another folder (as another
//! implementation would be). The sessions, fixtures, ledger and schemas come from the copy
//! embedded in the runner.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{FAKE, SIM, command, corral, locate_in};

const RUNNER: &str = env!("CARGO_BIN_EXE_corral-conformance");

/// Copies a binary into `dir`, keeping its name.
fn copy(binary: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let to = dir.join(binary.file_name().unwrap());
    std::fs::copy(binary, &to).unwrap();
    to
}

/// The system's folders, where `sh`, `git` and `tmux` are.
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Runs the installed runner from `cwd` with `path` as PATH, every location it writes to (HOME,
/// the XDG dirs, TMPDIR, TMUX_TMPDIR) under `env`.
fn run(runner: &Path, env: &Path, cwd: &Path, path: &str, args: &[&str]) -> Output {
    let mut cmd = command(runner.to_str().unwrap());
    // Every location the runner and its children write to, in the test's own temp dir.
    locate_in(&mut cmd, env);
    cmd.current_dir(cwd)
        .args(args)
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MANIFEST_DIR");
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_installed_kit_runs_against_a_host_with_no_checkout_around() {
    let root = tempfile::tempdir().unwrap();
    let kit = root.path().join("kit/bin");
    let runner = copy(Path::new(RUNNER), &kit);
    copy(Path::new(SIM), &kit);
    copy(Path::new(FAKE), &kit);
    let host = copy(&corral(), &root.path().join("host"));
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let host_command = format!("{} serve --stdio --device {{device}}", host.display());
    // A hello case, and one whose `corral-sim hook` runs the host's `corral event`: found only
    // through the --host-cli the runner names to the simulator, as nothing is beside it.
    let out = run(
        &runner,
        &root.path().join("env"),
        &elsewhere,
        SYSTEM_PATH,
        &[
            "--host",
            &host_command,
            "--host-cli",
            host.to_str().unwrap(),
            "--case",
            "handshake.second-hello",
            "--case",
            "event.hook-lane",
            "--junit",
            "report.xml",
            "--markdown",
            "report.md",
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let ledger = golden::ledger::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/requirements.toml"),
    )
    .unwrap();
    let closing = stdout.lines().last().unwrap();
    assert!(
        closing.starts_with("conformance: 2 passed, 0 failed, 0 skipped · requirements: "),
        "{stdout}"
    );
    assert!(
        closing.contains(&format!(
            " excluded of {} · suites: ",
            ledger.requirements.len()
        )),
        "{closing}"
    );
    assert!(stdout.contains("pass       event.hook-lane"), "{stdout}");
    let junit = std::fs::read_to_string(elsewhere.join("report.xml")).unwrap();
    assert!(junit.contains(closing), "{junit}");
    let markdown = std::fs::read_to_string(elsewhere.join("report.md")).unwrap();
    assert!(markdown.contains(closing), "{markdown}");
    // Nothing but the reports was left where it ran.
    let mut left: Vec<String> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["report.md", "report.xml"]);

    // The broken-host proof works installed too: the wrapper is the runner itself.
    let out = run(
        &runner,
        &root.path().join("env"),
        &elsewhere,
        SYSTEM_PATH,
        &[
            "--self-test",
            "--host",
            &host_command,
            "--case",
            "handshake.second-hello",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("rerun: corral-conformance --backend fake --host "),
        "{stdout}"
    );
    assert!(
        stdout.contains("self-test: the kit caught the broken host: 1 of 1 case(s) failed"),
        "{stdout}"
    );
    // Its other half: a host that grows every frame as the protocol allows passes, with notes.
    assert!(
        stdout.contains(
            "self-test: a host that grows every frame passed 1 case(s), each with strict-grade \
             notes, and failed every one of them under --strict"
        ),
        "{stdout}"
    );
}

#[test]
fn a_runner_without_its_simulator_says_what_is_missing_in_one_line() {
    let root = tempfile::tempdir().unwrap();
    let alone = root.path().join("alone");
    let runner = copy(Path::new(RUNNER), &alone);
    copy(Path::new(SIM), &alone);
    // PATH holds only an empty folder: nothing is found there either.
    let empty = root.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(
        &runner,
        &root.path().join("env"),
        root.path(),
        empty.to_str().unwrap(),
        &["--host", "true {device}"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "corral-conformance: missing corral-fake-tmux: not in {} nor on PATH; install the \
             kit whole: cargo install --locked --path conformance (from a corral checkout)\n",
            alone.display()
        )
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn an_installed_runner_needs_the_host_named() {
    let root = tempfile::tempdir().unwrap();
    let out = run(
        Path::new(RUNNER),
        &root.path().join("env"),
        root.path(),
        SYSTEM_PATH,
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("corral-conformance: give the host to test: --host '"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
