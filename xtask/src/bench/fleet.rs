//! The bench's world: the binaries it measures, a scratch home (config, device store, runtime
//! dir, simulator state) and a fleet of agent panes brought up by `corral-sim up` on a scratch
//! real tmux server or the fake, brought down again when the [`Fleet`] is dropped.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use golden::SimFile;
use golden::fixture::Fixture;
use schema::PaneOption;
use stdx::world::FleetDirs;

use super::cli::Options;
use super::conn::Conn;
use super::process::{command, output, stdout};
use crate::workspace_root;

/// The device every `serve` of the bench runs as.
pub const DEVICE: &str = "SHA256:corral-bench";

/// Panes of a window in the large fixture, and of every window the bench makes.
const PANES_PER_WINDOW: usize = 20;

/// The binaries a run measures.
#[derive(Debug, Clone)]
pub struct Bins {
    pub corral: PathBuf,
    pub sim: PathBuf,
    /// The reference client, `corral-remote` (C1).
    pub remote: PathBuf,
    /// `reference-host/examples/ledger_claims` (P7's claims per second).
    pub ledger_claims: PathBuf,
    /// `release`, or `debug` when the binaries came from a debug build (a test's quick run).
    pub profile: String,
}

impl Bins {
    /// Builds the release binaries (unless `--no-build`) and finds them.
    pub fn prepare(options: &Options) -> anyhow::Result<Bins> {
        let dir = match &options.bin_dir {
            Some(dir) => dir.clone(),
            None => crate::conformance::target_dir().join("release"),
        };
        if options.build {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            output(command(cargo).current_dir(workspace_root()).args([
                "build",
                "--release",
                "--quiet",
                "-p",
                "reference-host",
                "-p",
                "conformance",
                "-p",
                "client",
                "--bins",
                "--example",
                "ledger_claims",
            ]))
            .context("building the release binaries")?;
        }
        let bins = Bins {
            corral: dir.join("corral"),
            sim: dir.join("corral-sim"),
            remote: dir.join("corral-remote"),
            ledger_claims: dir.join("examples/ledger_claims"),
            profile: if dir.ends_with("debug") {
                "debug".into()
            } else {
                "release".into()
            },
        };
        for bin in [&bins.corral, &bins.sim, &bins.remote, &bins.ledger_claims] {
            if !bin.exists() {
                bail!(
                    "{} is not built (cargo build --release -p reference-host -p conformance -p client --bins --example ledger_claims)",
                    bin.display()
                );
            }
        }
        Ok(bins)
    }
}

/// A fleet up on a tmux server, with the scratch home every process of the bench shares.
#[derive(Debug)]
pub struct Fleet {
    pub bins: Bins,
    /// The scratch dir: `sim/`, `config/`, `run/`, `home/`, `logs/`.
    pub dir: PathBuf,
    pub socket: String,
    /// The server's socket path (`$TMUX`'s first part for a hook).
    pub socket_path: String,
    pub tmux_bin: PathBuf,
    /// Fixture pane name → `%N`.
    panes: BTreeMap<String, String>,
    /// The reconcile interval in the config, in ms.
    pub interval_ms: u64,
    /// The config's `[notify] command`.
    notify_command: String,
    /// Which tmux the fleet runs on.
    pub backend: golden::Backend,
    /// Whether `corral-sim down` is still due.
    up: bool,
}

impl Fleet {
    /// Writes the config and device store, brings `options.panes` agent panes up and enrols the
    /// bench's device. `notify_command` is the config's `[notify] command`.
    pub fn up(
        bins: &Bins,
        dir: &Path,
        options: &Options,
        notify_command: &str,
    ) -> anyhow::Result<(Fleet, f64)> {
        let socket = format!("corral-bench-{}", std::process::id());
        Fleet::up_on(bins, dir, options, notify_command, socket)
    }

    /// A fleet of `panes` agent panes of its own beside this one: its own scratch dir under
    /// this fleet's, its own tmux server (this one's socket name with `-<name>`).
    pub fn beside(
        &self,
        name: &str,
        panes: usize,
        options: &Options,
    ) -> anyhow::Result<(Fleet, f64)> {
        self.beside_notifying(name, panes, options, |_| "true".to_owned())
    }

