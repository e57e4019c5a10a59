//! What the command line says to a person: every `--help` shows what a command is for and an
//! example and exits 0, the device commands confirm what they did, and mistakes are said (a
//! tmux socket with no server, a `$CORRAL_CONFIG` naming no file).

use std::os::unix::fs::MetadataExt;

use assert_cmd::Command;
use predicates::prelude::*;
use test_support::check_help;

use crate::support::Home;

/// `corral` with the home's environment, as an assert_cmd command.
fn corral(home: &Home) -> Command {
    Command::from_std(home.corral())
}

#[test]
fn every_help_says_what_the_command_is_for_with_an_example_and_exits_0() {
    let home = Home::new("unused");
    for args in [
        &["--help"][..],
        &["serve", "--help"],
        &["ls", "--help"],
        &["device", "--help"],
        &["device", "add", "--help"],
        &["device", "list", "--help"],
        &["device", "grant", "--help"],
        &["device", "revoke", "--help"],
        &["daemon", "--help"],
        &["doctor", "--help"],
        &["help", "mute"],
    ] {
        check_help(home.corral().args(args));
    }
}

/// Each device command confirms what it did in one line on stderr; stdout stays empty (it holds
/// only a listing, or `add --key`'s authorized_keys line).
#[test]
fn the_device_commands_confirm_what_they_did_in_one_line_on_stderr() {
    let home = Home::new("unused");
    let confirms = |args: &[&str], line: &str| {
        corral(&home)
            .args(args)
            .assert()
            .success()
            .stdout("")
            .stderr(format!("{line}\n"));
    };
    confirms(
        &[
            "device", "add", "phone", "--id", "SHA256:p", "--scope", "read",
        ],
        "enrolled phone (SHA256:p) with read",
    );
    confirms(
        &["device", "grant", "phone", "act:answer"],
        "granted act:answer to phone (SHA256:p): it has read, act:answer",
    );
    confirms(
        &["device", "grant", "phone", "act:answer"],
        "phone (SHA256:p) already has act:answer: it has read, act:answer",
    );
    confirms(
        &["device", "revoke", "phone"],
        "revoked phone (SHA256:p): its live connections end at their next request or publish",
    );
    corral(&home)
        .args(["device", "revoke", "phone"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("corral: no device named phone\n");
}

#[test]
fn device_list_has_a_header_and_says_when_the_store_is_empty() {
    let home = Home::new("unused");
    let store = home.dir.path().join("config/corral/devices.toml");
    corral(&home)
        .args(["device", "list"])
        .assert()
        .success()
        .stdout(format!(
            "no device is enrolled (the store is {}); enrol one with `corral device add`\n",
            store.display()
        ))
        .stderr("");
    home.enrol("phone", "SHA256:p", &["read"]);
    corral(&home)
        .args(["device", "list"])
        .assert()
        .success()
        .stdout("NAME   ID        SCOPES\nphone  SHA256:p  read\n");
    // Emptied again by a revocation: said again.
    home.ok(&["device", "revoke", "phone"]);
    corral(&home)
        .args(["device", "list"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("no device is enrolled"));
    corral(&home)
        .args(["device", "list", "--json"])
        .assert()
        .success()
        .stdout("{\"schema\":1,\"devices\":[]}\n");
}

/// A socket no tmux server listens on lists nothing, exits 0, and says so on stderr, naming the
/// socket; stdout is the listing as ever (a header, or the empty document).
#[test]
fn ls_on_a_socket_with_no_server_says_so_on_stderr() {
    let socket = test_support::unique("corral-absent");
    let home = Home::new(&socket);
    let uid = std::fs::metadata(home.dir.path()).unwrap().uid();
    let said = format!(
        "corral: no tmux server is running on {}: the fleet is empty\n",
        home.dir
            .path()
            .join(format!("tmux-{uid}/{socket}"))
            .display()
    );
    corral(&home)
        .arg("ls")
        .assert()
        .success()
        .stdout("PANE  AGENT  STATE  DETAIL  LOCATOR  REPO  BRANCH  TITLE\n")
        .stderr(said.clone());
    corral(&home)
        .args(["ls", "--json"])
        .assert()
        .success()
        .stdout("{\"schema\":1,\"agents\":[]}\n")
        .stderr(said);
}

/// A server that runs is no mistake, even with no agent pane: nothing is said.
#[test]
fn ls_on_a_running_server_says_nothing_on_stderr() {
    let fleet = crate::support::Fleet::up(crate::support::Backend::Fake);
    let home = fleet.home();
    corral(&home)
        .arg("ls")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("PANE"))
        .stderr("");
}

/// `$CORRAL_CONFIG` naming a file that does not exist is a mistake, not the defaults: one
/// readable line and a non-zero exit from every command that reads the config.
/// serve's usage line, in an error, does not show the options the environment gave (the kit sets
/// CORRAL_TMUX_BIN and CORRAL_TMUX_SOCKET) as if they were required.
#[test]
fn serves_usage_line_names_only_what_is_required() {
    let home = Home::new("unused");
    corral(&home)
        .env("CORRAL_TMUX_BIN", "/usr/bin/tmux")
        .env("CORRAL_TMUX_SOCKET", "/tmp/nowhere")
        .args(["serve", "--stdio"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "Usage: corral serve [OPTIONS] --stdio --device <ID>\n",
        ))
        .stderr(predicate::str::contains("--tmux-bin").not());
}

#[test]
fn a_corral_config_naming_no_file_is_an_error() {
    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let missing = home.dir.path().join("conifg.toml");
    let said = format!(
        "$CORRAL_CONFIG names {}, which does not exist (create it, or unset CORRAL_CONFIG for the default config file)",
        missing.display()
    );
    for args in [
        &["daemon"][..],
        &["ls"],
        &["debug", "notify-test", "--trigger", "done"],
        &["hooks", "print", "claude"],
    ] {
        corral(&home)
            .env("CORRAL_CONFIG", &missing)
            .args(args)
            .assert()
            .code(1)
            .stdout("")
            .stderr(format!("corral: {said}\n"));
    }
    // serve cannot start: exit 1, its one error frame, the reason in its log.
    let out = home
        .serve_command("fp-phone")
        .env("CORRAL_CONFIG", &missing)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let frame: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(crate::support::is_error(&frame, "0", "internal"), "{frame}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&said),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // doctor reports it as its failing config check.
    corral(&home)
        .env("CORRAL_CONFIG", &missing)
        .arg("doctor")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "FAIL  config          {said}"
        )));
    // But for `corral event`, which never fails its agent's hook: it says so and goes on.
    corral(&home)
        .env("CORRAL_CONFIG", &missing)
        .env("TMUX", home.dir.path().join("no-server,1,0"))
        .env("TMUX_PANE", "%0")
        .args(["event", "claude", "Stop"])
        .write_stdin("{}")
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "config: {said}; using the defaults"
        )));
    // Once the file is there, it is read.
    std::fs::write(&missing, "[serve]\nmax_connections = 1\n").unwrap();
    corral(&home)
        .env("CORRAL_CONFIG", &missing)
        .args(["hooks", "print", "claude"])
        .assert()
        .success();
}

