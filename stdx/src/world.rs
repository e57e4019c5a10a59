//! A temp world: the variables that say where a process writes ([`LOCATIONS`]), pointed into a
//! dir of its own, so that nothing a test, the kit, the demo, the bench or the fuzzer starts lands
//! in `/tmp/tmux-<uid>`, the user's runtime dir or their home. Two layouts, each described once:
//! a test's child gets every location under one dir ([`in_temp_dirs`]), a home with its XDG dirs
//! where they usually are; the processes around a simulated fleet (the kit's case, the demo, the
//! bench, the fuzzer) get a dir per role ([`FleetDirs`]), named as the kit's path templates name
//! them.

use std::path::{Path, PathBuf};

/// The variables that say where a process writes: tmux's socket dir, the host's config, device
/// store and runtime dir (and its fallback under `TMPDIR`), and whatever else follows HOME.
pub const LOCATIONS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "TMUX_TMPDIR",
    "TMPDIR",
];

/// The variable that names the simulator's state dir (its fleet, its fake tmux's files).
pub const SIM_DIR_VAR: &str = "CORRAL_SIM_DIR";

/// Every location of [`LOCATIONS`] inside `dir`: a home at `dir/home` (its XDG dirs in their
/// usual places), `XDG_RUNTIME_DIR` at `dir/runtime`, tmux's sockets and temp files in `dir`.
pub fn in_temp_dirs(dir: &Path) -> Vec<(String, String)> {
    let home = dir.join("home");
    [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_RUNTIME_DIR", dir.join("runtime")),
        ("TMUX_TMPDIR", dir.to_owned()),
        ("TMPDIR", dir.to_owned()),
    ]
    .into_iter()
    .map(|(name, path)| (name.to_owned(), path.to_string_lossy().into_owned()))
    .collect()
}

/// The world of a simulated fleet's processes under one root, a dir per role: `sim`
/// (`$CORRAL_SIM_DIR`), `config` (`$XDG_CONFIG_HOME`), `run` (`$XDG_RUNTIME_DIR`, private) and
/// `home` (`$HOME`). A host profile's `${config_dir}`, `${run_dir}` and `${home_dir}` are these
/// dirs of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetDirs {
    /// The world's own dir.
    pub root: PathBuf,
}

impl FleetDirs {
    /// The world under `root`.
    pub fn new(root: impl Into<PathBuf>) -> FleetDirs {
        FleetDirs { root: root.into() }
    }

    /// `$CORRAL_SIM_DIR`: the simulator's state.
    pub fn sim(&self) -> PathBuf {
        self.root.join("sim")
    }

    /// `$XDG_CONFIG_HOME`.
    pub fn config(&self) -> PathBuf {
        self.root.join("config")
    }

    /// `$XDG_RUNTIME_DIR`.
    pub fn run(&self) -> PathBuf {
        self.root.join("run")
    }

    /// `$HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// Each variable and its dir: `CORRAL_SIM_DIR`, `XDG_CONFIG_HOME`, `XDG_RUNTIME_DIR`, `HOME`.
    pub fn vars(&self) -> Vec<(String, String)> {
        [
            (SIM_DIR_VAR, self.sim()),
            ("XDG_CONFIG_HOME", self.config()),
            ("XDG_RUNTIME_DIR", self.run()),
            ("HOME", self.home()),
        ]
        .into_iter()
        .map(|(name, path)| (name.to_owned(), path.display().to_string()))
        .collect()
    }

    /// Makes every dir; the runtime dir private to its owner, as an `XDG_RUNTIME_DIR` must be.
    pub fn make(&self) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        for dir in [self.sim(), self.config(), self.run(), self.home()] {
            std::fs::create_dir_all(&dir).map_err(|err| {
                std::io::Error::new(err.kind(), format!("{}: {err}", dir.display()))
            })?;
        }
        std::fs::set_permissions(self.run(), std::fs::Permissions::from_mode(0o700))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tests_child_finds_every_location_under_its_dir() {
        let dir = Path::new("/nonexistent/test-dir");
        let vars = in_temp_dirs(dir);
        let mut names: Vec<&str> = vars.iter().map(|(name, _)| name.as_str()).collect();
        names.sort_unstable();
        let mut all = LOCATIONS.to_vec();
        all.sort_unstable();
        assert_eq!(names, all);
        assert!(
            vars.iter()
                .all(|(_, value)| Path::new(value).starts_with(dir))
        );
        assert!(vars.contains(&(
            "XDG_CONFIG_HOME".to_owned(),
            "/nonexistent/test-dir/home/.config".to_owned()
        )));
    }

    #[test]
    fn a_fleets_world_has_a_dir_per_role_and_a_private_runtime_dir() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let world = FleetDirs::new(tmp.path().join("w x"));
        let root = world.root.display().to_string();
        assert_eq!(
            world.vars(),
            [
                ("CORRAL_SIM_DIR".to_owned(), format!("{root}/sim")),
                ("XDG_CONFIG_HOME".to_owned(), format!("{root}/config")),
                ("XDG_RUNTIME_DIR".to_owned(), format!("{root}/run")),
                ("HOME".to_owned(), format!("{root}/home")),
            ]
        );
        world.make().unwrap();
        for dir in [world.sim(), world.config(), world.home()] {
            assert!(dir.is_dir(), "{}", dir.display());
        }
        let mode = std::fs::metadata(world.run()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