    /// [`Fleet::beside`], whose config's `[notify] command` is `command` of its scratch dir.
    pub fn beside_notifying(
        &self,
        name: &str,
        panes: usize,
        options: &Options,
        command: impl FnOnce(&Path) -> String,
    ) -> anyhow::Result<(Fleet, f64)> {
        let options = Options {
            panes,
            ..options.clone()
        };
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir)?;
        let socket = format!("{}-{name}", self.socket);
        Fleet::up_on(&self.bins, &dir, &options, &command(&dir), socket)
    }

    /// [`Fleet::up`] on the tmux server named `socket` (a name of the bench's own).
    pub fn up_on(
        bins: &Bins,
        dir: &Path,
        options: &Options,
        notify_command: &str,
        socket: String,
    ) -> anyhow::Result<(Fleet, f64)> {
        // A fleet's temp world (its runtime dir's parent private, as XDG_RUNTIME_DIR is).
        FleetDirs::new(dir).make()?;
        for sub in ["config/corral", "logs"] {
            std::fs::create_dir_all(dir.join(sub))
                .with_context(|| format!("making {}", dir.join(sub).display()))?;
        }
        std::fs::write(
            dir.join("config/corral/config.toml"),
            config_text(options.interval_ms, notify_command),
        )?;
        let mut fleet = Fleet {
            bins: bins.clone(),
            dir: dir.to_owned(),
            socket,
            socket_path: String::new(),
            tmux_bin: PathBuf::new(),
            panes: BTreeMap::new(),
            interval_ms: options.interval_ms,
            notify_command: notify_command.to_owned(),
            backend: options.backend,
            up: false,
        };
        let fixture = fixture_file(dir, options.panes)?;
        let started = Instant::now();
        fleet.up = true;
        let answer = output(fleet.sim().arg("up").arg(&fixture).args([
            "--backend",
            options.backend.as_str(),
            "--socket",
            &fleet.socket,
        ]))
        .context("bringing the fleet up")?;
        let up_s = started.elapsed().as_secs_f64();
        let sim: SimFile =
            serde_json::from_slice(&answer.stdout).context("reading corral-sim up's answer")?;
        fleet.socket_path = sim.socket_path;
        fleet.tmux_bin = PathBuf::from(sim.tmux_bin);
        fleet.panes = sim.panes;
        if fleet.panes.len() != options.panes {
            bail!(
                "the fixture brought {} panes up, not {}",
                fleet.panes.len(),
                options.panes
            );
        }
        output(
            fleet
                .corral()
                .args(["device", "add", "bench", "--id", DEVICE, "--scope", "read"]),
        )
        .context("enrolling the bench's device")?;
        Ok((fleet, up_s))
    }

    /// Rewrites the config with `interval_ms` as the reconcile interval: what every `serve` and
    /// daemon started from now on runs with.
    pub fn set_interval(&mut self, interval_ms: u64) -> anyhow::Result<()> {
        std::fs::write(
            self.dir.join("config/corral/config.toml"),
            config_text(interval_ms, &self.notify_command),
        )?;
        self.interval_ms = interval_ms;
        Ok(())
    }

    /// Runs `corral event claude <hook>` as an agent's hook in `pane` runs it (`$TMUX`,
    /// `$TMUX_PANE`, `payload` on stdin) to its end; it must exit 0 and say nothing.
    pub fn event(&self, pane: &str, hook: &str, payload: &str) -> anyhow::Result<()> {
        let mut cmd = self.corral();
        cmd.args(["event", "claude", hook])
            .env("TMUX", format!("{},0,0", self.socket_path))
            .env("TMUX_PANE", pane)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().context("starting corral event")?;
        let mut stdin = child.stdin.take().context("no stdin pipe")?;
        std::io::Write::write_all(&mut stdin, payload.as_bytes())?;
        drop(stdin);
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!("corral event exited with {}", out.status);
        }
        if !out.stderr.is_empty() {
            bail!(
                "corral event said: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// The process id of the fleet's tmux server; `None` on the fake, which has none (each of
    /// its invocations is a process of its own, a child of whoever ran it).
    pub fn server_pid(&self) -> anyhow::Result<Option<u32>> {
        if self.backend == golden::Backend::Fake {
            return Ok(None);
        }
        let pid = stdout(self.tmux().args(["display-message", "-p", "#{pid}"]))?;
        Ok(Some(
            pid.parse().with_context(|| format!("tmux's pid {pid:?}"))?,
        ))
    }

    /// How many panes the fleet has.
    pub fn pane_count(&self) -> usize {
        self.panes.len()
    }

    /// The `%N` of fixture pane `name`.
    pub fn pane(&self, name: &str) -> anyhow::Result<&str> {
        self.panes
            .get(name)
            .map(String::as_str)
            .with_context(|| format!("the fleet has no pane {name}"))
    }

    /// The environment every child gets: the scratch home, the fleet's tmux, nothing inherited
    /// that could point at another server or config.
    pub fn env(&self, cmd: &mut Command) {
        for (name, _) in std::env::vars_os() {
            let text = name.to_string_lossy();
            if text.starts_with("CORRAL_") || text == "TMUX" || text == "TMUX_PANE" {
                cmd.env_remove(&name);
            }
        }
        cmd.envs(FleetDirs::new(&self.dir).vars());
        // tmux's socket dir inside the fleet's too: a bench (and its tests) leave no
        // `tmux-<uid>` behind in the user's.
        let vars: [(&str, OsString); 5] = [
            ("TMUX_TMPDIR", self.dir.clone().into()),
            (
                "CORRAL_CONFIG",
                self.dir.join("config/corral/config.toml").into(),
            ),
            ("CORRAL_TMUX_SOCKET", self.socket.clone().into()),
            ("CORRAL_TMUX_BIN", self.tmux_bin.clone().into()),
            ("NO_COLOR", "1".into()),
        ];
        for (name, value) in vars {
            // Before `up` answered, the tmux binary is not known yet.
            if !value.is_empty() {
                cmd.env(name, value);
            }
        }
    }

    /// `program` with the bench's environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = command(program);
        self.env(&mut cmd);
        cmd.stdin(Stdio::null());
        cmd
    }

    pub fn sim(&self) -> Command {
        self.command(&self.bins.sim)
    }

    pub fn corral(&self) -> Command {
        self.command(&self.bins.corral)
    }

    /// The fleet's tmux with its socket selected.
    pub fn tmux(&self) -> Command {
        let mut cmd = self.command(&self.tmux_bin);
        cmd.args(["-L", &self.socket]);
        cmd
    }

    /// Sets pane options of `pane` in one tmux invocation.
    pub fn set_options(&self, pane: &str, options: &[(PaneOption, String)]) -> anyhow::Result<()> {
        let mut cmd = self.tmux();
        for (i, (option, value)) in options.iter().enumerate() {
            if i > 0 {
                cmd.arg(";");
            }
            cmd.args(["set-option", "-p", "-t", pane, option.as_str(), value]);
        }
        output(&mut cmd).map(drop)
    }

    /// The value of pane option `option` of `pane` (empty when unset).
    pub fn option(&self, pane: &str, option: PaneOption) -> anyhow::Result<String> {
        stdout(self.tmux().args([
            "show-options",
            "-p",
            "-q",
            "-v",
            "-t",
            pane,
            option.as_str(),
        ]))
    }

    /// `corral serve --stdio` as the bench's device, started (not greeted yet); its stderr goes
    /// to `logs/<log>.err`.
    pub fn spawn_serve(&self, log: &str) -> anyhow::Result<Conn> {
        let mut cmd = self.corral();
        cmd.args(["serve", "--stdio", "--device", DEVICE]);
        Conn::spawn(cmd, &self.dir.join(format!("logs/{log}.err")))
    }

    /// A `serve` connection past its hello.
    pub fn serve(&self, log: &str) -> anyhow::Result<Conn> {
        let mut conn = self.spawn_serve(log)?;
        conn.hello(DEVICE)?;
        Ok(conn)
    }
}

