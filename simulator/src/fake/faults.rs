//! Fault injection: `faults.json` in the server directory lists faults, each making a named
//! command fail (exit code, stderr and stdout of your choosing), hang before it runs, or run and
//! then hang before it answers, for every invocation or only when it targets a named pane,
//! optionally only a number of times. A hang lasts its time, or until a release
//! (`corral-sim fault release`) ends every hang under way: a case that holds a command for as
//! long as it needs lets it go as soon as it has seen what the hold was for. A command on the
//! command line meets its fault before the invocation runs anything; one that `if-shell` runs
//! meets it where it runs (`commands/flow.rs`).

use serde::{Deserialize, Serialize};

use super::state::ServerDir;

/// One fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// Canonical tmux command name (`list-panes`, `send-keys`, ...).
    pub command: String,
    /// Only when the command targets this pane (`%N`); any invocation when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// What happens.
    pub effect: Effect,
    /// How many more times it fires; forever when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<u32>,
}

/// What a fault does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// Print `stdout` and `stderr` (each plus a newline, when not empty) and exit with
    /// `exit_code`; the command does not run. With exit code 0 and a `stdout`, a tmux that
    /// answers something other than what it was asked.
    Fail {
        /// Exit status.
        exit_code: i32,
        /// Text printed on stderr.
        stderr: String,
        /// Text printed on stdout.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        stdout: String,
    },
    /// Sleep `ms` milliseconds, then run the command normally.
    Hang {
        /// How long.
        ms: u64,
    },
    /// Run the command (its effect on the server and the log happen at once), then sleep `ms`
    /// milliseconds before answering: the caller has acted and does not know it yet.
    HangAfter {
        /// How long.
        ms: u64,
    },
}

/// How many releases there have been: a hang ends when this grows past what it was when the
/// hang began.
pub fn releases(dir: &ServerDir) -> u64 {
    std::fs::metadata(dir.releases_file()).map_or(0, |m| m.len())
}

/// Ends every hang under way (one byte appended: hangs compare the file's length).
pub fn release(dir: &ServerDir) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.releases_file())?
        .write_all(b"\n")
}

/// Reads the faults (none when the file is missing).
pub fn load(dir: &ServerDir) -> std::io::Result<Vec<Fault>> {
    match std::fs::read(dir.faults_file()) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Writes the faults.
pub fn store(dir: &ServerDir, faults: &[Fault]) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(faults).map_err(std::io::Error::other)?;
    super::state::write_atomic(&dir.faults_file(), &bytes)
}

/// The first fault matching `command` on `pane`; spends one of its `remaining` shots.
pub fn take(faults: &mut Vec<Fault>, command: &str, pane: Option<&str>) -> Option<Effect> {
    let at = faults
        .iter()
        .position(|f| f.command == command && (f.pane.is_none() || f.pane.as_deref() == pane))?;
    let effect = faults[at].effect.clone();
    if let Some(left) = faults[at].remaining.as_mut() {
        *left = left.saturating_sub(1);
        if *left == 0 {
            faults.remove(at);
        }
    }
    Some(effect)
}

/// Sleeps `ms` milliseconds, or until the server stops (a hang whose caller was killed must not
/// outlive the server it was injected into), or until `corral-sim fault release`.
pub fn hang(dir: &ServerDir, ms: u64) {
    let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let released = releases(dir);
    loop {
        let now = std::time::Instant::now();
        if now >= until || !dir.running() || releases(dir) != released {
            return;
        }
        std::thread::sleep((until - now).min(std::time::Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_fault_runs_out() {
        let mut faults = vec![Fault {
            command: "send-keys".into(),
            pane: Some("%2".into()),
            effect: Effect::Hang { ms: 5 },
            remaining: Some(1),
        }];
        assert_eq!(take(&mut faults, "send-keys", Some("%1")), None);
        assert_eq!(take(&mut faults, "list-panes", None), None);
        assert_eq!(
            take(&mut faults, "send-keys", Some("%2")),
            Some(Effect::Hang { ms: 5 })
        );
        assert!(faults.is_empty());
    }
}
