//! A case's setting up and tearing down: its environment (the host profile's variables set, every
//! other `CORRAL_*`, `TMUX` and `TMUX_PANE` removed; `PATH` led by the case's `bin`, which holds
//! the kit's `corral-sim`; the simulator's also names the host's hook command as
//! `CORRAL_SIM_HOOK`), its work dir, the header's config (checked against `config.schema.json`)
//! and device store written private where the profile says, the fleet brought up with the pinned
//! clock and the host's runtime dir, and the prebound captures taken from its answer; at the end
//! every host killed and the fleet brought down, however the case ended.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::anyhow;
use golden::Backend;
use golden::pattern::Captures;
use golden::session::{Prebound, Session};
use schema::DeviceStore;
use serde_json::Value;
use stdx::world::FleetDirs;

use super::{Case, RunContext, StepError, StepResult};
use crate::sim::{Fleet, Sim};

/// How long `corral-sim up` may take, in milliseconds before the run's multiplier.
const UP_MS: u64 = 60_000;

impl<'a> Case<'a> {
    /// A case in `dir`: its environment and its device store, nothing made yet.
    pub(super) fn new(ctx: &'a RunContext, session: &'a Session, dir: &Path) -> Case<'a> {
        let profile = &ctx.profile;
        let mut env = FleetDirs::new(dir).vars();
        env.extend([
            ("NO_COLOR".to_owned(), "1".to_owned()),
            ("PATH".to_owned(), search_path(&dir.join("bin"))),
        ]);
        if let Some(config) = &profile.env.config {
            env.push((config.clone(), place(dir, &profile.paths.config_file)));
        }
        let named = [
            Some(&profile.env.tmux_bin),
            Some(&profile.env.tmux_socket),
            profile.env.config.as_ref(),
        ];
        let mut remove: Vec<String> = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| name.starts_with("CORRAL_") || named.contains(&Some(name)))
            .collect();
        remove.extend(["TMUX".to_owned(), "TMUX_PANE".to_owned()]);
        let canaries = match &session.header.canaries {
            Some(extra) => {
                let mut all = extra.clone();
                all.extend(fixture_canaries(&session.fixture_path()));
                all
            }
            None => Vec::new(),
        };
        Case {
            ctx,
            session,
            dir: dir.to_owned(),
            env,
            remove,
            devices: DeviceStore {
                devices: session.header.devices.clone(),
            },
            store_path: PathBuf::from(place(dir, &profile.paths.device_store)),
            canaries,
            sim: None,
            conns: BTreeMap::new(),
            notes: Vec::new(),
            marks: BTreeMap::new(),
            captures: Captures::new(),
            blessed: Vec::new(),
            started: SystemTime::now(),
            programs: 0,
            seen: Default::default(),
            running: BTreeMap::new(),
        }
    }

    /// Makes the work dir, writes the config and the device store, brings the fleet up and
    /// binds the prebound captures from its answer.
    pub(super) fn prepare(&mut self, socket: &str) -> StepResult {
        let making = |err| StepError::new(format!("making the case dir: {err}"));
        FleetDirs::new(&self.dir).make().map_err(making)?;
        for sub in ["logs", "bin"] {
            std::fs::create_dir_all(self.dir.join(sub)).map_err(making)?;
        }
        let profile = &self.ctx.profile;
        let config_file = PathBuf::from(place(&self.dir, &profile.paths.config_file));
        let runtime_dir = PathBuf::from(place(&self.dir, &profile.paths.runtime_dir));
        // A notification command of the case's config can name the kit's recorder
        // (`corral-sim record`) without knowing where the kit was built.
        std::os::unix::fs::symlink(&self.ctx.sim_bin, self.dir.join("bin/corral-sim"))
            .map_err(|err| StepError::new(format!("linking bin/corral-sim: {err}")))?;
        let header = &self.session.header;
        let config = Value::Object(header.config.clone());
        self.ctx
            .config
            .validate(&config)
            .map_err(|err| StepError::new(format!("the header's config {err}")))?;
        let toml = toml::to_string(&header.config)
            .map_err(|err| StepError::new(format!("the header's config is not TOML: {err}")))?;
        write_private(&config_file, &toml).map_err(StepError::new)?;
        if !self.devices.devices.is_empty() {
            self.write_store()?;
        }
        let fixture = self.session.fixture_path();
        let mut sim_env = self.env.clone();
        sim_env.push((
            "CORRAL_SIM_NOW_MS".into(),
            golden::clock::NOW_MS.to_string(),
        ));
        // `corral-sim hook` runs the host's hook command: this host's, wherever it lives.
        if let (Some(cli), Some(hook)) = (&self.ctx.host_cli, &profile.hook) {
            let cli = cli.display().to_string();
            sim_env.push((
                simulator::env::HOOK_VAR.into(),
                golden::profile::fill(hook, &[("cli", &cli)]),
            ));
        }
        let fleet = Fleet {
            fixture: &fixture,
            backend: self.ctx.backend,
            socket,
            runtime_dir: &runtime_dir,
        };
        let mut sim = Sim::up(
            &self.ctx.sim_bin,
            &fleet,
            sim_env,
            &self.dir.join("logs"),
            self.ctx.scaled(UP_MS),
        )
        .map_err(StepError::new)?;
        let world = FleetDirs::new(&self.dir);
        let place = |dir: PathBuf| dir.display().to_string();
        self.captures = Prebound {
            host_tool: profile.tool.clone(),
            host_name: self.ctx.host_name.clone(),
            uid: rustix::process::getuid().as_raw().to_string(),
            socket_path: sim.up.socket_path.clone(),
            tmux_socket: sim.up.socket.clone(),
            sim_dir: place(world.sim()),
            run_dir: place(world.run()),
            config_dir: place(world.config()),
            home_dir: place(world.home()),
            runtime_dir: runtime_dir.display().to_string(),
            device_store: self.store_path.display().to_string(),
            config_file: config_file.display().to_string(),
            panes: sim.up.panes.clone(),
            transcripts: sim
                .up
                .details
                .iter()
                .filter_map(|(name, detail)| {
                    let (path, _) = detail.transcript.as_ref()?;
                    Some((name.clone(), path.clone()))
                })
                .collect(),
            labels: profile.labels(),
        }
        .captures();
        // The host's own names for the fleet's tmux: for the host, its programs, and the hooks
        // the simulator's agents run.
        for (name, value) in [
            (&profile.env.tmux_bin, sim.up.tmux_bin.clone()),
            (&profile.env.tmux_socket, sim.up.socket.clone()),
        ] {
            sim.set_env(name, &value);
            self.env.push((name.clone(), value));
        }
        self.sim = Some(sim);
        Ok(())
    }

    /// Writes the device store as it is now (after a revocation too).
    pub(super) fn write_store(&self) -> StepResult {
        let text = toml::to_string(&self.devices)
            .map_err(|err| StepError::new(format!("encoding the device store: {err}")))?;
        write_private(&self.store_path, &text).map_err(StepError::new)
    }

    /// Kills every host, stops every background program and brings the fleet down, however the
    /// case ended.
    pub(super) fn teardown(&mut self) {
        for process in self.conns.values_mut() {
            process.kill();
        }
        self.stop_background();
        if let Some(mut sim) = self.sim.take() {
            let _ = sim.down();
            // A real tmux server killed with `kill-server` can leave its socket file behind.
            if self.ctx.backend == Backend::Real && !sim.up.socket_path.is_empty() {
                let _ = std::fs::remove_file(&sim.up.socket_path);
            }
        }
    }
}