impl Drop for Fleet {
    /// Brings the fleet down, and removes the socket file a real tmux leaves behind when it
    /// exits (tmux 3.3a does not remove it; the bench's socket names are its own).
    fn drop(&mut self) {
        if self.up {
            let _ = self.sim().arg("down").stdout(Stdio::null()).status();
            if self.socket_path.is_empty() && self.backend == golden::Backend::Real {
                // `corral-sim up` failed part-way (out of ptys, say): the server it started is in
                // no state `down` reads. It is the bench's by its name.
                let mut ask = self.command("tmux");
                ask.args([
                    "-L",
                    &self.socket,
                    "display-message",
                    "-p",
                    "#{socket_path}",
                ]);
                let path = stdout(&mut ask);
                let mut kill = self.command("tmux");
                let _ = kill.args(["-L", &self.socket, "kill-server"]).output();
                if let Ok(path) = path {
                    self.socket_path = path;
                }
            }
            let socket = Path::new(&self.socket_path);
            let is_socket = std::fs::symlink_metadata(socket)
                .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()));
            if is_socket {
                let _ = std::fs::remove_file(socket);
            }
        }
    }
}

/// The config every process of the bench reads.
fn config_text(interval_ms: u64, notify_command: &str) -> String {
    let quoted = toml::Value::String(notify_command.to_owned());
    format!(
        "[serve]\nmax_connections = 64\nreconcile_interval_ms = {interval_ms}\n\n\
         [notify]\non = [\"blocked\"]\nbell = false\ncommand = {quoted}\n"
    )
}

