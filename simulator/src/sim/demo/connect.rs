//! What a client needs to reach the demo: the host's files in the demo's dir (a config, the
//! device store with the demo's device enrolled), and the one command line that starts
//! `corral serve --stdio` on them, its environment spelt out with `env` so the same line works in
//! a shell, as an app's spawn command and as an ssh forced command; and `connect`, a script that
//! runs that line, so a person types a short path instead.
//!
//! The dir's layout is a fleet's temp world (`stdx::world::FleetDirs`) and the script:
//! `connect`, `sim/` (`$CORRAL_SIM_DIR`, the fake tmux's state), `config/` (`$XDG_CONFIG_HOME`:
//! `corral/config.toml`, `corral/devices.toml`), `run/` (`$XDG_RUNTIME_DIR`, 0700: the host's
//! runtime dir is `run/corral`), `home/` (`$HOME` of the hooks the demo runs).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use golden::Backend;
use schema::device::{DeviceRecord, DeviceStore};
use schema::vocab::Scope;
use stdx::world::FleetDirs;

/// The scopes the demo's device gets: it may read, answer permissions and questions, and steer.
pub const SCOPES: [Scope; 3] = [Scope::Read, Scope::ActAnswer, Scope::ActSteer];

/// The config the demo's host processes read: a quick cycle, so an app sees edges at once, and
/// a permission hook that waits for the demo (or an app) rather than giving up after a minute.
pub const CONFIG: &str = "\
# Written by corral-sim demo.
[serve]
reconcile_interval_ms = 500

[event]
permission_wait_s = 3600
";

/// The demo's dirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// The demo's own dir.
    pub root: PathBuf,
}

impl Dirs {
    /// The demo's dir as a fleet's temp world.
    fn world(&self) -> FleetDirs {
        FleetDirs::new(&self.root)
    }

    /// `$CORRAL_SIM_DIR`.
    pub fn sim(&self) -> PathBuf {
        self.world().sim()
    }

    /// `$XDG_CONFIG_HOME`.
    pub fn config(&self) -> PathBuf {
        self.world().config()
    }

    /// `$CORRAL_CONFIG`, where `$XDG_CONFIG_HOME` would have it (named all the same, so a
    /// `CORRAL_CONFIG` of the caller's is not the one read).
    pub fn config_file(&self) -> PathBuf {
        self.config().join("corral/config.toml")
    }

    /// `$XDG_RUNTIME_DIR`.
    pub fn run(&self) -> PathBuf {
        self.world().run()
    }

    /// The host's runtime dir, `$XDG_RUNTIME_DIR/corral`.
    pub fn runtime(&self) -> PathBuf {
        self.run().join("corral")
    }

    /// `$HOME` of the hooks.
    pub fn home(&self) -> PathBuf {
        self.world().home()
    }

    /// The script that connects a client: `<dir>/connect`.
    pub fn connect_script(&self) -> PathBuf {
        self.root.join("connect")
    }

    /// Writes [`Dirs::connect_script`], executable by its owner only, running `command`.
    pub fn write_connect_script(&self, command: &str) -> anyhow::Result<()> {
        let path = self.connect_script();
        write_private(&path, &script(&self.root, command))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        Ok(())
    }

    /// Makes every dir, private, and writes the config and the device store with the device
    /// `device` (named `name`) enrolled at `now_ms`.
    pub fn prepare(&self, device: &str, name: &str, now_ms: u64) -> anyhow::Result<()> {
        let private = std::fs::Permissions::from_mode(0o700);
        for dir in [
            self.root.clone(),
            self.sim(),
            self.config(),
            self.config().join("corral"),
            self.run(),
            self.home(),
        ] {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            std::fs::set_permissions(&dir, private.clone())?;
        }
        let corral = self.config().join("corral");
        write_private(&self.config_file(), CONFIG)?;
        let store = DeviceStore {
            devices: vec![DeviceRecord {
                id: device.to_owned(),
                name: name.to_owned(),
                scopes: SCOPES.to_vec(),
                paired_at_ms: now_ms,
            }],
        };
        write_private(&corral.join("devices.toml"), &toml::to_string(&store)?)
    }

    /// The environment `corral` needs to serve this demo's fleet (and its hooks, to stamp it);
    /// `socket` is the tmux socket's name or path.
    pub fn host_env(
        &self,
        backend: Backend,
        tmux_bin: &str,
        socket: &str,
    ) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if backend == Backend::Fake {
            env.push((
                crate::env::SIM_DIR_VAR.to_owned(),
                self.sim().display().to_string(),
            ));
        }
        env.extend([
            ("CORRAL_TMUX_BIN".to_owned(), tmux_bin.to_owned()),
            ("CORRAL_TMUX_SOCKET".to_owned(), socket.to_owned()),
            (
                "CORRAL_CONFIG".to_owned(),
                self.config_file().display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".to_owned(),
                self.config().display().to_string(),
            ),
            (
                "XDG_RUNTIME_DIR".to_owned(),
                self.run().display().to_string(),
            ),
        ]);
        env
    }
}

fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// A word as `sh` reads it back: the workspace's one quoting rule, which the kit's host profiles
/// use too.
pub use stdx::shell_quote as quote;

/// The command that connects a client: `env NAME=VALUE ... <corral> serve --stdio --device ID`.
pub fn command_line(env: &[(String, String)], corral: &Path, device: &str) -> String {
    let mut words = vec!["env".to_owned()];
    words.extend(
        env.iter()
            .map(|(name, value)| quote(&format!("{name}={value}"))),
    );
    words.extend([
        quote(&corral.display().to_string()),
        "serve".to_owned(),
        "--stdio".to_owned(),
        "--device".to_owned(),
        quote(device),
    ]);
    words.join(" ")
}

/// The connect script of the demo in `root`: `exec` of `command`, so the client's process is
/// `corral serve` itself and its stdin, stdout and exit code are serve's.
pub fn script(root: &Path, command: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # Written by corral-sim demo: connects a client to the demo fleet in {}\n\
         # (NDJSON frames on stdin and stdout), while the demo runs.\n\
         exec {command}\n",
        // A comment ends at a line break, so one in the path must not end it.
        root.display().to_string().replace(['\n', '\r'], "?")
    )
}

/// The `authorized_keys` line that makes an ssh key run `command` whatever it asks for. Inside
/// `command="..."` sshd reads `\"` as a quote and every other byte as it is.
pub fn authorized_keys_line(command: &str) -> String {
    let escaped = command.replace('"', "\\\"");
    format!("command=\"{escaped}\",restrict <the app's public key, e.g. ssh-ed25519 AAAA... app>")
}

/// The `corral` to run: beside this executable, else the first on `PATH`; `None` when neither.
pub fn corral_bin() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name("corral"))
        .filter(|path| path.is_file());
    beside.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("corral"))
            .find(|candidate| candidate.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_the_shell_would_split_or_expand_them() {
        assert_eq!(quote("SHA256:abc+/="), "SHA256:abc+/=");
        assert_eq!(quote("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn the_command_names_every_variable_then_serve() {
        let dirs = Dirs {
            root: PathBuf::from("/tmp/demo x"),
        };
        let env = dirs.host_env(Backend::Fake, "/bin/corral-fake-tmux", "corral-demo-1");
        let line = command_line(&env, Path::new("/bin/corral"), "SHA256:corral-demo");
        assert_eq!(
            line,
            "env 'CORRAL_SIM_DIR=/tmp/demo x/sim' CORRAL_TMUX_BIN=/bin/corral-fake-tmux \
             CORRAL_TMUX_SOCKET=corral-demo-1 'CORRAL_CONFIG=/tmp/demo x/config/corral/config.toml' \
             'XDG_CONFIG_HOME=/tmp/demo x/config' \
             'XDG_RUNTIME_DIR=/tmp/demo x/run' /bin/corral serve --stdio --device SHA256:corral-demo"
        );
        let real = dirs.host_env(Backend::Real, "/usr/bin/tmux", "s");
        assert!(real.iter().all(|(name, _)| name != "CORRAL_SIM_DIR"));
    }

    #[test]
    fn the_script_execs_the_command_line() {
        let text = script(Path::new("/tmp/d"), "env A=b /bin/corral serve --stdio");
        assert_eq!(
            text,
            "#!/bin/sh\n\
             # Written by corral-sim demo: connects a client to the demo fleet in /tmp/d\n\
             # (NDJSON frames on stdin and stdout), while the demo runs.\n\
             exec env A=b /bin/corral serve --stdio\n"
        );
    }

    #[test]
    fn the_forced_command_escapes_quotes() {
        assert_eq!(
            authorized_keys_line(r#"env 'A=b "c"' corral"#),
            r#"command="env 'A=b \"c\"' corral",restrict <the app's public key, e.g. ssh-ed25519 AAAA... app>"#
        );
    }

    #[test]
    fn prepared_files_are_private_and_enrol_the_device() {
        let root = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            root: root.path().join("demo"),
        };
        dirs.prepare("SHA256:x", "demo-app", 5).unwrap();
        let store = dirs.config().join("corral/devices.toml");
        let mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let mode = std::fs::metadata(dirs.run()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        dirs.write_connect_script("true").unwrap();
        let script = std::fs::metadata(dirs.connect_script()).unwrap();
        assert_eq!(script.permissions().mode() & 0o777, 0o700);
        let read: DeviceStore = toml::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
        assert_eq!(read.devices[0].id, "SHA256:x");
        assert_eq!(read.devices[0].scopes, SCOPES);
        let config: schema::Config = toml::from_str(CONFIG).unwrap();
        assert_eq!(config.event.permission_wait_s, 3600);
    }
}
