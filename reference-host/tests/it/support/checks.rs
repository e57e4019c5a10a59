//! What many tests check and how long they wait: error frames, listing rows, JSON lines files,
//! a condition that must come true within [`PATIENCE`], and how many runs a repeated test makes.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a test waits for a frame or an exit before failing.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// True when `frame` is an error frame with this id and code, and a message.
pub fn is_error(frame: &Value, id: &str, code: &str) -> bool {
    frame["t"] == "error"
        && frame["id"] == id
        && frame["code"] == code
        && frame["message"].is_string()
}

/// The row of `pane` in a snapshot frame or an ls document (both list rows under `agents`).
pub fn row<'a>(listing: &'a Value, pane: &str) -> &'a Value {
    listing["agents"]
        .as_array()
        .unwrap_or_else(|| panic!("no agents in {listing}"))
        .iter()
        .find(|row| row["pane"] == pane)
        .unwrap_or_else(|| panic!("no row for {pane} in {listing}"))
}

/// Waits until `done` holds; fails the test naming `what` after [`PATIENCE`].
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The exit code of `child` once it has exited (-1 for a signal); `None` when it still runs
/// after [`PATIENCE`] (the caller fails the test with what the process said).
pub fn exit_code_within_patience(child: &mut std::process::Child) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.code().unwrap_or(-1));
        }
        if start.elapsed() >= PATIENCE {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The JSON lines of a file (none when it does not exist).
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect()
}

/// How many runs a repeated test makes: `short` in the default test run, `long` when
/// `CORRAL_IT_LONG` is set (`CORRAL_IT_LONG=1 cargo test -p reference-host --test it`), the
/// form whose closing figures a change to the host's fault handling quotes.
pub fn runs(short: usize, long: usize) -> usize {
    if std::env::var_os("CORRAL_IT_LONG").is_some() {
        long
    } else {
        short
    }
}
