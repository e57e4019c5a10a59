//! The machine a report was measured on: cores, CPU, kernel and the tmux it ran.

use std::path::Path;

use serde::Serialize;

use super::process::{command, stdout};

/// What the report's header says about the machine.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Cores this process may run on.
    pub cores: usize,
    /// The CPU's model name.
    pub cpu: String,
    /// The kernel's release.
    pub kernel: String,
    /// `tmux -V` of the tmux the fleet ran on (the fake's name on the fake backend).
    pub tmux: String,
    /// The load averages over 1, 5 and 15 minutes when the run started: other work on the
    /// machine shows in every figure.
    pub load: String,
}

impl Machine {
    /// This machine, with the fleet's tmux binary `tmux_bin`.
    pub fn probe(tmux_bin: &Path, fake: bool) -> Machine {
        let tmux = if fake {
            "corral-fake-tmux (the fake backend)".to_owned()
        } else {
            stdout(command(tmux_bin).arg("-V")).unwrap_or_else(|e| format!("tmux: {e:#}"))
        };
        Machine {
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            cpu: cpu_model(),
            kernel: rustix::system::uname()
                .release()
                .to_string_lossy()
                .into_owned(),
            tmux,
            load: load(),
        }
    }
}

/// The first three fields of `/proc/loadavg`.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// The first `model name` of `/proc/cpuinfo`, else "unknown CPU".
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}
