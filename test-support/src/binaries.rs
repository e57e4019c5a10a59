//! The other package's binaries that a test suite runs (the host's tests drive `corral-sim`, the
//! kit's run `corral`, and the simulator's run its own `corral-sim` and `corral-fake-tmux`, which
//! the kit's package installs). Cargo builds a package's own binaries for its integration tests
//! (`CARGO_BIN_EXE_<name>`), never another package's, so the suite has cargo build them, once per
//! test run and before the first test that needs them, with the profile and into the target dir
//! its own binaries (or, in a package that has none, its test executable) were built with. The
//! build also keeps them fresh: a binary left by an older build is never run. Cargo (1.95)
//! releases the build directory's lock before it runs the tests, so the nested build only waits
//! for another cargo that builds at the same time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Binaries of another package of the workspace, built on first use.
#[derive(Debug)]
pub struct Binaries {
    /// One of the suite's own binaries (`env!("CARGO_BIN_EXE_<name>")`): the others are built
    /// beside it, with its profile. In a package with no binary of its own, [`THIS_TEST`].
    pub beside: &'static str,
    /// The package that has them.
    pub package: &'static str,
    /// The ones the suite runs.
    pub names: &'static [&'static str],
}

/// [`Binaries::beside`] for a suite whose package has no binary: the running test's executable,
/// which cargo puts in `<profile>/deps/`, places them instead (in `<profile>/`, where cargo puts
/// a package's binaries).
pub const THIS_TEST: &str = "<the running test's executable>";

/// The packages built so far in this process, and how that went; held while one is built, so a
/// test that needs the binaries meanwhile waits for them.
static BUILT: Mutex<Vec<(&str, Result<(), String>)>> = Mutex::new(Vec::new());

impl Binaries {
    /// The path of `name`, one of [`Binaries::names`]; the first call in a test process builds
    /// them all. Fails the test when the build fails, saying what ran and why.
    pub fn path(&self, name: &str) -> PathBuf {
        assert!(
            self.names.contains(&name),
            "{name} is not one of {:?}",
            self.names
        );
        let mut built = BUILT
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !built.iter().any(|(package, _)| *package == self.package) {
            built.push((self.package, self.build()));
        }
        let (_, outcome) = built
            .iter()
            .find(|(package, _)| *package == self.package)
            .unwrap();
        if let Err(why) = outcome {
            panic!("{why}");
        }
        self.dir().join(name)
    }

    /// Where the suite's own binaries are (or would be), and these go.
    fn dir(&self) -> PathBuf {
        if self.beside == THIS_TEST {
            let exe = std::env::current_exe().expect("the running test's executable");
            let deps = exe.parent().unwrap();
            assert!(
                deps.ends_with("deps"),
                "{} is not in a `deps` folder, where cargo puts a test",
                exe.display()
            );
            return deps.parent().unwrap().to_owned();
        }
        Path::new(self.beside).parent().unwrap().to_owned()
    }

    /// Runs `cargo build` for them, saying so in one line on stderr.
    fn build(&self) -> Result<(), String> {
        let mut cargo = self.cargo();
        let shown = std::iter::once("cargo".into())
            .chain(cargo.get_args().map(|arg| arg.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ");
        // Straight to stderr: the test harness captures `eprintln!` of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "test-support: these tests run {}'s {}, which cargo does not build for them: {shown}",
            self.package,
            self.names.join(", ")
        );
        let out = cargo
            .output()
            .map_err(|err| format!("`{shown}` did not start: {err}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{shown}` failed ({}); run it to see why. Its stderr:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// The cargo command that builds them as the suite's own were built: the profile is the
    /// name of their dir (`debug` for `dev`), whose parent is the target dir, or a target's dir
    /// inside it (`target/<triple>/debug`), which is no target dir of its own (cargo tags each
    /// target dir with a `CACHEDIR.TAG`).
    fn cargo(&self) -> Command {
        let dir = self.dir();
        let profile = match dir.file_name().unwrap().to_str().unwrap() {
            "debug" => "dev",
            other => other,
        };
        let mut target_dir = dir.parent().unwrap();
        let mut target = None;
        if !target_dir.join("CACHEDIR.TAG").exists() {
            target = target_dir.file_name();
            target_dir = target_dir.parent().unwrap();
        }
        // Cargo keeps the developer's whole environment (its homes, the toolchain, the flags the
        // suite was built with): this is no test's child, and only cargo writes what it builds.
        let mut cargo =
            stdx::process::command(std::env::var_os("CARGO").unwrap_or(env!("CARGO").into()));
        // The workspace root: test-support is one of its members.
        cargo.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap());
        cargo.args(["build", "--profile", profile]);
        if let Some(target) = target {
            cargo.arg("--target").arg(target);
        }
        cargo.arg("--target-dir").arg(target_dir);
        cargo.args(["-p", self.package]);
        for name in self.names {
            cargo.args(["--bin", name]);
        }
        cargo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments of the build `binaries` would run.
    fn build_args(binaries: &Binaries) -> Vec<String> {
        let cargo = binaries.cargo();
        cargo
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_suite_without_binaries_builds_them_where_its_package_would_have_them() {
        // This unit test is such a suite: cargo ran it from `<target>/<profile>/deps/`.
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap();
        let binaries = Binaries {
            beside: THIS_TEST,
            package: "conformance",
            names: &["corral-sim", "corral-fake-tmux"],
        };
        assert_eq!(binaries.dir(), profile_dir);
        let args = build_args(&binaries);
        let target_dir =
            args[args.iter().position(|arg| arg == "--target-dir").unwrap() + 1].clone();
        assert!(profile_dir.starts_with(&target_dir), "{args:?}");
        assert!(
            args.ends_with(&[
                "-p".into(),
                "conformance".into(),
                "--bin".into(),
                "corral-sim".into(),
                "--bin".into(),
                "corral-fake-tmux".into()
            ]),
            "{args:?}"
        );
    }

    #[test]
    fn a_suites_own_binary_places_them_beside_it_with_its_profile() {
        // A made-up target dir: nothing is read or written in it.
        let dir = Path::new("/nonexistent/target");
        let beside: &'static str = Box::leak(
            dir.join("release/corral-remote")
                .to_str()
                .unwrap()
                .to_owned()
                .into_boxed_str(),
        );
        let binaries = Binaries {
            beside,
            package: "conformance",
            names: &["corral-sim"],
        };
        assert_eq!(binaries.dir(), dir.join("release"));
        let args = build_args(&binaries);
        assert_eq!(args[..3], ["build", "--profile", "release"]);
    }
}
