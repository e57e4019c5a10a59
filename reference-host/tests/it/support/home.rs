//! A per-test home: the config dir (devices.toml, config.toml), the runtime dir, and the
//! environment every `corral` process started from it gets, and nothing else.

use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::{RUN_MARK, command, in_temp_dirs};

use super::host::Host;

/// A per-test home: config dir (devices.toml, config.toml) and runtime dir.
#[derive(Debug)]
pub struct Home {
    pub dir: tempfile::TempDir,
    /// `CORRAL_TMUX_BIN` for every process started from this home.
    pub tmux_bin: PathBuf,
    /// `CORRAL_TMUX_SOCKET`.
    pub tmux_socket: String,
    /// Extra environment (e.g. `CORRAL_SIM_DIR`).
    pub env: Vec<(String, String)>,
    /// `XDG_RUNTIME_DIR`: the home's own, or the simulator's for a fleet's home.
    pub runtime_dir: PathBuf,
}

impl Home {
    /// A home reading the given tmux socket.
    pub fn new(socket: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config/corral")).unwrap();
        Home {
            runtime_dir: dir.path().join("runtime"),
            dir,
            tmux_bin: "tmux".into(),
            tmux_socket: socket.into(),
            env: Vec::new(),
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.dir.path().join("config/corral/config.toml")
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_file(), text).unwrap();
    }

    pub fn runtime(&self) -> PathBuf {
        self.runtime_dir.clone()
    }

    /// The environment every `corral` process of this home gets (besides `PATH`), each name once:
    /// every location inside the home's temp dir, HOME the dir itself.
    pub fn vars(&self) -> Vec<(String, String)> {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let mut vars = in_temp_dirs(self.dir.path());
        vars.extend([
            ("HOME".to_owned(), path(self.dir.path())),
            (
                "XDG_CONFIG_HOME".to_owned(),
                path(&self.dir.path().join("config")),
            ),
            ("XDG_RUNTIME_DIR".to_owned(), path(&self.runtime())),
            ("CORRAL_TMUX_BIN".to_owned(), path(&self.tmux_bin)),
            ("CORRAL_TMUX_SOCKET".to_owned(), self.tmux_socket.clone()),
        ]);
        vars.extend(self.env.iter().cloned());
        if let Some(mark) = std::env::var_os(RUN_MARK) {
            vars.push((RUN_MARK.to_owned(), mark.to_string_lossy().into_owned()));
        }
        // Each name once, with its last value: sshd's `SetEnv` keeps the first.
        let mut seen = std::collections::HashSet::new();
        let mut last_first: Vec<_> = vars
            .into_iter()
            .rev()
            .filter(|(name, _)| seen.insert(name.clone()))
            .collect();
        last_first.reverse();
        last_first
    }

    /// A `corral` command with this home's environment.
    pub fn corral(&self) -> Command {
        self.environment(command(env!("CARGO_BIN_EXE_corral")))
    }

    /// A `corral` command with this home's environment, run under `umask` (octal, as `sh` takes
    /// it): `corral <args>` becomes `sh -c 'umask <umask>; exec "$0" "$@"' corral <args>`.
    pub fn corral_under_umask(&self, umask: &str) -> Command {
        let mut cmd = command("sh");
        cmd.arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_corral"));
        self.environment(cmd)
    }

    /// `program` with this home's environment and nothing else (but `PATH`).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        self.environment(command(program))
    }

    fn environment(&self, mut cmd: Command) -> Command {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `corral <args>` to completion; panics unless it succeeds.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.corral().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "corral {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Gives every tmux invocation of this home's processes ten seconds instead of the one a
    /// fast cycle leaves it: for a test that makes many reads on a loaded machine and is not
    /// about tmux's time-out, where a slow fake tmux would be a failed read.
    pub fn patient_tmux(&mut self) {
        self.env
            .push(("CORRAL_TMUX_TIMEOUT_MS".into(), "10000".into()));
    }

    /// Enrols a device.
    pub fn enrol(&self, name: &str, id: &str, scopes: &[&str]) {
        let mut args = vec!["device", "add", name, "--id", id];
        for scope in scopes {
            args.extend(["--scope", scope]);
        }
        self.ok(&args);
    }

    /// Starts `corral serve --stdio --device <id>`.
    pub fn serve(&self, device: &str) -> Host {
        Host::start(self.serve_command(device))
    }

    /// The command [`Home::serve`] starts, for a test that changes its environment first.
    pub fn serve_command(&self, device: &str) -> Command {
        let mut cmd = self.corral();
        cmd.args(["serve", "--stdio", "--device", device])
            .env("RUST_LOG", "debug");
        cmd
    }
}
