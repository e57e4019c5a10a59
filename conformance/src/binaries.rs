//! The programs a run starts, and where they come from. In a checkout, cargo builds them first
//! (debug: the same artifacts `cargo test` and clippy already built, so CI compiles nothing twice;
//! the host's speed does not matter here), with its progress on stderr, into the target dir. An
//! installed runner finds `corral-sim` and `corral-fake-tmux` beside its own executable, else on
//! `PATH`, and says in one line what it did not find.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::Backend;

use super::Launcher;
use super::cli::Options;

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

/// The arguments of the build: the workspace's binaries a run may start (the host's even when
/// `--host` names another, and the client's, which no run starts), so that the crates resolve as
/// xtask and `cargo test --workspace` resolve them and nothing compiles twice (`cargo xtask tidy`
/// checks it). With the default features (the kit embedded); a run still reads the sessions from
/// disk. Not `--quiet`: cargo's progress is what a person watches for the minutes a first build
/// takes. Public, as the one list of what the kit builds: `cargo xtask tidy` resolves the same
/// selection to check that nothing compiles twice.
pub const BUILD_ARGS: &[&str] = &[
    "build",
    "--bins",
    "-p",
    "conformance",
    "-p",
    "reference-host",
    "-p",
    "client",
];

/// The line said before the build starts.
fn build_line() -> String {
    format!(
        "conformance: building corral, corral-sim and corral-fake-tmux (cargo {}; a first build \
         of the workspace takes 10 to 25 minutes on 2 cores, later ones seconds)",
        BUILD_ARGS.join(" ")
    )
}

/// Builds the checkout's binaries, cargo's progress on stderr.
pub fn build(root: &Path) -> anyhow::Result<()> {
    eprintln!("{}", build_line());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = stdx::process::command(cargo)
        .current_dir(root)
        .args(BUILD_ARGS)
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
        stdx::shell_quote(&corral.display().to_string())
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
    ) -> anyhow::Result<Vec<PathBuf>> {
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
        bail!("missing {whom}: not {places}; {remedy}")
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
                    build(root)?;
                }
                let corral = built_corral(root);
                let search = Search {
                    beside: target_dir(root).join("debug"),
                    path_too: false,
                };
                let remedy = if options.build {
                    "the build did not make it"
                } else {
                    "build it (cargo build --bins -p conformance) or drop --no-build"
                };
                let mut found = search.find_all(&ours, path.as_deref(), remedy)?;
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
                let mut found = search.find_all(
                    &ours,
                    path.as_deref(),
                    "install the kit whole: cargo install --locked --path conformance \
                         (from a corral checkout)",
                )?;
                (host.clone(), None, found.remove(0))
            }
        };
        runnable(&host_template, path.as_deref())?;
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
/// The pre-flight of the host command: the program it runs exists and may be executed, else one
/// line says so before any case starts (not one identical failure per case). The program is the
/// command's first word after `VAR=value` assignments and an `env` with its options and
/// assignments; a command this cannot read (a shell construct) is left to the cases.
fn runnable(template: &str, path: Option<&OsStr>) -> anyhow::Result<()> {
    let Some(program) = program_of(template) else {
        return Ok(());
    };
    let executable = |file: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let why = if program.contains('/') {
        let file = Path::new(&program);
        match std::fs::metadata(file) {
            Err(_) => "does not exist",
            Ok(_) if !executable(file) => "is not an executable file",
            Ok(_) => return Ok(()),
        }
    } else if path
        .is_some_and(|path| std::env::split_paths(path).any(|dir| executable(&dir.join(&program))))
        || SHELL_WORDS.contains(&program.as_str())
    {
        return Ok(());
    } else {
        "is not on PATH"
    };
    bail!("the host command cannot run: `{program}` {why} (the command: {template})")
}

/// Words `sh` runs itself, without a program on PATH.
const SHELL_WORDS: &[&str] = &[
    "exec", "cd", "export", ".", "eval", "command", "set", "true", ":",
];