/// A hand-edited store holding a scope this build does not know: serve ignores the token (it
/// grants nothing), and `corral doctor` says which device has it.
#[test]
fn doctor_reports_a_scope_the_build_does_not_know() {
    use std::os::unix::fs::PermissionsExt;

    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "SHA256:p", &["read"]);
    let store = home.dir.path().join("config/corral/devices.toml");
    let text = std::fs::read_to_string(&store)
        .unwrap()
        .replace("\"read\"", "\"read\", \"act:anwser\"");
    std::fs::write(&store, text).unwrap();
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    corral(&home)
        .arg("doctor")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "warn  device-store    ".to_owned() + &store.display().to_string(),
        ))
        .stdout(predicate::str::contains("phone has `act:anwser`"));
    let out = corral(&home).args(["doctor", "--json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "device-store")
        .unwrap();
    assert_eq!(check["status"], "warn", "{report}");
    // The listing shows the token as the store holds it.
    corral(&home)
        .args(["device", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("read,act:anwser"));
}

/// A listing piped into a reader that already left (`corral receipts | head -0`) ends quietly
/// with exit 0, as a shell pipeline expects; a stdout that cannot take a byte (`/dev/full`) is one
/// readable line and exit 1; a full stderr costs the device commands their confirmation, never a
/// panic. Nothing here may panic (exit 101).
#[test]
fn a_closed_or_full_stdout_or_stderr_is_no_crash() {
    let home = Home::new("unused");
    corral(&home)
        .args(["device", "add", "phone", "--id", "SHA256:p"])
        .assert()
        .success();
    let (read, write) = std::io::pipe().unwrap();
    drop(read);
    let mut closed = home.corral();
    closed.args(["device", "list"]).stdout(write);
    let out = closed.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");

    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut cmd = home.corral();
    let out = cmd
        .args(["device", "list"])
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("corral: writing stdout"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for args in [
        &["device", "grant", "phone", "act:answer"][..],
        &["device", "revoke", "phone"],
    ] {
        let mut cmd = home.corral();
        let out = cmd.args(args).stderr(full()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}
