//! The other package's binaries that a test suite runs (the host's tests drive `corral-sim`, the
//! simulator's run `corral`). Cargo builds a package's own binaries for its integration tests
//! (`CARGO_BIN_EXE_<name>`), never another package's, so the suite has cargo build them, once per
//! test run and before the first test that needs them, with the profile and into the target dir
//! its own binaries were built with. The build also keeps them fresh: a binary left by an older
//! build is never run. Cargo (1.95) releases the build directory's lock before it runs the
//! tests, so the nested build only waits for another cargo that builds at the same time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Binaries of another package of the workspace, built on first use.
#[derive(Debug)]
pub struct Binaries {
    /// One of the suite's own binaries (`env!("CARGO_BIN_EXE_<name>")`): the others are built
    /// beside it, with its profile.
    pub beside: &'static str,
    /// The package that has them.
    pub package: &'static str,
    /// The ones the suite runs.
    pub names: &'static [&'static str],
}

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

    /// Where the suite's own binaries are, and these go.
    fn dir(&self) -> &Path {
        Path::new(self.beside).parent().unwrap()
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
        #[allow(clippy::disallowed_methods)]
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or(env!("CARGO").into()));
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
