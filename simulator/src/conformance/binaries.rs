//! The programs a run starts, and where they come from. In a checkout, cargo builds them first
//! (debug: the same artifacts `cargo test` and clippy already built, so CI compiles nothing twice;
//! the host's speed does not matter here), with its progress on stderr, into the target dir. An
//! installed runner finds `corral-sim` and `corral-fake-tmux` beside its own executable, else on
//! `PATH`, and says in one line what it did not find.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::Backend;

use super::cli::Options;
use super::{Launcher, host, process};

/// The simulator's programs a run needs on a backend (the real one runs tmux itself).
fn needed(backend: Backend) -> Vec<&'static str> {
    match backend {
        Backend::Fake => vec!["corral-sim", "corral-fake-tmux"],
        Backend::Real => vec!["corral-sim", "tmux"],
    }
}

/// The target dir cargo builds into: `$CARGO_TARGET_DIR`, else `<root>/target`.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        }
        _ => root.join("target"),
    }
}

/// The arguments of the build: the simulator's binaries, and the host's when the run uses it.
/// Not `--quiet`: cargo's progress is what a person watches for the minutes a first build takes.
/// Without the kit embedded (`embed`, so no `corral-conformance`): a run from a checkout reads its
/// sessions from disk, and editing one then rebuilds nothing.
fn build_args(with_host: bool) -> Vec<&'static str> {
    let mut args = vec![
        "build",
        "--bins",
        "--no-default-features",
        "-p",
        "simulator",
    ];
    if with_host {
        args.extend(["-p", "reference-host"]);
    }
    args
}

/// The line said before the build starts.
fn build_line(with_host: bool) -> String {
    let what = if with_host {
        "corral, corral-sim and corral-fake-tmux"
    } else {
        "corral-sim and corral-fake-tmux"
    };
    format!(
        "conformance: building {what} (cargo {})",
        build_args(with_host).join(" ")
    )
}

/// Builds the checkout's binaries, cargo's progress on stderr.
pub fn build(root: &Path, with_host: bool) -> anyhow::Result<()> {
    eprintln!("{}", build_line(with_host));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = process::command(cargo)
        .current_dir(root)
        .args(build_args(with_host))
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    Ok(())
}

/// The host command template of a `corral` binary: `<corral> serve --stdio --device {device}`.
pub fn host_of(corral: &Path) -> String {
    format!(
        "{} serve --stdio --device {{device}}",
        host::shell_quote(&corral.display().to_string())
    )
}

/// The checkout's built `corral`.
pub fn built_corral(root: &Path) -> PathBuf {
    target_dir(root).join("debug/corral")
}

/// Where a program was looked for, and whether it was there.
#[derive(Debug, PartialEq, Eq)]
pub struct Search {
    /// The folder looked in first.
    pub beside: PathBuf,
    /// Whether `PATH` was looked in after it.
    pub path_too: bool,
}

impl Search {
    /// The program in the folder, else (when told) on the search path `path` (`$PATH`'s value).
    pub fn find(&self, name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
        let beside = self.beside.join(name);
        if beside.is_file() {
            return Some(beside);
        }
        if !self.path_too {
            return None;
        }
        std::env::split_paths(path?)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    }

