//! The deployment the README and `docs/deploy.md` describe, proven against a real OpenSSH server
//! on loopback (its own host key, port and `authorized_keys`, started by the test): a key whose
//! `authorized_keys` line is the one `corral device add --key` printed gets hello, snapshot and
//! subscribe through `ssh -T`; a key without a record is refused; revoking a device ends its live
//! session's stream; two keys are two devices. Needs `/usr/sbin/sshd` (Debian's openssh-server,
//! which `.ci/run` installs).

use std::path::Path;

use serde_json::{Value, json};
use test_support::command;
use test_support::sshd::{Sshd, keygen, user};

use crate::support::{Backend, Fleet, Home, Host};

fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `ssh -T` as `key` to `sshd`, driven like a host on its stdio.
fn connect(sshd: &Sshd, key: &Path) -> Host {
    let mut ssh = command("ssh");
    ssh.args(["-T", "-o", "BatchMode=yes"])
        .args(sshd.options(key))
        .arg(format!("{}@127.0.0.1", user()));
    Host::start(ssh)
}

fn hello(host: &mut Host) -> Value {
    host.send(
        &json!({"schema":1,"id":"1","t":"hello","app":"ssh-test","app_version":"1","device":"claimed"})
            .to_string(),
    );
    host.recv()
}

/// `corral device add <name> --key <pub>`: the `authorized_keys` line it prints.
fn enrol(home: &Home, name: &str, key: &Path, scopes: &[&str]) -> String {
    let mut args = vec![
        "device".to_owned(),
        "add".into(),
        name.into(),
        "--key".into(),
    ];
    args.push(format!("{}.pub", key.display()));
    for scope in scopes {
        args.extend(["--scope".into(), (*scope).to_owned()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    home.ok(&args)
}

#[test]
fn ssh_deployment_on_a_real_sshd() {
    let fleet = Fleet::up(Backend::Fake);
    let home = fleet.home();
    let keys = tempfile::tempdir().unwrap();
    let (phone, tablet, stranger) = (
        keygen(keys.path(), "phone"),
        keygen(keys.path(), "tablet"),
        keygen(keys.path(), "stranger"),
    );

    // The printed line is the key's, with the fingerprint ssh-keygen computes.
    let phone_line = enrol(&home, "phone", &phone, &["read"]);
    let printed = run(command("ssh-keygen")
        .arg("-lf")
        .arg(format!("{}.pub", phone.display())));
    let fingerprint = printed.split_whitespace().nth(1).unwrap().to_owned();
    assert!(phone_line.starts_with("command=\""), "{phone_line}");
    assert!(
        phone_line.contains(&format!(
            " serve --stdio --device {fingerprint}\",restrict ssh-ed25519 "
        )),
        "{phone_line}"
    );
    let tablet_line = enrol(&home, "tablet", &tablet, &["read", "act:answer"]);
    let stranger_line = enrol(&home, "stranger", &stranger, &["read"]);
    home.ok(&["device", "revoke", "stranger"]);
    let authorized_keys = keys.path().join("authorized_keys");
    std::fs::write(
        &authorized_keys,
        format!("{phone_line}{tablet_line}{stranger_line}"),
    )
    .unwrap();
    let sshd = Sshd::start(keys.path(), &authorized_keys, &home.vars());

    // hello, snapshot and subscribe through ssh; the device is the key, not the hello's claim.
    let mut session = connect(&sshd, &phone);
    let reply = hello(&mut session);
    assert_eq!(reply["scopes"], json!(["read"]), "{reply}");
    session.send(&json!({"schema":1,"id":"2","t":"snapshot"}).to_string());
    let snapshot = session.recv();
    assert!(
        !snapshot["agents"].as_array().unwrap().is_empty(),
        "{snapshot}"
    );
    session.send(&json!({"schema":1,"id":"3","t":"subscribe","events":true}).to_string());
    assert_eq!(session.recv()["t"], "ack");

    // Two keys are two devices, at once.
    let mut other = connect(&sshd, &tablet);
    assert_eq!(hello(&mut other)["scopes"], json!(["read", "act:answer"]));
    other.close();
    assert_eq!(other.exit_code(), 0);

    // A key whose record is gone is refused before anything else, and ssh exits 2.
    let mut refused = connect(&sshd, &stranger);
    let first = refused.recv();
    assert_eq!(
        (&first["id"], &first["code"]),
        (&json!("0"), &json!("scope-denied")),
        "{first}"
    );
    assert_eq!(refused.exit_code(), 2);

    // Revoking the phone ends its live stream at the next cycle.
    home.ok(&["device", "revoke", "phone"]);
    let ended = session.recv();
    assert_eq!(
        (&ended["id"], &ended["code"]),
        (&json!("3"), &json!("scope-denied")),
        "{ended}"
    );
    assert_eq!(session.exit_code(), 2);
}
