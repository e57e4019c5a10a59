//! A configuration the client cannot use is one line on stderr and exit 2, before anything
//! starts.

use crate::support::{REMOTE, command};

fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = command(REMOTE, dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_bad_config_is_one_line_naming_the_file_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("remote.toml");
    std::fs::write(
        &file,
        "[[host]]\nname = \"a\"\nssh = \"a.lan\"\nport = 22\n",
    )
    .unwrap();
    let (code, out, err) = run(
        tmp.path(),
        &["--ndjson", "--config", file.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert_eq!(
        err,
        format!(
            "corral-remote: {}:4: unknown field `port`, expected one of `name`, `ssh`, `ssh_options`, `local`, `command`, `device`, `corral`\n",
            file.display()
        )
    );

    std::fs::write(&file, "[[host]\n").unwrap();
    let (code, _, err) = run(tmp.path(), &["--config", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("corral-remote: {}:1: ", file.display())),
        "{err}"
    );

    let missing = tmp.path().join("nowhere.toml");
    let (code, _, err) = run(tmp.path(), &["--config", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read it"), "{err}");
}

#[test]
fn without_hosts_or_a_file_it_says_how_to_name_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = run(tmp.path(), &["--ndjson"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/.config/corral/remote.toml: no such file"),
        "{err}"
    );
    let (code, _, err) = run(tmp.path(), &["--ndjson", "--local", "here"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "corral-remote: --local here needs the device to serve: add --device here=SHA256:…\n"
    );
    let (code, _, err) = run(tmp.path(), &["--ndjson", "--frobnicate"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn help_says_what_it_is_for_with_examples() {
    let tmp = tempfile::tempdir().unwrap();
    test_support::check_help(command(REMOTE, tmp.path()).arg("--help"));
    test_support::check_help(command(REMOTE, tmp.path()).arg("-h"));
}

#[test]
fn help_shows_the_config_format_and_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out, _) = run(tmp.path(), &["--help"]);
    assert_eq!(code, 0);
    for needle in [
        "[[host]]",
        "ssh = ",
        "local = true",
        "Examples:",
        "--ndjson",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
}
