//! A host that dies before its first frame is said as such: how it ended (its exit code) and the
//! last lines of its stderr, whether its stdout closed with it or something it started still
//! holds it, never only "no frame arrived".

use crate::common::{command, locate_in};

const RUNNER: &str = env!("CARGO_BIN_EXE_corral-conformance");

/// Runs the checkout's kit against `host` (a command for `sh -c`) with `args` besides.
fn runner(host: &str, args: &[&str]) -> std::process::Output {
    let env = tempfile::tempdir().unwrap();
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let mut cmd = command(RUNNER);
    locate_in(&mut cmd, env.path());
    cmd.arg("--kit")
        .arg(checkout)
        .args(["--host", host])
        .args(args)
        .output()
        .unwrap()
}

/// Runs one hello case against `host`; what the runner printed.
fn run_against(host: &str) -> String {
    let out = runner(host, &["--case", "handshake.second-hello"]);
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_host_that_exits_at_once_is_said_with_its_code_and_its_stderr() {
    let stdout = run_against("sh -c 'echo cannot open the store >&2; exit 2' {device}");
    // Whether the runner's first write or its first read meets the host's end is a race: either
    // says how the host ended.
    assert!(
        stdout.contains("the host exited with code 2 instead of sending a frame")
            || stdout.contains("the host exited with code 2 instead of reading its input"),
        "{stdout}"
    );
    assert!(stdout.contains("cannot open the store"), "{stdout}");
}

#[test]
fn a_host_that_exits_while_a_child_holds_its_stdout_is_said_with_its_code_and_its_stderr() {
    let stdout = run_against("sh -c 'sleep 60 & echo gave up >&2; exit 2' {device}");
    assert!(
        stdout
            .contains("the host exited with code 2 (a process it started still holds its stdout)"),
        "{stdout}"
    );
    assert!(stdout.contains("gave up"), "{stdout}");
}

/// The kit's wrappers pass on a host's end as it is: an unfinished last line (which the runner
/// then judges) and the host's exit code.
#[test]
fn a_wrapper_passes_on_an_unfinished_last_line_and_the_exit_code() {
    let out = command(RUNNER)
        .args([
            "grow",
            "sh",
            "-c",
            r#"printf '{"t":"ack"}\n{"schema":1,'; exit 3"#,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"x_kit_growth\":true,\"t\":\"ack\"}\n{\"schema\":1,"
    );
}

/// A host command whose program cannot be run is one line before any case, not one failure per
/// case.
#[test]
fn a_host_command_that_cannot_run_is_said_once_before_any_case() {
    let out = runner("/nonexistent/herd serve --device {device}", &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(
            "the host command cannot run: `/nonexistent/herd` does not exist (the command: \
             /nonexistent/herd serve --device {device})"
        ),
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("FAIL"),
        "no case ran: {out:?}"
    );
}