/// The program a host command runs, when its start is plain words (quotes and backslashes
/// read as `sh` reads them); `None` for anything else.
fn program_of(template: &str) -> Option<String> {
    let words = shell_words(template)?;
    let mut words = words.into_iter().peekable();
    let assignment = |word: &str| {
        word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    while words.peek().is_some_and(|w| assignment(w)) {
        words.next();
    }
    let first = words.next()?;
    if first != "env" {
        return Some(first);
    }
    // env's options, `-u NAME` and `-C DIR` with their argument, and its assignments.
    while let Some(word) = words.next() {
        if matches!(word.as_str(), "-u" | "--unset" | "-C" | "--chdir") {
            words.next();
        } else if !word.starts_with('-') && !assignment(&word) {
            return Some(word);
        }
    }
    None
}

/// `text` split into words as `sh` splits plain words; `None` when it holds anything else
/// (a variable, a substitution, a glob, an operator) or an unclosed quote.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let mut quoted = String::new();
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => quoted.push(c),
                    }
                }
                word.get_or_insert_with(String::new).push_str(&quoted);
            }
            '"' => {
                let mut quoted = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => quoted.push(chars.next()?),
                        '$' | '`' => return None,
                        c => quoted.push(c),
                    }
                }
                word.get_or_insert_with(String::new).push_str(&quoted);
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '*' | '?' | '[' => return None,
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

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
            .unwrap_err()
            .to_string();
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
            .unwrap_err()
            .to_string();
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
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("target/debug; build it"), "{err}");
    }

    #[test]
    fn the_build_shows_cargos_progress_and_says_what_it_builds() {
        assert!(!BUILD_ARGS.contains(&"--quiet"));
        assert!(!BUILD_ARGS.contains(&"--no-default-features"));
        assert_eq!(
            build_line(),
            "conformance: building corral, corral-sim and corral-fake-tmux (cargo build --bins -p \
             conformance -p reference-host -p client; a first build of the workspace takes 10 to \
             25 minutes on 2 cores, later ones seconds)"
        );
    }

    #[test]
    fn the_host_commands_program_is_found_past_assignments_and_env() {
        assert_eq!(
            program_of("corral serve --stdio --device {device}").as_deref(),
            Some("corral")
        );
        assert_eq!(
            program_of("A=1 'my host' --device {device}").as_deref(),
            Some("my host")
        );
        assert_eq!(
            program_of("env -u X CORRAL_TMUX_BIN=/x /opt/h/bin/herd serve").as_deref(),
            Some("/opt/h/bin/herd")
        );
        assert_eq!(program_of("sh -c 'exit 2' {device}").as_deref(), Some("sh"));
        assert_eq!(
            program_of("$HOME/bin/host"),
            None,
            "a variable is the shell's to expand"
        );
        assert_eq!(program_of("a && b"), None);
        assert_eq!(program_of("'unclosed"), None);
    }

    #[test]
    fn a_host_command_that_cannot_run_is_one_line_before_any_case() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        let err = runnable("/nonexistent/host serve {device}", Some(&path)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the host command cannot run: `/nonexistent/host` does not exist (the command: \
             /nonexistent/host serve {device})"
        );
        let plain = dir.path().join("plain");
        touch(&plain);
        let err = runnable(&format!("{} x", plain.display()), Some(&path)).unwrap_err();
        assert!(
            err.to_string().contains("is not an executable file"),
            "{err}"
        );
        let err = runnable("no-such-host serve", Some(&path)).unwrap_err();
        assert!(
            err.to_string().contains("`no-such-host` is not on PATH"),
            "{err}"
        );
        use std::os::unix::fs::PermissionsExt;
        let host = dir.path().join("host");
        touch(&host);
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o755)).unwrap();
        runnable("host serve {device}", Some(&path)).unwrap();
        runnable(&format!("{} serve", host.display()), Some(&path)).unwrap();
        runnable("exec host serve", Some(&path)).unwrap();
        runnable("$X serve", Some(&path)).unwrap();
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
