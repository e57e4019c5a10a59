//! Where the host's files live (wire-details "Host files"): the config file, the device store
//! and the runtime dir, from the environment.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::bail;

/// The host's file locations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$CORRAL_CONFIG`, else `$XDG_CONFIG_HOME/corral/config.toml` (`~/.config/...`).
    pub config_file: ConfigFile,
    /// `$XDG_CONFIG_HOME/corral/devices.toml` (`~/.config/...`).
    pub device_store: PathBuf,
    /// `$XDG_RUNTIME_DIR/corral`, else `$TMPDIR/corral-<uid>` (`/tmp/...`).
    pub runtime_dir: PathBuf,
    /// `$XDG_CONFIG_HOME/corral/actions`: the user's action manifests (`*.toml`).
    pub actions_dir: PathBuf,
}

/// Where the config file is, and whether a person named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The file.
    pub path: PathBuf,
    /// `$CORRAL_CONFIG` named it: its absence is a mistake, not the defaults.
    pub named: bool,
}

impl Paths {
    /// The locations for this process's environment.
    pub fn from_env() -> anyhow::Result<Paths> {
        let uid = rustix::process::getuid().as_raw();
        Paths::from_vars(|name| std::env::var_os(name), uid)
    }

    /// The locations for an environment given as a lookup, for a user id.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>, uid: u32) -> anyhow::Result<Paths> {
        // XDG says relative values are invalid and must be ignored.
        let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let config_dir = match absolute("XDG_CONFIG_HOME") {
            Some(dir) => dir.join("corral"),
            None => match absolute("HOME") {
                Some(home) => home.join(".config/corral"),
                None => bail!("neither XDG_CONFIG_HOME nor HOME is set to an absolute path"),
            },
        };
        let config_file = match var("CORRAL_CONFIG").filter(|v| !v.is_empty()) {
            Some(named) => ConfigFile {
                path: PathBuf::from(named),
                named: true,
            },
            None => ConfigFile {
                path: config_dir.join("config.toml"),
                named: false,
            },
        };
        let runtime_dir = match absolute("XDG_RUNTIME_DIR") {
            Some(dir) => dir.join("corral"),
            None => {
                let tmp = absolute("TMPDIR").unwrap_or_else(|| PathBuf::from("/tmp"));
                tmp.join(format!("corral-{uid}"))
            }
        };
        Ok(Paths {
            config_file,
            device_store: config_dir.join("devices.toml"),
            runtime_dir,
            actions_dir: config_dir.join("actions"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn paths(vars: &[(&str, &str)]) -> anyhow::Result<Paths> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        Paths::from_vars(|name| map.get(name).cloned(), 1000)
    }

    #[test]
    fn xdg_variables_decide_every_location() {
        let p = paths(&[
            ("XDG_CONFIG_HOME", "/c"),
            ("XDG_RUNTIME_DIR", "/r"),
            ("HOME", "/h"),
        ])
        .unwrap();
        assert_eq!(p.config_file.path, PathBuf::from("/c/corral/config.toml"));
        assert!(!p.config_file.named);
        assert_eq!(p.device_store, PathBuf::from("/c/corral/devices.toml"));
        assert_eq!(p.runtime_dir, PathBuf::from("/r/corral"));
        assert_eq!(p.actions_dir, PathBuf::from("/c/corral/actions"));
    }

    #[test]
    fn home_and_tmpdir_are_the_fallbacks() {
        let p = paths(&[("HOME", "/h")]).unwrap();
        assert_eq!(
            p.device_store,
            PathBuf::from("/h/.config/corral/devices.toml")
        );
        assert_eq!(p.runtime_dir, PathBuf::from("/tmp/corral-1000"));
        let p = paths(&[
            ("HOME", "/h"),
            ("TMPDIR", "/var/t"),
            ("XDG_RUNTIME_DIR", "relative"),
        ])
        .unwrap();
        assert_eq!(p.runtime_dir, PathBuf::from("/var/t/corral-1000"));
    }

    #[test]
    fn corral_config_names_the_config_file() {
        let p = paths(&[("HOME", "/h"), ("CORRAL_CONFIG", "/etc/c.toml")]).unwrap();
        assert_eq!(p.config_file.path, PathBuf::from("/etc/c.toml"));
        assert!(p.config_file.named);
        let p = paths(&[("HOME", "/h"), ("CORRAL_CONFIG", "")]).unwrap();
        assert_eq!(
            p.config_file.path,
            PathBuf::from("/h/.config/corral/config.toml")
        );
        assert!(!p.config_file.named, "an empty value names nothing");
        assert_eq!(
            p.device_store,
            PathBuf::from("/h/.config/corral/devices.toml")
        );
    }

    #[test]
    fn no_home_at_all_is_an_error() {
        let err = paths(&[]).unwrap_err();
        assert!(err.to_string().contains("HOME"), "{err}");
    }
}