/// The fixture of `panes` agent panes: `golden/fixtures/large.toml` for 1000, else the same
/// windows of 20 panes, fewer of them, written into `dir`.
fn fixture_file(dir: &Path, panes: usize) -> anyhow::Result<PathBuf> {
    let large = workspace_root().join("golden/fixtures/large.toml");
    let mut fixture: Fixture = golden::fixture::load(&large).map_err(anyhow::Error::msg)?;
    let windows = panes / PANES_PER_WINDOW;
    let per_session = [windows.div_ceil(2), windows / 2];
    if windows == 50 {
        return Ok(large);
    }
    for (session, count) in fixture.sessions.iter_mut().zip(per_session) {
        let [window] = session.windows.as_mut_slice() else {
            bail!("{}: expected one window table per session", large.display());
        };
        window.repeat = u32::try_from(count)?;
    }
    fixture.sessions.retain(|s| s.windows[0].repeat > 0);
    fixture.description = Some(format!("large.toml with {panes} panes (cargo xtask bench)"));
    let path = dir.join("fixture.toml");
    std::fs::write(&path, toml::to_string(&fixture)?)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent_panes(fixture: &Fixture) -> u32 {
        fixture
            .sessions
            .iter()
            .flat_map(|s| &s.windows)
            .map(|w| w.repeat * w.panes.iter().map(|p| p.repeat).sum::<u32>())
            .sum()
    }

    #[test]
    fn the_fixture_has_the_asked_number_of_panes() {
        let dir = tempfile::tempdir().unwrap();
        for panes in [20, 100, 1000, 1020] {
            let path = fixture_file(dir.path(), panes).unwrap();
            let fixture = golden::fixture::load(&path).unwrap();
            assert_eq!(agent_panes(&fixture), panes as u32, "{panes}");
        }
        assert!(
            fixture_file(dir.path(), 1000)
                .unwrap()
                .ends_with("golden/fixtures/large.toml")
        );
    }

    /// A bring-up that failed part-way left a real tmux server that `corral-sim down` knows
    /// nothing of: dropping the fleet kills it by its name and removes its socket file.
    #[test]
    fn a_fleet_whose_bring_up_failed_takes_its_server_down() {
        let dir = tempfile::tempdir().unwrap();
        let socket = format!("corral-bench-test-{}", std::process::id());
        let nowhere = PathBuf::from("/nonexistent/corral-bench");
        let fleet = Fleet {
            bins: Bins {
                corral: nowhere.clone(),
                sim: nowhere.clone(),
                remote: nowhere.clone(),
                ledger_claims: nowhere,
                profile: "release".into(),
            },
            dir: dir.path().to_owned(),
            socket: socket.clone(),
            socket_path: String::new(),
            tmux_bin: PathBuf::new(),
            panes: BTreeMap::new(),
            interval_ms: 200,
            notify_command: "true".into(),
            backend: golden::Backend::Real,
            up: true,
        };
        let tmux = |args: &[&str]| {
            let mut cmd = fleet.command("tmux");
            cmd.args(["-L", &socket, "-f", "/dev/null"]).args(args);
            cmd
        };
        output(&mut tmux(&["new-session", "-d"])).unwrap();
        let path = stdout(&mut tmux(&["display-message", "-p", "#{socket_path}"])).unwrap();
        assert!(Path::new(&path).exists());
        let mut alive = tmux(&["has-session"]);
        drop(fleet);
        assert!(!alive.status().unwrap().success(), "the server is gone");
        assert!(!Path::new(&path).exists(), "and its socket file");
    }

    #[test]
    fn the_config_quotes_the_command() {
        let text = config_text(200, r#"printf '%s\n' "$CORRAL_PANE" > /x"#);
        let config: toml::Table = text.parse().unwrap();
        assert_eq!(
            config["notify"]["command"].as_str(),
            Some(r#"printf '%s\n' "$CORRAL_PANE" > /x"#)
        );
        assert_eq!(
            config["serve"]["reconcile_interval_ms"].as_integer(),
            Some(200)
        );
    }
}
