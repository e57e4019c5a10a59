//! Shell scripts in front of a home's tmux: a [`Gate`] that holds invocations until the test
//! opens it, and a [`CallLog`] of every invocation. Both work the same on either backend.

use std::path::{Path, PathBuf};

use super::home::Home;

/// Writes an executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;

    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A gate in front of a home's tmux: a wrapper script that, while the gate is closed, holds
/// every invocation naming one of the commands the gate was closed on (or every invocation, for
/// `*`): it records that one entered and waits until the gate opens, then runs tmux. A process
/// stopped there is stopped where the host itself calls tmux, on either backend, and what it
/// was about to do still happens once the gate opens, as it would with a slow tmux.
#[derive(Debug)]
pub struct Gate {
    closed: PathBuf,
    entered: PathBuf,
}

impl Gate {
    /// Puts the gate in front of `home`'s tmux. The host's tmux time-out is raised to a minute:
    /// the gate, not the time-out, decides how long a held invocation waits.
    pub fn install(home: &mut Home) -> Gate {
        let dir = home.dir.path();
        let gate = Gate {
            closed: dir.join("gate"),
            entered: dir.join("gate-entered"),
        };
        let wrapper = dir.join("gated-tmux");
        script(
            &wrapper,
            &format!(
                r#"set -f
if [ -e '{closed}' ]; then
    for held in $(cat '{closed}' 2>/dev/null); do
        for arg in "$@"; do
            if [ "$held" = '*' ] || [ "$arg" = "$held" ]; then
                : > '{entered}'
                while [ -e '{closed}' ]; do sleep 0.005; done
                break 2
            fi
        done
    done
fi
exec '{tmux}' "$@""#,
                closed = gate.closed.display(),
                entered = gate.entered.display(),
                tmux = home.tmux_bin.display()
            ),
        );
        home.tmux_bin = wrapper;
        home.env
            .push(("CORRAL_TMUX_TIMEOUT_MS".into(), "60000".into()));
        gate
    }

    /// Closes the gate on these tmux commands (`*`: on every invocation).
    pub fn close(&self, commands: &[&str]) {
        std::fs::write(&self.closed, commands.join("\n")).unwrap();
    }

    /// True once an invocation has been held since the gate closed.
    pub fn entered(&self) -> bool {
        self.entered.exists()
    }

    /// Opens the gate: held invocations run.
    pub fn open(&self) {
        let _ = std::fs::remove_file(&self.closed);
        let _ = std::fs::remove_file(&self.entered);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

/// A log of every tmux invocation a home's processes make, on either backend: a wrapper in front
/// of the home's tmux appends the invocation's arguments as one line, then runs tmux as its child
/// (not `exec`: killing only the wrapper would orphan tmux).
#[derive(Debug)]
pub struct CallLog {
    path: PathBuf,
}

impl CallLog {
    /// Puts the log in front of `home`'s tmux.
    pub fn install(home: &mut Home) -> CallLog {
        let path = home.dir.path().join("tmux-calls");
        let wrapper = home.dir.path().join("logged-tmux");
        script(
            &wrapper,
            &format!(
                "printf '%s\\n' \"$*\" >> '{}'\n'{}' \"$@\"",
                path.display(),
                home.tmux_bin.display()
            ),
        );
        home.tmux_bin = wrapper;
        CallLog { path }
    }

    /// Every invocation so far, its arguments joined by spaces.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// How many invocations so far.
    pub fn len(&self) -> usize {
        self.calls().len()
    }

    /// The log file (a test's own notification command may append to it too).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts afresh.
    pub fn clear(&self) {
        std::fs::write(&self.path, "").unwrap();
    }
}
