//! A throwaway OpenSSH server on 127.0.0.1 for the tests that prove a deployment over ssh (the
//! host's, and the client's reaching a fleet through `ssh -T`): its own host key, port and
//! `authorized_keys`, killed when dropped. Needs `/usr/sbin/sshd` (Debian's openssh-server,
//! which `.ci/run` installs); without it a test fails saying so. sshd, run as root, wants its
//! privilege-separation dir `/run/sshd` for as long as it serves: a test process that made it
//! removes it when its last server ends, and `.ci/hygiene` fails a run that leaves it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::process::command;

/// The server's binary.
pub const SSHD: &str = "/usr/sbin/sshd";

/// sshd's privilege-separation dir.
const PRIVSEP_DIR: &str = "/run/sshd";

/// How many servers of this process use [`PRIVSEP_DIR`], and whether this process made it.
static PRIVSEP_USERS: Mutex<(usize, bool)> = Mutex::new((0, false));

fn privsep_dir_taken() {
    let mut users = PRIVSEP_USERS.lock().unwrap_or_else(PoisonError::into_inner);
    if users.0 == 0 && !Path::new(PRIVSEP_DIR).exists() {
        users.1 = std::fs::create_dir(PRIVSEP_DIR).is_ok();
    }
    users.0 += 1;
}

fn privsep_dir_released() {
    let mut users = PRIVSEP_USERS.lock().unwrap_or_else(PoisonError::into_inner);
    users.0 = users.0.saturating_sub(1);
    if users.0 == 0 && users.1 {
        let _ = std::fs::remove_dir(PRIVSEP_DIR);
        users.1 = false;
    }
}

/// Runs `cmd` to its end; its stdout, or a panic with its stderr.
fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh ed25519 key pair in `dir`, commented `name`; the private key's path (the public one
/// is `<path>.pub`).
pub fn keygen(dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    run(command("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key));
    key
}

/// The user the tests run as, whom the server lets in.
pub fn user() -> String {
    run(command("id").arg("-un")).trim().to_owned()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A throwaway sshd on 127.0.0.1, killed when dropped.
#[derive(Debug)]
pub struct Sshd {
    child: Child,
    /// Its port.
    pub port: u16,
    /// Its host key, config and the clients' `known_hosts`.
    dir: PathBuf,
}

impl Sshd {
    /// Starts a server with `authorized_keys` as every user's key file, its files in a fresh dir
    /// under `parent`, and `vars` set in the sessions it starts (so a forced command finds the
    /// test's config, store and tmux). Waits until it listens.
    pub fn start(parent: &Path, authorized_keys: &Path, vars: &[(String, String)]) -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: install openssh-server (apt-get install openssh-server) to run \
             the tests that go through ssh"
        );
        let dir = parent.join(crate::process::unique("sshd"));
        std::fs::create_dir_all(&dir).unwrap();
        let host_key = dir.join("host_key");
        run(command("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&host_key));
        let port = free_port();
        let mut config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nPidFile none\nAuthorizedKeysFile {}\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nLogLevel INFO\n",
            host_key.display(),
            authorized_keys.display()
        );
        let set_env: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !set_env.is_empty() {
            config.push_str(&format!("SetEnv {}\n", set_env.join(" ")));
        }
        let config_file = dir.join("sshd_config");
        std::fs::write(&config_file, config).unwrap();
        // Its log (`-e`: to stderr) goes to a file: what [`Sshd::accepted`] counts.
        let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
        privsep_dir_taken();
        let child = command(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&config_file)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(err) => {
                privsep_dir_released();
                panic!("starting {SSHD}: {err}");
            }
        };
        let sshd = Sshd { child, port, dir };
        // A loaded machine may take a while to start it: the wait is generous.
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "sshd did not listen within 20 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        sshd
    }

    /// How many connections the server let in so far: the `Accepted publickey` lines of its log.
    /// A client that must not try again is shown not to by this count, taken at sshd.
    pub fn accepted(&self) -> usize {
        std::fs::read_to_string(self.dir.join("sshd.log"))
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains("Accepted publickey"))
            .count()
    }

    /// The options of an `ssh` that logs in to this server with `key`, trusting its host key and
    /// reading no one's ssh config.
    pub fn options(&self, key: &Path) -> Vec<String> {
        let known_hosts = self.dir.join("known_hosts");
        [
            "-F",
            "/dev/null",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "LogLevel=ERROR",
        ]
        .map(String::from)
        .into_iter()
        .chain([
            "-o".to_owned(),
            format!("UserKnownHostsFile={}", known_hosts.display()),
            "-i".to_owned(),
            key.display().to_string(),
            "-p".to_owned(),
            self.port.to_string(),
        ])
        .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        privsep_dir_released();
    }
}
