//! The deployment the README and `docs/deploy.md` describe, proven against a real OpenSSH server
//! on loopback (its own host key, port and `authorized_keys`, started by the test): a key whose
//! `authorized_keys` line is the one `corral device add --key` printed gets hello, snapshot and
//! subscribe through `ssh -T`; a key without a record is refused; revoking a device ends its live
//! session's stream; two keys are two devices. Needs `/usr/sbin/sshd` (Debian's openssh-server,
//! which `.ci/run` installs).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::command;

use crate::support::{Backend, Fleet, Home, Host};

const SSHD: &str = "/usr/sbin/sshd";

/// A throwaway sshd on 127.0.0.1, killed when dropped.
struct Sshd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        privsep_dir_released();
    }
}

/// sshd, run as root, wants its privilege-separation dir, `/run/sshd`, for as long as it serves.
const PRIVSEP_DIR: &str = "/run/sshd";

/// How many sshd of this test binary use [`PRIVSEP_DIR`], and whether a test made it (then the
/// last one to end removes it: the run leaves nothing outside its temp dirs, and `.ci/hygiene`
/// checks that too).
static PRIVSEP_USERS: std::sync::Mutex<(usize, bool)> = std::sync::Mutex::new((0, false));

fn privsep_dir_taken() {
    let mut users = PRIVSEP_USERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if users.0 == 0 && !std::path::Path::new(PRIVSEP_DIR).exists() {
        users.1 = std::fs::create_dir(PRIVSEP_DIR).is_ok();
    }
    users.0 += 1;
}

fn privsep_dir_released() {
    let mut users = PRIVSEP_USERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    users.0 = users.0.saturating_sub(1);
    if users.0 == 0 && users.1 {
        let _ = std::fs::remove_dir(PRIVSEP_DIR);
        users.1 = false;
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh ed25519 key pair in `dir`; the private key's path.
fn keygen(dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    run(command("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key));
    key
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn user() -> String {
    run(command("id").arg("-un")).trim().to_owned()
}

impl Sshd {
    /// Starts sshd with `authorized_keys` as every user's key file and `vars` set in the sessions
    /// it starts (the forced command then finds the test's config, store and tmux).
    fn start(authorized_keys: &Path, vars: &[(String, String)]) -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: install openssh-server (apt-get install openssh-server) to run the deployment test"
        );
        let dir = tempfile::tempdir().unwrap();
        let host_key = dir.path().join("host_key");
        run(command("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&host_key));
        let port = free_port();
        let mut config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nPidFile none\nAuthorizedKeysFile {}\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nLogLevel ERROR\n",
            host_key.display(),
            authorized_keys.display()
        );
        let set_env: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
        config.push_str(&format!("SetEnv {}\n", set_env.join(" ")));
        let config_file = dir.path().join("sshd_config");
        std::fs::write(&config_file, config).unwrap();
        privsep_dir_taken();
        let child = command(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config_file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let sshd = Sshd { child, port, dir };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "sshd did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        sshd
    }

    /// `ssh -T` as `key` to this server, driven like a host on its stdio.
    fn connect(&self, key: &Path) -> Host {
        let mut ssh = command("ssh");
        ssh.args([
            "-T",
            "-F",
            "/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
        ])
        .args(["-o", "StrictHostKeyChecking=no", "-o", "LogLevel=ERROR"])
        .arg("-o")
        .arg(format!(
            "UserKnownHostsFile={}",
            self.dir.path().join("known_hosts").display()
        ))
        .arg("-i")
        .arg(key)
        .args(["-p", &self.port.to_string()])
        .arg(format!("{}@127.0.0.1", user()));
        Host::start(ssh)
    }
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
    let sshd = Sshd::start(&authorized_keys, &home.vars());

    // hello, snapshot and subscribe through ssh; the device is the key, not the hello's claim.
    let mut session = sshd.connect(&phone);
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
    let mut other = sshd.connect(&tablet);
    assert_eq!(hello(&mut other)["scopes"], json!(["read", "act:answer"]));
    other.close();
    assert_eq!(other.exit_code(), 0);

    // A key whose record is gone is refused before anything else, and ssh exits 2.
    let mut refused = sshd.connect(&stranger);
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
