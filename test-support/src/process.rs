//! The one way the tests build a child process ([`command`], on `stdx::process::command`: a
//! process group of its own): it inherits none of the developer's tmux or corral settings and can
//! write nowhere until its test gives it temp dirs. And [`unique`], for the names (tmux sockets)
//! that tests running side by side must not share.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::locations::{LOCATIONS, nowhere};

/// A child process of a test, in a process group of its own. It inherits none of the developer's
/// tmux or corral settings (`TMUX`, `TMUX_PANE`, every `CORRAL_*`), and every location of
/// [`LOCATIONS`] points [`nowhere`] until the test gives it temp dirs
/// ([`in_temp_dirs`](crate::in_temp_dirs)). The rest of the environment,
/// [`RUN_MARK`](crate::RUN_MARK) included, is kept.
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = stdx::process::command(program);
    command.env_remove("TMUX").env_remove("TMUX_PANE");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CORRAL_") {
            command.env_remove(name);
        }
    }
    for name in LOCATIONS {
        command.env(name, nowhere(name));
    }
    command
}

/// A name no other test or test run uses: `<prefix>-<pid>-<n>`.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{command, unique};
    use crate::locations::{in_temp_dirs, nowhere, seen_locations};

    /// What any program would do with the locations a child is given: tmux cannot make its
    /// socket dir. (Each crate's tests check its own binaries the same way.)
    #[test]
    fn a_child_given_no_temp_dir_can_write_nowhere() {
        for (name, value) in seen_locations(command("env")) {
            assert_eq!(Path::new(&value), nowhere(&name), "{name}");
        }
        let out = command("tmux")
            .args(["-L", &unique("corral-nowhere"), "-f", "/dev/null"])
            .args(["new-session", "-d"])
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "a tmux server started in /tmp/tmux-<uid>"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("couldn't create directory /dev/null/"),
            "{err}"
        );
    }

    #[test]
    fn a_child_given_temp_dirs_finds_every_location_inside_them() {
        let dir = Path::new("/nonexistent/test-dir");
        let mut env = command("env");
        env.envs(in_temp_dirs(dir));
        for (name, value) in seen_locations(env) {
            assert!(Path::new(&value).starts_with(dir), "{name}={value}");
        }
    }
}