    /// Every program of `names`, or the one line that says which are missing and where they
    /// were looked for.
    pub fn find_all(
        &self,
        names: &[&str],
        path: Option<&OsStr>,
        remedy: &str,
    ) -> Result<Vec<PathBuf>, String> {
        let found: Vec<Option<PathBuf>> = names.iter().map(|name| self.find(name, path)).collect();
        let missing: Vec<&str> = names
            .iter()
            .zip(&found)
            .filter(|(_, found)| found.is_none())
            .map(|(name, _)| *name)
            .collect();
        if missing.is_empty() {
            return Ok(found.into_iter().flatten().collect());
        }
        let whom = match missing.as_slice() {
            [one] => (*one).to_owned(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => unreachable!("missing is not empty"),
        };
        let places = if self.path_too {
            format!("in {} nor on PATH", self.beside.display())
        } else {
            format!("in {}", self.beside.display())
        };
        Err(format!("missing {whom}: not {places}; {remedy}"))
    }
}

/// What a run starts: the host command template, the host's own command line and `corral-sim`.
#[derive(Debug)]
pub struct Binaries {
    /// The host command template (`{device}` is replaced).
    pub host_template: String,
    /// The host's own command line (`corral`), when known: the built one for the reference
    /// host, else the one given.
    pub host_cli: Option<PathBuf>,
    /// The kit's `corral-sim`.
    pub sim_bin: PathBuf,
}

impl Binaries {
    /// Builds what is needed (in a checkout, unless told not to) and finds it.
    pub fn prepare(options: &Options, launcher: &Launcher) -> anyhow::Result<Binaries> {
        let path = std::env::var_os("PATH");
        // tmux is the system's, on PATH; the kit's own programs come with the runner.
        let (ours, system): (Vec<&str>, Vec<&str>) = needed(options.backend)
            .into_iter()
            .partition(|name| *name != "tmux");
        on_path(&system, path.as_deref())?;
        let (host_template, default_cli, found) = match launcher {
            Launcher::Checkout { root } => {
                if options.build {
                    build(root, options.host.is_none())?;
                }
                let corral = built_corral(root);
                let search = Search {
                    beside: target_dir(root).join("debug"),
                    path_too: false,
                };
                let remedy = if options.build {
                    "the build did not make it"
                } else {
                    "build it (cargo build --bins --no-default-features -p simulator) or drop \
                     --no-build"
                };
                let mut found = search
                    .find_all(&ours, path.as_deref(), remedy)
                    .map_err(anyhow::Error::msg)?;
                let own = options.host.is_none() && options.profile.is_corral();
                let host = match &options.host {
                    Some(host) => host.clone(),
                    None if own => host_of(&corral),
                    None => profile_serve(options)?,
                };
                (host, own.then_some(corral), found.remove(0))
            }
            Launcher::Installed => {
                let from_profile = match &options.host {
                    None if !options.profile.is_corral() => Some(profile_serve(options)?),
                    _ => None,
                };
                let Some(host) = options.host.as_ref().or(from_profile.as_ref()) else {
                    bail!(
                        "give the host to test: --host '<command that serves one connection on \
                         stdio, with {{device}} for the device id>', e.g. --host 'corral serve \
                         --stdio --device {{device}}'"
                    );
                };
                let exe = std::env::current_exe().context("locating corral-conformance")?;
                let search = Search {
                    beside: exe.parent().unwrap_or(Path::new("/")).to_owned(),
                    path_too: true,
                };
                let mut found = search
                    .find_all(
                        &ours,
                        path.as_deref(),
                        "install the kit whole: cargo install --locked --path simulator \
                         (from a corral checkout)",
                    )
                    .map_err(anyhow::Error::msg)?;
                (host.clone(), None, found.remove(0))
            }
        };
        Ok(Binaries {
            host_template,
            host_cli: options.host_cli.clone().or(default_cli),
            sim_bin: found,
        })
    }
}

/// The host command of a profile's `serve`, `{cli}` filled with `--host-cli` (`{device}` is
/// filled per connection).
fn profile_serve(options: &Options) -> anyhow::Result<String> {
    let Some(cli) = &options.host_cli else {
        bail!(
            "the host profile's `serve` starts the host with its command line: give it with \
             --host-cli PATH (or the whole command with --host)"
        );
    };
    Ok(golden::profile::fill(
        &options.profile.serve,
        &[("cli", &cli.display().to_string())],
    ))
}

/// Fails in one line when a system program is not on `PATH`.
fn on_path(names: &[&str], path: Option<&OsStr>) -> anyhow::Result<()> {
    let missing: Vec<&str> = names
        .iter()
        .filter(|name| {
            path.is_none_or(|path| !std::env::split_paths(path).any(|dir| dir.join(name).is_file()))
        })
        .copied()
        .collect();
    if !missing.is_empty() {
        bail!(
            "missing {}: not on PATH (the real backend runs a scratch tmux server)",
            missing.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn a_program_beside_the_runner_wins_over_one_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let (beside, elsewhere) = (dir.path().join("bin"), dir.path().join("elsewhere"));
        touch(&beside.join("corral-sim"));
        touch(&elsewhere.join("corral-sim"));
        touch(&elsewhere.join("corral-fake-tmux"));
        let search = Search {
            beside: beside.clone(),
            path_too: true,
        };
        let path = std::env::join_paths([&elsewhere]).unwrap();
        let found = search
            .find_all(&["corral-sim", "corral-fake-tmux"], Some(&path), "r")
            .unwrap();
        assert_eq!(
            found,
            [
                beside.join("corral-sim"),
                elsewhere.join("corral-fake-tmux")
            ]
        );
    }

    #[test]
    fn what_is_missing_is_said_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let search = Search {
            beside: dir.path().to_owned(),
            path_too: true,
        };
        let empty = dir.path().join("empty");
        let path = std::env::join_paths([&empty]).unwrap();
        let err = search
            .find_all(
                &["corral-sim", "corral-fake-tmux"],
                Some(&path),
                "install it",
            )
            .unwrap_err();
        assert_eq!(
            err,
            format!(
                "missing corral-sim and corral-fake-tmux: not in {} nor on PATH; install it",
                dir.path().display()
            )
        );
        touch(&dir.path().join("corral-sim"));
        let err = search
            .find_all(&["corral-sim", "corral-fake-tmux"], Some(&path), "r")
            .unwrap_err();
        assert!(
            err.starts_with("missing corral-fake-tmux: not in "),
            "{err}"
        );
        assert!(!err.contains('\n'));
    }

    #[test]
    fn a_checkouts_search_stays_in_its_target_dir() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        touch(&elsewhere.join("corral-sim"));
        let search = Search {
            beside: dir.path().join("target/debug"),
            path_too: false,
        };
        let path = std::env::join_paths([&elsewhere]).unwrap();
        assert_eq!(search.find("corral-sim", Some(&path)), None);
        let err = search
            .find_all(&["corral-sim"], Some(&path), "build it")
            .unwrap_err();
        assert!(err.ends_with("target/debug; build it"), "{err}");
    }

    #[test]
    fn the_build_shows_cargos_progress_and_says_what_it_builds() {
        assert_eq!(
            build_args(true),
            [
                "build",
                "--bins",
                "--no-default-features",
                "-p",
                "simulator",
                "-p",
                "reference-host"
            ]
        );
        assert!(!build_args(false).contains(&"--quiet"));
        assert_eq!(
            build_line(false),
            "conformance: building corral-sim and corral-fake-tmux (cargo build --bins \
             --no-default-features -p simulator)"
        );
    }

    #[test]
    fn the_real_backend_needs_tmux_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        let err = on_path(&["tmux"], Some(&path)).unwrap_err().to_string();
        assert!(err.starts_with("missing tmux: not on PATH"), "{err}");
        touch(&dir.path().join("tmux"));
        on_path(&["tmux"], Some(&path)).unwrap();
    }
}