/// A profile's path template in the case's dir `dir`: `${config_dir}`, `${run_dir}` and
/// `${home_dir}` are its world's `config`, `run` and `home`.
fn place(dir: &Path, template: &str) -> String {
    let world = FleetDirs::new(dir);
    let at = |dir: PathBuf| dir.display().to_string();
    template
        .replace("${config_dir}", &at(world.config()))
        .replace("${run_dir}", &at(world.run()))
        .replace("${home_dir}", &at(world.home()))
}

/// Literal strings of the fixture's pane titles, up to their first template brace.
fn fixture_canaries(fixture: &Path) -> Vec<String> {
    let Ok(fixture) = golden::fixture::load(fixture) else {
        return Vec::new();
    };
    let mut canaries = Vec::new();
    for session in &fixture.sessions {
        for window in &session.windows {
            for pane in &window.panes {
                if let Some(title) = &pane.title {
                    let literal = title.split('{').next().unwrap_or("");
                    if literal.len() >= 6 && !canaries.iter().any(|c| c == literal) {
                        canaries.push(literal.to_owned());
                    }
                }
            }
        }
    }
    canaries
}

/// The case's `PATH`: its `bin` dir (the kit's `corral-sim`) before the runner's own.
fn search_path(bin: &Path) -> String {
    match std::env::var("PATH") {
        Ok(path) if !path.is_empty() => format!("{}:{path}", bin.display()),
        _ => format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
    }
}

fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().expect("files live in a dir");
    std::fs::create_dir_all(dir).map_err(|err| anyhow!("{}: {err}", dir.display()))?;
    let temp = dir.join(format!(
        ".{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&temp, text).map_err(|err| anyhow!("{}: {err}", temp.display()))?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o600))
        .map_err(|err| anyhow!("{}: {err}", temp.display()))?;
    std::fs::rename(&temp, path).map_err(|err| anyhow!("{}: {err}", path.display()))
}
